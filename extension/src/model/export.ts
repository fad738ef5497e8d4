/**
 * Export and import: a {@link Recording} (the timeline's own entries, what `retryline view`
 * opens) and HAR 1.2 (one entry per attempt, with the retry story in `_retry` fields, so other
 * HAR tools see the attempts and Retryline can rebuild the rows from them).
 *
 * Imports are untrusted: text is size-capped and parsed with `JSON.parse` only, and every event is
 * rebuilt through the worker's event schema, so an import can only ever produce what a page could.
 */

import type { BackoffStrategy, JitterType, Recording, RetrylineEvent } from '@retryline/core';
import {
  type AttemptPhase,
  type DelayReason,
  type ErrorSummary,
  redactUrl,
} from '@retryline/core/instrument';
// A named import, so bundles take the version alone (esbuild tree-shakes JSON properties).
import { version as packageVersion } from '../../package.json';
import { frameKey } from '../shared/frame-key';
import type { TimelineEntry, Truncation } from '../shared/protocol';
import { validateEvent } from '../shared/schema';
import type { GateMark } from './gate-lane';
import {
  type AttemptRow,
  type AttemptState,
  attemptsAndHedges,
  type BreakerStateName,
  type GuardWaitRow,
  type NavigationMark,
  type RequestRow,
  type RowOutcome,
  type Timeline,
  type WaitRow,
} from './timeline';

/** The version HAR files name as their creator's. */
export const RETRYLINE_VERSION: string = packageVersion;
/** The longest import read, in characters (about 64 MB of ASCII). */
export const MAX_IMPORT_CHARS = 64 * 1024 * 1024;
/**
 * The largest import file, in bytes, checked before it is read. Each character is at least one
 * byte of UTF-8, so a larger file would be over {@link MAX_IMPORT_CHARS} too, or close to it.
 */
export const MAX_IMPORT_BYTES = MAX_IMPORT_CHARS;
/** The most entries (or HAR entries) an import may hold. */
export const MAX_IMPORT_ENTRIES = 500_000;

/** The timeline's entries as a Recording. `recordedAt` is the export's time unless given. */
export function toRecording(
  entries: readonly TimelineEntry[],
  source: string,
  recordedAt: Date = new Date(),
): Recording {
  return {
    format: 'retryline-recording',
    version: 1,
    recordedAt: recordedAt.toISOString(),
    source,
    // The worker and the import already redact navigations; an export does again, with core's rule
    // for request URLs (query values masked before anything leaves). Twice changes nothing.
    entries: entries.map((entry) =>
      entry.type === 'navigation' ? { ...entry, url: redactUrl(entry.url) } : entry,
    ),
  };
}

/** The text of the error an import too large to read gets (the File's size says so before reading it). */
export const TOO_LARGE_ERROR = `The file is too large to import (more than ${MAX_IMPORT_CHARS / 1024 / 1024} MB).`;

/**
 * What HAR says for a request with no URL or method: a `retry()` of an operation that is not an
 * HTTP request. HAR 1.2 requires an absolute URL and a method, so it gets a clearly synthetic one
 * (`.invalid` is reserved, RFC 2606) naming the operation, and the import reads it back as none.
 */
export const SYNTHETIC_ORIGIN = 'https://retryline.invalid';
export const SYNTHETIC_METHOD = 'RETRY';

/** `https://retryline.invalid/operation/<operation>` (or `…/operation` for an unnamed one). */
export function syntheticUrl(operation: string | undefined): string {
  const name = operation === undefined || operation === '' ? '' : `/${encodeURIComponent(operation)}`;
  return `${SYNTHETIC_ORIGIN}/operation${name}`;
}

/** The operation a synthetic URL names (`''` for none), or `undefined` when it is not one. */
function syntheticOperation(url: string): string | undefined {
  const prefix = `${SYNTHETIC_ORIGIN}/operation`;
  if (url === prefix) return '';
  if (!url.startsWith(`${prefix}/`)) return undefined;
  try {
    return decodeURIComponent(url.slice(prefix.length + 1));
  } catch {
    return undefined;
  }
}

/** A file name for an export, e.g. `retryline-2025-01-31T12-00-00.har`. */
export function exportFileName(kind: 'json' | 'har', at: Date = new Date()): string {
  return `retryline-${at.toISOString().slice(0, 19).replaceAll(':', '-')}.${kind}`;
}

// ---------------------------------------------------------------------------------------------
// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/); custom fields start with `_`.

export interface HarNameValue {
  readonly name: string;
  readonly value: string;
}

/** How a wait was computed; `raw` is `null` for an unbounded backoff (JSON has no Infinity). */
export interface HarWait {
  readonly start: number;
  readonly delay: number;
  readonly reason: DelayReason;
  readonly strategy: BackoffStrategy | 'custom';
  readonly jitter: JitterType;
  readonly raw: number | null;
  readonly capped: number;
  readonly hint?: { readonly source: string; readonly delay: number };
}

export interface HarGuardWait {
  readonly guard: GuardWaitRow['guard'];
  readonly key: string;
  readonly waited: number;
  readonly t: number;
}

/** What an attempt's HAR entry says about its request as a whole (the same on every attempt). */
export interface HarRequestSummary {
  /** The row's position, so an import keeps the order. */
  readonly index: number;
  /**
   * The origin of the frame or process the events came from: with `requestId`, what identifies
   * the request (two frames may use one id). Absent from older exports: read as `"import"`.
   */
  readonly source: string;
  /** Whether the request's start was recorded (`start` is otherwise inferred). */
  readonly complete: boolean;
  readonly start: number;
  readonly end?: number;
  readonly operation?: string;
  readonly method: string;
  readonly url: string;
  readonly status?: number;
  readonly error?: ErrorSummary;
  readonly totalDelay?: number;
  readonly duration?: number;
  /** The extension dropped some of the request's events (see {@link Truncation}). */
  readonly truncated?: Truncation;
  /** How many of its attempts a fault injected from the Retryline DevTools panel answered (absent: none). */
  readonly injected?: number;
}

/** The `_retry` field of a HAR entry. */
export interface HarRetry {
  readonly requestId: string;
  /** This entry's attempt number. */
  readonly attempt: number;
  /** How many attempts the request made. */
  readonly attempts: number;
  /** How the request ended. */
  readonly outcome: RowOutcome;
  readonly client: string;
  /** The wait before this attempt. */
  readonly waitBefore?: HarWait;
  /** Guards that held this attempt back. */
  readonly guardWaits?: readonly HarGuardWait[];
  /** How this attempt ended. */
  readonly attemptOutcome: AttemptState;
  /** Exact attempt times (epoch ms; `startedDateTime` is rounded to the millisecond). */
  readonly start: number;
  readonly end?: number;
  readonly phase?: AttemptPhase;
  readonly error?: ErrorSummary;
  /**
   * This attempt was answered by a fault injected from the Retryline DevTools panel (its events'
   * `injected` mark), not by the server alone. Absent for an attempt sent as usual.
   */
  readonly injected?: true;
  /** The endpoint (base URL) this attempt was sent to, when its client had several. */
  readonly endpoint?: string;
  /**
   * This entry is a hedge: a second copy of attempt {@link attempt}, sent while it was still
   * running. Not counted in {@link attempts}; the waits before the attempt are on its own entry.
   */
  readonly hedge?: true;
  /** This attempt was cancelled: its hedge's answer was taken (its status is that answer's). */
  readonly answeredBy?: 'hedge';
  readonly request: HarRequestSummary;
}

export interface HarEntry {
  readonly startedDateTime: string;
  readonly time: number;
  readonly request: {
    readonly method: string;
    readonly url: string;
    readonly httpVersion: string;
    readonly headers: readonly HarNameValue[];
    readonly queryString: readonly HarNameValue[];
    readonly cookies: readonly never[];
    readonly headersSize: -1;
    readonly bodySize: -1;
  };
  readonly response: {
    readonly status: number;
    readonly statusText: string;
    readonly httpVersion: string;
    readonly headers: readonly HarNameValue[];
    readonly cookies: readonly never[];
    readonly content: { readonly size: 0; readonly mimeType: '' };
    readonly redirectURL: '';
    readonly headersSize: -1;
    readonly bodySize: -1;
    /** Chrome's field for a request that got no response. */
    readonly _error?: string;
  };
  readonly cache: Record<string, never>;
  readonly timings: { readonly send: 0; readonly wait: number; readonly receive: 0 };
  /**
   * HAR 1.2's free text, which HAR viewers show: says so of an injected attempt
   * ({@link INJECTED_COMMENT}), a hedge ({@link HEDGE_COMMENT}) and one its hedge answered
   * ({@link ANSWERED_BY_HEDGE_COMMENT}).
   */
  readonly comment?: string;
  readonly _retry: HarRetry;
}

/** What a HAR entry's `comment` says of an attempt the panel's fault injection answered. */
export const INJECTED_COMMENT =
  'Injected by the Retryline DevTools panel: a fault answered (or only delayed) this attempt.';
/** What a HAR entry's `comment` says of a hedge. */
export const HEDGE_COMMENT =
  'A hedge: a second copy of the attempt, sent while it was still running; the first good answer of the two was taken.';
/** What a HAR entry's `comment` says of an attempt cancelled because its hedge answered. */
export const ANSWERED_BY_HEDGE_COMMENT =
  'Cancelled: its hedge answered first, and that answer (whose status this entry shows) was taken.';

/** What the HAR's entries cannot carry: navigations, lanes, and request parts without an attempt. */
export interface HarLogRetry {
  readonly version: 1;
  readonly navigations: readonly NavigationMark[];
  readonly lanes: readonly {
    readonly key: string;
    /** The frame's origin whose breaker and budget these are (absent from older exports). */
    readonly source: string;
    readonly breaker: readonly {
      readonly t: number;
      readonly from: BreakerStateName;
      readonly to: BreakerStateName;
      /** On opening: from when it lets its first trial through (absent from older exports). */
      readonly retryAt?: number;
    }[];
    readonly budget: readonly { readonly t: number; readonly remaining: number; readonly allowed: boolean }[];
    /** The recovery gate's parks and releases of the key's retries (absent from older exports). */
    readonly gate?: readonly HarGateMark[];
  }[];
  /** Events of rows with no attempt (a request the breaker refused), or of waits no attempt followed. */
  readonly rows: readonly {
    readonly index: number;
    readonly source: string;
    readonly events: readonly RetrylineEvent[];
  }[];
}

/** A lane's gate mark in a HAR: its event's fields but the key, which is the lane's. */
export type HarGateMark =
  | Omit<Extract<GateMark, { type: 'retry-parked' }>, 'key'>
  | Omit<Extract<GateMark, { type: 'retry-released' }>, 'key'>;

export interface Har {
  readonly log: {
    readonly version: '1.2';
    readonly creator: { readonly name: 'Retryline'; readonly version: string };
    readonly entries: readonly HarEntry[];
    readonly _retry: HarLogRetry;
  };
}

/** The timeline as HAR 1.2: one entry per attempt. */
export function toHar(timeline: Timeline, version: string = RETRYLINE_VERSION): Har {
  const entries: HarEntry[] = [];
  const rows: HarLogRetry['rows'][number][] = [];
  for (const row of timeline.rows) {
    const attempted = new Set(row.attempts.map((a) => a.n));
    const summary = requestSummary(row);
    for (const attempt of attemptsAndHedges(row)) entries.push(harEntry(row, attempt, summary));
    // Whatever no attempt entry carries goes to the log's `_retry`.
    const loose: RetrylineEvent[] = [];
    if (row.attempts.length === 0 && row.hedges.length === 0) {
      const start = startEvent(row);
      if (start) loose.push(start);
      const end = endEvent(row);
      if (end) loose.push(end);
    }
    for (const wait of row.waits) if (!attempted.has(wait.afterAttempt + 1)) loose.push(waitEvent(row, wait));
    for (const g of row.guardWaits) if (!attempted.has(g.attempt)) loose.push(guardEvent(row, g));
    if (loose.length > 0) rows.push({ index: row.index, source: row.source, events: loose });
  }
  return {
    log: {
      version: '1.2',
      creator: { name: 'Retryline', version },
      entries,
      _retry: {
        version: 1,
        navigations: timeline.navigations.map((mark) => ({ ...mark, url: redactUrl(mark.url) })),
        lanes: timeline.lanes.map((lane) => ({
          key: lane.key,
          source: lane.source,
          breaker: lane.breaker.map(({ t, from, to, retryAt }) =>
            retryAt === undefined ? { t, from, to } : { t, from, to, retryAt },
          ),
          budget: lane.budget.map(({ t, remaining, allowed }) => ({ t, remaining, allowed })),
          gate: lane.gate.map(({ key: _, ...mark }) => mark),
        })),
        rows,
      },
    },
  };
}

function requestSummary(row: RequestRow): HarRequestSummary {
  return {
    index: row.index,
    source: row.source,
    complete: row.complete,
    start: row.start,
    ...(row.end === undefined ? {} : { end: row.end }),
    ...(row.operation === undefined ? {} : { operation: row.operation }),
    method: row.method,
    url: row.url,
    ...(row.outcome === 'pending' || row.status === undefined ? {} : { status: row.status }),
    ...(row.error === undefined ? {} : { error: row.error }),
    ...(row.totalDelay === undefined ? {} : { totalDelay: row.totalDelay }),
    ...(row.duration === undefined ? {} : { duration: row.duration }),
    ...(row.truncated === undefined ? {} : { truncated: row.truncated }),
    ...(row.injected > 0 ? { injected: row.injected } : {}),
  };
}

function harEntry(row: RequestRow, attempt: AttemptRow, request: HarRequestSummary): HarEntry {
  const time = attempt.end === undefined ? 0 : Math.max(0, attempt.end - attempt.start);
  // What held the attempt back is told once, on its own entry, never again on its hedge's.
  const wait = attempt.hedge ? undefined : row.waits.find((w) => w.afterAttempt === attempt.n - 1);
  const guards = attempt.hedge ? [] : row.guardWaits.filter((g) => g.attempt === attempt.n);
  const noResponse = attempt.status === undefined && attempt.error !== undefined;
  const comment = [
    attempt.injected ? INJECTED_COMMENT : '',
    attempt.hedge ? HEDGE_COMMENT : '',
    attempt.answeredBy === 'hedge' ? ANSWERED_BY_HEDGE_COMMENT : '',
  ]
    .filter((line) => line !== '')
    .join(' ');
  return {
    startedDateTime: isoTime(attempt.start),
    time,
    request: {
      method: row.method === '' ? SYNTHETIC_METHOD : row.method,
      url: row.url === '' ? syntheticUrl(row.operation) : row.url,
      httpVersion: '',
      headers: nameValues(attempt.requestHeaders),
      queryString: queryString(row.url),
      cookies: [],
      headersSize: -1,
      bodySize: -1,
    },
    response: {
      // HAR's convention (Chrome's too): status 0 when no response came back.
      status: attempt.status ?? 0,
      statusText: '',
      httpVersion: '',
      headers: nameValues(attempt.responseHeaders),
      cookies: [],
      content: { size: 0, mimeType: '' },
      redirectURL: '',
      headersSize: -1,
      bodySize: -1,
      ...(noResponse && attempt.error ? { _error: `${attempt.error.name}: ${attempt.error.message}` } : {}),
    },
    cache: {},
    timings: { send: 0, wait: time, receive: 0 },
    ...(comment === '' ? {} : { comment }),
    _retry: {
      requestId: row.requestId,
      attempt: attempt.n,
      attempts: row.attempts.length,
      outcome: row.outcome,
      client: row.client,
      ...(wait === undefined ? {} : { waitBefore: harWait(wait) }),
      ...(guards.length === 0
        ? {}
        : { guardWaits: guards.map(({ guard, key, waited, t }) => ({ guard, key, waited, t })) }),
      attemptOutcome: attempt.outcome,
      start: attempt.start,
      ...(attempt.end === undefined ? {} : { end: attempt.end }),
      ...(attempt.phase === undefined ? {} : { phase: attempt.phase }),
      ...(attempt.error === undefined ? {} : { error: attempt.error }),
      ...(attempt.injected ? { injected: true } : {}),
      ...attemptMarks(attempt),
      request,
    },
  };
}

function harWait(wait: WaitRow): HarWait {
  return {
    start: wait.start,
    delay: wait.delay,
    reason: wait.reason,
    strategy: wait.strategy,
    jitter: wait.jitter,
    raw: Number.isFinite(wait.raw) ? wait.raw : null,
    capped: wait.capped,
    ...(wait.hint === undefined ? {} : { hint: wait.hint }),
  };
}

// The largest time a Date can hold (ECMA-262 §21.4.1.22): beyond it toISOString throws.
const MAX_DATE = 8.64e15;

function isoTime(t: number): string {
  return new Date(Number.isFinite(t) && Math.abs(t) <= MAX_DATE ? t : 0).toISOString();
}

function nameValues(headers: Readonly<Record<string, string>> | undefined): HarNameValue[] {
  return headers === undefined ? [] : Object.entries(headers).map(([name, value]) => ({ name, value }));
}

function queryString(url: string): HarNameValue[] {
  if (!url.includes('?')) return [];
  try {
    return [...new URL(url).searchParams].map(([name, value]) => ({ name, value }));
  } catch {
    return [];
  }
}

// ---------------------------------------------------------------------------------------------
// Rows back to events.

const base = (row: RequestRow, t: number) => ({ v: 1 as const, requestId: row.requestId, t });

function startEvent(row: RequestRow): RetrylineEvent | undefined {
  if (!row.complete) return undefined;
  return {
    ...base(row, row.start),
    type: 'request-start',
    client: row.client,
    ...(row.operation === undefined ? {} : { operation: row.operation }),
    ...(row.method === '' ? {} : { method: row.method }),
    ...(row.url === '' ? {} : { url: row.url }),
  };
}

function endEvent(row: RequestRow): RetrylineEvent | undefined {
  if (row.end === undefined || row.outcome === 'pending') return undefined;
  return {
    ...base(row, row.end),
    type: 'request-end',
    outcome: row.outcome,
    attempts: row.attempts.length,
    totalDelay: row.totalDelay ?? 0,
    duration: row.duration ?? 0,
    ...(row.error === undefined ? {} : { error: row.error }),
    ...(row.status === undefined ? {} : { status: row.status }),
  };
}

/** An attempt's endpoint, hedge and answered-by marks, as its HAR entry and its events carry them. */
function attemptMarks(attempt: AttemptRow): Partial<Pick<AttemptRow, 'endpoint' | 'hedge' | 'answeredBy'>> {
  return {
    ...(attempt.endpoint === undefined ? {} : { endpoint: attempt.endpoint }),
    ...(attempt.hedge ? { hedge: true } : {}),
    ...(attempt.answeredBy === undefined ? {} : { answeredBy: attempt.answeredBy }),
  };
}

function attemptEvents(row: RequestRow, attempt: AttemptRow): RetrylineEvent[] {
  const { answeredBy, ...startMarks } = attemptMarks(attempt);
  const events: RetrylineEvent[] = [
    {
      ...base(row, attempt.start),
      type: 'attempt-start',
      attempt: attempt.n,
      ...(attempt.requestHeaders === undefined ? {} : { headers: attempt.requestHeaders }),
      ...(attempt.injected ? { injected: true } : {}),
      ...startMarks,
    },
  ];
  if (attempt.end !== undefined && attempt.outcome !== 'pending') {
    events.push({
      ...base(row, attempt.end),
      type: 'attempt-end',
      attempt: attempt.n,
      outcome: attempt.outcome,
      duration: attempt.end - attempt.start,
      ...(attempt.error === undefined ? {} : { error: attempt.error }),
      ...(attempt.phase === undefined ? {} : { phase: attempt.phase }),
      ...(attempt.status === undefined ? {} : { status: attempt.status }),
      ...(attempt.responseHeaders === undefined ? {} : { headers: attempt.responseHeaders }),
      ...(attempt.injected ? { injected: true } : {}),
      ...attemptMarks(attempt),
    });
  }
  return events;
}

function waitEvent(row: RequestRow, wait: WaitRow): RetrylineEvent {
  return {
    ...base(row, wait.start),
    type: 'retry-scheduled',
    attempt: wait.afterAttempt + 1,
    retry: wait.afterAttempt,
    delay: wait.delay,
    reason: wait.reason,
    strategy: wait.strategy,
    jitter: wait.jitter,
    raw: wait.raw,
    capped: wait.capped,
    ...(wait.hint === undefined ? {} : { hint: wait.hint }),
  };
}

function guardEvent(row: RequestRow, g: GuardWaitRow): RetrylineEvent {
  return {
    ...base(row, g.t),
    type: 'guard-wait',
    attempt: g.attempt,
    guard: g.guard,
    key: g.key,
    waited: g.waited,
  };
}

/** Events that fold back into `row` (not the originals: one per fact the row holds). */
export function rowEvents(row: RequestRow): RetrylineEvent[] {
  const events: RetrylineEvent[] = [];
  const start = startEvent(row);
  if (start) events.push(start);
  for (const g of row.guardWaits) events.push(guardEvent(row, g));
  for (const attempt of attemptsAndHedges(row)) events.push(...attemptEvents(row, attempt));
  for (const wait of row.waits) events.push(waitEvent(row, wait));
  const end = endEvent(row);
  if (end) events.push(end);
  return events;
}

// ---------------------------------------------------------------------------------------------
// Import.

export type ImportResult =
  | {
      readonly entries: TimelineEntry[];
      readonly format: 'recording' | 'har' | 'events';
      readonly skipped: number;
      /** A recording's own `source` and `recordedAt`, when it has them. */
      readonly source?: string;
      readonly recordedAt?: string;
    }
  | {
      readonly error: string;
      /** Why: too large to read, not JSON, or JSON that is none of the formats (or has no valid entry). */
      readonly reason: 'too-large' | 'not-json' | 'invalid';
    };

const invalid = (error: string): ImportResult => ({ error, reason: 'invalid' });

/**
 * Reads an exported file: a Recording, a HAR with `_retry` fields, or a bare array of entries or
 * events. Anything malformed is skipped (and counted) or reported; nothing in it is executed.
 * The panel's import and `retryline view` both read files with it, so both accept the same.
 */
export function parseImport(text: string): ImportResult {
  if (typeof text !== 'string') return invalid('Expected the file as text.');
  if (text.length > MAX_IMPORT_CHARS) return { error: TOO_LARGE_ERROR, reason: 'too-large' };
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { error: `The file is not JSON: ${(error as Error).message}`, reason: 'not-json' };
  }
  if (Array.isArray(data)) return readEntries(data, 'events');
  if (!isRecord(data)) return invalid('Expected a Retryline recording or a HAR file, got a JSON value.');
  if (own(data, 'format') === 'retryline-recording') {
    if (own(data, 'version') !== 1) {
      return invalid(`Unsupported recording version ${String(own(data, 'version'))} (expected 1).`);
    }
    const entries = own(data, 'entries');
    if (!Array.isArray(entries)) return invalid('The recording has no entries array.');
    const result = readEntries(entries, 'recording');
    if ('error' in result) return result;
    const source = own(data, 'source');
    const recordedAt = own(data, 'recordedAt');
    return {
      ...result,
      ...(typeof source === 'string' && source.length <= MAX_TEXT ? { source } : {}),
      ...(typeof recordedAt === 'string' && recordedAt.length <= MAX_TEXT ? { recordedAt } : {}),
    };
  }
  const log = own(data, 'log');
  if (isRecord(log) && Array.isArray(own(log, 'entries'))) return readHar(log);
  return invalid('Expected a Retryline recording or a HAR file: found neither "format" nor "log.entries".');
}

function readEntries(values: readonly unknown[], format: 'recording' | 'events'): ImportResult {
  if (values.length > MAX_IMPORT_ENTRIES) {
    return invalid(`The file has ${values.length} entries; at most ${MAX_IMPORT_ENTRIES} can be imported.`);
  }
  const entries: TimelineEntry[] = [];
  let skipped = 0;
  for (const value of values) {
    const entry = readEntry(value);
    if (entry) entries.push(entry);
    else skipped++;
  }
  if (entries.length === 0 && skipped > 0) return invalid(`None of the file's ${skipped} entries is valid.`);
  return { entries, format, skipped };
}

const MAX_TEXT = 2048;

/** The origin of imported events whose file does not say which frame sent them. */
const IMPORT_ORIGIN = 'import';

function readEntry(value: unknown): TimelineEntry | undefined {
  if (!isRecord(value)) return undefined;
  const type = own(value, 'type');
  if (type === 'navigation') {
    const url = own(value, 'url');
    const t = own(value, 't');
    if (typeof url !== 'string' || url.length > MAX_TEXT || !isTime(t)) return undefined;
    return { type: 'navigation', url: redactUrl(url), t };
  }
  if (type === 'event') {
    const event = readEvent(own(value, 'event'));
    // An entry without an origin (written by hand, or by an older tool) is the import's own, as
    // bare events are: its rows are still kept apart from every origin's.
    const origin = own(value, 'origin') ?? IMPORT_ORIGIN;
    if (!event || typeof origin !== 'string' || origin.length > MAX_TEXT) return undefined;
    const truncated = readTruncation(own(value, 'truncated'));
    return truncated ? { type: 'event', event, origin, truncated } : { type: 'event', event, origin };
  }
  // A bare event (a log of `onEvent` calls).
  const event = readEvent(value);
  return event ? { type: 'event', event, origin: IMPORT_ORIGIN } : undefined;
}

/** One event through the worker's schema, with times a Date can show. */
function readEvent(value: unknown): RetrylineEvent | undefined {
  const event = validateEvent(value);
  return event && isTime(event.t) ? event : undefined;
}

function readTruncation(value: unknown): Truncation | undefined {
  const dropped = isRecord(value) ? own(value, 'dropped') : undefined;
  return typeof dropped === 'number' && Number.isSafeInteger(dropped) && dropped >= 0
    ? { dropped }
    : undefined;
}

function isTime(t: unknown): t is number {
  return typeof t === 'number' && Number.isFinite(t) && Math.abs(t) <= MAX_DATE;
}

/** One request's events as a HAR import gathers them: by its source and id ({@link frameKey}). */
interface Group {
  readonly requestId: string;
  readonly order: number;
  readonly source: string;
  summarised: boolean;
  truncated?: Truncation;
  readonly events: RetrylineEvent[];
}

function readHar(log: object): ImportResult {
  const harEntries = own(log, 'entries') as unknown[];
  if (harEntries.length > MAX_IMPORT_ENTRIES) {
    return invalid(
      `The HAR has ${harEntries.length} entries; at most ${MAX_IMPORT_ENTRIES} can be imported.`,
    );
  }
  const groups = new Map<string, Group>();
  let seen = 0;
  const groupFor = (requestId: string, order: number, source: string): Group => {
    const key = frameKey(source, requestId);
    let group = groups.get(key);
    if (!group) {
      group = { requestId, order, source, summarised: false, events: [] };
      groups.set(key, group);
    }
    return group;
  };
  let skipped = 0;
  let withRetry = 0;
  for (const entry of harEntries) {
    seen++;
    const retry = isRecord(entry) ? own(entry, '_retry') : undefined;
    if (!isRecord(entry) || !isRecord(retry)) {
      skipped++;
      continue;
    }
    withRetry++;
    if (!readHarEntry(entry, retry, groupFor, seen)) skipped++;
  }

  const extra = own(log, '_retry');
  if (isRecord(extra)) {
    const rows = arrayOf(own(extra, 'rows'));
    for (const raw of rows) {
      if (!isRecord(raw)) continue;
      const index = own(raw, 'index');
      const source = text(own(raw, 'source')) ?? IMPORT_ORIGIN;
      for (const value of arrayOf(own(raw, 'events'))) {
        const event = readEvent(value);
        if (!event) {
          skipped++;
          continue;
        }
        groupFor(
          event.requestId,
          typeof index === 'number' ? index : harEntries.length + seen++,
          source,
        ).events.push(event);
      }
    }
  }
  if (withRetry === 0 && groups.size === 0) {
    return invalid('This HAR has no Retryline data: none of its entries has a "_retry" field.');
  }
  const navigations = isRecord(extra) ? readHarNavigations(extra) : [];
  const entries = orderedEntries([...groups.values()], navigations);
  if (isRecord(extra)) entries.push(...readHarLanes(extra));
  return { entries, format: 'har', skipped };
}

/** The navigations a HAR's `_retry` keeps (their URLs redacted again). */
function readHarNavigations(extra: object): NavigationMark[] {
  const navigations: NavigationMark[] = [];
  for (const raw of arrayOf(own(extra, 'navigations'))) {
    if (!isRecord(raw)) continue;
    const url = text(own(raw, 'url'));
    const t = own(raw, 't');
    const beforeRow = own(raw, 'beforeRow');
    if (url === undefined || !isTime(t)) continue;
    navigations.push({
      url: redactUrl(url),
      t,
      beforeRow: typeof beforeRow === 'number' ? beforeRow : 0,
    });
  }
  return navigations;
}

/** The lanes a HAR's `_retry` keeps, as the events they were folded from. */
function readHarLanes(extra: object): TimelineEntry[] {
  const laneEvents: TimelineEntry[] = [];
  for (const lane of arrayOf(own(extra, 'lanes'))) {
    if (!isRecord(lane)) continue;
    const key = own(lane, 'key');
    const source = text(own(lane, 'source')) ?? IMPORT_ORIGIN;
    const candidates = [
      ...arrayOf(own(lane, 'breaker')).map((x) => ({
        type: 'breaker-state',
        ...pick(x, ['t', 'from', 'to', 'retryAt']),
      })),
      ...arrayOf(own(lane, 'budget')).map((x) => ({
        type: 'budget',
        ...pick(x, ['t', 'remaining', 'allowed']),
      })),
      ...arrayOf(own(lane, 'gate')).flatMap(gateCandidate),
    ];
    for (const candidate of candidates) {
      const event = readEvent({ v: 1, requestId: `lane:${String(key)}`, key, ...candidate });
      if (event) laneEvents.push({ type: 'event', event, origin: source });
    }
  }
  return laneEvents;
}

/** Rows in their exported order, each navigation before the first row that followed it. */
function orderedEntries(groups: Group[], navigations: NavigationMark[]): TimelineEntry[] {
  const ordered = groups.sort((a, b) => a.order - b.order);
  navigations.sort((a, b) => a.beforeRow - b.beforeRow);
  const entries: TimelineEntry[] = [];
  let nav = 0;
  for (const group of ordered) {
    while (nav < navigations.length && (navigations[nav] as NavigationMark).beforeRow <= group.order) {
      const { url, t } = navigations[nav++] as NavigationMark;
      entries.push({ type: 'navigation', url, t });
    }
    const { truncated } = group;
    group.events.forEach((event, at) => {
      // The mark goes on the row's first entry: the row shows it however its events are ordered.
      entries.push(
        at === 0 && truncated
          ? { type: 'event', event, origin: group.source, truncated }
          : { type: 'event', event, origin: group.source },
      );
    });
  }
  for (const { url, t } of navigations.slice(nav)) entries.push({ type: 'navigation', url, t });
  return entries;
}

/**
 * A lane's gate mark as the event it was: a park or a release, under its own request id (whose row
 * draws the parked wait too, as the HAR entry's guard wait does). Anything else, or a mark without
 * its request id (which would otherwise make a row of the lane's), is not a gate mark.
 */
function gateCandidate(mark: unknown): object[] {
  if (!isRecord(mark) || typeof own(mark, 'requestId') !== 'string') return [];
  const type = own(mark, 'type');
  if (type !== 'retry-parked' && type !== 'retry-released') return [];
  return [pick(mark, ['type', 't', 'requestId', 'attempt', 'failures', 'reason', 'waited'])];
}

/** Rebuilds one attempt's events (and, the first time, its request's) from a HAR entry. */
function readHarEntry(
  entry: object,
  retry: object,
  groupFor: (requestId: string, order: number, source: string) => Group,
  position: number,
): boolean {
  const requestId = own(retry, 'requestId');
  const n = own(retry, 'attempt');
  if (typeof requestId !== 'string' || typeof n !== 'number') return false;
  const request = isRecord(own(entry, 'request')) ? (own(entry, 'request') as object) : {};
  const response = isRecord(own(entry, 'response')) ? (own(entry, 'response') as object) : {};
  const summary = isRecord(own(retry, 'request')) ? (own(retry, 'request') as object) : undefined;

  // Exact times from `_retry`; else from the HAR's own (rounded) fields.
  const startedDateTime = own(entry, 'startedDateTime');
  const harStart = typeof startedDateTime === 'string' ? Date.parse(startedDateTime) : Number.NaN;
  const harTime = own(entry, 'time');
  const start = numberOr(own(retry, 'start'), harStart);
  const outcome = own(retry, 'outcome');
  const attempts = own(retry, 'attempts');
  const attemptOutcome =
    own(retry, 'attemptOutcome') ??
    (typeof attempts === 'number' && n < attempts ? 'retry' : outcome === 'success' ? 'success' : 'error');
  const end = numberOr(
    own(retry, 'end'),
    attemptOutcome === 'pending' || typeof harTime !== 'number' ? Number.NaN : start + harTime,
  );
  if (!isTime(start)) return false;

  const index = summary ? own(summary, 'index') : undefined;
  const source = (summary && text(own(summary, 'source'))) ?? IMPORT_ORIGIN;
  const group = groupFor(requestId, typeof index === 'number' ? index : position, source);
  const candidates: unknown[] = [];
  const common = { v: 1, requestId };
  const harMethod = own(request, 'method');
  const harUrl = own(request, 'url');
  // A synthetic URL (and its method) stand for none: the request was a non-HTTP operation.
  const synthetic = typeof harUrl === 'string' ? syntheticOperation(harUrl) : undefined;
  const method =
    (summary ? own(summary, 'method') : undefined) ??
    (synthetic !== undefined && harMethod === SYNTHETIC_METHOD ? '' : harMethod);
  const url = (summary ? own(summary, 'url') : undefined) ?? (synthetic !== undefined ? '' : harUrl);
  const operation = summary ? pick(summary, ['operation']) : synthetic ? { operation: synthetic } : {};

  if (!group.summarised) {
    group.summarised = true;
    const truncated = summary ? readTruncation(own(summary, 'truncated')) : undefined;
    if (truncated) group.truncated = truncated;
    const complete = summary ? own(summary, 'complete') !== false : true;
    const requestStart = numberOr(summary ? own(summary, 'start') : undefined, start);
    if (complete) {
      candidates.push({
        ...common,
        type: 'request-start',
        t: requestStart,
        client: own(retry, 'client'),
        ...operation,
        ...(method === '' ? {} : { method }),
        ...(url === '' ? {} : { url }),
      });
    }
    const requestEnd = summary ? own(summary, 'end') : undefined;
    if (summary && typeof requestEnd === 'number' && outcome !== 'pending') {
      candidates.push({
        ...common,
        type: 'request-end',
        t: requestEnd,
        outcome,
        attempts,
        totalDelay: own(summary, 'totalDelay') ?? 0,
        duration: own(summary, 'duration') ?? requestEnd - requestStart,
        ...pick(summary, ['error', 'status']),
      });
    }
  }

  // The marks go on both of the attempt's events, as core puts them (the schema checks their
  // values); only the loop's own end says its hedge answered.
  const marks = pick(retry, ['injected', 'endpoint', 'hedge']);
  const hedge = own(retry, 'hedge') === true;
  candidates.push({
    ...common,
    type: 'attempt-start',
    t: start,
    attempt: n,
    headers: headerRecord(own(request, 'headers')),
    ...marks,
  });
  if (attemptOutcome !== 'pending' && isTime(end)) {
    const status = own(response, 'status');
    candidates.push({
      ...common,
      type: 'attempt-end',
      t: end,
      attempt: n,
      outcome: attemptOutcome,
      duration: end - start,
      ...pick(retry, ['phase', 'error']),
      ...(typeof status === 'number' && status > 0 ? { status } : {}),
      headers: headerRecord(own(response, 'headers')),
      ...marks,
      ...pick(retry, ['answeredBy']),
    });
  }
  // A hedge's entry tells of the hedge alone: the request's end and the waits before the attempt
  // are the attempt's own entry's to tell.
  if (
    !hedge &&
    !summary &&
    n === attempts &&
    typeof outcome === 'string' &&
    outcome !== 'pending' &&
    isTime(end)
  ) {
    // A HAR with only the basic `_retry` fields: the request ended with its last attempt.
    const status = own(response, 'status');
    candidates.push({
      ...common,
      type: 'request-end',
      t: end,
      outcome,
      attempts,
      totalDelay: 0,
      duration: 0,
      ...(typeof status === 'number' && status > 0 ? { status } : {}),
    });
  }
  const wait = hedge ? undefined : own(retry, 'waitBefore');
  if (isRecord(wait)) {
    const delay = own(wait, 'delay');
    candidates.push({
      ...common,
      type: 'retry-scheduled',
      t: numberOr(own(wait, 'start'), typeof delay === 'number' ? start - delay : Number.NaN),
      attempt: n,
      retry: n - 1,
      raw: own(wait, 'raw') ?? delay,
      capped: own(wait, 'capped') ?? delay,
      ...pick(wait, ['delay', 'reason', 'strategy', 'jitter', 'hint']),
    });
  }
  for (const g of hedge ? [] : arrayOf(own(retry, 'guardWaits'))) {
    candidates.push({
      ...common,
      type: 'guard-wait',
      t: start,
      attempt: n,
      ...pick(g, ['guard', 'key', 'waited', 't']),
    });
  }

  let ok = true;
  for (const candidate of candidates) {
    const event = readEvent(candidate);
    if (event) group.events.push(event);
    else ok = false;
  }
  return ok;
}

/** A HAR header list as a header map (later values of a repeated name joined, as fetch does). */
function headerRecord(value: unknown): Record<string, string> | undefined {
  const list = arrayOf(value);
  if (list.length === 0) return undefined;
  const out: Record<string, string> = {};
  for (const item of list) {
    if (!isRecord(item)) continue;
    const name = own(item, 'name');
    const val = own(item, 'value');
    if (typeof name !== 'string' || typeof val !== 'string' || name === '__proto__') continue;
    const key = name.toLowerCase();
    out[key] = Object.hasOwn(out, key) ? `${out[key]}, ${val}` : val;
  }
  return out;
}

function own(object: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(object, key);
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
}

function isRecord(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value.slice(0, MAX_IMPORT_ENTRIES) : [];
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.length <= MAX_TEXT ? value : undefined;
}

function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}

/** The named own properties of `value` that are present (the schema checks their types). */
function pick(value: unknown, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isRecord(value)) return out;
  for (const key of keys) {
    const v = own(value, key);
    if (v !== undefined) out[key] = v;
  }
  return out;
}
