import { describe, expect, it } from 'vitest';
import { observe } from '../../../../test/support/observe';
import { InvalidOptionsError, isRetrylineError } from '../errors';
import type { RetrylineEvent } from '../events/types';
import type { HttpExchange, HttpRetryOptions } from '../http/request-engine';
import { runHttpRequest } from '../http/request-engine';
import { type RetryOptions, retry } from '../retry';
import { seededRandom } from '../time/random';
import { type VirtualClock, virtualClock } from '../time/virtual-clock';
import { circuitBreaker } from './breaker';
import { bulkhead } from './bulkhead';
import { type GuardOptions, HTTP_OWN_GUARDS, resolveGuards } from './guards';
import { localStore } from './local-store';
import { pacing } from './pacing';
import { rateLimiter } from './rate-limiter';
import { retryBudget } from './retry-budget';
import type { Store } from './store';

// Every guard through the attempt loop, on virtual time: the bulkhead and the other guards through
// retry() (any operation), pacing through the HTTP engine.

const T0 = 1_000_000;

/** An operation that takes `ms` of virtual time, counting how many run at once. */
function slowOperation(clock: VirtualClock, ms: number) {
  const stats = { running: 0, peak: 0, started: [] as string[] };
  const op = (name: string) => async () => {
    stats.running++;
    stats.peak = Math.max(stats.peak, stats.running);
    stats.started.push(`${name}@${clock.now() - T0}`);
    try {
      await clock.sleep(ms);
      return name;
    } finally {
      stats.running--;
    }
  };
  return { stats, op };
}

const base = (clock: VirtualClock, store: Store): RetryOptions => ({
  clock,
  random: seededRandom(7),
  store,
  backoff: { strategy: 'constant', base: 100 },
  jitter: 'none',
});

describe('the bulkhead, through retry()', () => {
  it('runs at most maxConcurrent at once; the queue waits its turn in arrival order', async () => {
    const clock = virtualClock(T0);
    const { stats, op } = slowOperation(clock, 1000);
    const events: RetrylineEvent[] = [];
    const options: RetryOptions = {
      ...base(clock, localStore()),
      guardKey: 'db',
      bulkhead: bulkhead({ maxConcurrent: 2, maxQueue: 3 }),
      onEvent: (event) => events.push(event),
    };
    const calls = ['a', 'b', 'c', 'd', 'e'].map((name) => observe(retry(op(name), options)));
    await clock.runAll();
    await Promise.all(calls.map((call) => call.done));
    expect(calls.map((call) => call.state.value)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(stats.peak).toBe(2);
    expect(stats.started).toEqual(['a@0', 'b@0', 'c@1000', 'd@1000', 'e@2000']);
    const waits = events.flatMap((e) => (e.type === 'guard-wait' ? [[e.guard, e.key, e.waited]] : []));
    expect(waits).toEqual([
      ['bulkhead', 'db', 1000],
      ['bulkhead', 'db', 1000],
      ['bulkhead', 'db', 2000],
    ]);
    expect(clock.pending()).toBe(0);
  });

  it('refuses with BulkheadRejectedError when places and queue are full, without running the operation', async () => {
    const clock = virtualClock(T0);
    const { stats, op } = slowOperation(clock, 1000);
    const events: RetrylineEvent[] = [];
    const options: RetryOptions = { ...base(clock, localStore()), bulkhead: bulkhead({ maxConcurrent: 1 }) };
    const first = observe(retry(op('a'), options));
    const second = observe(retry(op('b'), { ...options, onEvent: (event) => events.push(event) }));
    await clock.runAll();
    await Promise.all([first.done, second.done]);
    expect(first.state.value).toBe('a');
    expect(isRetrylineError(second.state.error, 'BulkheadRejectedError')).toBe(true);
    expect((second.state.error as Error).message).toBe(
      'Operation was not sent: the bulkhead for retry is full (1 in flight, 0 waiting)',
    );
    expect(stats.started).toEqual(['a@0']);
    expect(events.map((e) => e.type)).toEqual(['request-start', 'request-end']);
    expect(events[1]).toMatchObject({ outcome: 'bulkhead-rejected', attempts: 0 });
  });

  it('never waits in the queue past the deadline, and gives its slot to the next in line', async () => {
    const clock = virtualClock(T0);
    const { stats, op } = slowOperation(clock, 1000);
    const store = localStore();
    const options: RetryOptions = {
      ...base(clock, store),
      bulkhead: bulkhead({ maxConcurrent: 1, maxQueue: 1 }),
    };
    const first = observe(retry(op('a'), options));
    const late = observe(retry(op('late'), { ...options, deadline: 300 }));
    await clock.advance(400);
    expect(isRetrylineError(late.state.error, 'DeadlineExceededError')).toBe(true);
    // The queue slot is free again: a third caller queues instead of being refused.
    const third = observe(retry(op('c'), options));
    await clock.runAll();
    await Promise.all([first.done, late.done, third.done]);
    expect(third.state.value).toBe('c');
    expect(stats.started).toEqual(['a@0', 'c@1000']);
    expect(store.size().bulkheads).toBe(0);
    expect(clock.pending()).toBe(0);
  });

  it('stops a queued caller at once on abort and frees its slot', async () => {
    const clock = virtualClock(T0);
    const { op } = slowOperation(clock, 1000);
    const store = localStore();
    const options: RetryOptions = {
      ...base(clock, store),
      bulkhead: bulkhead({ maxConcurrent: 1, maxQueue: 1 }),
    };
    const first = observe(retry(op('a'), options));
    const controller = new AbortController();
    const queued = observe(retry(op('q'), { ...options, signal: controller.signal }));
    await clock.advance(10);
    controller.abort(new Error('user left'));
    await queued.done;
    expect((queued.state.error as Error).message).toBe('user left');
    const next = observe(retry(op('n'), options));
    await clock.runAll();
    await Promise.all([first.done, next.done]);
    expect(next.state.value).toBe('n');
    expect(store.size().bulkheads).toBe(0);
  });

  it('holds a place per attempt: a backoff wait leaves it to others', async () => {
    const clock = virtualClock(T0);
    const store = localStore();
    const order: string[] = [];
    const options: RetryOptions = {
      ...base(clock, store),
      backoff: { strategy: 'constant', base: 500 },
      bulkhead: bulkhead({ maxConcurrent: 1, maxQueue: 1 }),
    };
    const flaky = observe(
      retry(async ({ attempt }) => {
        order.push(`flaky#${attempt}@${clock.now() - T0}`);
        await clock.sleep(100);
        if (attempt === 1) throw new Error('blip');
        return 'flaky';
      }, options),
    );
    await clock.advance(150); // flaky's first attempt failed at 100; it now waits until 600
    const other = observe(
      retry(async () => {
        order.push(`other@${clock.now() - T0}`);
        await clock.sleep(100);
        return 'other';
      }, options),
    );
    await clock.runAll();
    await Promise.all([flaky.done, other.done]);
    expect(order).toEqual(['flaky#1@0', 'other@150', 'flaky#2@600']);
  });

  it('does not miss a release that lands while its acquire is still on the wire (a slow store)', async () => {
    const clock = virtualClock(T0);
    const inner = localStore();
    // Each acquire is decided at once but answered 10 ms later, like a round trip to a shared store.
    const slow: Store = {
      ...inner,
      async bulkheadAcquire(key, config, holder, now) {
        const result = await inner.bulkheadAcquire(key, config, holder, now);
        await clock.sleep(10);
        return result;
      },
    };
    const { op } = slowOperation(clock, 5);
    const options: RetryOptions = {
      ...base(clock, slow),
      deadline: 1000,
      bulkhead: bulkhead({ maxConcurrent: 1, maxQueue: 1 }),
    };
    const a = observe(retry(op('a'), options)); // holds the place from 10 to 15
    await clock.advance(12);
    const b = observe(retry(op('b'), options)); // asked at 12 (queued), told so at 22
    await clock.runAll();
    await Promise.all([a.done, b.done]);
    expect(b.state.value).toBe('b');
    expect(clock.now() - T0).toBeLessThan(100);
  });

  it('wakes a waiter by polling when the place is freed elsewhere (a store shared with other processes)', async () => {
    const clock = virtualClock(T0);
    const inner = localStore();
    const shared: Store = { ...inner, pollMs: 250 };
    const config = { maxConcurrent: 1, maxQueue: 5 };
    // Another process holds the only place.
    expect(await shared.bulkheadAcquire('retry', config, 'elsewhere', T0)).toBe('acquired');
    const started: number[] = [];
    const call = observe(
      retry(
        async () => {
          started.push(clock.now() - T0);
          return 'ok';
        },
        { ...base(clock, shared), bulkhead: bulkhead(config) },
      ),
    );
    await clock.advance(600);
    expect(started).toEqual([]);
    await shared.bulkheadRelease('retry', 'elsewhere', clock.now());
    await clock.runAll();
    await call.done;
    expect(call.state.value).toBe('ok');
    expect(started).toEqual([750]); // the poll after the release, not a wake-up
  });
});

describe('the other guards, through retry()', () => {
  it('are off by default: no budget is asked, no breaker counts', async () => {
    const clock = virtualClock(T0);
    const events: RetrylineEvent[] = [];
    const call = observe(
      retry(
        ({ attempt }) => {
          if (attempt < 3) throw new Error('blip');
          return 'ok';
        },
        { clock, random: seededRandom(1), onEvent: (event) => events.push(event) },
      ),
    );
    await clock.runAll();
    await call.done;
    expect(call.state.value).toBe('ok');
    expect(events.some((e) => e.type === 'budget' || e.type === 'breaker-state')).toBe(false);
  });

  it('a breaker keyed by guardKey opens after consecutive failures and then refuses without calling', async () => {
    const clock = virtualClock(T0);
    const store = localStore();
    let calls = 0;
    const failing = async () => {
      calls++;
      throw new Error('db down');
    };
    // Its breaker-state event says until when it stays open, as the refusal's retryAt does.
    const opened: RetrylineEvent[] = [];
    const options: RetryOptions = {
      ...base(clock, store),
      retries: 0,
      guardKey: 'db',
      breaker: circuitBreaker({ consecutiveFailures: 2, openMs: 5000 }),
      onEvent: (event) => {
        if (event.type === 'breaker-state') opened.push(event);
      },
    };
    for (let i = 0; i < 2; i++) {
      const call = observe(retry(failing, options));
      await clock.runAll();
      await call.done;
    }
    const refused = observe(retry(failing, options));
    await clock.runAll();
    await refused.done;
    expect(calls).toBe(2);
    expect(isRetrylineError(refused.state.error, 'CircuitOpenError')).toBe(true);
    expect((refused.state.error as { retryAt: number }).retryAt).toBe(T0 + 5000);
    expect(opened).toEqual([
      expect.objectContaining({
        type: 'breaker-state',
        key: 'db',
        from: 'closed',
        to: 'open',
        retryAt: T0 + 5000,
      }),
    ]);
    // Another key is not affected.
    const other = observe(retry(async () => 'fine', { ...options, guardKey: 'cache' }));
    await clock.runAll();
    await other.done;
    expect(other.state.value).toBe('fine');
  });

  it('lets only the half-open trial free its place: a call admitted before the breaker opened, ending in a non-retryable error meanwhile, lets no second trial through', async () => {
    const clock = virtualClock(T0);
    const store = localStore();
    const options: RetryOptions = {
      ...base(clock, store),
      retries: 0,
      guardKey: 'db',
      retryOn: (error) => (error as Error).message !== 'not the breaker’s business',
      breaker: circuitBreaker({ consecutiveFailures: 1, openMs: 1000, halfOpenCalls: 1 }),
    };
    const deferred = () => {
      let reject: (error: Error) => void = () => {};
      const promise = new Promise<string>((_, no) => {
        reject = no;
      });
      return { promise, reject };
    };
    // A goes out while the breaker is closed and is still running when it opens.
    const a = deferred();
    const first = observe(retry(() => a.promise, options));
    await clock.advance(0);
    const failed = observe(retry(async () => Promise.reject(new Error('db down')), options));
    await clock.runAll();
    await failed.done;
    // openMs later, B goes out as the one trial, and is still out.
    await clock.advance(1000);
    const probe = deferred();
    const trial = observe(retry(() => probe.promise, options));
    await clock.advance(0);
    // A ends in an error that says nothing of the dependency ('ignored'): it held no trial place.
    a.reject(new Error('not the breaker’s business'));
    await first.done;
    let calls = 0;
    const second = observe(
      retry(async () => {
        calls++;
        return 'sent';
      }, options),
    );
    await clock.advance(0);
    await second.done;
    expect(calls).toBe(0);
    expect(isRetrylineError(second.state.error, 'CircuitOpenError')).toBe(true);
    probe.reject(new Error('db down'));
    await trial.done;
  });

  it('a retry budget caps retries of a generic operation', async () => {
    const clock = virtualClock(T0);
    const store = localStore();
    let calls = 0;
    const options: RetryOptions = {
      ...base(clock, store),
      retries: 5,
      budget: retryBudget({ ratio: 0.5, minPerSecond: 0 }),
    };
    const results: unknown[] = [];
    const errors: unknown[] = [];
    for (let i = 0; i < 4; i++) {
      const call = observe(
        retry(async () => {
          calls++;
          throw new Error('flaky');
        }, options),
      );
      await clock.runAll();
      await call.done;
      results.push((call.state.error as Error).name);
      errors.push(call.state.error);
    }
    // 4 requests earn 0.5 · 4 = 2 retries in the window: 6 calls, not 24.
    expect(calls).toBe(6);
    expect(results).toContain('RetryBudgetExhaustedError');
    const spent = errors.find((error) => isRetrylineError(error, 'RetryBudgetExhaustedError'));
    expect(spent).toMatchObject({
      message:
        'Operation was not retried: the retry budget for retry is spent (retries are kept within 50% of requests): flaky',
      attempts: 1,
      cause: { message: 'flaky' },
    });
  });

  it('8 callers hammering for one second against burst 50, rate 100 get exactly 150 through', async () => {
    const clock = virtualClock(T0);
    const options: RetryOptions = {
      ...base(clock, localStore()),
      retries: 0,
      limiter: rateLimiter({ capacity: 50, refillPerSecond: 100, mode: 'reject' }),
    };
    let accepted = 0;
    let refused = 0;
    // Every millisecond from 0 to 1000 inclusive, each of 8 callers tries once.
    for (let ms = 0; ms <= 1000; ms++) {
      const calls = Array.from({ length: 8 }, () => observe(retry(async () => accepted++, options)));
      await Promise.all(calls.map((call) => call.done));
      refused += calls.filter((call) => isRetrylineError(call.state.error, 'RateLimitedError')).length;
      await clock.advance(1);
    }
    // The burst of 50 at t = 0, then one token every 10 ms: the 100th lands at t = 1000.
    expect(accepted).toBe(150);
    expect(accepted + refused).toBe(8008);
  });

  it("a limiter in 'reject' mode refuses a call without a token, with retryAt", async () => {
    const clock = virtualClock(T0);
    const options: RetryOptions = {
      ...base(clock, localStore()),
      limiter: rateLimiter({ capacity: 1, refillPerSecond: 2, mode: 'reject' }),
    };
    const first = observe(retry(async () => 1, options));
    const second = observe(retry(async () => 2, options));
    await clock.runAll();
    await Promise.all([first.done, second.done]);
    expect(first.state.value).toBe(1);
    expect(isRetrylineError(second.state.error, 'RateLimitedError')).toBe(true);
    expect((second.state.error as { retryAt: number }).retryAt).toBe(T0 + 500);
  });
});

interface FakeResponse {
  readonly status: number;
  readonly headers: Headers;
}

/** Sends GETs through the HTTP engine; the server's answers come from `respond`. */
function httpClient(clock: VirtualClock, store: Store, respond: (url: string) => FakeResponse, paced = true) {
  // One pacing value per client, its pauses in the client's store.
  const paces = paced ? { pacing: pacing() } : {};
  const sent: string[] = [];
  const events: RetrylineEvent[] = [];
  const get = (url: string, options: HttpRetryOptions = {}) => {
    const exchange: HttpExchange<FakeResponse> = {
      client: 'test',
      method: 'GET',
      url,
      headers: undefined,
      replayable: true,
      options: {
        clock,
        random: seededRandom(3),
        store,
        retries: 0,
        // Pacing is opt-in: these tests are about pacing.
        ...paces,
        onEvent: (event) => events.push(event),
        ...options,
      },
      send: async () => {
        sent.push(`${url}@${clock.now() - T0}`);
        return respond(url);
      },
      inspect: (response) => response,
      discard: () => {},
    };
    return observe(runHttpRequest(exchange));
  };
  return { get, sent, events };
}

describe('server-informed pacing, through the HTTP engine', () => {
  it('holds later requests to an origin until a 429’s Retry-After, with a little spread; other origins go on', async () => {
    const clock = virtualClock(T0);
    let limited = true;
    const client = httpClient(clock, localStore(), (url) =>
      url.includes('/v1/a') && limited
        ? { status: 429, headers: new Headers({ 'Retry-After': '5' }) }
        : { status: 200, headers: new Headers() },
    );
    const first = client.get('https://a.example/v1/a');
    await clock.advance(0);
    await first.done;
    limited = false;
    const later = client.get('https://a.example/v1/b');
    const elsewhere = client.get('https://b.example/v1/a');
    await clock.runAll();
    await Promise.all([later.done, elsewhere.done]);
    expect(client.sent[0]).toBe('https://a.example/v1/a@0');
    expect(client.sent).toContain('https://b.example/v1/a@0');
    const at = Number(client.sent.find((s) => s.startsWith('https://a.example/v1/b'))?.split('@')[1]);
    // Never before the reset; spread by at most min(5 s / 10, 1 s).
    expect(at).toBeGreaterThanOrEqual(5000);
    expect(at).toBeLessThanOrEqual(5500);
    const wait = client.events.find((e) => e.type === 'guard-wait');
    expect(wait).toMatchObject({ guard: 'pacing', key: 'https://a.example/v1', waited: at });
  });

  it('reads a spent quota from a successful response: RateLimit r=0, or X-RateLimit-Remaining: 0', async () => {
    for (const headers of [
      { RateLimit: '"default";r=0;t=3' },
      { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '3' },
      { 'RateLimit-Remaining': '0', 'RateLimit-Reset': '3' },
    ]) {
      const clock = virtualClock(T0);
      let n = 0;
      const client = httpClient(clock, localStore(), () =>
        n++ === 0 ? { status: 200, headers: new Headers(headers) } : { status: 200, headers: new Headers() },
      );
      const first = client.get('https://api.example/v1/1');
      await clock.advance(0);
      await first.done;
      const second = client.get('https://api.example/v1/2', { jitter: 'none' });
      await clock.runAll();
      await second.done;
      const at = Number(client.sent[1]?.split('@')[1]);
      expect(at, JSON.stringify(headers)).toBeGreaterThanOrEqual(3000);
      expect(at, JSON.stringify(headers)).toBeLessThanOrEqual(3300);
    }
  });

  it('ignores a reset that says nothing about the quota left, and a Retry-After on a 503', async () => {
    for (const first of [
      { status: 200, headers: new Headers({ 'X-RateLimit-Reset': '30' }) },
      { status: 200, headers: new Headers({ 'X-RateLimit-Remaining': '4', 'X-RateLimit-Reset': '30' }) },
      { status: 503, headers: new Headers({ 'Retry-After': '30' }) },
    ]) {
      const clock = virtualClock(T0);
      let n = 0;
      const client = httpClient(clock, localStore(), () =>
        n++ === 0 ? first : { status: 200, headers: new Headers() },
      );
      const one = client.get('https://api.example/v1/1');
      await clock.advance(0);
      await one.done;
      const two = client.get('https://api.example/v1/2');
      await clock.runAll();
      await two.done;
      expect(client.sent[1]).toBe('https://api.example/v1/2@0');
    }
  });

  it('is off without a pacing() value: a hint delays only the request that received it', async () => {
    const clock = virtualClock(T0);
    const client = httpClient(
      clock,
      localStore(),
      () => ({ status: 429, headers: new Headers({ 'Retry-After': '5' }) }),
      false,
    );
    const one = client.get('https://api.example/v1/1');
    await clock.advance(0);
    await one.done;
    const two = client.get('https://api.example/v1/2');
    await clock.runAll();
    await two.done;
    expect(client.sent).toEqual(['https://api.example/v1/1@0', 'https://api.example/v1/2@0']);
  });

  it('holds a later request no longer than maxRetryAfter after a longer Retry-After, then sends it', async () => {
    const clock = virtualClock(T0);
    const client = httpClient(clock, localStore(), (url) =>
      url.endsWith('/1')
        ? { status: 429, headers: new Headers({ 'Retry-After': '120' }) }
        : { status: 200, headers: new Headers() },
    );
    const one = client.get('https://api.example/v1/1');
    await clock.advance(0);
    await one.done;
    const later = client.get('https://api.example/v1/2'); // maxRetryAfter is 60 s by default
    await clock.runAll();
    await later.done;
    expect(later.state.error).toBeUndefined();
    // The spread never stretches a pause past the cap.
    expect(client.sent).toEqual(['https://api.example/v1/1@0', 'https://api.example/v1/2@60000']);
    expect(client.events.find((e) => e.type === 'guard-wait')).toMatchObject({
      guard: 'pacing',
      waited: 60_000,
    });
  });

  it('fails at once with RateLimitedError when the pause does not fit the deadline', async () => {
    const clock = virtualClock(T0);
    const client = httpClient(clock, localStore(), () => ({
      status: 429,
      headers: new Headers({ 'Retry-After': '30' }),
    }));
    const one = client.get('https://api.example/v1/1');
    await clock.advance(0);
    await one.done;
    const pastDeadline = client.get('https://api.example/v1/3', { deadline: 10_000 });
    await clock.runAll();
    await pastDeadline.done;
    expect(isRetrylineError(pastDeadline.state.error, 'RateLimitedError')).toBe(true);
    expect((pastDeadline.state.error as { retryAt: number }).retryAt).toBe(T0 + 30_000);
    expect((pastDeadline.state.error as Error).message).toBe(
      `GET https://api.example/v1/3 was not sent: the server said the quota for https://api.example/v1 is spent until ${new Date(T0 + 30_000).toISOString()}`,
    );
    expect(client.sent).toEqual(['https://api.example/v1/1@0']);
    // Named for pacing, not for a rate limiter the client does not have.
    expect(client.events.at(-1)).toMatchObject({ type: 'request-end', outcome: 'quota-spent' });
  });

  describe('no header pauses an origin for longer than maxRetryAfter', () => {
    const MAX = 5_000;
    const EPOCH_2058 = String(Math.floor(Date.UTC(2058, 0, 1) / 1000));
    it.each([
      ['a 200 with RateLimit t=1e9', 200, { RateLimit: '"default";r=0;t=1000000000' }],
      [
        'a 200 with RateLimit-Reset in 2058 (epoch seconds)',
        200,
        { 'RateLimit-Remaining': '0', 'RateLimit-Reset': EPOCH_2058 },
      ],
      [
        'a 200 with X-RateLimit-Reset in 2058 (epoch seconds)',
        200,
        { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': EPOCH_2058 },
      ],
      ['a 429 with Retry-After: 1e9', 429, { 'Retry-After': '1000000000' }],
      ['a 429 with Retry-After: 10 KB of nines', 429, { 'Retry-After': '9'.repeat(10_240) }],
      ['a 429 with Retry-After in 9999', 429, { 'Retry-After': 'Fri, 31 Dec 9999 23:59:59 GMT' }],
    ] as const)(
      '%s: the store is told at most now + maxRetryAfter, and the next request is sent',
      async (_what, status, headers) => {
        const clock = virtualClock(T0);
        const store = localStore();
        const told: number[] = [];
        const pacingSet = store.pacingSet;
        store.pacingSet = (key, until, now) => {
          told.push(until - now);
          return pacingSet(key, until, now);
        };
        const client = httpClient(clock, store, (url) =>
          url.endsWith('/1')
            ? { status, headers: new Headers(headers) }
            : { status: 200, headers: new Headers() },
        );
        const one = client.get('https://api.example/v1/1', { maxRetryAfter: MAX });
        await clock.advance(0);
        await one.done;
        expect(told).toEqual([MAX]);
        const later = client.get('https://api.example/v1/2', { maxRetryAfter: MAX });
        await clock.runAll();
        await later.done;
        expect(later.state.error).toBeUndefined();
        expect(client.sent).toEqual(['https://api.example/v1/1@0', `https://api.example/v1/2@${MAX}`]);
      },
    );
  });

  it('refuses a random source that breaks its contract before the paced attempt is sent', async () => {
    const clock = virtualClock(T0);
    const store = localStore();
    await store.pacingSet('https://api.example/v1', T0 + 5_000, T0);
    const client = httpClient(clock, store, () => ({ status: 200, headers: new Headers() }));
    const call = client.get('https://api.example/v1/1', { random: () => 2 });
    await clock.runAll();
    await call.done;
    expect(isRetrylineError(call.state.error, 'InvalidOptionsError')).toBe(true);
    expect((call.state.error as Error).message).toBe('Expected random() to be a number in [0, 1), got 2');
    expect(client.sent).toEqual([]);
  });
});

describe('resolveGuards', () => {
  const resolve = (options: Record<string, unknown>) => () =>
    resolveGuards(options as GuardOptions, { own: HTTP_OWN_GUARDS, pacing: true });
  const value = (factory: string) =>
    `a ${factory}() value (guards are made by their factory: ${factory}({ … }))`;

  it.each([
    [{ budget: null }, `Expected budget to be ${value('retryBudget')}, got null`],
    [{ budget: true }, `Expected budget to be ${value('retryBudget')}, got true`],
    [{ breaker: null }, `Expected breaker to be ${value('circuitBreaker')}, got null`],
    [{ store: null }, 'Expected store to be a store (memoryStore() or a shared store), got null'],
    [{ pacing: null }, `Expected pacing to be ${value('pacing')}, got null`],
    [{ limiter: null }, `Expected limiter to be ${value('rateLimiter')}, got null`],
    [{ bulkhead: null }, `Expected bulkhead to be ${value('bulkhead')}, got null`],
  ])('refuses null like any other wrong value, never reading it as the default: %o', (options, message) => {
    expect(resolve(options)).toThrow(InvalidOptionsError);
    expect(resolve(options)).toThrow(message);
  });

  it.each([
    [{ breaker: true }, 'circuitBreaker'],
    [{ breaker: { consecutiveFailures: 5 } }, 'circuitBreaker'],
    [{ limiter: { capacity: 1, refillPerSecond: 1 } }, 'rateLimiter'],
    [{ bulkhead: { maxConcurrent: 1 } }, 'bulkhead'],
    [{ budget: { ratio: 0.2 } }, 'retryBudget'],
    [{ pacing: true }, 'pacing'],
    // A guard value of another kind in the wrong place.
    [{ breaker: retryBudget() }, 'circuitBreaker'],
  ])('names the factory to use for an options object or the wrong guard: %o', (options, factory) => {
    expect(resolve(options)).toThrow(`to be ${value(factory)}`);
  });

  it('refuses a bad mode when the guard value is made, before any client', () => {
    expect(() => rateLimiter({ capacity: 1, refillPerSecond: 1, mode: null as unknown as 'wait' })).toThrow(
      "Expected limiter.mode to be one of 'wait', 'reject', got null",
    );
  });

  it('reads only undefined as absent', () => {
    // As JavaScript callers (and spread option objects) pass them.
    const absent = {
      budget: undefined,
      gate: undefined,
      store: undefined,
      pacing: undefined,
    } as unknown as GuardOptions;
    const guards = resolveGuards(absent, { own: HTTP_OWN_GUARDS, pacing: true });
    expect(guards.budget).toBeDefined();
    expect(guards.gate).toBeDefined();
    expect(guards.pacing).toBeUndefined();
    expect(guards.list.map((guard) => guard.kind)).toEqual(['gate', 'budget']);
  });

  it('refuses pacing for retry(), which reads no responses', () => {
    expect(() => resolveGuards({ pacing: pacing() } as GuardOptions, { own: false, pacing: false })).toThrow(
      'Expected pacing to be absent: pacing reads HTTP responses, retry() has none',
    );
  });
});

describe('the order guards admit an attempt in', () => {
  it('throttle first (a refused attempt never waits for the gate, pacing or the limiter), then gate, pacing, limiter, bulkhead, budget, breaker', async () => {
    const { resolveGuards, HTTP_OWN_GUARDS } = await import('./guards');
    const { adaptiveThrottle } = await import('./adaptive-throttle');
    const { rateLimiter } = await import('./rate-limiter');
    const { bulkhead } = await import('./bulkhead');
    const { pacing } = await import('./pacing');
    const guards = resolveGuards(
      {
        breaker: circuitBreaker(),
        bulkhead: bulkhead({ maxConcurrent: 1 }),
        limiter: rateLimiter({ capacity: 1, refillPerSecond: 1 }),
        pacing: pacing(),
        throttle: adaptiveThrottle(),
      },
      { own: HTTP_OWN_GUARDS, pacing: true },
    );
    expect(guards.list.map((guard) => guard.kind)).toEqual([
      'throttle',
      'gate',
      'pacing',
      'limiter',
      'bulkhead',
      'budget',
      'breaker',
    ]);
  });
});
