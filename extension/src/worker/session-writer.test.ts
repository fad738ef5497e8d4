import { describe, expect, it } from 'vitest';
import { ordinaryRequest } from '../model/fixtures';
import { frameKey } from '../shared/frame-key';
import { MAX_TAB_BYTES, RING_REQUESTS } from '../shared/protocol';
import { chunkKeysOf, indexKey, restoreTabLog } from './persistence';
import {
  createSessionWriter,
  isQuotaError,
  retryDelay,
  type SessionArea,
  WRITE_DELAY_MS,
} from './session-writer';
import { appendEvents, createTabLog, type TabLog } from './store';

const ORIGIN = 'https://shop.example';
/** chrome.storage.session.QUOTA_BYTES */
const QUOTA = 10 * 1024 * 1024;

/**
 * `storage.session` as Chrome keeps it: values as JSON, a `set` over the quota stores nothing and
 * rejects with Chrome's message; a string counts its length, anything else about 3.5 times its
 * JSON (measured with getBytesInUse: 256 ordinary entries are 80 KB as text, 279 KB as objects).
 * `fail` makes the next calls fail with another error.
 */
function sessionArea(quota = QUOTA) {
  const items = new Map<string, unknown>();
  const cost = (key: string, value: unknown) =>
    key.length + (typeof value === 'string' ? value.length : Math.ceil(3.5 * JSON.stringify(value).length));
  const used = () => [...items].reduce((sum, [key, value]) => sum + cost(key, value), 0);
  const area = {
    items,
    used,
    fail: 0,
    calls: [] as string[],
    async get(keys: string | string[]) {
      const out: Record<string, unknown> = {};
      for (const key of typeof keys === 'string' ? [keys] : keys)
        if (items.has(key)) out[key] = items.get(key);
      return out;
    },
    async set(values: Record<string, unknown>) {
      area.calls.push(`set ${Object.keys(values).sort().join(' ')}`);
      if (area.fail > 0) {
        area.fail -= 1;
        throw new Error('Storage is temporarily unavailable.');
      }
      const next = new Map(items);
      for (const [key, value] of Object.entries(values)) next.set(key, JSON.parse(JSON.stringify(value)));
      const total = [...next].reduce((sum, [key, value]) => sum + cost(key, value), 0);
      if (total > quota) throw new Error('Session storage quota bytes exceeded. Values were not stored.');
      for (const [key, value] of next) items.set(key, value);
    },
    async remove(keys: string | string[]) {
      area.calls.push(`remove ${[keys].flat().sort().join(' ')}`);
      for (const key of typeof keys === 'string' ? [keys] : keys) items.delete(key);
    },
  };
  return area satisfies SessionArea;
}

/** What a new worker would restore of a tab from the area. */
function restore(area: ReturnType<typeof sessionArea>, tabId: number): TabLog | undefined {
  const index = area.items.get(indexKey(tabId));
  const keys = chunkKeysOf(tabId, index) ?? [];
  return restoreTabLog(tabId, index, Object.fromEntries(keys.map((key) => [key, area.items.get(key)])));
}

/** A writer on `area` whose timers the test runs by hand. */
function writerOn(area: SessionArea, logs: Map<number, TabLog>) {
  const timers: { ms: number; callback: () => void }[] = [];
  const errors: string[] = [];
  /** The tabs told to have dropped requests for room, with the count each log then had. */
  const evictions: [number, number | undefined][] = [];
  const writer = createSessionWriter({
    area,
    logOf: (tabId) => logs.get(tabId),
    schedule: (callback, ms) => timers.push({ callback, ms }),
    onError: (what) => errors.push(what),
    onEvicted: (tabId) => evictions.push([tabId, logs.get(tabId)?.evicted]),
  });
  /** Runs the timers due so far, then waits for the writes they started. */
  const tick = async () => {
    for (const { callback } of timers.splice(0)) callback();
    await writer.idle();
  };
  return { writer, timers, errors, evictions, tick };
}

/** The requests a log keeps, by their keys (origin and id). */
const requestKeys = (log: TabLog | undefined) => [...(log?.requests.keys() ?? [])];

describe('the session writer', () => {
  it('writes within its delay, and only what changed', async () => {
    const area = sessionArea();
    const log = createTabLog();
    const { writer, timers, tick } = writerOn(area, new Map([[1, log]]));
    appendEvents(log, ordinaryRequest(1), ORIGIN);
    writer.persist(1);
    writer.persist(1);
    expect(timers.map((t) => t.ms)).toEqual([WRITE_DELAY_MS]);
    await tick();
    expect(restore(area, 1)?.entries).toEqual(log.entries);
    area.calls.length = 0;
    await writer.flush();
    expect(area.calls).toEqual([]);
  });

  it('retries a failed write until it is stored: no row is lost to a restart', async () => {
    const area = sessionArea();
    const log = createTabLog();
    const { writer, timers, errors, tick } = writerOn(area, new Map([[1, log]]));
    appendEvents(log, ordinaryRequest(1), ORIGIN);
    area.fail = 2;
    writer.persist(1, true);
    await writer.idle();
    expect(restore(area, 1)).toBeUndefined();
    expect(errors).toEqual(['could not save the timeline (will retry)']);
    expect(timers.map((t) => t.ms)).toEqual([retryDelay(1)]);
    // More rows arrive while the storage is failing; the retry carries them too.
    appendEvents(log, ordinaryRequest(2), ORIGIN);
    await tick();
    expect(timers.map((t) => t.ms)).toEqual([retryDelay(2)]);
    await tick();
    expect(requestKeys(restore(area, 1))).toEqual(requestKeys(log));
    expect(restore(area, 1)?.entries).toEqual(log.entries);
    expect(timers).toEqual([]);
  });

  it(`stores a full ring of ${RING_REQUESTS} ordinary requests within the 10 MiB quota`, async () => {
    const area = sessionArea();
    const log = createTabLog();
    const { writer, errors } = writerOn(area, new Map([[1, log]]));
    for (let n = 0; n < RING_REQUESTS; n += 1) {
      appendEvents(log, ordinaryRequest(n), ORIGIN);
      if (n % 50 === 0) await writer.flush();
      writer.persist(1);
    }
    await writer.flush();
    expect(errors).toEqual([]);
    expect(area.used()).toBeLessThan(QUOTA / 2);
    const restored = restore(area, 1);
    expect(restored?.requests.size).toBe(RING_REQUESTS);
    expect(restored?.entries).toEqual(log.entries);
  });

  it("makes room in the tab that wrote when the quota is full, never dropping another tab's rows", async () => {
    // A quota two full tabs would overflow: A writes first and fills most of it.
    const area = sessionArea(Math.floor(MAX_TAB_BYTES * 1.5));
    const a = createTabLog();
    const b = createTabLog();
    const { writer, errors, evictions } = writerOn(
      area,
      new Map([
        [1, a],
        [2, b],
      ]),
    );
    for (let n = 0; n < 2000; n += 1) appendEvents(a, ordinaryRequest(n), ORIGIN);
    writer.persist(1);
    await writer.flush();
    const storedA = restore(area, 1);
    expect(storedA?.requests.size).toBe(2000);

    for (let n = 0; n < 2000; n += 1) {
      appendEvents(b, ordinaryRequest(10_000 + n), ORIGIN);
      if (n % 100 === 99) {
        writer.persist(2);
        await writer.flush();
      }
    }
    expect(errors).toContain('storage.session is full: dropping the oldest rows of the tab that wrote');
    // A keeps every row; B kept its newest, dropping its oldest, and what it kept is stored.
    expect(restore(area, 1)?.entries).toEqual(storedA?.entries);
    const storedB = restore(area, 2);
    expect(storedB?.entries).toEqual(b.entries);
    expect(requestKeys(storedB).at(-1)).toBe(frameKey(ORIGIN, ordinaryRequest(11_999)[0]?.requestId ?? ''));
    expect(storedB?.requests.size).toBeGreaterThan(100);
    expect(storedB?.requests.size).toBeLessThan(2000);
    expect(area.used()).toBeLessThanOrEqual(Math.floor(MAX_TAB_BYTES * 1.5));
    // B's dropped requests are counted, stored, and the worker is told (so its panels are).
    expect(b.evicted).toBe(2000 - b.requests.size);
    expect(storedB?.evicted).toBe(b.evicted);
    expect(evictions.length).toBeGreaterThan(0);
    expect(evictions.every(([tab]) => tab === 2)).toBe(true);
    // Told with the room made (later appends, under B's smaller byte limit, drop more as they come).
    expect(evictions.every(([, count]) => (count ?? 0) > 0)).toBe(true);
    expect(a.evicted).toBe(0);
  });

  it("removes a closed tab's keys after its last write", async () => {
    const area = sessionArea();
    const log = createTabLog();
    const logs = new Map([[1, log]]);
    const { writer } = writerOn(area, logs);
    appendEvents(log, ordinaryRequest(1), ORIGIN);
    writer.persist(1, true);
    logs.delete(1);
    await writer.forget(1);
    expect([...area.items.keys()]).toEqual([]);
  });

  it('tells a quota error from others', () => {
    expect(isQuotaError(new Error('Session storage quota bytes exceeded. Values were not stored.'))).toBe(
      true,
    );
    expect(isQuotaError(new DOMException('full', 'QuotaExceededError'))).toBe(true);
    expect(isQuotaError(new Error('Storage is temporarily unavailable.'))).toBe(false);
  });
});
