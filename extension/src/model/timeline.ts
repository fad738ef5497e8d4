/**
 * The panel's data model: the event stream of a tab (or a recording) folded into one row per
 * request, plus per-key breaker, budget and recovery gate lanes and navigation separators. Pure and
 * incremental: {@link appendTimeline} touches only the rows a batch of entries names, so a live
 * tab with thousands of requests costs each append only its own events.
 *
 * Events can arrive incomplete: the worker's ring drops the oldest requests first, so a request's
 * `request-start` may be gone while its later events survive, and a recording may be cut
 * anywhere. Every event therefore creates its row if needed, and times that are missing are
 * inferred from the ones present (an attempt's start from its end and duration, and so on).
 *
 * A row is the sending frame's origin and the request id together, and a lane the origin and the
 * guard key ({@link frameKey}): a frame can never add to another frame's rows, even
 * one whose request id it knows.
 */

import type { RetrylineEvent } from '@retryline/core';
import type {
  AttemptOutcome,
  AttemptPhase,
  ErrorSummary,
  RequestOutcome,
  RetryScheduledEvent,
} from '@retryline/core/instrument';
import type { BreakerStateName } from '@retryline/core/store';
import { frameKey } from '../shared/frame-key';
import type { TimelineEntry } from '../shared/protocol';
import { type GateMark, type ProbeMark, probeMarks } from './gate-lane';
import { requestFields } from './start-row';

/** Header names to values, as the events carry them (sensitive values already `[redacted]`). */
export type HeaderMap = Readonly<Record<string, string>>;

/** How a request ended, or `'pending'` while its `request-end` has not been seen. */
export type RowOutcome = RequestOutcome | 'pending';

/** How an attempt ended, or `'pending'` while its `attempt-end` has not been seen. */
export type AttemptState = AttemptOutcome | 'pending';

/** One attempt of a request. */
export interface AttemptRow {
  /** The attempt number, from 1. */
  readonly n: number;
  /** When it was sent (from `attempt-start`, else inferred as its end minus its duration). */
  readonly start: number;
  readonly end?: number;
  readonly status?: number;
  readonly outcome: AttemptState;
  readonly phase?: AttemptPhase;
  readonly error?: ErrorSummary;
  readonly requestHeaders?: HeaderMap;
  readonly responseHeaders?: HeaderMap;
  /**
   * Answered by a fault the Retryline DevTools panel injected (its `attempt-start` or
   * `attempt-end` said so): not the server's answer alone. Absent for an attempt sent as usual.
   */
  readonly injected?: true;
  /**
   * The endpoint (base URL) it was sent to, when its client was given several (`endpoints`): as
   * its `attempt-start` names it (else its `attempt-end`, which names the endpoint that answered),
   * redacted as URLs are. Absent when the attempt went to its URL as given.
   */
  readonly endpoint?: string;
  /**
   * A hedge: a second copy of attempt {@link n}, sent (to another endpoint, where there is one)
   * while that attempt was still running. It has its own pair of events (`hedge: true`), kept in
   * {@link RequestRow.hedges}, never among the request's attempts. A hedge that lost ends `aborted`.
   */
  readonly hedge?: true;
  /**
   * The attempt was cancelled because its hedge answered first, and that answer was taken (the
   * loop's `attempt-end` said `answeredBy: 'hedge'`): its outcome and status are the hedge's answer
   * as the loop judged it, not a response of its own.
   */
  readonly answeredBy?: 'hedge';
}

/** A retry's wait, from its `retry-scheduled` event (which fires as the wait begins): its figures, placed on the request's timeline. */
export interface WaitRow
  extends Pick<RetryScheduledEvent, 'delay' | 'reason' | 'strategy' | 'jitter' | 'raw' | 'capped' | 'hint'> {
  /** The attempt the wait follows; the next attempt is `afterAttempt + 1`. */
  readonly afterAttempt: number;
  readonly start: number;
}

/** An attempt held back by a guard (rate limiter, bulkhead, pacing) before it was sent. */
export interface GuardWaitRow {
  /** The attempt that waited. */
  readonly attempt: number;
  /** `parked`: the recovery gate held a retry while its origin kept failing. */
  readonly guard: 'limiter' | 'bulkhead' | 'pacing' | 'parked';
  readonly key: string;
  /** Milliseconds waited. */
  readonly waited: number;
  /** When the event fired (as the wait ended, just before the attempt started). */
  readonly t: number;
  /** When the wait ended: the start of the attempt it held back, else the event's time. */
  readonly end: number;
  /** `end - waited`. */
  readonly start: number;
}

/** One logical request: every attempt, wait and guard wait it went through. */
export interface RequestRow {
  /** What identifies the row: `frameKey(source, requestId)`. Two frames may use one request id. */
  readonly key: string;
  readonly requestId: string;
  /** Its index in {@link Timeline.rows} (rows keep the order in which they first appeared). */
  readonly index: number;
  /**
   * The origin of the frame or process that emitted the events (the entry's `origin`: in the
   * extension, what the browser said of the sender).
   */
  readonly source: string;
  /** `'retry'`, `'fetch'`, `'axios'`, `'ky'` …, or `'unknown'` when `request-start` is missing. */
  readonly client: string;
  readonly operation?: string;
  /** The HTTP method, or `''` for a non-HTTP operation. */
  readonly method: string;
  /** The redacted URL, or `''`. */
  readonly url: string;
  /** The URL's origin (`https://api.example`), or `''` when there is no absolute URL. */
  readonly origin: string;
  /** The URL's path and (masked) query, or the URL as given when it does not parse. */
  readonly path: string;
  /** Whether its `request-start` was seen (if not, the start is inferred from later events). */
  readonly complete: boolean;
  readonly start: number;
  /** When it ended (`request-end`), if it has. */
  readonly end?: number;
  /** The latest time any of its events speaks of: the right edge of its waterfall. */
  readonly last: number;
  readonly outcome: RowOutcome;
  /** The final status, or while pending the latest attempt's status. */
  readonly status?: number;
  readonly error?: ErrorSummary;
  readonly totalDelay?: number;
  readonly duration?: number;
  /** Sorted by attempt number. */
  readonly attempts: readonly AttemptRow[];
  /** How many of its attempts the panel's fault injection answered ({@link AttemptRow.injected}). */
  readonly injected: number;
  /**
   * The hedges sent beside its attempts ({@link AttemptRow.hedge}), sorted by the attempt each
   * hedged. Apart from {@link attempts}, so a hedge never counts as an attempt of its own.
   */
  readonly hedges: readonly AttemptRow[];
  /** Sorted by the attempt they follow. */
  readonly waits: readonly WaitRow[];
  /** Sorted by attempt. */
  readonly guardWaits: readonly GuardWaitRow[];
  /**
   * The extension stopped keeping this request's events at its per-request limit: `dropped` of
   * them were not recorded (0 while none is known to have been). Absent when nothing was cut.
   */
  readonly truncated?: { readonly dropped: number };
}

/** A navigation of the tab's top frame, drawn as a separator before the row at `beforeRow`. */
export interface NavigationMark {
  readonly url: string;
  readonly t: number;
  /** The number of rows that existed when it happened. */
  readonly beforeRow: number;
}

export type { BreakerStateName };

export interface BreakerTransition {
  readonly key: string;
  readonly t: number;
  readonly from: BreakerStateName;
  readonly to: BreakerStateName;
  /** On opening: from when it lets its first trial through. */
  readonly retryAt?: number;
}

export interface BudgetSample {
  readonly key: string;
  readonly t: number;
  readonly remaining: number;
  readonly allowed: boolean;
}

/**
 * The breaker, budget and recovery gate history of one guard key (by default an origin) in one
 * frame's origin (each frame runs its own guards), each sorted by time.
 */
export interface OriginLane {
  readonly key: string;
  /** The origin of the frame or process whose breaker and budget these are (the entries' `origin`). */
  readonly source: string;
  readonly breaker: readonly BreakerTransition[];
  readonly budget: readonly BudgetSample[];
  /** The recovery gate's parks and releases of the key's retries (drawn as spans: `parkedSpans`). */
  readonly gate: readonly GateMark[];
  /** The gate's probes of the key, each with how its attempt ended (read from its request's row). */
  readonly probes: readonly ProbeMark[];
}

export interface Timeline {
  readonly rows: readonly RequestRow[];
  readonly navigations: readonly NavigationMark[];
  /** Sorted by key, then source. */
  readonly lanes: readonly OriginLane[];
  /** The earliest and latest times of anything in the timeline (both undefined when it is empty). */
  readonly start?: number;
  readonly end?: number;
  /** How many entries were folded in. */
  readonly entryCount: number;
}

/**
 * The lookup tables behind a timeline. They are shared with the timeline an append produces and
 * extended in place, so they belong to one timeline at a time (`owner`): appending to an older
 * timeline again rebuilds them from its rows instead of seeing rows from its future.
 */
interface TimelineIndex {
  owner: Timeline;
  /** By {@link RequestRow.key}. */
  readonly rows: Map<string, number>;
  /** By `frameKey(source, key)`. */
  readonly lanes: Map<string, number>;
  /** The lanes with a probe among a row's attempts, by the row's key. */
  readonly probes: Map<string, LaneId[]>;
}

/** What names a lane: the frame's origin and the guard key. */
interface LaneId {
  readonly source: string;
  readonly key: string;
}

const indexes = new WeakMap<Timeline, TimelineIndex>();

/** A timeline with nothing in it. */
export function emptyTimeline(): Timeline {
  return { rows: [], navigations: [], lanes: [], entryCount: 0 };
}

/** Folds a whole entry list into a timeline. */
export function foldTimeline(entries: readonly TimelineEntry[]): Timeline {
  return appendTimeline(emptyTimeline(), entries);
}

/** Every mutable piece of a row while a batch is folded in; frozen back into a {@link RequestRow}. */
interface RowDraft {
  key: string;
  requestId: string;
  index: number;
  source: string;
  client?: string;
  operation?: string;
  method?: string;
  url?: string;
  startedAt?: number;
  end?: number;
  outcome?: RequestOutcome;
  status?: number;
  error?: ErrorSummary;
  totalDelay?: number;
  duration?: number;
  /** By attempt number; sorted when frozen. Maps, so folding n events of a row is O(n log n). */
  attempts: Map<number, AttemptRow>;
  /** By the number of the attempt each hedged (core sends at most one hedge per attempt). */
  hedges: Map<number, AttemptRow>;
  /** By the attempt they follow. */
  waits: Map<number, WaitRow>;
  /** By attempt and guard (see {@link guardKey}). */
  guardWaits: Map<string, GuardWaitDraft>;
  /** The most events the extension said it dropped (see {@link RequestRow.truncated}). */
  truncated?: number;
}

interface GuardWaitDraft {
  readonly attempt: number;
  readonly guard: GuardWaitRow['guard'];
  readonly key: string;
  readonly waited: number;
  readonly t: number;
}

const guardKey = (attempt: number, guard: string): string => `${attempt} ${guard}`;

interface LaneDraft {
  key: string;
  source: string;
  breaker: BreakerTransition[];
  budget: BudgetSample[];
  gate: GateMark[];
  /** Something was added out of time order: sort before freezing. */
  unsorted: boolean;
}

/**
 * One append in progress: copies of the timeline's lists (a row or lane being rebuilt holds an
 * `undefined` placeholder until it is frozen), the drafts opened so far, and the time span.
 */
interface Batch {
  readonly index: TimelineIndex;
  readonly rows: RequestRow[];
  readonly navigations: NavigationMark[];
  readonly lanes: OriginLane[];
  /** By index in `rows`. */
  readonly rowDrafts: Map<number, RowDraft>;
  /** By index in `lanes`. */
  readonly laneDrafts: Map<number, LaneDraft>;
  /** Widens the time span to `t`. */
  readonly see: (t: number) => void;
  start: number | undefined;
  end: number | undefined;
}

/**
 * The timeline with `entries` folded in, leaving `timeline` unchanged. Only rows and lanes the
 * entries touch are rebuilt; every other row keeps its identity, so views can skip them.
 */
export function appendTimeline(timeline: Timeline, entries: readonly TimelineEntry[]): Timeline {
  if (entries.length === 0) return timeline;
  const batch = openBatch(timeline);
  for (const entry of entries) foldEntry(batch, entry);

  for (const [at, draft] of batch.rowDrafts) batch.rows[at] = freeze(draft);
  // A probe's lane shows how its attempt ended: rebuilt when that attempt's row was.
  for (const draft of batch.rowDrafts.values()) {
    for (const lane of batch.index.probes.get(draft.key) ?? []) laneFor(batch, lane.source, lane.key);
  }
  for (const [at, draft] of batch.laneDrafts) batch.lanes[at] = freezeLane(batch, draft);
  const lanes = batch.laneDrafts.size > 0 ? sortLanes(batch.lanes, batch.index) : batch.lanes;

  const { start, end, index } = batch;
  const next: Timeline = {
    rows: batch.rows,
    navigations: batch.navigations,
    lanes,
    ...(start === undefined ? {} : { start }),
    ...(end === undefined ? {} : { end }),
    entryCount: timeline.entryCount + entries.length,
  };
  index.owner = next;
  indexes.set(next, index);
  return next;
}

function openBatch(timeline: Timeline): Batch {
  const batch: Batch = {
    index: indexFor(timeline),
    rows: timeline.rows.slice(),
    navigations: timeline.navigations.slice(),
    lanes: timeline.lanes.slice(),
    rowDrafts: new Map(),
    laneDrafts: new Map(),
    see: (t) => {
      if (batch.start === undefined || t < batch.start) batch.start = t;
      if (batch.end === undefined || t > batch.end) batch.end = t;
    },
    start: timeline.start,
    end: timeline.end,
  };
  return batch;
}

function foldEntry(batch: Batch, entry: TimelineEntry): void {
  if (entry.type === 'navigation') {
    if (!Number.isFinite(entry.t)) return;
    batch.see(entry.t);
    batch.navigations.push({ url: entry.url, t: entry.t, beforeRow: batch.rows.length });
    return;
  }
  const event = entry.event;
  if (!Number.isFinite(event.t)) return;
  batch.see(event.t);
  if (event.type === 'breaker-state') {
    const lane = laneFor(batch, entry.origin, event.key);
    const { key, t, from, to, retryAt } = event;
    pushByTime(
      lane,
      lane.breaker,
      retryAt === undefined ? { key, t, from, to } : { key, t, from, to, retryAt },
    );
    return;
  }
  if (event.type === 'budget') {
    const lane = laneFor(batch, entry.origin, event.key);
    const { key, t, remaining, allowed } = event;
    pushByTime(lane, lane.budget, { key, t, remaining, allowed });
    return;
  }
  if (event.type === 'retry-parked' || event.type === 'retry-released') {
    foldGateMark(batch, entry.origin, event);
  }
  const draft = rowDraftFor(batch, event.requestId, entry.origin);
  applyToRow(draft, event, batch.see);
  if (entry.truncated) draft.truncated = Math.max(draft.truncated ?? 0, entry.truncated.dropped);
}

/** A gate event goes to its key's lane too (its request's row draws the parked wait). */
function foldGateMark(
  batch: Batch,
  source: string,
  event: Extract<RetrylineEvent, { type: 'retry-parked' | 'retry-released' }>,
): void {
  const lane = laneFor(batch, source, event.key);
  const { type, key, t, requestId, attempt } = event;
  if (type === 'retry-parked') {
    pushByTime(lane, lane.gate, { type, key, t, requestId, attempt, failures: event.failures });
    return;
  }
  pushByTime(lane, lane.gate, {
    type,
    key,
    t,
    requestId,
    attempt,
    reason: event.reason,
    waited: event.waited,
  });
  if (event.reason === 'probe') noteProbe(batch.index, frameKey(source, requestId), { source, key });
}

function noteProbe(index: TimelineIndex, row: string, lane: LaneId): void {
  const lanes = index.probes.get(row) ?? [];
  if (!lanes.some((known) => known.source === lane.source && known.key === lane.key)) lanes.push(lane);
  index.probes.set(row, lanes);
}

function rowDraftFor(batch: Batch, requestId: string, source: string): RowDraft {
  const key = frameKey(source, requestId);
  let at = batch.index.rows.get(key);
  if (at === undefined) {
    at = batch.rows.length;
    batch.index.rows.set(key, at);
    // A placeholder until the batch is frozen, so `rows.length` counts it for navigations.
    batch.rows.push(undefined as never);
    const draft: RowDraft = {
      key,
      requestId,
      index: at,
      source,
      attempts: new Map(),
      hedges: new Map(),
      waits: new Map(),
      guardWaits: new Map(),
    };
    batch.rowDrafts.set(at, draft);
    return draft;
  }
  let draft = batch.rowDrafts.get(at);
  if (!draft) {
    draft = thaw(batch.rows[at] as RequestRow);
    batch.rowDrafts.set(at, draft);
  }
  return draft;
}

function laneFor(batch: Batch, source: string, key: string): LaneDraft {
  const id = frameKey(source, key);
  let at = batch.index.lanes.get(id);
  if (at === undefined) {
    at = batch.lanes.length;
    batch.index.lanes.set(id, at);
    batch.lanes.push(undefined as never);
    const draft: LaneDraft = { key, source, breaker: [], budget: [], gate: [], unsorted: false };
    batch.laneDrafts.set(at, draft);
    return draft;
  }
  let draft = batch.laneDrafts.get(at);
  if (!draft) {
    const lane = batch.lanes[at] as OriginLane;
    draft = {
      key,
      source,
      breaker: lane.breaker.slice(),
      budget: lane.budget.slice(),
      gate: lane.gate.slice(),
      unsorted: false,
    };
    batch.laneDrafts.set(at, draft);
  }
  return draft;
}

/** A lane from its draft; its probes are read from the batch's rows, which are frozen first. */
function freezeLane(batch: Batch, draft: LaneDraft): OriginLane {
  if (draft.unsorted) {
    // Stable: samples of the same time keep the order they came in.
    draft.breaker.sort(byTime);
    draft.budget.sort(byTime);
    draft.gate.sort(byTime);
  }
  const attemptOf = (requestId: string, n: number): AttemptRow | undefined => {
    const at = batch.index.rows.get(frameKey(draft.source, requestId));
    return at === undefined ? undefined : attemptNumbered(batch.rows[at] as RequestRow, n);
  };
  const { key, source, breaker, budget, gate } = draft;
  return { key, source, breaker, budget, gate, probes: probeMarks(gate, attemptOf) };
}

/** A row's attempts and hedges in the order they were sent: each hedge after the attempt it hedged. */
export function attemptsAndHedges(row: RequestRow): AttemptRow[] {
  if (row.hedges.length === 0) return row.attempts.slice();
  // A stable sort: of an attempt and its hedge, which have one number, the attempt stays first.
  return [...row.attempts, ...row.hedges].sort((a, b) => a.n - b.n);
}

/** A row's attempt `n` (attempts are sorted by number and usually 1, 2, 3 …: looked up in place first). */
function attemptNumbered(row: RequestRow, n: number): AttemptRow | undefined {
  const guess = row.attempts[n - 1];
  return guess?.n === n ? guess : row.attempts.find((attempt) => attempt.n === n);
}

function indexFor(timeline: Timeline): TimelineIndex {
  const index = indexes.get(timeline);
  if (index && index.owner === timeline) return index;
  const rebuilt: TimelineIndex = {
    owner: timeline,
    rows: new Map(timeline.rows.map((row, at) => [row.key, at])),
    lanes: new Map(timeline.lanes.map((lane, at) => [frameKey(lane.source, lane.key), at])),
    probes: new Map(),
  };
  for (const { source, key, probes } of timeline.lanes) {
    for (const probe of probes) noteProbe(rebuilt, frameKey(source, probe.requestId), { source, key });
  }
  return rebuilt;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Lanes sorted by key, then source; the index follows the new positions. */
function sortLanes(lanes: OriginLane[], index: TimelineIndex): OriginLane[] {
  lanes.sort((a, b) => compare(a.key, b.key) || compare(a.source, b.source));
  index.lanes.clear();
  lanes.forEach((lane, at) => {
    index.lanes.set(frameKey(lane.source, lane.key), at);
  });
  return lanes;
}

type RowEvent = Exclude<RetrylineEvent, { type: 'breaker-state' } | { type: 'budget' }>;

function applyToRow(draft: RowDraft, event: RowEvent, see: (t: number) => void): void {
  switch (event.type) {
    case 'request-start':
      draft.startedAt = event.t;
      draft.client = event.client;
      if (event.operation !== undefined) draft.operation = event.operation;
      if (event.method !== undefined) draft.method = event.method;
      if (event.url !== undefined) draft.url = event.url;
      return;
    case 'attempt-start': {
      // A hedge's pair has its attempt's number: it is kept apart, or it would replace the attempt.
      const list = event.hedge === true ? draft.hedges : draft.attempts;
      const found = list.get(event.attempt);
      const base: AttemptRow = found ?? { n: event.attempt, start: event.t, outcome: 'pending' };
      list.set(event.attempt, {
        ...base,
        start: event.t,
        ...(hasHeaders(event.headers) ? { requestHeaders: event.headers } : {}),
        ...(event.injected === true ? INJECTED : {}),
        ...(event.endpoint === undefined ? {} : { endpoint: event.endpoint }),
        ...(event.hedge === true ? HEDGE : {}),
      });
      return;
    }
    case 'attempt-end': {
      const duration = Number.isFinite(event.duration) ? event.duration : 0;
      const hedge = event.hedge === true;
      const list = hedge ? draft.hedges : draft.attempts;
      const found = list.get(event.attempt);
      const start = found?.start ?? event.t - duration;
      const answeredBy = !hedge && event.answeredBy === 'hedge';
      // Where it was sent, as its start says; its end names the endpoint that answered, which for
      // an attempt its hedge answered is the hedge's (only a hedge answers for another attempt).
      const endpoint = found?.endpoint ?? (answeredBy ? undefined : event.endpoint);
      see(start);
      // Keep what attempt-start said (start, request headers, the marks); the rest is the end's to
      // say. Either event's mark marks the attempt: a recording may have lost the other.
      list.set(event.attempt, {
        n: event.attempt,
        start,
        ...(found?.requestHeaders === undefined ? {} : { requestHeaders: found.requestHeaders }),
        ...(found?.injected === true || event.injected === true ? INJECTED : {}),
        ...(endpoint === undefined ? {} : { endpoint }),
        ...(hedge ? HEDGE : {}),
        end: event.t,
        outcome: event.outcome,
        ...(event.status === undefined ? {} : { status: event.status }),
        ...(event.phase === undefined ? {} : { phase: event.phase }),
        ...(event.error === undefined ? {} : { error: event.error }),
        ...(hasHeaders(event.headers) ? { responseHeaders: event.headers } : {}),
        // Only the loop's own end can say its hedge answered: a hedge is not hedged.
        ...(answeredBy ? ANSWERED_BY_HEDGE : {}),
      });
      return;
    }
    case 'retry-scheduled': {
      const wait: WaitRow = {
        afterAttempt: event.attempt - 1,
        start: event.t,
        delay: event.delay,
        reason: event.reason,
        strategy: event.strategy,
        jitter: event.jitter,
        raw: event.raw,
        capped: event.capped,
        ...(event.hint === undefined ? {} : { hint: event.hint }),
      };
      see(event.t + (Number.isFinite(event.delay) ? event.delay : 0));
      draft.waits.set(wait.afterAttempt, wait);
      return;
    }
    case 'guard-wait': {
      const wait = {
        attempt: event.attempt,
        guard: event.guard,
        key: event.key,
        waited: event.waited,
        t: event.t,
      };
      see(event.t - (Number.isFinite(event.waited) ? event.waited : 0));
      draft.guardWaits.set(guardKey(wait.attempt, wait.guard), wait);
      return;
    }
    case 'retry-parked':
      see(event.t);
      return;
    case 'retry-released': {
      // A parked retry's wait, drawn as its own kind of wait (the gate tells of it in these events
      // rather than in a guard-wait).
      const wait = {
        attempt: event.attempt,
        guard: 'parked' as const,
        key: event.key,
        waited: event.waited,
        t: event.t,
      };
      see(event.t - (Number.isFinite(event.waited) ? event.waited : 0));
      draft.guardWaits.set(guardKey(wait.attempt, wait.guard), wait);
      return;
    }
    case 'request-end':
      draft.end = event.t;
      draft.outcome = event.outcome;
      draft.totalDelay = event.totalDelay;
      draft.duration = event.duration;
      if (event.status !== undefined) draft.status = event.status;
      else delete draft.status;
      if (event.error !== undefined) draft.error = event.error;
      else delete draft.error;
      if (draft.startedAt === undefined && Number.isFinite(event.duration)) see(event.t - event.duration);
      return;
  }
}

/** The mark of an attempt answered by an injected fault, as its events carry it. */
const INJECTED = { injected: true } as const;
/** The mark of a hedge, as its events carry it. */
const HEDGE = { hedge: true } as const;
/** The mark of an attempt cancelled because its hedge's answer was taken. */
const ANSWERED_BY_HEDGE = { answeredBy: 'hedge' } as const;

/** An absent and an empty header map say the same: both leave the attempt's headers unset. */
function hasHeaders(headers: HeaderMap | undefined): headers is HeaderMap {
  return headers !== undefined && Object.keys(headers).length > 0;
}

const byTime = (a: { readonly t: number }, b: { readonly t: number }): number => a.t - b.t;

/** Appends to a lane's list, noting when that breaks its time order (it is sorted once, at the end). */
function pushByTime<T extends { readonly t: number }>(lane: LaneDraft, list: T[], item: T): void {
  const last = list[list.length - 1];
  if (last !== undefined && last.t > item.t) lane.unsorted = true;
  list.push(item);
}

/** `list` sorted by `key`: as it is when it already is (the usual case, and O(n) to check). */
function sortedBy<T>(list: T[], key: (item: T) => number): T[] {
  for (let i = 1; i < list.length; i++) {
    if (key(list[i - 1] as T) > key(list[i] as T)) return list.sort((a, b) => key(a) - key(b));
  }
  return list;
}

function thaw(row: RequestRow): RowDraft {
  const draft: RowDraft = {
    key: row.key,
    requestId: row.requestId,
    index: row.index,
    source: row.source,
    attempts: new Map(row.attempts.map((a) => [a.n, a])),
    hedges: new Map(row.hedges.map((h) => [h.n, h])),
    waits: new Map(row.waits.map((w) => [w.afterAttempt, w])),
    guardWaits: new Map(
      row.guardWaits.map(({ attempt, guard, key, waited, t }) => [
        guardKey(attempt, guard),
        { attempt, guard, key, waited, t },
      ]),
    ),
  };
  if (row.truncated) draft.truncated = row.truncated.dropped;
  if (row.complete) {
    draft.startedAt = row.start;
    draft.client = row.client;
    if (row.method !== '') draft.method = row.method;
    if (row.url !== '') draft.url = row.url;
  }
  if (row.operation !== undefined) draft.operation = row.operation;
  if (row.end !== undefined) draft.end = row.end;
  if (row.outcome !== 'pending') draft.outcome = row.outcome;
  if (row.outcome !== 'pending' && row.status !== undefined) draft.status = row.status;
  if (row.error !== undefined) draft.error = row.error;
  if (row.totalDelay !== undefined) draft.totalDelay = row.totalDelay;
  if (row.duration !== undefined) draft.duration = row.duration;
  return draft;
}

function freeze(draft: RowDraft): RequestRow {
  // Map order is insertion order; a stable sort keeps it among equal keys.
  const attempts = sortedBy([...draft.attempts.values()], (a) => a.n);
  const hedges = sortedBy([...draft.hedges.values()], (h) => h.n);
  const waits = sortedBy([...draft.waits.values()], (w) => w.afterAttempt);
  const guardWaits = sortedBy([...draft.guardWaits.values()], (g) => g.attempt).map(
    ({ attempt, guard, key, waited, t }): GuardWaitRow => {
      // Drawn ending where the attempt it held back began; the event itself fires just before that.
      const end = draft.attempts.get(attempt)?.start ?? t;
      return { attempt, guard, key, waited, t, end, start: end - waited };
    },
  );

  let earliest = Number.POSITIVE_INFINITY;
  let latest = Number.NEGATIVE_INFINITY;
  const note = (t: number | undefined) => {
    if (t === undefined || !Number.isFinite(t)) return;
    if (t < earliest) earliest = t;
    if (t > latest) latest = t;
  };
  let injected = 0;
  for (const a of attempts) {
    note(a.start);
    note(a.end);
    if (a.injected) injected++;
  }
  for (const h of hedges) {
    note(h.start);
    note(h.end);
  }
  for (const w of waits) {
    note(w.start);
    note(w.start + w.delay);
  }
  for (const g of guardWaits) {
    note(g.start);
    note(g.end);
  }
  note(draft.end);
  if (draft.end !== undefined && draft.startedAt === undefined && draft.duration !== undefined) {
    note(draft.end - draft.duration);
  }
  const start = draft.startedAt ?? (Number.isFinite(earliest) ? earliest : 0);
  note(start);

  const lastStatus = findLast(attempts, (a) => a.status !== undefined)?.status;
  const status = draft.outcome === undefined ? lastStatus : draft.status;

  return {
    key: draft.key,
    requestId: draft.requestId,
    index: draft.index,
    source: draft.source,
    // What its start said, read as startedRow reads it for a row that has only started.
    ...requestFields(draft),
    complete: draft.startedAt !== undefined,
    start,
    ...(draft.end === undefined ? {} : { end: draft.end }),
    last: latest,
    outcome: draft.outcome ?? 'pending',
    ...(status === undefined ? {} : { status }),
    ...(draft.error === undefined ? {} : { error: draft.error }),
    ...(draft.totalDelay === undefined ? {} : { totalDelay: draft.totalDelay }),
    ...(draft.duration === undefined ? {} : { duration: draft.duration }),
    attempts,
    injected,
    hedges,
    waits,
    guardWaits,
    ...(draft.truncated === undefined ? {} : { truncated: { dropped: draft.truncated } }),
  };
}

function findLast<T>(list: readonly T[], test: (item: T) => boolean): T | undefined {
  for (let i = list.length - 1; i >= 0; i--) {
    const item = list[i] as T;
    if (test(item)) return item;
  }
  return undefined;
}

/** The status class an attempt is coloured by. */
export type StatusClass =
  | 'ok'
  | 'redirect'
  | 'client-error'
  | 'server-error'
  | 'transport'
  | 'aborted'
  | 'pending';

export function attemptClass(attempt: Pick<AttemptRow, 'status' | 'outcome' | 'answeredBy'>): StatusClass {
  // Cancelled for its hedge's answer: the status it carries is that answer's, not its own.
  if (attempt.outcome === 'aborted' || attempt.answeredBy === 'hedge') return 'aborted';
  if (attempt.status !== undefined) return statusClass(attempt.status);
  if (attempt.outcome === 'pending') return 'pending';
  // No response: a transport error or timeout (or a non-HTTP operation that failed or succeeded).
  return attempt.outcome === 'success' ? 'ok' : 'transport';
}

export function statusClass(status: number): StatusClass {
  if (status >= 500) return 'server-error';
  if (status >= 400) return 'client-error';
  if (status >= 300) return 'redirect';
  if (status >= 200) return 'ok';
  return 'transport';
}
