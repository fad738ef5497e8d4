/**
 * What a lane's guards are doing at a moment (the end of the session, or now while it runs): the
 * breaker open or half-open, the retry budget spent, retries parked by the recovery gate, the
 * server's quota spent (a pacing hold that has not ended). Read from the lane's history and the
 * rows' guard waits, so the caption can say it in words ("breaker open until 12:00:33").
 */

import { frameKey } from '../shared/frame-key';
import { parkedSpans } from './gate-lane';
import type { OriginLane, RequestRow } from './timeline';

export type GuardState =
  | { readonly kind: 'breaker-open'; readonly since: number; readonly until?: number }
  | { readonly kind: 'breaker-half-open'; readonly since: number }
  | { readonly kind: 'budget-spent'; readonly since: number }
  | { readonly kind: 'parked'; readonly since: number; readonly retries: number }
  | { readonly kind: 'quota-spent'; readonly until: number };

/** The end of the latest pacing hold of each lane (`frameKey(source, key)`), from the rows' guard waits. */
export function pacingEnds(rows: readonly RequestRow[]): Map<string, number> {
  const ends = new Map<string, number>();
  for (const row of rows) {
    for (const wait of row.guardWaits) {
      if (wait.guard !== 'pacing') continue;
      const lane = frameKey(row.source, wait.key);
      ends.set(lane, Math.max(ends.get(lane) ?? Number.NEGATIVE_INFINITY, wait.end));
    }
  }
  return ends;
}

/** The lane's guards that hold requests back at `now`, in the order a caption names them. */
export function laneState(lane: OriginLane, now: number, pacingEnd?: number): GuardState[] {
  const states: GuardState[] = [];
  const breaker = lane.breaker[lane.breaker.length - 1];
  if (breaker?.to === 'open') {
    // Until its trial time: after it, the next request is let through as the trial.
    const until = breaker.retryAt !== undefined && breaker.retryAt > now ? breaker.retryAt : undefined;
    states.push(
      until === undefined
        ? { kind: 'breaker-open', since: breaker.t }
        : { kind: 'breaker-open', since: breaker.t, until },
    );
  } else if (breaker?.to === 'half-open') states.push({ kind: 'breaker-half-open', since: breaker.t });
  const budget = lane.budget[lane.budget.length - 1];
  if (budget && (!budget.allowed || budget.remaining <= 0))
    states.push({ kind: 'budget-spent', since: budget.t });
  const spans = parkedSpans(lane.gate);
  const open = spans[spans.length - 1];
  if (open && open.to === undefined) states.push({ kind: 'parked', since: open.from, retries: open.retries });
  if (pacingEnd !== undefined && pacingEnd > now) states.push({ kind: 'quota-spent', until: pacingEnd });
  return states;
}
