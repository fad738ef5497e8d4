/**
 * Which label a box on the waterfall or a lane has room for. A wait of 40 px cannot say
 * `backoff 412 ms (exponential, full)`: cut, it read "ba", and beside a neighbour's cut label
 * "limiback". A box shows the longest of its labels that fits, else none (its title keeps the
 * full text); the stylesheet then drops whatever still does not fit rather than cutting it (see
 * `.rl-fit` in theme.css), so the estimate here may err without a label ever being cut.
 */

/** The widest a character of the 10 px labels runs (system-ui digits and lower case), in px. */
const CHAR_PX = 6;
/** A box's padding and borders. */
const BOX_PX = 8;

/** The width `text` is expected to take in a labelled box, in px. */
export function labelWidth(text: string): number {
  return text.length * CHAR_PX + BOX_PX;
}

/**
 * The first of `labels` (longest first) that fits in `px`, or `''` when none does. With no
 * width known (not laid out yet), the first.
 */
export function fitLabel(labels: readonly string[], px: number | undefined): string {
  if (px === undefined) return labels[0] ?? '';
  return labels.find((label) => labelWidth(label) <= px) ?? '';
}

/** The px of a stretch `percent` wide on a track `width` px wide (undefined while unmeasured). */
export function pxOf(percent: number, width: number | undefined): number | undefined {
  return width === undefined ? undefined : (percent / 100) * width;
}
