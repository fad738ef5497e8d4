/**
 * The time axis every waterfall and lane is drawn on: the whole session's span, from the earliest
 * time anything recorded speaks of to the latest (or to now, while a live request runs). One axis
 * per session rather than per screenful of rows: scrolling moves no bar and no tick, and the
 * breaker, budget and gate lanes line up with the rows below them.
 *
 * Pure: positions are percentages of the axis, ticks offsets in milliseconds from its start.
 */

import type { Timeline } from './timeline';

export interface Axis {
  readonly start: number;
  readonly end: number;
}

/**
 * The session's axis: the timeline's span, stretched to `runningUntil` (a live tab's clock while
 * a request runs). Undefined for an empty timeline.
 */
export function sessionAxis(
  timeline: Pick<Timeline, 'start' | 'end'>,
  runningUntil?: number,
): Axis | undefined {
  const { start, end } = timeline;
  if (start === undefined || end === undefined) return undefined;
  const last =
    runningUntil === undefined || !Number.isFinite(runningUntil) ? end : Math.max(end, runningUntil);
  // A zero-length session (one instant request) still needs a width to draw in.
  return { start, end: Math.max(last, start + 1) };
}

/** Where `t` falls on the axis, in percent (clamped to 0–100). */
export function percentAt(axis: Axis, t: number): number {
  return round(unrounded(axis, t));
}

/** The stretch from `from` to `to` on the axis, as `left` and `width` in percent. */
export function spanOn(axis: Axis, from: number, to: number): { left: number; width: number } {
  const left = unrounded(axis, from);
  return { left: round(left), width: round(Math.max(0, unrounded(axis, Math.max(from, to)) - left)) };
}

function unrounded(axis: Axis, t: number): number {
  const ratio = (t - axis.start) / (axis.end - axis.start);
  return Number.isNaN(ratio) ? 0 : Math.min(100, Math.max(0, ratio * 100));
}

/** Three decimals: enough for a 10 000 px wide waterfall, and stable strings for styles. */
function round(percent: number): number {
  return Math.round(percent * 1000) / 1000;
}

const MINUTE = 60_000;

/**
 * The smallest step of 1, 2 or 5 × 10^n at least `raw` milliseconds long (at least 1 ms); past
 * about a minute, of 1, 2 or 5 × 10^n minutes, so long sessions tick at whole minutes.
 */
export function niceStep(raw: number): number {
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  if (raw > 50_000) return niceMultiple(raw / MINUTE) * MINUTE;
  return niceMultiple(raw);
}

function niceMultiple(raw: number): number {
  const value = Math.max(1, raw);
  const power = 10 ** Math.floor(Math.log10(value));
  for (const multiple of [1, 2, 5]) {
    // A hair of tolerance: 0.30000000000000004 of a 0.3 is still 0.3.
    if (multiple * power >= value * (1 - 1e-9)) return multiple * power;
  }
  return 10 * power;
}

/**
 * The axis's ticks: offsets from its start, a nice step apart ({@link niceStep}), at most
 * `maxTicks` of them (the first at 0).
 */
export function axisTicks(axis: Axis, maxTicks: number): { readonly step: number; readonly at: number[] } {
  const span = axis.end - axis.start;
  const step = niceStep(span / Math.max(1, Math.floor(maxTicks)));
  const at: number[] = [];
  for (let i = 0; i * step < span; i++) at.push(i * step);
  return { step, at };
}

/**
 * A tick's label: `0`, `+200 ms`, `+1.4 s` (as many decimals as the step needs), `+2 min`.
 */
export function tickLabel(at: number, step: number): string {
  if (at === 0) return '0';
  if (step >= MINUTE) return `+${trimmed(at / MINUTE, 0)} min`;
  if (at < 1000) return `+${trimmed(at, 0)} ms`;
  const decimals = step >= 1000 ? 0 : step >= 100 ? 1 : step >= 10 ? 2 : 3;
  return `+${trimmed(at / 1000, decimals)} s`;
}

/** `value` with at most `decimals` decimals, and no trailing zeros. */
function trimmed(value: number, decimals: number): string {
  return String(Number(value.toFixed(decimals)));
}
