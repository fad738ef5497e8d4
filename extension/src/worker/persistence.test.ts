import type { RetrylineEvent } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { ordinaryRequest } from '../model/fixtures';
import { frameKey } from '../shared/frame-key';
import { chunkKey, chunkKeysOf, indexKey, planWrite, restoreTabLog, writeFailed } from './persistence';
import {
  appendEvents,
  CHUNK_ENTRIES,
  clearLog,
  createTabLog,
  markDetected,
  navigate,
  type TabLog,
  updateSettings,
} from './store';

const ORIGIN = 'https://shop.example';
const keyOf = (requestId: string) => frameKey(ORIGIN, requestId);
const TAB = 7;

function start(requestId: string): RetrylineEvent {
  return { v: 1, type: 'request-start', requestId, t: 1, client: 'fetch', url: `${ORIGIN}/${requestId}` };
}

/** `storage.session` as plain JSON, applying plans the way the worker does. */
function fakeStorage() {
  const items = new Map<string, unknown>();
  return {
    items,
    apply(tabId: number, log: TabLog) {
      const plan = planWrite(tabId, log);
      if (!plan) return undefined;
      for (const [key, value] of Object.entries(plan.set)) items.set(key, JSON.parse(JSON.stringify(value)));
      for (const key of plan.remove) items.delete(key);
      return plan;
    },
    restore(tabId: number, limit?: number) {
      const index = items.get(indexKey(tabId));
      const keys = chunkKeysOf(tabId, index) ?? [];
      const stored = Object.fromEntries(keys.map((key) => [key, items.get(key)]));
      return restoreTabLog(tabId, index, stored, limit);
    },
  };
}

describe('storing a tab log', () => {
  it('survives a JSON round trip, and the ring goes on where it stopped', () => {
    const storage = fakeStorage();
    const log = createTabLog({ preserveLog: true, record: true }, 3);
    appendEvents(log, [start('a')], ORIGIN);
    navigate(log, 'https://shop.example/', 1);
    appendEvents(log, [start('b')], ORIGIN);
    updateSettings(log, { record: false });
    storage.apply(TAB, log);

    const restored = storage.restore(TAB, 3);
    expect(restored?.settings).toEqual({ preserveLog: true, record: false });
    expect(restored?.entries).toEqual(log.entries);
    expect(restored?.seqs).toEqual(log.seqs);
    expect([...(restored?.requests.keys() ?? [])]).toEqual(['a', 'b'].map(keyOf));
    expect(restored?.bytes).toBe(log.bytes);
    if (!restored) return;
    updateSettings(restored, { record: true });
    appendEvents(restored, [start('c'), start('d')], ORIGIN);
    expect([...restored.requests.keys()]).toEqual(['b', 'c', 'd'].map(keyOf));
    // The navigation before b stays: it says which page b came from.
    expect(restored.seqs).toEqual([1, 2, 3, 4]);
  });

  it('writes nothing when nothing changed', () => {
    const storage = fakeStorage();
    const log = createTabLog();
    appendEvents(log, [start('a')], ORIGIN);
    expect(storage.apply(TAB, log)).toBeDefined();
    expect(storage.apply(TAB, log)).toBeUndefined();
  });

  it('rewrites only the chunks that changed', () => {
    const storage = fakeStorage();
    const log = createTabLog(undefined, 2 * CHUNK_ENTRIES);
    for (let n = 0; n < 2 * CHUNK_ENTRIES; n += 1) appendEvents(log, [start(`r${n}`)], ORIGIN);
    storage.apply(TAB, log);
    expect([...storage.items.keys()].sort()).toEqual(
      [indexKey(TAB), chunkKey(TAB, 0), chunkKey(TAB, 1)].sort(),
    );

    // One more request: it goes to chunk 2, and evicting r0 changes chunk 0. Chunk 1 is not rewritten.
    appendEvents(log, [start('new')], ORIGIN);
    const plan = storage.apply(TAB, log);
    expect(Object.keys(plan?.set ?? {}).sort()).toEqual(
      [indexKey(TAB), chunkKey(TAB, 0), chunkKey(TAB, 2)].sort(),
    );
    const restored = storage.restore(TAB, 2 * CHUNK_ENTRIES);
    expect(restored?.entries).toEqual(log.entries);
    expect(restored?.requests.has(keyOf('r0'))).toBe(false);
  });

  it('removes the chunks a clear emptied', () => {
    const storage = fakeStorage();
    const log = createTabLog();
    for (let n = 0; n < CHUNK_ENTRIES + 1; n += 1) appendEvents(log, [start(`r${n}`)], ORIGIN);
    storage.apply(TAB, log);
    clearLog(log);
    const plan = storage.apply(TAB, log);
    expect(plan?.remove.sort()).toEqual([chunkKey(TAB, 0), chunkKey(TAB, 1)]);
    expect([...storage.items.keys()]).toEqual([indexKey(TAB)]);
    expect(storage.restore(TAB)?.entries).toEqual([]);
  });

  it('restores settings changes written on their own', () => {
    const storage = fakeStorage();
    const log = createTabLog();
    updateSettings(log, { preserveLog: true });
    storage.apply(TAB, log);
    expect(storage.restore(TAB)?.settings).toEqual({ preserveLog: true, record: true });
  });

  it('restores the page state and the evicted count, each written on its own too', () => {
    const storage = fakeStorage();
    const log = createTabLog(undefined, 1);
    navigate(log, 'https://shop.example/', 1);
    appendEvents(log, [start('a'), start('b'), start('c')], ORIGIN);
    storage.apply(TAB, log);
    expect(storage.restore(TAB, 1)).toMatchObject({ page: { hooked: true, detected: false }, evicted: 2 });

    // Nothing but the page changed: the index still goes.
    markDetected(log);
    expect(storage.apply(TAB, log)?.index).toBe(true);
    expect(storage.restore(TAB, 1)?.page).toEqual({ hooked: true, detected: true });

    // A failed write gives the change back, so the next one carries it.
    clearLog(log);
    const failed = planWrite(TAB, log);
    if (!failed) throw new Error('a clear of evicted requests planned no write');
    writeFailed(log, failed);
    storage.apply(TAB, log);
    expect(storage.restore(TAB, 1)).toMatchObject({ page: { hooked: true, detected: true }, evicted: 0 });
  });

  it('reads an index without a page or an evicted count (an older worker’s) as an unknown page with none dropped', () => {
    const settings = { preserveLog: false, record: true };
    const old = restoreTabLog(TAB, { v: 2, settings, nextSeq: 0, chunks: [] }, {});
    expect(old).toMatchObject({ page: { hooked: false, detected: false }, evicted: 0 });
    const bad = { v: 2, settings, nextSeq: 0, chunks: [], page: { hooked: 'yes' }, evicted: -3 };
    expect(restoreTabLog(TAB, bad, {})).toMatchObject({
      page: { hooked: false, detected: false },
      evicted: 0,
    });
  });

  it('skips stored entries that no longer validate, and refuses what is not a stored index', () => {
    const index = { v: 1, settings: { preserveLog: false, record: true }, nextSeq: 6, chunks: [0, 1] };
    const restored = restoreTabLog(TAB, index, {
      [chunkKey(TAB, 0)]: {
        seqs: [0, 1, 2, 3, 4, 5],
        entries: [
          { type: 'event', event: start('a'), origin: ORIGIN },
          { type: 'event', event: { ...start('b'), v: 2 }, origin: ORIGIN },
          { type: 'event', event: start('c') },
          { type: 'navigation', url: 'https://shop.example/', t: 'later' },
          'junk',
          { type: 'navigation', url: 'https://shop.example/', t: 9 },
        ],
      },
      // Chunk 1 is listed but missing: skipped.
    });
    expect(restored?.entries).toEqual([
      { type: 'event', event: start('a'), origin: ORIGIN },
      { type: 'navigation', url: 'https://shop.example/', t: 9 },
    ]);
    expect(restored?.seqs).toEqual([0, 5]);
    for (const bad of [
      undefined,
      { ...index, v: 3 },
      { ...index, settings: { preserveLog: 'yes', record: true } },
      { ...index, nextSeq: -1 },
      { ...index, chunks: ['0'] },
    ]) {
      expect(restoreTabLog(TAB, bad, {})).toBeUndefined();
      expect(chunkKeysOf(TAB, bad)).toBeUndefined();
    }
  });

  it('refuses sequence numbers out of their chunk or out of order', () => {
    const index = { v: 1, settings: { preserveLog: false, record: true }, nextSeq: 3, chunks: [0] };
    const entry = (id: string) => ({ type: 'event', event: start(id), origin: ORIGIN });
    const restored = restoreTabLog(TAB, index, {
      [chunkKey(TAB, 0)]: {
        seqs: [1, 0, CHUNK_ENTRIES, 2],
        entries: [entry('a'), entry('b'), entry('c'), entry('d')],
      },
    });
    expect(restored?.seqs).toEqual([1, 2]);
  });
});

describe('a write that fails', () => {
  it('keeps its chunks and settings marked until a later write carries them', () => {
    const storage = fakeStorage();
    const log = createTabLog();
    appendEvents(log, [start('a')], ORIGIN);
    updateSettings(log, { preserveLog: true });
    const failed = planWrite(TAB, log);
    if (!failed) throw new Error('a plan');
    // The write was refused (the quota, a storage error): nothing of it was stored.
    writeFailed(log, failed);
    appendEvents(log, [start('b')], ORIGIN);
    const retried = storage.apply(TAB, log);
    expect(Object.keys(retried?.set ?? {}).sort()).toEqual([indexKey(TAB), chunkKey(TAB, 0)].sort());
    const restored = storage.restore(TAB);
    expect(restored?.entries).toEqual(log.entries);
    expect(restored?.settings).toEqual({ preserveLog: true, record: true });
  });
});

describe('the stored form', () => {
  it('stores each chunk as one JSON string, which Chrome counts at its length', () => {
    const storage = fakeStorage();
    const log = createTabLog();
    for (let n = 0; n < 10; n += 1) appendEvents(log, ordinaryRequest(n), ORIGIN);
    storage.apply(TAB, log);
    const chunk = storage.items.get(chunkKey(TAB, 0));
    expect(typeof chunk).toBe('string');
    expect(JSON.parse(chunk as string).entries).toEqual(log.entries);
  });

  it('still reads chunks stored as objects by the first version', () => {
    const index = { v: 1, settings: { preserveLog: false, record: true }, nextSeq: 2, chunks: [0] };
    const entries = [start('a'), start('b')].map((event) => ({ type: 'event', event, origin: ORIGIN }));
    const restored = restoreTabLog(TAB, index, { [chunkKey(TAB, 0)]: { seqs: [0, 1], entries } });
    expect(restored?.entries).toEqual(entries);
  });

  it('keeps the marks of a request the worker cut, and its tally, across a restart', () => {
    const storage = fakeStorage();
    const log = createTabLog();
    const flood = Array.from(
      { length: 600 },
      (_, i): RetrylineEvent => ({
        v: 1,
        type: 'attempt-start',
        requestId: 'flood',
        t: i,
        attempt: i + 1,
      }),
    );
    appendEvents(log, [start('flood'), ...flood.slice(0, 200)], ORIGIN);
    appendEvents(log, flood.slice(200, 400), ORIGIN);
    appendEvents(log, flood.slice(400), ORIGIN);
    storage.apply(TAB, log);
    const restored = storage.restore(TAB);
    expect(restored?.entries).toEqual(log.entries);
    // The count of events dropped so far is the worker's own; what is stored is the mark.
    expect(restored?.requests.get(keyOf('flood'))).toEqual({
      ...log.requests.get(keyOf('flood')),
      dropped: 0,
    });
    expect(restored?.entries.filter((e) => e.type === 'event' && e.truncated)).toHaveLength(1);
    // Restored full: a further event is dropped there too.
    if (!restored) return;
    expect(appendEvents(restored, flood.slice(0, 1), ORIGIN)).toEqual([]);
  });
});
