import { describe, expect, it } from 'vitest';
import { MAX_BATCH, MAX_QUEUE, NAMESPACE, PROTOCOL_VERSION } from '../shared/protocol';
import { createPageHook, FLUSH_MS, isRelayReady, targetOrigin } from './page-hook';

function world(options: { failOn?: (events: unknown[]) => boolean; timerFailures?: number } = {}) {
  let timerFailures = options.timerFailures ?? 0;
  const posted: unknown[][] = [];
  const timers: Array<{ callback: () => void; ms: number }> = [];
  const hook = createPageHook({
    post: (message) => {
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
  });
  const runTimers = () => {
    for (const timer of timers.splice(0)) timer.callback();
  };
  return { hook, posted, timers, runTimers };
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
