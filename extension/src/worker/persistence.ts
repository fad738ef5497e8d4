/**
 * How a tab's log lives in `storage.session`, so that a suspended or killed worker restores it.
 * The ring is stored in chunks of {@link CHUNK_ENTRIES} sequence numbers plus a small index, and
 * a write carries only the chunks that changed: appending to a full 2,000-request ring rewrites
 * the newest chunk and the one eviction touched, not megabytes of JSON ten times a second.
 *
 *   tab:<id>          { v: 2, settings, page, evicted, nextSeq, chunks: [3, 4, 5] }
 *   tab:<id>/<chunk>  '{"seqs":[...],"entries":[...]}'
 *
 * A chunk is stored as one JSON string: Chrome counts a stored object at about 3.5 times its
 * JSON size against the 10 MiB quota (every map and list node), and a string at its length, so a
 * full ring fits only as text. (Version 1 stored chunks as objects; they are still read.)
 *
 * The index and the chunks it lists are written in one `set` (atomic: a write over the quota
 * stores nothing), so a restore never sees an index pointing at a chunk of another time; a chunk
 * the index does not list is ignored, one it lists but is missing is skipped.
 *
 * A write's changes stay marked until the write is known to have succeeded: `planWrite` takes
 * them and `writeFailed` gives them back, so a failed write is retried instead of lost.
 */

import {
  MAX_TAB_BYTES,
  type PageState,
  RING_REQUESTS,
  type TabSettings,
  type TimelineEntry,
  type Truncation,
} from '../shared/protocol';
import { validateEvent } from '../shared/schema';
import { CHUNK_ENTRIES, chunkOf, createTabLog, evict, keepEntry, type TabLog, UNKNOWN_PAGE } from './store';

export const indexKey = (tabId: number): string => `tab:${tabId}`;
export const chunkKey = (tabId: number, chunk: number): string => `tab:${tabId}/${chunk}`;

/** The stored format written. */
const STORE_VERSION = 2;

export interface StoredIndex {
  readonly v: typeof STORE_VERSION;
  readonly settings: TabSettings;
  /** Absent from what an older worker stored: read as {@link UNKNOWN_PAGE}. */
  readonly page: PageState;
  /** Absent from what an older worker stored: read as 0. */
  readonly evicted: number;
  readonly nextSeq: number;
  readonly chunks: readonly number[];
}

export interface StoredChunk {
  readonly seqs: readonly number[];
  readonly entries: readonly TimelineEntry[];
}

/**
 * One write: keys to remove, then keys to set (in one call, after the removal: the removed
 * chunks' room is free for the set). What it carries is no longer marked changed in the log until
 * {@link writeFailed} gives it back.
 */
export interface WritePlan {
  readonly set: Record<string, StoredIndex | string>;
  readonly remove: string[];
  /** The chunks it writes or removes. */
  readonly chunks: readonly number[];
  /** Whether it carries changed fields of the index (settings, page, evicted). */
  readonly index: boolean;
}

/** The first index whose sequence number is at least `seq` (`seqs` is ascending). */
function lowerBound(seqs: readonly number[], seq: number): number {
  let low = 0;
  let high = seqs.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((seqs[middle] as number) < seq) low = middle + 1;
    else high = middle;
  }
  return low;
}

function chunksOf(log: TabLog): number[] {
  const chunks: number[] = [];
  for (const seq of log.seqs) {
    const chunk = chunkOf(seq);
    if (chunks[chunks.length - 1] !== chunk) chunks.push(chunk);
  }
  return chunks;
}

/**
 * What to write for a tab since the last plan (`undefined`: nothing changed). The changes it
 * carries are taken from the log; give them back with {@link writeFailed} if the write fails.
 * Make one plan's calls (remove, then set) before the next plan's: storage applies calls in the
 * order they are made, and a later plan may set a chunk this one removes.
 */
export function planWrite(tabId: number, log: TabLog): WritePlan | undefined {
  if (log.changedChunks.size === 0 && !log.indexChanged) return undefined;
  const set: WritePlan['set'] = {};
  const remove: string[] = [];
  const chunks = [...log.changedChunks].sort((a, b) => a - b);
  for (const chunk of chunks) {
    const from = lowerBound(log.seqs, chunk * CHUNK_ENTRIES);
    const to = lowerBound(log.seqs, (chunk + 1) * CHUNK_ENTRIES);
    if (from === to) remove.push(chunkKey(tabId, chunk));
    else {
      const stored: StoredChunk = { seqs: log.seqs.slice(from, to), entries: log.entries.slice(from, to) };
      set[chunkKey(tabId, chunk)] = JSON.stringify(stored);
    }
  }
  set[indexKey(tabId)] = {
    v: STORE_VERSION,
    settings: log.settings,
    page: log.page,
    evicted: log.evicted,
    nextSeq: log.nextSeq,
    chunks: chunksOf(log),
  };
  const index = log.indexChanged;
  log.changedChunks.clear();
  log.indexChanged = false;
  return { set, remove, chunks, index };
}

/**
 * The write of `plan` failed: its changes are marked again, so the next plan writes them (with
 * whatever changed since). A `set` is atomic, so nothing of a failed one was stored.
 */
export function writeFailed(log: TabLog, plan: WritePlan): void {
  for (const chunk of plan.chunks) log.changedChunks.add(chunk);
  if (plan.index) log.indexChanged = true;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** Settings as stored, or as a panel sent them (`partial`): only booleans, only known keys. */
export function parseSettings(value: unknown, partial: true): Partial<TabSettings> | undefined;
export function parseSettings(value: unknown, partial: false): TabSettings | undefined;
export function parseSettings(value: unknown, partial: boolean): Partial<TabSettings> | undefined {
  if (!isRecord(value)) return undefined;
  const out: { preserveLog?: boolean; record?: boolean } = {};
  for (const key of ['preserveLog', 'record'] as const) {
    const field = Object.hasOwn(value, key) ? value[key] : undefined;
    if (field === undefined && partial) continue;
    if (typeof field !== 'boolean') return undefined;
    out[key] = field;
  }
  return out;
}

function parsePage(value: unknown): PageState {
  if (!isRecord(value) || typeof value.hooked !== 'boolean' || typeof value.detected !== 'boolean') {
    return UNKNOWN_PAGE;
  }
  return { hooked: value.hooked, detected: value.detected };
}

function parseIndex(value: unknown): StoredIndex | undefined {
  if (!isRecord(value) || (value.v !== 1 && value.v !== STORE_VERSION)) return undefined;
  if (!isCount(value.nextSeq) || !Array.isArray(value.chunks)) return undefined;
  const settings = parseSettings(value.settings, false);
  if (!settings || !value.chunks.every(isCount)) return undefined;
  return {
    v: STORE_VERSION,
    settings,
    page: parsePage(value.page),
    evicted: isCount(value.evicted) ? value.evicted : 0,
    nextSeq: value.nextSeq,
    chunks: value.chunks,
  };
}

/** The chunk keys a stored index lists (what to read after the index), or `undefined` for no index. */
export function chunkKeysOf(tabId: number, index: unknown): string[] | undefined {
  return parseIndex(index)?.chunks.map((chunk) => chunkKey(tabId, chunk));
}

/** A {@link Truncation} mark as stored, or `undefined`. */
export function parseTruncation(value: unknown): Truncation | undefined {
  return isRecord(value) && isCount(value.dropped) ? { dropped: value.dropped } : undefined;
}

function parseEntry(value: unknown): TimelineEntry | undefined {
  if (!isRecord(value)) return undefined;
  if (value.type === 'event') {
    const event = validateEvent(value.event);
    if (!event || typeof value.origin !== 'string') return undefined;
    const truncated = parseTruncation(value.truncated);
    return truncated
      ? { type: 'event', event, origin: value.origin, truncated }
      : { type: 'event', event, origin: value.origin };
  }
  if (value.type === 'navigation' && typeof value.url === 'string' && Number.isFinite(value.t)) {
    return { type: 'navigation', url: value.url, t: value.t as number };
  }
  return undefined;
}

/** A stored chunk: a JSON string (version 2) or the object itself (version 1). */
function readChunk(value: unknown): { seqs: unknown[]; entries: unknown[] } | undefined {
  let chunk = value;
  if (typeof value === 'string') {
    try {
      chunk = JSON.parse(value);
    } catch {
      return undefined;
    }
  }
  if (!isRecord(chunk) || !Array.isArray(chunk.seqs) || !Array.isArray(chunk.entries)) return undefined;
  return chunk as { seqs: unknown[]; entries: unknown[] };
}

/**
 * A tab's log from its stored index and the chunks read for it, checked again (the stored
 * format may be older than this worker): `undefined` when there is no valid index; a missing
 * chunk or a bad entry is skipped.
 */
export function restoreTabLog(
  tabId: number,
  index: unknown,
  stored: Readonly<Record<string, unknown>>,
  limit = RING_REQUESTS,
  maxBytes = MAX_TAB_BYTES,
): TabLog | undefined {
  const parsed = parseIndex(index);
  if (!parsed) return undefined;
  const log = createTabLog(parsed.settings, limit, maxBytes);
  log.page = parsed.page;
  log.evicted = parsed.evicted;
  let last = -1;
  for (const chunk of parsed.chunks) {
    const value = readChunk(stored[chunkKey(tabId, chunk)]);
    if (!value) continue;
    const { seqs, entries } = value;
    for (let i = 0; i < seqs.length; i += 1) {
      const seq = seqs[i];
      const entry = parseEntry(entries[i]);
      if (!entry || !isCount(seq) || seq <= last || chunkOf(seq) !== chunk || seq >= parsed.nextSeq) continue;
      last = seq;
      keepEntry(log, entry, seq);
    }
  }
  log.nextSeq = parsed.nextSeq;
  // What an older worker stored may exceed this one's bounds.
  evict(log);
  return log;
}
