/**
 * The recovery gate on a key's lane. While a key (by default an origin) keeps failing, the gate
 * parks its retries (`retry-parked`) and releases them (`retry-released`) one probe at a time, then
 * all of them once the key answers again. A lane shows when the key had retries parked (from the
 * first park until none is left) and each probe where its attempt started, by how that attempt
 * ended: a success means the key recovered.
 *
 * Pure: folded from the gate's events as the lane keeps them, and, for a probe, its attempt's row.
 * Events can be missing (the worker's ring drops the oldest requests, a recording may be cut):
 * parks and releases are matched by request and attempt, so a release whose park is gone still
 * counts from when it was parked (its time minus its wait), and one told twice counts once.
 */

import type { ErrorSummary, RetryParkedEvent, RetryReleasedEvent } from '@retryline/core/instrument';
import { frameKey } from '../shared/frame-key';
import type { AttemptRow } from './timeline';

/** One `retry-parked` or `retry-released` event of a key, as its lane keeps it. */
export type GateMark =
  | Pick<RetryParkedEvent, 'type' | 'key' | 't' | 'requestId' | 'attempt' | 'failures'>
  | Pick<RetryReleasedEvent, 'type' | 'key' | 't' | 'requestId' | 'attempt' | 'reason' | 'waited'>;

/** A stretch of time in which the key had at least one retry parked. */
export interface ParkedSpan {
  /** When the first of its retries was parked. */
  readonly from: number;
  /** When the last of them was released; absent while some are still parked (as far as was recorded). */
  readonly to?: number;
  /** How many retries were parked in it. */
  readonly retries: number;
  /** The most parked at once. */
  readonly most: number;
}

/**
 * How a probe ended: `recovered` (its attempt succeeded, so the key answers again), `failed` (a
 * retryable status, a transport error or a timeout, and so the key is still held; also an error
 * response handed back, such as a 4xx, which the gate counts neither way: its status says which),
 * `aborted` (the caller stopped it, which tells nothing of the key), or `pending` (no end recorded yet).
 */
export type ProbeResult = 'recovered' | 'failed' | 'aborted' | 'pending';

/** A parked retry the gate let go ahead alone to test the key, and how its attempt ended. */
export interface ProbeMark {
  readonly requestId: string;
  readonly attempt: number;
  /** When its attempt started (else, when none is recorded, when it was released). */
  readonly t: number;
  /** When its attempt ended, if it has. */
  readonly end?: number;
  readonly result: ProbeResult;
  /** Its attempt's status, when a response came back. */
  readonly status?: number;
  /** Its attempt's error, when it failed without a response (or with one it could not read). */
  readonly error?: ErrorSummary;
}

/** Finds a request's attempt by number (in one frame's rows: the lane's). */
export type AttemptLookup = (requestId: string, attempt: number) => AttemptRow | undefined;

/** Which retry a mark speaks of: its request and attempt, unambiguous whatever the id holds. */
const retryOf = (mark: GateMark): string => frameKey(mark.requestId, String(mark.attempt));

/**
 * The spans in which the key had retries parked, in time order: one starts at a park while none is
 * parked and ends at the release that leaves none. A retry counts as parked from its park up to its
 * release, so a park at the instant the last parked retry is released keeps one span (the key was
 * held throughout) without counting both as parked at once. A retry still parked at the end leaves
 * its span open.
 */
export function parkedSpans(marks: readonly GateMark[]): ParkedSpan[] {
  // +1 when a retry is parked, -1 when it is released, as one list of time points.
  const points: { t: number; delta: 1 | -1 }[] = [];
  for (const [parkedAt, releasedAt] of parkedRetries(marks)) {
    points.push({ t: parkedAt, delta: 1 });
    if (releasedAt !== undefined) points.push({ t: Math.max(parkedAt, releasedAt), delta: -1 });
  }
  points.sort((a, b) => a.t - b.t);
  const spans: ParkedSpan[] = [];
  let open: { from: number; retries: number; most: number } | undefined;
  let parked = 0;
  for (let i = 0; i < points.length; ) {
    // Every point of one instant at once: its releases, then its parks.
    const t = (points[i] as (typeof points)[number]).t;
    let parks = 0;
    for (; i < points.length && points[i]?.t === t; i++) {
      if (points[i]?.delta === 1) parks++;
      else parked--;
    }
    parked += parks;
    if (parks > 0) {
      open ??= { from: t, retries: 0, most: 0 };
      open.retries += parks;
      // (At least one: a retry parked and released in the same instant was parked, if briefly.)
      open.most = Math.max(open.most, parked, 1);
    }
    if (parked === 0 && open) {
      spans.push({ ...open, to: t });
      open = undefined;
    }
  }
  if (open) spans.push(open);
  return spans;
}

/** Each parked retry's park and release times (a release's park inferred when it was not recorded). */
function parkedRetries(marks: readonly GateMark[]): [number, number | undefined][] {
  const parks = new Map<string, number>();
  const releases = new Map<string, { t: number; waited: number }>();
  for (const mark of marks) {
    if (!Number.isFinite(mark.t)) continue;
    if (mark.type === 'retry-parked') parks.set(retryOf(mark), mark.t);
    else releases.set(retryOf(mark), { t: mark.t, waited: Number.isFinite(mark.waited) ? mark.waited : 0 });
  }
  const retries: [number, number | undefined][] = [];
  for (const [retry, parkedAt] of parks) retries.push([parkedAt, releases.get(retry)?.t]);
  for (const [retry, release] of releases) {
    if (!parks.has(retry)) retries.push([release.t - Math.max(0, release.waited), release.t]);
  }
  return retries;
}

/** The probes among the marks (releases with reason `probe`), each once, in time order. */
export function probeMarks(marks: readonly GateMark[], attemptOf: AttemptLookup): ProbeMark[] {
  const probes = new Map<string, ProbeMark>();
  for (const mark of marks) {
    if (mark.type !== 'retry-released' || mark.reason !== 'probe' || !Number.isFinite(mark.t)) continue;
    const attempt = attemptOf(mark.requestId, mark.attempt);
    probes.set(retryOf(mark), {
      requestId: mark.requestId,
      attempt: mark.attempt,
      t: attempt?.start ?? mark.t,
      ...(attempt?.end === undefined ? {} : { end: attempt.end }),
      result: probeResult(attempt),
      ...(attempt?.status === undefined ? {} : { status: attempt.status }),
      ...(attempt?.error === undefined ? {} : { error: attempt.error }),
    });
  }
  return [...probes.values()].sort((a, b) => a.t - b.t);
}

/** How a probe's attempt ended, in the gate's terms: only a success says the key answers again. */
function probeResult(attempt: Pick<AttemptRow, 'outcome'> | undefined): ProbeResult {
  switch (attempt?.outcome) {
    case undefined:
    case 'pending':
      return 'pending';
    case 'success':
      return 'recovered';
    case 'aborted':
      return 'aborted';
    default:
      return 'failed';
  }
}
