/**
 * One request's waterfall: a bar per attempt coloured by how it ended, hatched segments for the
 * waits between them (labelled with why), and guard waits before the attempts they held back. All
 * rows in view share one time axis, so bars line up across requests.
 */

import { attemptClass, type RequestRow } from '../model/timeline';
import { clockTime, formatMs, guardLabel, refusalLabel, waitLabel } from './format';

/** The time span the visible rows share. */
export interface Axis {
  readonly start: number;
  readonly end: number;
}

/** The axis of `rows`: from the earliest thing drawn to the latest (`now` for what is still running). */
export function axisFor(rows: readonly RequestRow[], now: number): Axis | undefined {
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  for (const row of rows) {
    const first = row.guardWaits[0];
    const rowStart = first === undefined ? row.start : Math.min(row.start, first.start);
    if (rowStart < start) start = rowStart;
    const rowEnd = row.outcome === 'pending' ? Math.max(row.last, now) : row.last;
    if (rowEnd > end) end = rowEnd;
  }
  if (!Number.isFinite(start) || !Number.isFinite(end)) return undefined;
  // A zero-length axis (one instant request) still needs a width to draw in.
  return { start, end: Math.max(end, start + 1) };
}

/** `left`/`width` in percent of the axis, never narrower than a hairline. */
function place(axis: Axis, from: number, to: number): { left: string; width: string } {
  const span = axis.end - axis.start;
  const left = ((Math.max(from, axis.start) - axis.start) / span) * 100;
  const right = ((Math.min(Math.max(to, from), axis.end) - axis.start) / span) * 100;
  // Preact 11 adds no `px`/`%` to numbers: every length is a string with its unit.
  return { left: `${clamp(left)}%`, width: `${clamp(right - left)}%` };
}

function clamp(percent: number): number {
  return Math.round(Math.min(100, Math.max(0, percent)) * 1000) / 1000;
}

export interface WaterfallProps {
  readonly row: RequestRow;
  readonly axis: Axis;
  /** Where running attempts end for now. */
  readonly now: number;
}

export function Waterfall({ row, axis, now }: WaterfallProps) {
  const refusal = refusalLabel(row);
  return (
    <div class="rl-waterfall" data-testid="waterfall">
      {row.guardWaits.map((wait) => {
        const label = guardLabel(wait);
        return (
          <span
            key={`g${wait.attempt}-${wait.guard}`}
            class={`rl-wait rl-wait--${wait.guard}`}
            data-testid="wait"
            data-kind={wait.guard}
            style={place(axis, wait.start, wait.end)}
            title={`${label} (${wait.key}) before attempt ${wait.attempt}`}
          >
            {label}
          </span>
        );
      })}
      {row.waits.map((wait) => {
        const label = waitLabel(wait);
        return (
          <span
            key={`w${wait.afterAttempt}`}
            class={`rl-wait rl-wait--${wait.reason}`}
            data-testid="wait"
            data-kind={wait.reason}
            style={place(axis, wait.start, wait.start + wait.delay)}
            title={`${label} after attempt ${wait.afterAttempt}`}
          >
            {label}
          </span>
        );
      })}
      {row.attempts.map((attempt) => {
        const kind = attemptClass(attempt);
        const end = attempt.end ?? Math.max(now, attempt.start);
        return (
          <span
            key={`a${attempt.n}`}
            class={`rl-bar rl-bar--${kind}`}
            data-testid="attempt-bar"
            data-status={attempt.status === undefined ? kind : String(attempt.status)}
            data-attempt={String(attempt.n)}
            style={place(axis, attempt.start, end)}
            title={`attempt ${attempt.n}: ${attempt.status ?? attempt.error?.name ?? attempt.outcome} · ${
              attempt.end === undefined ? 'running' : formatMs(attempt.end - attempt.start)
            } · ${clockTime(attempt.start)}`}
          />
        );
      })}
      {refusal !== undefined && <Refusal label={refusal} at={row.end ?? row.last} axis={axis} />}
    </div>
  );
}

/** Where a guard refused the request; its label sits on whichever side has room. */
function Refusal({ label, at, axis }: { readonly label: string; readonly at: number; readonly axis: Axis }) {
  const { left } = place(axis, at, at);
  const percent = Number.parseFloat(left);
  const style = percent > 70 ? { right: `${clamp(100 - percent)}%` } : { left };
  return (
    <span
      class={percent > 70 ? 'rl-refusal rl-refusal--before' : 'rl-refusal'}
      data-testid="refusal"
      style={style}
      title={`refused: ${label} at ${clockTime(at)}`}
    >
      {label}
    </span>
  );
}

/** Tick labels for the shared axis, as offsets from its start (whose clock time is the title). */
export function WaterfallAxis({ axis }: { readonly axis: Axis | undefined }) {
  if (!axis) return <div class="rl-axis" />;
  const span = axis.end - axis.start;
  const ticks = [0, 0.25, 0.5, 0.75];
  return (
    <div class="rl-axis" title={`Time from ${clockTime(axis.start)}, for the rows in view`}>
      {ticks.map((at) => (
        <span key={at} class="rl-axis__tick" style={{ left: `${at * 100}%` }}>
          {at === 0 ? '0' : `+${formatMs(span * at)}`}
        </span>
      ))}
    </div>
  );
}
