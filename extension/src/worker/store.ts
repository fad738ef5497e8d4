/**
 * One tab's timeline as the service worker keeps it: a ring of the most recent requests (whole
 * requests are evicted, oldest first, so no row loses its first attempt), navigations of the top
 * frame, the panel's settings, and what the worker knows of the tab's current page. Pure data and functions: the worker adds the browser, the
 * tests add nothing.
 *
 * The ring is bounded three ways, since a page controls what it sends: at most `limit` requests,
 * at most `byteLimit` bytes of JSON (what `storage.session` and a snapshot message carry), and per
 * request at most {@link MAX_REQUEST_EVENTS} events and {@link MAX_REQUEST_BYTES} bytes: one
 * request id with 100,000 events is still one bounded row.
 *
 * A request is its sender's origin and its id together ({@link frameKey}): a frame that sends
 * events under another frame's request id starts a request of its own, and can neither fill the
 * other's tally nor have it evicted in its place.
 *
 * Every entry has a sequence number, its place in the tab's history, so that `persistence.ts` can
 * store the ring in fixed chunks and rewrite only the chunks that changed.
 */

import type { RetrylineEvent } from '@retryline/core';
import { redactUrl } from '@retryline/core/instrument';
import { utf8Length } from '../shared/byte-length';
import { frameKey } from '../shared/frame-key';
import {
  type EventEntry,
  MAX_REQUEST_BYTES,
  MAX_REQUEST_EVENTS,
  MAX_TAB_BYTES,
  type PageState,
  RING_REQUESTS,
  type TabSettings,
  type TimelineEntry,
} from '../shared/protocol';
import { MAX_STRING_LENGTH } from '../shared/schema';

export const DEFAULT_SETTINGS: TabSettings = Object.freeze({ preserveLog: false, record: true });

/** A tab no relay has reported a document of: a page loaded before the extension, or a browser page. */
export const UNKNOWN_PAGE: PageState = Object.freeze({ hooked: false, detected: false });

/** How many sequence numbers one storage chunk holds. */
export const CHUNK_ENTRIES = 256;

/** What the log knows of one request it keeps. */
export interface RequestTally {
  /** Entries kept, and their bytes. */
  events: number;
  bytes: number;
  /** Events not kept since it reached its limit. */
  dropped: number;
  /** It reached {@link MAX_REQUEST_EVENTS} or {@link MAX_REQUEST_BYTES}: only its request-end is still kept. */
  full: boolean;
  /** Its request-end is kept. */
  ended: boolean;
}

/** A tab's timeline. Mutable, owned by the worker; `entries` is what a snapshot sends. */
export interface TabLog {
  settings: TabSettings;
  /** What the worker knows of the tab's current top document. */
  page: PageState;
  /** Requests the ring dropped (oldest first, by {@link evict}) since the log was last emptied. */
  evicted: number;
  entries: TimelineEntry[];
  /** `seqs[i]` is the sequence number of `entries[i]` (ascending). */
  seqs: number[];
  /** `sizes[i]` is the UTF-8 length of `entries[i]` as JSON. */
  sizes: number[];
  /** The sum of `sizes`. */
  bytes: number;
  /** How many of `entries` are navigations. */
  navigations: number;
  /** The sequence number of the next entry. */
  nextSeq: number;
  /** The most requests kept (and the most navigations). */
  readonly limit: number;
  /** The most bytes kept when there is room: {@link MAX_TAB_BYTES} by default. */
  readonly maxBytes: number;
  /** The most bytes kept now: `maxBytes`, less after `storage.session` was found full. */
  byteLimit: number;
  /** The requests kept, by {@link requestKey}, in the order they were first seen: the eviction order. */
  requests: Map<string, RequestTally>;
  /** Chunks whose entries changed since the last write. */
  readonly changedChunks: Set<number>;
  /** The index's own fields (settings, page, evicted) changed since the last write. */
  indexChanged: boolean;
  /**
   * The origin of each frame's latest document in the current page, by frame id (0: the top
   * frame), as their relays reported them; `undefined` when not known (see `PageState.frames`).
   * Kept in memory only.
   */
  frames: Map<number, string> | undefined;
}

export function createTabLog(
  settings: TabSettings = DEFAULT_SETTINGS,
  limit = RING_REQUESTS,
  maxBytes = MAX_TAB_BYTES,
): TabLog {
  return {
    settings,
    page: UNKNOWN_PAGE,
    evicted: 0,
    entries: [],
    seqs: [],
    sizes: [],
    bytes: 0,
    navigations: 0,
    nextSeq: 0,
    limit,
    maxBytes,
    byteLimit: maxBytes,
    requests: new Map(),
    changedChunks: new Set(),
    indexChanged: false,
    frames: undefined,
  };
}

export const chunkOf = (seq: number): number => Math.floor(seq / CHUNK_ENTRIES);

/** The request an event entry belongs to: its sender's origin and its request id. */
const requestKey = (entry: EventEntry): string => frameKey(entry.origin, entry.event.requestId);

/** The UTF-8 length of an entry as JSON: what storing or sending it costs. */
export const entrySize = (entry: TimelineEntry): number => utf8Length(JSON.stringify(entry));

/**
 * Counts an entry kept at `seq` (an append, or a restore from storage) in the log's totals and its
 * request's tally. Does not mark its chunk changed.
 */
export function keepEntry(log: TabLog, entry: TimelineEntry, seq: number, size = entrySize(entry)): void {
  log.entries.push(entry);
  log.seqs.push(seq);
  log.sizes.push(size);
  log.bytes += size;
  if (entry.type === 'navigation') {
    log.navigations += 1;
    return;
  }
  const tally = tallyOf(log, requestKey(entry));
  tally.events += 1;
  tally.bytes += size;
  if (entry.event.type === 'request-end') tally.ended = true;
  if (entry.truncated) {
    tally.full = true;
    tally.dropped = Math.max(tally.dropped, entry.truncated.dropped);
  }
  if (tally.events >= MAX_REQUEST_EVENTS || tally.bytes >= MAX_REQUEST_BYTES) tally.full = true;
}

function tallyOf(log: TabLog, key: string): RequestTally {
  let tally = log.requests.get(key);
  if (!tally) {
    tally = { events: 0, bytes: 0, dropped: 0, full: false, ended: false };
    log.requests.set(key, tally);
  }
  return tally;
}

function add(log: TabLog, entry: TimelineEntry, size?: number): void {
  const seq = log.nextSeq++;
  keepEntry(log, entry, seq, size);
  log.changedChunks.add(chunkOf(seq));
}

/**
 * The entry to keep for `event`, or `undefined` when its request is full. A request that reaches
 * its limit says so on the event that reached it, and its request-end, still kept, says how many
 * events were dropped in between: the panel shows both.
 */
function admit(log: TabLog, event: RetrylineEvent, origin: string): EventEntry | undefined {
  const tally = log.requests.get(frameKey(origin, event.requestId));
  if (tally?.full) {
    if (event.type !== 'request-end' || tally.ended) {
      tally.dropped += 1;
      return undefined;
    }
    return tally.dropped > 0
      ? { type: 'event', event, origin, truncated: { dropped: tally.dropped } }
      : { type: 'event', event, origin };
  }
  return { type: 'event', event, origin };
}

/** Keeps the entries at `keep` (ascending indexes); the chunks of the others have changed. */
function keepOnly(log: TabLog, keep: readonly number[]): void {
  let next = 0;
  let bytes = 0;
  let navigations = 0;
  for (let index = 0; index < log.entries.length; index += 1) {
    if (keep[next] === index) {
      next += 1;
      bytes += log.sizes[index] as number;
      if (log.entries[index]?.type === 'navigation') navigations += 1;
    } else log.changedChunks.add(chunkOf(log.seqs[index] as number));
  }
  log.entries = keep.map((index) => log.entries[index] as TimelineEntry);
  log.seqs = keep.map((index) => log.seqs[index] as number);
  log.sizes = keep.map((index) => log.sizes[index] as number);
  log.bytes = bytes;
  log.navigations = navigations;
}

/**
 * Keeps at most `limit` requests, `limit` navigations and `byteLimit` bytes, dropping the oldest
 * first (every entry of a request goes with it). The newest request always stays. Of the
 * navigations older than every kept request only the last stays: it tells which page the oldest
 * kept request came from.
 */
export function evict(log: TabLog): void {
  let requests = log.requests.size;
  let navigations = log.navigations;
  let bytes = log.bytes;
  if (requests <= log.limit && navigations <= log.limit && bytes <= log.byteLimit) return;
  const evicted = new Set<string>();
  const dropped = new Set<number>();
  for (let index = 0; index < log.entries.length; index += 1) {
    const overBytes = bytes > log.byteLimit;
    if (!overBytes && requests <= log.limit && navigations <= log.limit) break;
    const entry = log.entries[index] as TimelineEntry;
    if (entry.type === 'navigation') {
      if (overBytes || navigations > log.limit) {
        dropped.add(index);
        navigations -= 1;
        bytes -= log.sizes[index] as number;
      }
      continue;
    }
    const id = requestKey(entry);
    if (evicted.has(id) || requests <= 1 || (!overBytes && requests <= log.limit)) continue;
    evicted.add(id);
    requests -= 1;
    bytes -= log.requests.get(id)?.bytes ?? 0;
  }
  if (evicted.size === 0 && dropped.size === 0) return;
  log.evicted += evicted.size;
  for (const id of evicted) log.requests.delete(id);
  let keep: number[] = [];
  log.entries.forEach((entry, index) => {
    if (entry.type === 'navigation' ? !dropped.has(index) : !evicted.has(requestKey(entry))) {
      keep.push(index);
    }
  });
  // Leading navigations (all of them when no event is left) collapse to the last one.
  const firstEvent = keep.findIndex((index) => log.entries[index]?.type === 'event');
  const lead = firstEvent === -1 ? keep.length : firstEvent;
  if (lead > 1) keep = keep.slice(lead - 1);
  keepOnly(log, keep);
}

/**
 * Appends validated events from a frame of `origin` (as the browser names the sender: see
 * `senderOrigin`). Returns the entries added: none when the
 * tab's recording is off, and none for events of a request past its limit.
 */
export function appendEvents(
  log: TabLog,
  events: readonly RetrylineEvent[],
  origin: string,
): TimelineEntry[] {
  if (!log.settings.record || events.length === 0) return [];
  const added: TimelineEntry[] = [];
  for (const event of events) {
    let entry = admit(log, event, origin);
    if (!entry) continue;
    const tally = log.requests.get(frameKey(origin, event.requestId));
    let size = entrySize(entry);
    // This event fills its request: mark it, so the row says that later events are not kept.
    if (
      !tally?.full &&
      event.type !== 'request-end' &&
      ((tally?.events ?? 0) + 1 >= MAX_REQUEST_EVENTS || (tally?.bytes ?? 0) + size >= MAX_REQUEST_BYTES)
    ) {
      entry = { ...entry, truncated: { dropped: 0 } };
      size = entrySize(entry);
    }
    add(log, entry, size);
    added.push(entry);
  }
  evict(log);
  return added;
}

/** What a navigation of the top frame did to the log. */
export interface NavigationResult {
  /** The log was emptied first (Preserve log is off). */
  readonly cleared: boolean;
  /** The navigation entry, when recording is on and the tab has recorded something. */
  readonly added: TimelineEntry[];
  /** The page state changed: the new document has a relay, and has not used Retryline yet. */
  readonly pageChanged: boolean;
}

/**
 * The top frame committed a new document (its relay said so): without Preserve log the old rows go
 * (as in DevTools' Network panel), and with recording on a navigation entry marks the boundary,
 * once the tab has recorded anything: the navigations of a tab that never sent a Retryline event
 * mark no boundary between rows, and are not kept (nor stored: they are the user's browsing). The
 * new document is hooked, and not known to use Retryline until it says so.
 */
export function navigate(log: TabLog, url: string, t: number): NavigationResult {
  const pageChanged = enterPage(log);
  const cleared = !log.settings.preserveLog && log.entries.length > 0;
  if (!log.settings.preserveLog) clearLog(log);
  // nextSeq counts every entry ever added (clears and evictions included).
  if (!log.settings.record || log.nextSeq === 0) return { cleared, added: [], pageChanged };
  const entry: TimelineEntry = { type: 'navigation', url: capUrl(url), t };
  add(log, entry);
  evict(log);
  return { cleared, added: [entry], pageChanged };
}

/**
 * The most frames of one page whose documents the worker follows: past this, it no longer knows the
 * page's frames (a page that makes and removes frames over and over, each with a notice, would grow
 * the list without end, and none says when a frame is gone).
 */
export const MAX_PAGE_FRAMES = 100;

/**
 * Frame `frameId` of the tab shows a new document of `origin` (as `senderOrigin` names it). The top
 * frame's (0) starts a page whose frames are known from then on: the frames of the page before went
 * with it. Another frame's replaces what that frame showed, in a page whose frames are known.
 */
export function frameDocument(log: TabLog, frameId: number, origin: string): void {
  if (frameId === 0) log.frames = new Map([[0, origin]]);
  else if (log.frames && (log.frames.has(frameId) || log.frames.size < MAX_PAGE_FRAMES)) {
    log.frames.set(frameId, origin);
  } else log.frames = undefined;
}

/**
 * What the panel is told of the tab's page: the stored state, with the origins of its frames when
 * they are known (each once, sorted).
 */
export function pageState(log: TabLog): PageState {
  if (!log.frames) return log.page;
  return { ...log.page, frames: [...new Set(log.frames.values())].sort() };
}

/**
 * The tab's top frame shows a new document, which has a relay and is not known to use Retryline
 * yet. Returns whether the page state changed. {@link navigate} does this too.
 */
export function enterPage(log: TabLog): boolean {
  return setPage(log, { hooked: true, detected: false });
}

/**
 * The tab's current document uses Retryline: it created a client, or sent events (from any of its
 * frames, whose relays run too). Returns whether that is news. Recording off or not, so the panel
 * never says "not detected" of a page it simply did not record.
 */
export function markDetected(log: TabLog): boolean {
  return setPage(log, { hooked: true, detected: true });
}

function setPage(log: TabLog, page: PageState): boolean {
  if (log.page.hooked === page.hooked && log.page.detected === page.detected) return false;
  log.page = page;
  log.indexChanged = true;
  return true;
}

/**
 * A navigation URL as request URLs are kept: the browser reports it whole, so the
 * worker redacts it with core's rule (credentials removed, query values masked, fragment dropped).
 */
function capUrl(url: string): string {
  const redacted = redactUrl(url);
  return redacted.length > MAX_STRING_LENGTH ? `${redacted.slice(0, MAX_STRING_LENGTH - 1)}…` : redacted;
}

export function clearLog(log: TabLog): void {
  keepOnly(log, []);
  log.requests = new Map();
  if (log.evicted > 0) log.indexChanged = true;
  log.evicted = 0;
  // Its rows are gone, and the room they took: it may grow to its full size again.
  resetByteLimit(log);
}

/**
 * `storage.session` refused this tab's write for lack of room: drop its own oldest requests (a
 * quarter of its bytes), never another tab's. Returns whether anything was dropped.
 */
export function makeRoom(log: TabLog): boolean {
  const before = log.entries.length;
  log.byteLimit = Math.floor(Math.min(log.byteLimit, log.bytes) * 0.75);
  evict(log);
  return log.entries.length < before;
}

/** Room was freed (another tab closed): the tab may grow to its full size again. */
export function resetByteLimit(log: TabLog): void {
  log.byteLimit = log.maxBytes;
}

/** Applies a panel's (already checked) partial settings; returns whether anything changed. */
export function updateSettings(log: TabLog, patch: Partial<TabSettings>): boolean {
  const next: TabSettings = {
    preserveLog: patch.preserveLog ?? log.settings.preserveLog,
    record: patch.record ?? log.settings.record,
  };
  const changed = next.preserveLog !== log.settings.preserveLog || next.record !== log.settings.record;
  log.settings = next;
  if (changed) log.indexChanged = true;
  return changed;
}
