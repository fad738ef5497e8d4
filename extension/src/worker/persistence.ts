/**
 * How a tab's log lives in `storage.session`, so that a suspended or killed worker restores it.
 * The ring is stored in chunks of {@link CHUNK_ENTRIES} sequence numbers plus a small index, and
 * a write carries only the chunks that changed: appending to a full 2,000-request ring rewrites
 * the newest chunk and the one eviction touched, not megabytes of JSON ten times a second.
 *
 *   tab:<id>          { v: 1, settings, nextSeq, chunks: [3, 4, 5] }
 *   tab:<id>/<chunk>  { seqs: [...], entries: [...] }
 *
 * The index and the chunks it lists are written in one `set` (atomic), so a restore never sees
 * an index pointing at a chunk of another time; a chunk the index does not list is ignored.
 */

import { RING_REQUESTS, type TabSettings, type TimelineEntry } from '../shared/protocol';
import { validateEvent } from '../shared/schema';
import { CHUNK_ENTRIES, chunkOf, createTabLog, type TabLog } from './store';

export const indexKey = (tabId: number): string => `tab:${tabId}`;
export const chunkKey = (tabId: number, chunk: number): string => `tab:${tabId}/${chunk}`;

export interface StoredIndex {
  readonly v: 1;
  readonly settings: TabSettings;
  readonly nextSeq: number;
  readonly chunks: readonly number[];
}

export interface StoredChunk {
  readonly seqs: readonly number[];
  readonly entries: readonly TimelineEntry[];
}

/** One write: keys to set (in one call) and keys to remove (in a call made right after). */
export interface WritePlan {
  readonly set: Record<string, StoredIndex | StoredChunk>;
  readonly remove: string[];
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
 * What to write for a tab since the last plan (`undefined`: nothing changed), and forgets the
 * changes. Call `set` and `remove` in this order without awaiting in between: storage applies
 * calls in the order they are made, and a later plan may set a chunk this one removes.
 */
export function planWrite(tabId: number, log: TabLog): WritePlan | undefined {
  if (log.changedChunks.size === 0 && !log.settingsChanged) return undefined;
  const set: WritePlan['set'] = {};
  const remove: string[] = [];
  for (const chunk of [...log.changedChunks].sort((a, b) => a - b)) {
    const from = lowerBound(log.seqs, chunk * CHUNK_ENTRIES);
    const to = lowerBound(log.seqs, (chunk + 1) * CHUNK_ENTRIES);
    if (from === to) remove.push(chunkKey(tabId, chunk));
    else
      set[chunkKey(tabId, chunk)] = { seqs: log.seqs.slice(from, to), entries: log.entries.slice(from, to) };
  }
  set[indexKey(tabId)] = { v: 1, settings: log.settings, nextSeq: log.nextSeq, chunks: chunksOf(log) };
  log.changedChunks.clear();
  log.settingsChanged = false;
  return { set, remove };
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

function parseIndex(value: unknown): StoredIndex | undefined {
  if (!isRecord(value) || value.v !== 1 || !isCount(value.nextSeq) || !Array.isArray(value.chunks))
    return undefined;
  const settings = parseSettings(value.settings, false);
  if (!settings || !value.chunks.every(isCount)) return undefined;
  return { v: 1, settings, nextSeq: value.nextSeq, chunks: value.chunks };
}

/** The chunk keys a stored index lists (what to read after the index), or `undefined` for no index. */
export function chunkKeysOf(tabId: number, index: unknown): string[] | undefined {
  return parseIndex(index)?.chunks.map((chunk) => chunkKey(tabId, chunk));
}

function parseEntry(value: unknown): TimelineEntry | undefined {
  if (!isRecord(value)) return undefined;
  if (value.type === 'event') {
    const event = validateEvent(value.event);
    return event && typeof value.origin === 'string'
      ? { type: 'event', event, origin: value.origin }
      : undefined;
  }
  if (value.type === 'navigation' && typeof value.url === 'string' && Number.isFinite(value.t)) {
    return { type: 'navigation', url: value.url, t: value.t as number };
  }
  return undefined;
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
): TabLog | undefined {
  const parsed = parseIndex(index);
  if (!parsed) return undefined;
  const log = createTabLog(parsed.settings, limit);
  let last = -1;
  for (const chunk of parsed.chunks) {
    const value = stored[chunkKey(tabId, chunk)];
    if (!isRecord(value) || !Array.isArray(value.seqs) || !Array.isArray(value.entries)) continue;
    const { seqs, entries } = value as { seqs: unknown[]; entries: unknown[] };
    for (let i = 0; i < seqs.length; i += 1) {
      const seq = seqs[i];
      const entry = parseEntry(entries[i]);
      if (!entry || !isCount(seq) || seq <= last || chunkOf(seq) !== chunk || seq >= parsed.nextSeq) continue;
      last = seq;
      log.entries.push(entry);
      log.seqs.push(seq);
      if (entry.type === 'event') log.requests.add(entry.event.requestId);
    }
  }
  log.nextSeq = parsed.nextSeq;
  return log;
}
