import { afterEach, describe, expect, it, vi } from 'vitest';
import { observe } from '../../../../test/support/observe';
import { retryingFetch } from '../http/fetch-exchange';
import type { HttpExchange, HttpRetryOptions } from '../http/request-engine';
import { prepareHttpOptions, runHttpRequest } from '../http/request-engine';
import { RETRY, type RetryOptions, retry } from '../retry';
import type { Clock } from '../time/clock';
import { seededRandom } from '../time/random';
import { type VirtualClock, virtualClock } from '../time/virtual-clock';
import { createEmitter, DEVTOOLS_HOOK, type DevtoolsHook, subscribe } from './emitter';
import type { RetrylineEvent } from './types';

const T0 = 1_000_000;
type HookHolder = { [DEVTOOLS_HOOK]?: DevtoolsHook | Record<string, unknown> };
const holder = globalThis as HookHolder;

// Every test must leave the realm as it found it: no hook, no subscriber.
const unsubscribers: Array<() => void> = [];
afterEach(() => {
  for (const stop of unsubscribers.splice(0)) stop();
  delete holder[DEVTOOLS_HOOK];
});

function track(listener: (event: RetrylineEvent) => void) {
  const stop = subscribe(listener);
  unsubscribers.push(stop);
  return stop;
}

const policy = (clock: Clock) =>
  ({
    clock,
    random: seededRandom(1),
    backoff: { strategy: 'constant', base: 1000 },
    jitter: 'none',
  }) as const;

/** `retry()` of an operation that asks for one retry, then returns 'done'. */
async function runRetry(clock: VirtualClock, options: RetryOptions = {}) {
  const run = observe(
    retry(({ attempt }) => (attempt === 1 ? RETRY : 'done'), { ...policy(clock), ...options }),
  );
  await clock.runAll();
  await run.done;
  return run.state;
}

interface FakeResponse {
  readonly status: number;
  readonly headers: Headers;
}

/** `runHttpRequest` of a GET that gets a 503, then a 200; `onSend` runs at each send. */
async function runHttp(
  clock: VirtualClock,
  options: HttpRetryOptions = {},
  onSend: (attempt: number) => void = () => {},
) {
  const exchange: HttpExchange<FakeResponse> = {
    client: 'test',
    method: 'GET',
    url: 'https://api.example/x?key=secret',
    headers: { Authorization: 'Bearer secret' },
    replayable: true,
    // Without the default retry budget, so an HTTP request's events are the same as retry()'s.
    options: { ...policy(clock), budget: false, ...options },
    send: async ({ attempt }) => {
      onSend(attempt);
      return { status: attempt === 1 ? 503 : 200, headers: new Headers() };
    },
    inspect: (response) => response,
    discard: () => {},
  };
  const run = observe(runHttpRequest(exchange));
  await clock.runAll();
  await run.done;
  return run.state;
}

const types = (events: readonly RetrylineEvent[]) => events.map((event) => event.type);
const ONE_RETRY = [
  'request-start',
  'attempt-start',
  'attempt-end',
  'retry-scheduled',
  'attempt-start',
  'attempt-end',
  'request-end',
];

describe('subscribe', () => {
  it("receives every request's events, from retry() and runHttpRequest, until unsubscribed", async () => {
    const clock = virtualClock(T0);
    const seen: RetrylineEvent[] = [];
    const stop = track((event) => seen.push(event));

    await runRetry(clock, { requestId: 'retry-1' });
    await runHttp(clock, { requestId: 'http-1' });
    const byRequest = (id: string) => seen.filter((event) => event.requestId === id);
    expect(types(byRequest('retry-1'))).toEqual(ONE_RETRY);
    expect(types(byRequest('http-1'))).toEqual(ONE_RETRY);
    expect(byRequest('retry-1')[0]).toMatchObject({ client: 'retry' });
    // Global listeners get the same redacted events as onEvent.
    expect(byRequest('http-1')[0]).toMatchObject({ client: 'test', url: 'https://api.example/x?key=***' });
    expect(JSON.stringify(seen)).not.toContain('secret');
    expect(seen).toHaveLength(14);

    stop();
    await runRetry(clock, { requestId: 'retry-2' });
    await runHttp(clock, { requestId: 'http-2' });
    expect(seen).toHaveLength(14);
  });

  it('delivers to several listeners and to onEvent, each once per event', async () => {
    const clock = virtualClock(T0);
    const a: RetrylineEvent[] = [];
    const b: RetrylineEvent[] = [];
    const own: RetrylineEvent[] = [];
    track((event) => a.push(event));
    const stopB = track((event) => b.push(event));
    stopB();
    stopB(); // unsubscribing twice is harmless
    await runRetry(clock, { onEvent: (event) => own.push(event) });
    expect(types(a)).toEqual(ONE_RETRY);
    expect(b).toEqual([]);
    expect(own).toEqual(a);
  });

  it('is not disturbed by a global listener that throws', async () => {
    const clock = virtualClock(T0);
    const after: RetrylineEvent[] = [];
    const own: RetrylineEvent[] = [];
    const broken = vi.fn(() => {
      throw new Error('broken listener');
    });
    track(broken);
    track((event) => after.push(event));

    const retried = await runRetry(clock, { onEvent: (event) => own.push(event) });
    expect(retried.value).toBe('done');
    const fetched = await runHttp(clock);
    expect(fetched.value?.response.status).toBe(200);
    expect(fetched.value?.info.attempts).toBe(2);

    expect(broken).toHaveBeenCalledTimes(14);
    expect(after).toHaveLength(14);
    expect(types(own)).toEqual(ONE_RETRY);
  });
});

describe('the devtools hook', () => {
  it('is Symbol.for("retryline.devtools"), shared across realms and copies', () => {
    expect(DEVTOOLS_HOOK).toBe(Symbol.for('retryline.devtools'));
  });

  it('receives every event when present', async () => {
    const clock = virtualClock(T0);
    const pushed: RetrylineEvent[] = [];
    const own: RetrylineEvent[] = [];
    try {
      holder[DEVTOOLS_HOOK] = { push: (event: RetrylineEvent) => void pushed.push(event) };
      await runHttp(clock, { onEvent: (event) => own.push(event) });
      await runRetry(clock);
    } finally {
      delete holder[DEVTOOLS_HOOK];
    }
    expect(types(pushed)).toEqual([...ONE_RETRY, ...ONE_RETRY]);
    expect(pushed.slice(0, 7)).toEqual(own);
    expect(JSON.stringify(pushed)).not.toContain('secret');
  });

  it('receives the events emitted after it appears, even mid-request', async () => {
    const clock = virtualClock(T0);
    const pushed: RetrylineEvent[] = [];
    const own: RetrylineEvent[] = [];
    let definedAfter = -1;
    try {
      const state = await runHttp(clock, { onEvent: (event) => own.push(event) }, (attempt) => {
        if (attempt === 2) {
          // The extension's content script runs late: the request is already retrying.
          definedAfter = own.length;
          holder[DEVTOOLS_HOOK] = { push: (event: RetrylineEvent) => void pushed.push(event) };
        }
      });
      expect(state.value?.response.status).toBe(200);
    } finally {
      delete holder[DEVTOOLS_HOOK];
    }
    expect(definedAfter).toBeGreaterThan(0);
    const later = own.slice(definedAfter);
    expect(types(later)).toEqual(['attempt-end', 'request-end']);
    // Everything emitted after the hook appeared reaches it, in order (anything earlier may be queued).
    expect(pushed.slice(-later.length)).toEqual(later);
  });

  it('does not disturb a request when push throws', async () => {
    const clock = virtualClock(T0);
    const push = vi.fn(() => {
      throw new Error('extension context invalidated');
    });
    try {
      holder[DEVTOOLS_HOOK] = { push };
      expect((await runRetry(clock)).value).toBe('done');
    } finally {
      delete holder[DEVTOOLS_HOOK];
    }
    expect(push).toHaveBeenCalledTimes(7);
  });

  it.each([
    [
      'the hook itself',
      () =>
        Object.defineProperty(globalThis, DEVTOOLS_HOOK, {
          configurable: true,
          get() {
            throw new Error('hostile page');
          },
        }),
    ],
    [
      'its push',
      () => {
        holder[DEVTOOLS_HOOK] = Object.defineProperty({}, 'push', {
          get() {
            throw new Error('hostile page');
          },
        });
      },
    ],
    [
      'its push, after one good read',
      () => {
        let reads = 0;
        holder[DEVTOOLS_HOOK] = Object.defineProperty({}, 'push', {
          get() {
            reads++;
            if (reads > 1) throw new Error('hostile page');
            return () => {};
          },
        });
      },
    ],
    [
      'every property (a proxy)',
      () => {
        holder[DEVTOOLS_HOOK] = new Proxy(
          {},
          {
            get() {
              throw new Error('hostile page');
            },
          },
        );
      },
    ],
  ])('is read as no hook when a getter on %s throws: requests and listeners go on', async (_what, define) => {
    const clock = virtualClock(T0);
    const seen: RetrylineEvent[] = [];
    try {
      define();
      // Nobody else listening (the hook alone decides whether events are built) …
      expect((await runRetry(clock)).value).toBe('done');
      expect((await runHttp(clock)).value?.response.status).toBe(200);
      // … and a subscriber beside it.
      track((event) => seen.push(event));
      expect((await runRetry(clock, { requestId: 'with-listener' })).value).toBe('done');
      expect((await runHttp(clock, { requestId: 'http-with-listener' })).value?.response.status).toBe(200);
    } finally {
      delete holder[DEVTOOLS_HOOK];
    }
    expect(types(seen.filter((event) => event.requestId === 'with-listener'))).toEqual(ONE_RETRY);
    expect(types(seen.filter((event) => event.requestId === 'http-with-listener'))).toEqual(ONE_RETRY);
  });

  it('keeps an async listener that rejects from leaving an unhandled rejection', async () => {
    const clock = virtualClock(T0);
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const failing = async () => {
        throw new Error('async listener failed');
      };
      track(failing);
      holder[DEVTOOLS_HOOK] = { push: failing };
      expect((await runRetry(clock, { onEvent: failing })).value).toBe('done');
      // Unhandled rejections are reported after the microtask queue drains: give it a macrotask.
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it('builds nothing when there is no listener and no hook (or a hook without push)', async () => {
    /** A virtual clock that counts reads of `now()`: the emitter reads it once per event it builds. */
    const counting = () => {
      const clock = virtualClock(T0);
      const now = vi.spyOn(clock, 'now');
      return { clock, now };
    };

    const withListener = counting();
    const own: RetrylineEvent[] = [];
    expect((await runRetry(withListener.clock, { onEvent: (event) => own.push(event) })).value).toBe('done');
    expect(own).toHaveLength(7);

    const silent = counting();
    expect((await runRetry(silent.clock)).value).toBe('done');
    // One read per event built, and one more per duration measured only for an event: request-end's,
    // and each of the two attempts' end.
    expect(withListener.now.mock.calls.length - silent.now.mock.calls.length).toBe(own.length + 1 + 2);

    const spy = vi.fn();
    const hookless = counting();
    try {
      holder[DEVTOOLS_HOOK] = { notPush: spy };
      expect((await runRetry(hookless.clock)).value).toBe('done');
    } finally {
      delete holder[DEVTOOLS_HOOK];
    }
    expect(hookless.now.mock.calls.length).toBe(silent.now.mock.calls.length);
    expect(spy).not.toHaveBeenCalled();
  });

  it('emitter: builds and delivers nothing without a listener, a subscriber or a hook', () => {
    const now = vi.fn(() => T0);
    const emit = createEmitter(undefined, 'req-1', { now, sleep: () => Promise.resolve() });
    emit({ type: 'attempt-start', attempt: 1 });
    expect(now).not.toHaveBeenCalled();

    const events: RetrylineEvent[] = [];
    track((event) => events.push(event));
    emit({ type: 'attempt-start', attempt: 2 });
    expect(now).toHaveBeenCalledTimes(1);
    expect(events).toEqual([{ v: 1, requestId: 'req-1', t: T0, type: 'attempt-start', attempt: 2 }]);
  });
});

describe("the devtools hook's hello: a client announces itself when it is created", () => {
  /** A client as the fetch-based adapters make one: options prepared once, then any number of requests. */
  const createClient = (options: HttpRetryOptions = {}) =>
    retryingFetch(async () => new Response('ok'), prepareHttpOptions({ budget: false, ...options }), 'test');

  it('says hello once per client created, not once per request', async () => {
    const hello = vi.fn();
    const pushed: RetrylineEvent[] = [];
    holder[DEVTOOLS_HOOK] = { push: (event: RetrylineEvent) => void pushed.push(event), hello };
    const first = createClient();
    expect(hello).toHaveBeenCalledTimes(1);
    // Before any request: no event has been pushed, yet the hook knows a client exists.
    expect(pushed).toEqual([]);
    await first('https://api.example/a');
    await first('https://api.example/b', undefined, { retries: 5 });
    expect(hello).toHaveBeenCalledTimes(1);
    expect(pushed.filter((event) => event.type === 'request-start')).toHaveLength(2);
    createClient({ retries: 1 });
    expect(hello).toHaveBeenCalledTimes(2);
  });

  it('says nothing for options that fail to make a client', () => {
    const hello = vi.fn();
    holder[DEVTOOLS_HOOK] = { push: () => {}, hello };
    expect(() => createClient({ retries: -1 })).toThrow(/Expected retries/);
    expect(hello).not.toHaveBeenCalled();
  });

  it.each([
    [
      'returns a promise that rejects',
      { push: () => {}, hello: () => Promise.reject(new Error('rejected')) },
    ],
    [
      'throws',
      {
        push: () => {},
        hello: () => {
          throw new Error('extension context invalidated');
        },
      },
    ],
    [
      'is a getter that throws',
      Object.defineProperty({ push: () => {} }, 'hello', {
        get() {
          throw new Error('hostile page');
        },
      }),
    ],
    ['is not a function', { push: () => {}, hello: 42 }],
  ])('creates and runs the client when hello %s', async (_what, hook) => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      holder[DEVTOOLS_HOOK] = hook;
      const client = createClient();
      expect((await client('https://api.example/a')).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it('calls nothing when there is no hook, or a hook without push', () => {
    const hello = vi.fn();
    createClient();
    holder[DEVTOOLS_HOOK] = { hello };
    createClient();
    expect(hello).not.toHaveBeenCalled();
  });
});
