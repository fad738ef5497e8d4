import { describe, expect, it, vi } from 'vitest';
import {
  type FaultsMessage,
  MAX_BATCH,
  MAX_QUEUE,
  MAX_REPLAYS,
  NAMESPACE,
  PROTOCOL_VERSION,
  type ReplayTarget,
} from '../shared/protocol';
import {
  createPageHook,
  FLUSH_MS,
  isFaultsMessage,
  isPanelMessage,
  isRelayReady,
  isReplayMessage,
  type PageHook,
  targetOrigin,
} from './page-hook';

function world(
  options: { failOn?: (events: unknown[]) => boolean; timerFailures?: number; postFails?: boolean } = {},
) {
  let timerFailures = options.timerFailures ?? 0;
  const posted: unknown[][] = [];
  /** The kind of every message posted, in order. */
  const kinds: string[] = [];
  const timers: Array<{ callback: () => void; ms: number }> = [];
  const hook = createPageHook({
    post: (message) => {
      if (options.postFails) throw new Error('page code');
      kinds.push(message.kind);
      if (message.kind !== 'events') return;
      const events = [...message.events];
      if (options.failOn?.(events)) throw new DOMException('could not be cloned', 'DataCloneError');
      posted.push(events);
    },
    setTimer: (callback, ms) => {
      if (timerFailures > 0) {
        timerFailures -= 1;
        throw new Error('no timer');
      }
      return timers.push({ callback, ms });
    },
    random: () => 0.5,
    controller: () => new AbortController(),
    optedOut: () => false,
  });
  const runTimers = () => {
    for (const timer of timers.splice(0)) timer.callback();
  };
  return { hook, posted, kinds, timers, runTimers };
}

const event = (n: number) => ({ v: 1, type: 'budget', requestId: `r${n}` });

describe('the page hook', () => {
  it('queues events until the relay is ready, then posts them at once', () => {
    const { hook, posted, timers } = world();
    hook.push(event(1));
    hook.push(event(2));
    expect(posted).toEqual([]);
    expect(timers).toEqual([]);
    hook.relayReady();
    expect(posted).toEqual([[event(1), event(2)]]);
  });

  it(`keeps at most ${MAX_QUEUE} events while no relay listens, dropping the oldest`, () => {
    const { hook, posted } = world();
    for (let n = 0; n < MAX_QUEUE + 50; n += 1) hook.push(event(n));
    expect(hook.pending()).toBe(MAX_QUEUE);
    hook.relayReady();
    const all = posted.flat();
    expect(all).toHaveLength(MAX_QUEUE);
    expect(all[0]).toEqual(event(50));
    expect(posted.every((batch) => batch.length <= MAX_BATCH)).toBe(true);
  });

  it(`gathers a burst into one message per ${FLUSH_MS} ms`, () => {
    const { hook, posted, timers, runTimers } = world();
    hook.relayReady();
    hook.push(event(1));
    hook.push(event(2));
    hook.push(event(3));
    expect(timers.map((timer) => timer.ms)).toEqual([FLUSH_MS]);
    expect(posted).toEqual([]);
    runTimers();
    expect(posted).toEqual([[event(1), event(2), event(3)]]);
  });

  it(`posts at once when ${MAX_BATCH} events are waiting`, () => {
    const { hook, posted } = world();
    hook.relayReady();
    for (let n = 0; n < MAX_BATCH; n += 1) hook.push(event(n));
    expect(posted).toHaveLength(1);
    expect(posted[0]).toHaveLength(MAX_BATCH);
  });

  it('arms no timer while idle', () => {
    const { hook, timers } = world();
    hook.relayReady();
    expect(timers).toHaveLength(0);
  });

  it('never throws into the page, and posts the events that can be cloned', () => {
    const { hook, posted, runTimers } = world({
      failOn: (events) => events.some((e) => 'fn' in (e as object)),
    });
    hook.relayReady();
    expect(() => {
      hook.push({ ...event(1), fn: () => 1 });
      hook.push(event(2));
      hook.push(undefined);
      hook.push('text');
      runTimers();
    }).not.toThrow();
    expect(posted).toEqual([[event(2)]]);
  });
});

describe('the page hook’s hello: the page uses Retryline', () => {
  it('tells the relay once per document, however many clients core creates', () => {
    const { hook, kinds } = world();
    hook.relayReady();
    hook.hello();
    hook.hello();
    hook.relayReady();
    hook.hello();
    expect(kinds).toEqual(['detected']);
  });

  it('waits for a relay to listen: a client made before is told when it is ready, before queued events', () => {
    const { hook, kinds } = world();
    hook.hello();
    hook.push(event(1));
    expect(kinds).toEqual([]);
    hook.relayReady();
    expect(kinds).toEqual(['detected', 'events']);
  });

  it('says nothing without a hello: a page that only sends events is told apart by the worker', () => {
    const { hook, kinds, runTimers } = world();
    hook.relayReady();
    hook.push(event(1));
    runTimers();
    expect(kinds).toEqual(['events']);
  });

  it('never throws into the page', () => {
    const { hook } = world({ postFails: true });
    hook.relayReady();
    expect(() => hook.hello()).not.toThrow();
  });
});

describe('the page hook on a hostile page', () => {
  it('throws from neither push nor its timer when the page breaks the intrinsics it uses', () => {
    const { hook, runTimers } = world();
    hook.relayReady();
    hook.push(event(1));
    const { slice, push, shift } = Array.prototype;
    const broken = () => {
      throw new Error('page code');
    };
    let thrown: unknown;
    try {
      // What a page can do to every array method long after document_start.
      Array.prototype.slice = broken;
      Array.prototype.push = broken;
      Array.prototype.shift = broken;
      hook.push(event(2));
      runTimers();
    } catch (error) {
      thrown = error;
    } finally {
      Array.prototype.slice = slice;
      Array.prototype.push = push;
      Array.prototype.shift = shift;
    }
    expect(thrown).toBeUndefined();
  });

  it('arms its timer again when arming it failed once', () => {
    const { hook, posted, runTimers } = world({ timerFailures: 1 });
    hook.relayReady();
    expect(() => hook.push(event(1))).not.toThrow();
    hook.push(event(2));
    runTimers();
    expect(posted).toEqual([[event(1), event(2)]]);
  });

  it('keeps working after a flush failed: the next event is posted', () => {
    const { hook, posted, runTimers } = world();
    hook.relayReady();
    hook.push(event(1));
    const { slice } = Array.prototype;
    try {
      Array.prototype.slice = () => {
        throw new Error('page code');
      };
      runTimers();
    } catch {
      // Asserted by the test above.
    } finally {
      Array.prototype.slice = slice;
    }
    hook.push(event(2));
    runTimers();
    expect(posted.flat()).toContainEqual(event(2));
  });
});

describe('the page hook’s faults', () => {
  // Rules as they arrive: unchecked, whatever their shape.
  const faults = (rules: unknown[]) =>
    ({ ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules }) as unknown as FaultsMessage;
  const rule = {
    id: 'api',
    url: '/api/',
    method: 'GET',
    steps: [{ step: 'status', status: 503 }, { step: 'passthrough' }],
  };
  const query = (attempt: number, requestId = 'r1') => ({
    client: 'fetch',
    method: 'get',
    url: 'https://app.example/api/items',
    attempt,
    requestId,
  });

  it('answers core’s question from the rules the relay brought, and nothing before them', () => {
    const { hook } = world();
    expect(hook.fault(query(1))).toBeUndefined();
    hook.setFaults(faults([rule]));
    expect(hook.fault(query(1))).toEqual({ step: 'status', status: 503 });
    expect(hook.fault(query(2))).toBeUndefined();
    hook.setFaults(faults([]));
    expect(hook.fault(query(1, 'r2'))).toBeUndefined();
  });

  it('forgets a request’s rule when its request-end is pushed', () => {
    let draws = 0;
    const hook = createPageHook({
      post: () => {},
      setTimer: () => 0,
      random: () => {
        draws += 1;
        return 0;
      },
      controller: () => new AbortController(),
      optedOut: () => false,
    });
    hook.setFaults(faults([{ ...rule, probability: 0.5 }]));
    hook.fault(query(1));
    hook.fault(query(2));
    expect(draws).toBe(1);
    hook.push({ v: 1, type: 'request-end', requestId: 'r1', t: 0 });
    hook.fault(query(1));
    expect(draws).toBe(2);
  });

  it('never throws, whatever it is asked or given', () => {
    const { hook } = world();
    hook.setFaults(faults([rule]));
    const hostile = {
      get method(): string {
        throw new Error('page code');
      },
    };
    for (const asked of [
      undefined,
      null,
      'GET /api',
      { ...query(1), attempt: 0 },
      { ...query(1), url: 1 },
      hostile,
    ]) {
      expect(hook.fault(asked)).toBeUndefined();
    }
    expect(() => hook.setFaults({ ...faults([]), rules: 'none' } as never)).not.toThrow();
    expect(hook.fault(query(1))).toEqual({ step: 'status', status: 503 });
  });

  it('ends an injected wait in progress when the rules go, and when the panel goes', () => {
    const { hook } = world();
    const slow = faults([{ ...rule, steps: [{ step: 'slow', ms: 600_000 }] }]);
    const signal = (step: unknown) => (step as { signal?: AbortSignal } | undefined)?.signal;
    hook.setFaults(slow);
    const waiting = signal(hook.fault(query(1)));
    expect(waiting?.aborted).toBe(false);
    hook.setFaults(faults([]));
    expect(waiting?.aborted).toBe(true);
    hook.setFaults(slow);
    const again = signal(hook.fault(query(1, 'r2')));
    expect(again?.aborted).toBe(false);
    hook.setPanel(false);
    expect(again?.aborted).toBe(true);
  });
});

/** What names request `id`, as core offers it and the panel's replay names it. */
const target = (id: string, patch: Partial<ReplayTarget> = {}): ReplayTarget => ({
  requestId: id,
  client: 'fetch',
  method: 'GET',
  url: `https://api.example/items/${id}`,
  ...patch,
});
const { requestId: _id, ...request } = target('r1');
/** Core's offer of request `id`: its id, a replay, and the request it names. */
const offer = (hook: PageHook, id: string, replay: unknown, patch: Partial<ReplayTarget> = {}) => {
  const { requestId, ...named } = target(id, patch);
  hook.replayable(requestId, replay, named);
};

describe('the page hook’s replays', () => {
  it('runs the replay core offered for the request the relay names, as often as it is asked', () => {
    const { hook } = world();
    const first = vi.fn();
    const second = vi.fn();
    offer(hook, 'r1', first);
    offer(hook, 'r2', second);
    hook.replay(target('r2'));
    hook.replay(target('r2'));
    expect(second).toHaveBeenCalledTimes(2);
    expect(first).not.toHaveBeenCalled();
  });

  it('ignores a request it keeps no replay for (another frame’s, another page’s, a POST’s)', () => {
    const { hook } = world();
    const kept = vi.fn();
    offer(hook, 'r1', kept);
    expect(() => hook.replay(target('r9'))).not.toThrow();
    expect(kept).not.toHaveBeenCalled();
  });

  it('finds a replay by its id, client, method and URL together: a caller may reuse its id', () => {
    const { hook } = world();
    const items = vi.fn();
    const orders = vi.fn();
    const head = vi.fn();
    offer(hook, 'session-1', items, { url: 'https://api.example/items' });
    offer(hook, 'session-1', orders, { url: 'https://api.example/orders' });
    offer(hook, 'session-1', head, { url: 'https://api.example/orders', method: 'HEAD' });
    hook.replay(target('session-1', { url: 'https://api.example/items' }));
    expect(items).toHaveBeenCalledTimes(1);
    expect(orders).not.toHaveBeenCalled();
    hook.replay(target('session-1', { url: 'https://api.example/orders', client: 'axios' }));
    hook.replay(target('session-1', { url: 'https://api.example/orders', method: 'OPTIONS' }));
    expect(orders).not.toHaveBeenCalled();
    expect(head).not.toHaveBeenCalled();
  });

  it(`keeps the replays of the latest ${MAX_REPLAYS} requests, the oldest dropped first`, () => {
    const { hook } = world();
    const replays = Array.from({ length: MAX_REPLAYS + 1 }, () => vi.fn());
    offer(hook, 'r0', replays[0]);
    offer(hook, 'r1', replays[1]);
    // Offered again (a caller-chosen id used again for the same request), r0 is the latest: r1 is now the oldest.
    offer(hook, 'r0', replays[0]);
    for (let n = 2; n <= MAX_REPLAYS; n += 1) offer(hook, `r${n}`, replays[n]);
    for (let n = 0; n <= MAX_REPLAYS; n += 1) hook.replay(target(`r${n}`));
    expect(replays[1]).not.toHaveBeenCalled();
    expect(replays.filter((replay) => replay.mock.calls.length === 1)).toHaveLength(MAX_REPLAYS);
  });

  it('never throws, whatever it is offered or a replay does', () => {
    const { hook } = world();
    const replay = vi.fn();
    for (const [id, offered, named] of [
      [undefined, replay, request],
      [1, replay, request],
      ['r1', 'not a function', request],
      ['r1', null, request],
      ['r1', replay, null],
      ['r1', replay, undefined],
    ] as const) {
      expect(() => hook.replayable(id, offered, named)).not.toThrow();
    }
    hook.replay(target('1'));
    hook.replay(target('undefined'));
    hook.replay(target('r1'));
    expect(replay).not.toHaveBeenCalled();
    offer(hook, 'r2', () => {
      throw new Error('page code');
    });
    expect(() => hook.replay(target('r2'))).not.toThrow();
  });
});

describe('the page hook’s replays and the tab’s panels', () => {
  it('keeps offers from the document’s start while the relay has not said whether a panel is open', () => {
    const { hook } = world();
    const early = vi.fn();
    offer(hook, 'r1', early);
    hook.setPanel(true);
    hook.replay(target('r1'));
    expect(early).toHaveBeenCalledTimes(1);
  });

  it('keeps no offer while no panel is subscribed to the tab, and drops them all when the last one goes', () => {
    const { hook } = world();
    const early = vi.fn();
    offer(hook, 'r1', early);
    // The relay's answer: no panel. What the page's first requests offered goes.
    hook.setPanel(false);
    const unwatched = vi.fn();
    offer(hook, 'r2', unwatched);
    hook.setPanel(true);
    hook.replay(target('r1'));
    hook.replay(target('r2'));
    expect(early).not.toHaveBeenCalled();
    expect(unwatched).not.toHaveBeenCalled();

    const watched = vi.fn();
    offer(hook, 'r3', watched);
    hook.setPanel(false);
    hook.setPanel(true);
    hook.replay(target('r3'));
    expect(watched).not.toHaveBeenCalled();
  });

  it('runs each replay with a signal of its own, aborted when the panel goes', () => {
    const { hook } = world();
    const signals: AbortSignal[] = [];
    const replay = vi.fn((signal: AbortSignal) => {
      signals.push(signal);
    });
    hook.setPanel(true);
    offer(hook, 'r1', replay);
    hook.replay(target('r1'));
    hook.replay(target('r1'));
    expect(signals).toHaveLength(2);
    expect(signals[0]).not.toBe(signals[1]);
    expect(signals.map((signal) => signal.aborted)).toEqual([false, false]);
    hook.setPanel(false);
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
  });

  it('forgets a replay that returned a promise once it settles: the panel’s going aborts only those still running', async () => {
    const { hook } = world();
    const signals: AbortSignal[] = [];
    const settle: Array<() => void> = [];
    offer(hook, 'r1', (signal: AbortSignal) => {
      signals.push(signal);
      return new Promise<void>((resolve) => settle.push(resolve));
    });
    hook.replay(target('r1'));
    hook.replay(target('r1'));
    settle[0]?.();
    await Promise.resolve();
    await Promise.resolve();
    hook.setPanel(false);
    expect(signals.map((signal) => signal.aborted)).toEqual([false, true]);
  });
});

describe('isReplayMessage', () => {
  const self = {};
  const message = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'replay', ...target('r1') };
  it('recognises the relay’s replay from its own window only', () => {
    expect(isReplayMessage(self, self, message)).toBe(true);
    expect(isReplayMessage({}, self, message)).toBe(false);
    expect(isReplayMessage(self, self, { ...message, ns: 'other' })).toBe(false);
    expect(isReplayMessage(self, self, { ...message, v: 2 })).toBe(false);
    expect(isReplayMessage(self, self, { ...message, kind: 'faults' })).toBe(false);
    expect(isReplayMessage(self, self, { ...message, requestId: 1 })).toBe(false);
    expect(isReplayMessage(self, self, { ...message, client: undefined })).toBe(false);
    expect(isReplayMessage(self, self, { ...message, method: 1 })).toBe(false);
    expect(isReplayMessage(self, self, { ...message, url: null })).toBe(false);
    expect(isReplayMessage(self, self, null)).toBe(false);
  });
});

describe('isPanelMessage', () => {
  const self = {};
  const message = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'panel', open: true };
  it('recognises the relay’s word on the tab’s panels from its own window only', () => {
    expect(isPanelMessage(self, self, message)).toBe(true);
    expect(isPanelMessage(self, self, { ...message, open: false })).toBe(true);
    expect(isPanelMessage({}, self, message)).toBe(false);
    expect(isPanelMessage(self, self, { ...message, v: 2 })).toBe(false);
    expect(isPanelMessage(self, self, { ...message, kind: 'replay' })).toBe(false);
    expect(isPanelMessage(self, self, { ...message, open: 'yes' })).toBe(false);
    expect(isPanelMessage(self, self, null)).toBe(false);
  });
});

describe('isFaultsMessage', () => {
  const self = {};
  const message = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'faults', rules: [] };
  it('recognises the relay’s fault rules from its own window only', () => {
    expect(isFaultsMessage(self, self, message)).toBe(true);
    expect(isFaultsMessage({}, self, message)).toBe(false);
    expect(isFaultsMessage(self, self, { ...message, v: 2 })).toBe(false);
    expect(isFaultsMessage(self, self, { ...message, rules: {} })).toBe(false);
    expect(isFaultsMessage(self, self, null)).toBe(false);
  });
});

describe('isRelayReady', () => {
  const self = {};
  const ready = { ns: NAMESPACE, v: PROTOCOL_VERSION, kind: 'relay-ready' };
  it('recognises the relay’s ready message from its own window only', () => {
    expect(isRelayReady(self, self, ready)).toBe(true);
    expect(isRelayReady({}, self, ready)).toBe(false);
    expect(isRelayReady(self, self, { ...ready, v: 2 })).toBe(false);
    expect(isRelayReady(self, self, { ...ready, kind: 'events' })).toBe(false);
    expect(isRelayReady(self, self, null)).toBe(false);
  });
});

describe('targetOrigin', () => {
  it('posts to the page’s own origin, or to * where the origin is opaque', () => {
    expect(targetOrigin({ origin: 'https://shop.example', protocol: 'https:' })).toBe('https://shop.example');
    expect(targetOrigin({ origin: 'null', protocol: 'https:' })).toBe('*');
    expect(targetOrigin({ origin: 'file://', protocol: 'file:' })).toBe('*');
  });
});
