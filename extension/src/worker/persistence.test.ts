import type { RetrylineEvent } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { chunkKey, chunkKeysOf, indexKey, planWrite, restoreTabLog } from './persistence';
import {
  appendEvents,
  CHUNK_ENTRIES,
  clearLog,
  createTabLog,
  navigate,
  type TabLog,
  updateSettings,
} from './store';

const ORIGIN = 'https://shop.example';
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
    navigate(log, 'https://shop.example/', 1);
    appendEvents(log, [start('a'), start('b')], ORIGIN);
    updateSettings(log, { record: false });
    storage.apply(TAB, log);

    const restored = storage.restore(TAB, 3);
    expect(restored?.settings).toEqual({ preserveLog: true, record: false });
    expect(restored?.entries).toEqual(log.entries);
    expect(restored?.seqs).toEqual(log.seqs);
    expect(restored?.requests).toEqual(new Set(['a', 'b']));
    if (!restored) return;
    updateSettings(restored, { record: true });
    appendEvents(restored, [start('c'), start('d')], ORIGIN);
    expect([...restored.requests]).toEqual(['b', 'c', 'd']);
    expect(restored.seqs).toEqual([0, 2, 3, 4]);
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
    expect(restored?.requests.has('r0')).toBe(false);
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
      { ...index, v: 2 },
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
