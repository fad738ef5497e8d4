/**
 * One tab's timeline as the service worker keeps it: a ring of the most recent requests (whole
 * requests are evicted, oldest first, so no row loses its first attempt), navigations of the top
 * frame, and the panel's settings. Pure data and functions: the worker adds the browser, the
 * tests add nothing.
 *
 * Every entry has a sequence number, its place in the tab's history, so that `persistence.ts` can
 * store the ring in fixed chunks and rewrite only the chunks that changed.
 */

import type { RetrylineEvent } from '@retryline/core';
import { RING_REQUESTS, type TabSettings, type TimelineEntry } from '../shared/protocol';
import { MAX_STRING_LENGTH, stripUserinfo } from '../shared/schema';

export const DEFAULT_SETTINGS: TabSettings = Object.freeze({ preserveLog: false, record: true });

/** How many sequence numbers one storage chunk holds. */
export const CHUNK_ENTRIES = 256;

/** A tab's timeline. Mutable, owned by the worker; `entries` is what a snapshot sends. */
export interface TabLog {
  settings: TabSettings;
  entries: TimelineEntry[];
  /** `seqs[i]` is the sequence number of `entries[i]` (ascending). */
  seqs: number[];
  /** The sequence number of the next entry. */
  nextSeq: number;
  /** The most requests kept. */
  readonly limit: number;
  /** Request ids in the order they were first seen: the eviction order. */
  requests: Set<string>;
  /** Chunks whose entries changed since the last write. */
  readonly changedChunks: Set<number>;
  /** The settings changed since the last write. */
  settingsChanged: boolean;
}

export function createTabLog(settings: TabSettings = DEFAULT_SETTINGS, limit = RING_REQUESTS): TabLog {
  return {
    settings,
    entries: [],
    seqs: [],
    nextSeq: 0,
    limit,
    requests: new Set(),
    changedChunks: new Set(),
    settingsChanged: false,
  };
}

export const chunkOf = (seq: number): number => Math.floor(seq / CHUNK_ENTRIES);

function add(log: TabLog, entry: TimelineEntry): void {
  const seq = log.nextSeq++;
  log.entries.push(entry);
  log.seqs.push(seq);
  log.changedChunks.add(chunkOf(seq));
  if (entry.type === 'event') log.requests.add(entry.event.requestId);
}

/** Keeps the entries at `keep` (ascending indexes); the chunks of the others have changed. */
function keepOnly(log: TabLog, keep: readonly number[]): void {
  let next = 0;
  for (let index = 0; index < log.entries.length; index += 1) {
    if (keep[next] === index) next += 1;
    else log.changedChunks.add(chunkOf(log.seqs[index] as number));
  }
  log.entries = keep.map((index) => log.entries[index] as TimelineEntry);
  log.seqs = keep.map((index) => log.seqs[index] as number);
}

/**
 * Keeps at most `limit` requests (dropping every entry of the oldest ones) and at most `limit`
 * navigations. Of the navigations older than every kept request only the last stays: it tells
 * which page the oldest kept request came from.
 */
function evict(log: TabLog): void {
  const excess = log.requests.size - log.limit;
  let navigations = 0;
  for (const entry of log.entries) if (entry.type === 'navigation') navigations += 1;
  if (excess <= 0 && navigations <= log.limit) return;
  const evicted = new Set<string>();
  for (const id of log.requests) {
    if (evicted.size >= excess) break;
    evicted.add(id);
  }
  for (const id of evicted) log.requests.delete(id);
  let keep: number[] = [];
  log.entries.forEach((entry, index) => {
    if (entry.type === 'navigation' || !evicted.has(entry.event.requestId)) keep.push(index);
  });
  // Leading navigations (all of them when no event is left) collapse to the last one.
  const firstEvent = keep.findIndex((index) => log.entries[index]?.type === 'event');
  const lead = firstEvent === -1 ? keep.length : firstEvent;
  if (lead > 1) keep = keep.slice(lead - 1);
  let extra = keep.filter((index) => log.entries[index]?.type === 'navigation').length - log.limit;
  if (extra > 0) {
    keep = keep.filter((index) => {
      if (log.entries[index]?.type !== 'navigation' || extra <= 0) return true;
      extra -= 1;
      return false;
    });
  }
  keepOnly(log, keep);
}

/**
 * Appends validated events from a page of `origin`. Returns the entries added: none when the
 * tab's recording is off.
 */
export function appendEvents(
  log: TabLog,
  events: readonly RetrylineEvent[],
  origin: string,
): TimelineEntry[] {
  if (!log.settings.record || events.length === 0) return [];
  const added: TimelineEntry[] = events.map((event) => ({ type: 'event', event, origin }));
  for (const entry of added) add(log, entry);
  evict(log);
  return added;
}

/** What a navigation of the top frame did to the log. */
export interface NavigationResult {
  /** The log was emptied first (Preserve log is off). */
  readonly cleared: boolean;
  /** The navigation entry, when recording is on. */
  readonly added: TimelineEntry[];
}

/**
 * The top frame committed a new document: without Preserve log the old rows go (as in DevTools'
 * Network panel), and with recording on a navigation entry marks the boundary.
 */
export function navigate(log: TabLog, url: string, t: number): NavigationResult {
  const cleared = !log.settings.preserveLog && log.entries.length > 0;
  if (!log.settings.preserveLog) clearLog(log);
  if (!log.settings.record) return { cleared, added: [] };
  const entry: TimelineEntry = { type: 'navigation', url: capUrl(url), t };
  add(log, entry);
  evict(log);
  return { cleared, added: [entry] };
}

function capUrl(url: string): string {
  const stripped = stripUserinfo(url);
  return stripped.length > MAX_STRING_LENGTH ? `${stripped.slice(0, MAX_STRING_LENGTH - 1)}…` : stripped;
}

export function clearLog(log: TabLog): void {
  keepOnly(log, []);
  log.requests = new Set();
}

/** Applies a panel's (already checked) partial settings; returns whether anything changed. */
export function updateSettings(log: TabLog, patch: Partial<TabSettings>): boolean {
  const next: TabSettings = {
    preserveLog: patch.preserveLog ?? log.settings.preserveLog,
    record: patch.record ?? log.settings.record,
  };
  const changed = next.preserveLog !== log.settings.preserveLog || next.record !== log.settings.record;
  log.settings = next;
  if (changed) log.settingsChanged = true;
  return changed;
}
