/**
 * Formats milliseconds the way the schedule table reads: under a second as `250ms`, otherwise
 * seconds with up to three decimals and trailing zeros trimmed (`2s`, `2.252s`, `64.785s`). The
 * value is first rounded to a whole millisecond, so 999.6 ms prints as `1s`, not `1000ms`; under
 * 10 ms, to a tenth (`0.4ms`, `3.2ms`).
 *
 * @example
 * ```ts
 * formatDuration(250); // '250ms'
 * formatDuration(64_785); // '64.785s'
 * ```
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  // Under 10 ms a whole millisecond is too coarse (a 0.4 ms base would print as 0ms): tenths.
  const tenths = Math.round(Math.abs(ms) * 10);
  if (tenths < 100 && tenths % 10 !== 0)
    return `${ms < 0 ? '-' : ''}${Math.floor(tenths / 10)}.${tenths % 10}ms`;
  const whole = Math.round(Math.abs(ms));
  const sign = ms < 0 && whole !== 0 ? '-' : '';
  if (whole < 1000) return `${sign}${whole}ms`;
  const seconds = Math.floor(whole / 1000);
  const fraction = String(whole % 1000)
    .padStart(3, '0')
    .replace(/0+$/, '');
  return `${sign}${seconds}${fraction === '' ? '' : `.${fraction}`}s`;
}

/**
 * A long wait in minutes for people, with one decimal: `~34.1 min` for 2,046 s, as the schedule
 * table annotates its cumulative column. Empty under a minute, where the seconds say enough.
 *
 * @example
 * ```ts
 * formatMinutes(2_046_000); // '~34.1 min'
 * formatMinutes(30_000); // ''
 * ```
 */
export function formatMinutes(ms: number): string {
  if (!Number.isFinite(ms) || Math.round(ms) < 60_000) return '';
  // Whole tenths first, so the digits come from integer arithmetic rather than toFixed's rounding.
  const tenths = Math.round(ms / 6000);
  return `~${Math.floor(tenths / 10)}.${tenths % 10} min`;
}
