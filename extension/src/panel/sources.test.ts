import { describe, expect, it, vi } from 'vitest';
import { ev, ORIGIN, scenario } from '../model/fixtures';
import type { FaultRule } from '../shared/faults';
import type { PanelRequest, TimelineEntry, WorkerUpdate } from '../shared/protocol';
import { PANEL_PORT } from '../shared/protocol';
import {
  connectWorker,
  fetchRecording,
  fromLastNavigation,
  type PanelPort,
  type SourceUpdate,
  staticSource,
} from './sources';

/** A runtime whose ports the test drives: what the panel posts, and the worker's replies. */
function fakeRuntime() {
  const ports: {
    name: string;
    posted: PanelRequest[];
    message: (m: unknown) => void;
    disconnect: () => void;
    disconnected: boolean;
  }[] = [];
  const runtime = {
    connect: vi.fn(({ name }: { name: string }): PanelPort => {
      const port = {
        name,
        posted: [] as PanelRequest[],
        message: (_: unknown) => {},
        disconnect: () => {},
        disconnected: false,
      };
      ports.push(port);
      return {
        postMessage: (message) => port.posted.push(message),
        disconnect: () => {
          port.disconnected = true;
        },
        onMessage: {
          addListener: (callback) => {
            port.message = callback;
          },
        },
        onDisconnect: {
          addListener: (callback) => {
            port.disconnect = callback;
          },
        },
      };
    }),
  };
  return { runtime, ports };
}

/** A scheduler the test runs by hand. */
function manualSchedule() {
  const pending: { callback: () => void; ms: number; cancelled: boolean }[] = [];
  return {
    pending,
    schedule: (callback: () => void, ms: number) => {
      const task = { callback, ms, cancelled: false };
      pending.push(task);
      return () => {
        task.cancelled = true;
      };
    },
    runNext() {
      const task = pending.shift();
      if (task && !task.cancelled) task.callback();
      return task;
    },
  };
}

function record(source: ReturnType<typeof connectWorker>) {
  const updates: SourceUpdate[] = [];
  source.subscribe((update) => updates.push(update));
  return updates;
}

const settings = { preserveLog: false, record: true };
const page = { hooked: true, detected: true };
const snapshot = (entries: TimelineEntry[], evicted = 0): WorkerUpdate => ({
  kind: 'snapshot',
  tabId: 7,
  entries,
  settings,
  page,
  evicted,
});

describe('connectWorker', () => {
  it('connects on the panel port and subscribes to its tab', () => {
    const { runtime, ports } = fakeRuntime();
    connectWorker(7, runtime);
    expect(runtime.connect).toHaveBeenCalledWith({ name: PANEL_PORT });
    expect(ports[0]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }]);
  });

  it('applies a snapshot, appends, settings and clears', () => {
    const { runtime, ports } = fakeRuntime();
    const source = connectWorker(7, runtime);
    const updates = record(source);
    const entries = scenario();
    ports[0]?.message(snapshot(entries.slice(0, 2)));
    ports[0]?.message({ kind: 'append', tabId: 7, entries: entries.slice(2, 4) });
    ports[0]?.message({ kind: 'settings', tabId: 7, settings: { preserveLog: true, record: false } });
    ports[0]?.message({ kind: 'cleared', tabId: 7 });
    expect(updates).toEqual([
      { kind: 'reset', entries: [] },
      { kind: 'settings', settings: { preserveLog: false, record: true } },
      { kind: 'status', connected: false },
      { kind: 'status', connected: true },
      { kind: 'settings', settings },
      { kind: 'reset', entries: entries.slice(0, 2) },
      { kind: 'page', page },
      { kind: 'append', entries: entries.slice(2, 4) },
      { kind: 'settings', settings: { preserveLog: true, record: false } },
      { kind: 'reset', entries: [] },
    ]);
  });

  it('ignores messages for another tab and malformed ones', () => {
    const { runtime, ports } = fakeRuntime();
    const updates = record(connectWorker(7, runtime));
    const before = updates.length;
    ports[0]?.message({ kind: 'append', tabId: 8, entries: scenario() });
    ports[0]?.message({ kind: 'append', tabId: 7, entries: 'nope' });
    ports[0]?.message({ kind: 'settings', tabId: 7, settings: { record: 'yes' } });
    ports[0]?.message(null);
    expect(updates).toHaveLength(before);
  });

  it('reconnects with growing delays when the worker goes away, and subscribes again', () => {
    const { runtime, ports } = fakeRuntime();
    const timers = manualSchedule();
    const source = connectWorker(7, runtime, { schedule: timers.schedule });
    const updates = record(source);
    ports[0]?.message(snapshot(scenario().slice(0, 1)));

    ports[0]?.disconnect();
    expect(updates.at(-1)).toEqual({ kind: 'status', connected: false });
    expect(timers.pending.map((t) => t.ms)).toEqual([100]);
    timers.runNext();
    expect(ports).toHaveLength(2);
    expect(ports[1]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }]);

    // The new worker dies before answering: the next wait is longer.
    ports[1]?.disconnect();
    expect(timers.pending.map((t) => t.ms)).toEqual([200]);
    timers.runNext();
    // It answers: the snapshot replaces what the panel had, and the backoff starts over.
    ports[2]?.message(snapshot(scenario().slice(0, 3)));
    expect(updates.slice(-4)).toEqual([
      { kind: 'status', connected: true },
      { kind: 'settings', settings },
      { kind: 'reset', entries: scenario().slice(0, 3) },
      { kind: 'page', page },
    ]);
    ports[2]?.disconnect();
    expect(timers.pending.map((t) => t.ms)).toEqual([100]);
  });

  it('keeps trying when connecting throws (the extension is reloading)', () => {
    const { runtime, ports } = fakeRuntime();
    const timers = manualSchedule();
    runtime.connect.mockImplementationOnce(() => {
      throw new Error('Extension context invalidated.');
    });
    connectWorker(7, runtime, { schedule: timers.schedule });
    expect(ports).toHaveLength(0);
    timers.runNext();
    expect(ports[0]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }]);
  });

  it('sends Clear and settings to the worker, applying them at once', () => {
    const { runtime, ports } = fakeRuntime();
    const source = connectWorker(7, runtime);
    const updates = record(source);
    ports[0]?.message(snapshot(scenario()));
    source.updateSettings({ preserveLog: true });
    source.clear();
    expect(ports[0]?.posted.slice(1)).toEqual([
      { kind: 'settings', tabId: 7, settings: { preserveLog: true } },
      { kind: 'clear', tabId: 7 },
    ]);
    expect(updates.slice(-2)).toEqual([
      { kind: 'settings', settings: { preserveLog: true, record: true } },
      { kind: 'reset', entries: [] },
    ]);
  });

  it('starts afresh at a navigation unless Preserve log is on', () => {
    const { runtime, ports } = fakeRuntime();
    const source = connectWorker(7, runtime);
    const updates = record(source);
    const before = [ev('a', { type: 'request-start', t: 1, client: 'fetch' })];
    const navigation: TimelineEntry = { type: 'navigation', url: `${ORIGIN}/next`, t: 2 };
    const after = [ev('b', { type: 'request-start', t: 3, client: 'fetch' })];
    ports[0]?.message(snapshot(before));
    ports[0]?.message({ kind: 'append', tabId: 7, entries: [navigation, ...after] });
    expect(updates.at(-1)).toEqual({ kind: 'reset', entries: [navigation, ...after] });

    ports[0]?.message({ kind: 'settings', tabId: 7, settings: { preserveLog: true, record: true } });
    ports[0]?.message({ kind: 'append', tabId: 7, entries: [navigation] });
    expect(updates.at(-1)).toEqual({ kind: 'append', entries: [navigation] });
  });

  it('stops for good when closed', () => {
    const { runtime, ports } = fakeRuntime();
    const timers = manualSchedule();
    const source = connectWorker(7, runtime, { schedule: timers.schedule });
    ports[0]?.disconnect();
    source.close();
    timers.runNext();
    expect(ports).toHaveLength(1);
  });

  it('replays the current state to a late subscriber', () => {
    const { runtime, ports } = fakeRuntime();
    const source = connectWorker(7, runtime);
    ports[0]?.message(snapshot(scenario()));
    const updates: SourceUpdate[] = [];
    source.subscribe((update) => updates.push(update));
    expect(updates).toEqual([
      // Preserve log is off: the list starts at the snapshot's last navigation.
      { kind: 'reset', entries: fromLastNavigation(scenario()) },
      { kind: 'settings', settings },
      { kind: 'status', connected: true },
      { kind: 'page', page },
    ]);
  });

  it('passes on what the worker knows of the page, and replays it to a late subscriber', () => {
    const { runtime, ports } = fakeRuntime();
    const source = connectWorker(7, runtime);
    const updates = record(source);
    // Unknown until the snapshot: nothing is said of the page.
    expect(updates.filter((update) => update.kind === 'page')).toEqual([]);
    const blank = { hooked: true, detected: false };
    ports[0]?.message({ ...snapshot([]), page: blank });
    ports[0]?.message({ kind: 'page', tabId: 7, page });
    ports[0]?.message({ kind: 'page', tabId: 7, page: { hooked: 'yes', detected: true } });
    ports[0]?.message({ kind: 'page', tabId: 8, page: blank });
    // With the origins of the page's frames, when the worker knows them.
    const framed = { ...page, frames: ['https://app.example', 'null (frame 4)'] };
    ports[0]?.message({ kind: 'page', tabId: 7, page: { ...page, frames: 'https://app.example' } });
    ports[0]?.message({ kind: 'page', tabId: 7, page: { ...page, frames: [4] } });
    ports[0]?.message({ kind: 'page', tabId: 7, page: framed });
    ports[0]?.message({ kind: 'page', tabId: 7, page });
    expect(updates.filter((update) => update.kind === 'page')).toEqual([
      { kind: 'page', page: blank },
      { kind: 'page', page },
      { kind: 'page', page: framed },
      { kind: 'page', page },
    ]);
    const late: SourceUpdate[] = [];
    source.subscribe((update) => late.push(update));
    expect(late.filter((update) => update.kind === 'page')).toEqual([{ kind: 'page', page }]);
  });

  it('passes on how many requests the worker dropped; a clear sets it back to 0', () => {
    const { runtime, ports } = fakeRuntime();
    const source = connectWorker(7, runtime);
    const updates = record(source);
    const evicted = () => updates.filter((update) => update.kind === 'evicted');
    ports[0]?.message(snapshot(scenario(), 1234));
    ports[0]?.message({ kind: 'evicted', tabId: 7, evicted: 1300 });
    ports[0]?.message({ kind: 'evicted', tabId: 7, evicted: -1 });
    ports[0]?.message({ kind: 'cleared', tabId: 7 });
    ports[0]?.message({ kind: 'evicted', tabId: 7, evicted: 2 });
    source.clear();
    expect(evicted()).toEqual([
      { kind: 'evicted', evicted: 1234 },
      { kind: 'evicted', evicted: 1300 },
      { kind: 'evicted', evicted: 0 },
      { kind: 'evicted', evicted: 2 },
      { kind: 'evicted', evicted: 0 },
    ]);
    ports[0]?.message({ kind: 'evicted', tabId: 7, evicted: 5 });
    const late: SourceUpdate[] = [];
    source.subscribe((update) => late.push(update));
    expect(late.filter((update) => update.kind === 'evicted')).toEqual([{ kind: 'evicted', evicted: 5 }]);
  });

  it('refuses a snapshot without the page or the dropped count', () => {
    const { runtime, ports } = fakeRuntime();
    const updates = record(connectWorker(7, runtime));
    const before = updates.length;
    const { page: _page, ...noPage } = snapshot(scenario()) as Extract<WorkerUpdate, { kind: 'snapshot' }>;
    ports[0]?.message(noPage);
    ports[0]?.message({ ...snapshot(scenario()), evicted: 'many' });
    expect(updates).toHaveLength(before);
  });
});

describe('connectWorker’s fault rules', () => {
  const RULES: FaultRule[] = [
    { id: 'rule-1', method: 'GET', url: '/api/', steps: [{ step: 'networkError' }] },
  ];
  const faults = (rules: unknown, seed?: number) => ({
    kind: 'faults',
    tabId: 7,
    rules,
    ...(seed === undefined ? {} : { seed }),
  });

  it('sends the rules set to the worker, and tells of the worker’s as it tells of them', () => {
    const { runtime, ports } = fakeRuntime();
    const source = connectWorker(7, runtime);
    const updates = record(source);
    source.faults?.set({ rules: RULES });
    expect(ports[0]?.posted.at(-1)).toEqual(faults(RULES));
    // Nothing is shown until the worker says the tab has them.
    expect(updates.some((update) => update.kind === 'faults')).toBe(false);
    ports[0]?.message(faults(RULES, 3));
    expect(updates.at(-1)).toEqual({ kind: 'faults', set: { rules: RULES, seed: 3 }, applied: false });
    // Malformed or another tab's: ignored.
    ports[0]?.message(faults([{ id: 'x', url: '', steps: [] }]));
    ports[0]?.message({ ...faults([]), tabId: 8 });
    expect(updates.at(-1)).toEqual({ kind: 'faults', set: { rules: RULES, seed: 3 }, applied: false });
    // A late subscriber is told of them after the rest of the state.
    const late: SourceUpdate[] = [];
    source.subscribe((update) => late.push(update));
    expect(late.at(-1)).toEqual({ kind: 'faults', set: { rules: RULES, seed: 3 }, applied: false });
  });

  it('tells where the worker says the rules apply, and sends that origin with each set after it', () => {
    const { runtime, ports } = fakeRuntime();
    const timers = manualSchedule();
    const source = connectWorker(7, runtime, { schedule: timers.schedule });
    const updates = record(source);
    const APP = 'https://app.example';
    ports[0]?.message({ ...faults(RULES), origin: APP, applied: true });
    expect(updates.at(-1)).toEqual({ kind: 'faults', set: { rules: RULES }, origin: APP, applied: true });
    // The page went to another origin: the same rules, paused.
    ports[0]?.message({ ...faults(RULES), origin: APP, applied: false });
    expect(updates.at(-1)).toEqual({ kind: 'faults', set: { rules: RULES }, origin: APP, applied: false });
    // A worker started since binds them to it, unless it heard of the tab's top document.
    ports[0]?.disconnect();
    timers.runNext();
    expect(ports[1]?.posted).toEqual([
      { kind: 'subscribe', tabId: 7 },
      { ...faults(RULES), origin: APP },
    ]);
  });

  it('sends nothing on its first subscribe, so opening a panel leaves another panel’s rules alone', () => {
    const { runtime, ports } = fakeRuntime();
    const updates = record(connectWorker(7, runtime));
    expect(ports[0]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }]);
    expect(updates.some((update) => update.kind === 'faults')).toBe(false);
  });

  it('sends the tab’s rules again after each reconnect and subscribe (a stopped worker forgot them)', () => {
    const { runtime, ports } = fakeRuntime();
    const timers = manualSchedule();
    const source = connectWorker(7, runtime, { schedule: timers.schedule });
    // Set by another panel of the tab: this one keeps them alive too.
    ports[0]?.message(faults(RULES, 3));
    ports[0]?.disconnect();
    timers.runNext();
    expect(ports[1]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }, faults(RULES, 3)]);

    // Its own latest change goes, even before the worker answered it.
    const more = [...RULES, { ...(RULES[0] as FaultRule), id: 'rule-2' }];
    source.faults?.set({ rules: more });
    ports[1]?.disconnect();
    timers.runNext();
    expect(ports[2]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }, faults(more)]);
  });

  it('sends a change made while no worker was connected once one is, even to no rules', () => {
    const { runtime, ports } = fakeRuntime();
    const timers = manualSchedule();
    const source = connectWorker(7, runtime, { schedule: timers.schedule });
    ports[0]?.message(faults(RULES));
    ports[0]?.disconnect();
    source.faults?.set({ rules: [] });
    timers.runNext();
    expect(ports[1]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }, faults([])]);
    // Sent: the next reconnect has nothing to send.
    ports[1]?.disconnect();
    timers.runNext();
    expect(ports[2]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }]);
  });

  describe('with changes quicker than the worker’s answers', () => {
    const rule = (id: string): FaultRule => ({ id, url: id, steps: [{ step: 'networkError' }] });
    const A = { rules: [rule('a')] };
    const AB = { rules: [rule('a'), rule('b')] };
    const shown = (updates: SourceUpdate[]) => updates.filter((update) => update.kind === 'faults');

    it('sends the last set asked for again after a reconnect, not an older one the worker answered with', () => {
      const { runtime, ports } = fakeRuntime();
      const timers = manualSchedule();
      const source = connectWorker(7, runtime, { schedule: timers.schedule });
      const updates = record(source);
      source.faults?.set(A);
      source.faults?.set(AB);
      ports[0]?.message(faults(A.rules));
      // The worker is about to take A and B: A alone is neither shown nor built on.
      expect(shown(updates)).toEqual([]);
      expect(source.faults?.wanted()).toEqual(AB);
      ports[0]?.disconnect();
      timers.runNext();
      expect(ports[1]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }, faults(AB.rules)]);
      ports[1]?.message(faults(AB.rules));
      expect(shown(updates)).toEqual([{ kind: 'faults', set: AB, applied: false }]);
      expect(source.faults?.wanted()).toEqual(AB);
    });

    it('builds a change made between two answers on the last set asked for', () => {
      const { runtime, ports } = fakeRuntime();
      const source = connectWorker(7, runtime);
      const updates = record(source);
      source.faults?.set(A);
      source.faults?.set(AB);
      ports[0]?.message(faults(A.rules));
      const wanted = source.faults?.wanted() ?? { rules: [] };
      const ABC = { rules: [...wanted.rules, rule('c')] };
      source.faults?.set(ABC);
      expect(ports[0]?.posted.at(-1)).toEqual(faults([rule('a'), rule('b'), rule('c')]));
      ports[0]?.message(faults(AB.rules));
      expect(source.faults?.wanted()).toEqual(ABC);
      ports[0]?.message(faults(ABC.rules));
      expect(shown(updates)).toEqual([{ kind: 'faults', set: ABC, applied: false }]);
    });

    it('takes the rules another panel of the tab set, even with a change of its own unanswered', () => {
      const { runtime, ports } = fakeRuntime();
      const timers = manualSchedule();
      const source = connectWorker(7, runtime, { schedule: timers.schedule });
      const updates = record(source);
      source.faults?.set(A);
      const other = { rules: [rule('other')], seed: 4 };
      ports[0]?.message(faults(other.rules, 4));
      expect(shown(updates)).toEqual([{ kind: 'faults', set: other, applied: false }]);
      expect(source.faults?.wanted()).toEqual(other);
      ports[0]?.disconnect();
      timers.runNext();
      expect(ports[1]?.posted).toEqual([{ kind: 'subscribe', tabId: 7 }, faults(other.rules, 4)]);
    });

    it('knows its set in the worker’s answer, which reads it as the panel does (methods in capitals)', () => {
      const { runtime, ports } = fakeRuntime();
      const source = connectWorker(7, runtime);
      const updates = record(source);
      const lower = { rules: [{ ...rule('a'), method: 'get', probability: 1 }] };
      const read = { rules: [{ ...rule('a'), method: 'GET' }] };
      source.faults?.set(lower);
      source.faults?.set(AB);
      ports[0]?.message(faults(read.rules));
      expect(shown(updates)).toEqual([]);
      expect(source.faults?.wanted()).toEqual(AB);
    });
  });
});

describe('connectWorker’s replay', () => {
  it('asks the worker to have the tab’s page send a row’s request again, named as the row names it', () => {
    const { runtime, ports } = fakeRuntime();
    const source = connectWorker(7, runtime);
    const row = {
      source: 'https://app.example',
      requestId: 'r1',
      client: 'fetch',
      method: 'GET',
      url: 'https://api.example/items',
    };
    source.replay?.({ ...row, index: 3 } as typeof row);
    expect(ports[0]?.posted.at(-1)).toEqual({ kind: 'replay', tabId: 7, ...row });
  });
});

describe('staticSource', () => {
  it('has no page, so no fault rules and no replay', () => {
    expect(staticSource(scenario()).faults).toBeUndefined();
    expect(staticSource(scenario()).replay).toBeUndefined();
  });

  it('gives its entries and clears them locally', () => {
    const source = staticSource(scenario(), 'file.json');
    const updates: SourceUpdate[] = [];
    source.subscribe((update) => updates.push(update));
    source.clear();
    expect(source.live).toBe(false);
    expect(source.label).toBe('file.json');
    expect(updates).toEqual([
      { kind: 'reset', entries: scenario() },
      { kind: 'settings', settings: { preserveLog: false, record: false } },
      { kind: 'reset', entries: [] },
    ]);
  });
});

describe('fromLastNavigation', () => {
  it('keeps the entries from the last navigation on', () => {
    const nav = (t: number): TimelineEntry => ({ type: 'navigation', url: 'u', t });
    const a = ev('a', { type: 'attempt-start', t: 1, attempt: 1 });
    expect(fromLastNavigation([a, nav(2), a, nav(3), a])).toEqual([nav(3), a]);
    expect(fromLastNavigation([a])).toEqual([a]);
  });
});

describe('fetchRecording', () => {
  const base = 'https://viewer.example/viewer.html?src=x';

  it('loads a same-origin recording as text', async () => {
    const fetchImpl = vi.fn(async () => new Response('{"ok":1}'));
    await expect(fetchRecording('/runs/events.json', base, fetchImpl as never)).resolves.toEqual({
      text: '{"ok":1}',
      name: 'events.json',
    });
    expect(fetchImpl).toHaveBeenCalledWith('https://viewer.example/runs/events.json', {
      credentials: 'same-origin',
    });
  });

  it('refuses another origin without fetching', async () => {
    const fetchImpl = vi.fn();
    const result = await fetchRecording('https://evil.example/x.json', base, fetchImpl as never);
    expect(result).toEqual({
      error:
        'Cannot load https://evil.example/x.json: only recordings from https://viewer.example can be opened.',
    });
    expect(fetchImpl).not.toHaveBeenCalled();
  });

  it('reports HTTP and network failures', async () => {
    const notFound = vi.fn(async () => new Response('', { status: 404 }));
    expect(await fetchRecording('a.json', base, notFound as never)).toEqual({
      error: 'Cannot load https://viewer.example/a.json: HTTP 404.',
    });
    const down = vi.fn(async () => {
      throw new TypeError('Failed to fetch');
    });
    expect(await fetchRecording('a.json', base, down as never)).toEqual({
      error: 'Cannot load https://viewer.example/a.json: Failed to fetch',
    });
  });
});
