/**
 * every path that holds a guard's place frees
 * it, and the budget counts a request exactly once, whatever path it takes.
 */
import {
  bulkhead,
  circuitBreaker,
  isRetrylineError,
  memoryStore,
  pacing,
  retryBudget,
  seededRandom,
  virtualClock,
} from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { untilWaiting } from '../support/on-clock';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

const server = useFaultServer();
const T0 = Date.UTC(2026, 0, 1);

const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('places are freed on every path', () => {
  it('a bulkhead place is freed when the breaker (a later guard) refuses', async () => {
    server.script('/down', [{ status: 503 }]);
    const pool = bulkhead({ maxConcurrent: 1 });
    const client = retryFetch(fetch, {
      retries: 0,
      bulkhead: pool,
      breaker: circuitBreaker({ consecutiveFailures: 1, openMs: 60_000 }),
    });
    await client(`${server.url}/down`);
    const refused = await settle(client(`${server.url}/down`));
    expect(isRetrylineError(refused.error, 'CircuitOpenError')).toBe(true);
    expect(pool.state(server.url)).toEqual({ active: 0, queued: 0 });
  });

  it('a queued bulkhead waiter that is aborted leaves the queue; the holder frees its place', async () => {
    server.script('/slow', [{ fault: 'stall-headers', ms: 200 }]);
    const pool = bulkhead({ maxConcurrent: 1, maxQueue: 1 });
    const client = retryFetch(fetch, { retries: 0, bulkhead: pool });
    const first = client(`${server.url}/slow`);
    while (pool.state(server.url).active === 0) await tick();
    const controller = new AbortController();
    const queued = settle(client(`${server.url}/slow`, { signal: controller.signal }));
    while (pool.state(server.url).queued === 0) await tick();
    controller.abort();
    expect((await queued).error).toBe(controller.signal.reason);
    expect(pool.state(server.url)).toEqual({ active: 1, queued: 0 });
    await first;
    expect(pool.state(server.url)).toEqual({ active: 0, queued: 0 });
  });

  it('an abort while pacing waits holds no bulkhead place', async () => {
    const clock = virtualClock(T0);
    server.script('/v1/a', [{ status: 429, headers: { 'retry-after': '5' } }]);
    const pool = bulkhead({ maxConcurrent: 1 });
    const client = retryFetch(fetch, {
      clock,
      random: seededRandom(1),
      retries: 0,
      pacing: pacing(),
      bulkhead: pool,
    });
    await client(`${server.url}/v1/a`);
    const controller = new AbortController();
    const waiting = settle(client(`${server.url}/v1/a`, { signal: controller.signal }));
    await untilWaiting(clock);
    controller.abort();
    expect((await waiting).error).toBe(controller.signal.reason);
    expect(pool.state(server.url)).toEqual({ active: 0, queued: 0 });
  });

  it('a queued bulkhead waiter whose deadline passes leaves the queue', async () => {
    const clock = virtualClock(T0);
    server.script('/slow', [{ fault: 'stall-headers', ms: 200 }]);
    const pool = bulkhead({ maxConcurrent: 1, maxQueue: 1 });
    const client = retryFetch(fetch, { clock, retries: 0, bulkhead: pool });
    const first = client(`${server.url}/slow`);
    while (pool.state(server.url).active === 0) await tick();
    const queued = settle(client(`${server.url}/slow`, { retry: { deadline: 1_000 } }));
    while (pool.state(server.url).queued === 0) await tick();
    await clock.advance(1_000);
    expect(isRetrylineError((await queued).error, 'DeadlineExceededError')).toBe(true);
    expect(pool.state(server.url)).toEqual({ active: 1, queued: 0 });
    await first;
    expect(pool.state(server.url)).toEqual({ active: 0, queued: 0 });
  });

  it("a half-open trial aborted mid-send is given back: the next request is the breaker's trial", async () => {
    const clock = virtualClock(T0);
    const breaker = circuitBreaker({ consecutiveFailures: 1, openMs: 1_000 });
    server.script('/svc', [{ status: 503 }, { fault: 'stall-headers', ms: 300 }, { status: 200 }]);
    const client = retryFetch(fetch, { clock, retries: 0, breaker });
    await client(`${server.url}/svc`);
    expect(breaker.state(server.url, clock.now()).state).toBe('open');
    await clock.advance(1_000);
    const controller = new AbortController();
    const trial = settle(client(`${server.url}/svc`, { signal: controller.signal }));
    while (server.requests('/svc').length < 2) await tick();
    controller.abort();
    await trial;
    const next = await client(`${server.url}/svc`);
    expect(next.status).toBe(200);
  });
});

describe('the budget counts each request once', () => {
  const cases: Array<[string, () => Parameters<typeof retryFetch>[1], RequestInit & { retry?: unknown }]> = [
    ['the happy path', () => ({}), {}],
    ['with pacing (no fast path)', () => ({ pacing: pacing() }), {}],
    ['with a breaker', () => ({ breaker: circuitBreaker() }), {}],
    ['with a client store', () => ({ store: memoryStore() }), {}],
    ['with a per-request policy override', () => ({}), { retry: { retries: 2 } }],
    ['with a per-request signal only', () => ({}), { signal: new AbortController().signal }],
  ];
  for (const [name, extra, init] of cases) {
    it(`${name}: three successes count three requests`, async () => {
      server.script('/ok', [{ status: 200 }]);
      const budget = retryBudget();
      const client = retryFetch(fetch, { ...extra(), budget });
      for (let i = 0; i < 3; i++) await client(`${server.url}/ok`, init as never);
      expect(budget.state(server.url)).toMatchObject({ requests: 3, retries: 0 });
    });
  }

  it('a first attempt that fails on the fast path and is retried counts one request and one retry', async () => {
    server.script('/flaky', [{ status: 503 }, { status: 200 }]);
    const budget = retryBudget();
    const client = retryFetch(fetch, { budget, backoff: { strategy: 'constant', base: 1 }, jitter: 'none' });
    expect((await client(`${server.url}/flaky`)).status).toBe(200);
    expect(budget.state(server.url)).toMatchObject({ requests: 1, retries: 1 });
  });
});

describe('old option shapes are refused at creation, naming the factory', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['budget', true, /^Expected budget to be a retryBudget\(\) value.*, got true$/],
    ['breaker', { consecutiveFailures: 5 }, /circuitBreaker\(\)/],
    ['limiter', { capacity: 1, refillPerSecond: 1 }, /rateLimiter\(\)/],
    ['bulkhead', { maxConcurrent: 1 }, /bulkhead\(\)/],
    ['pacing', true, /pacing\(\)/],
  ];
  for (const [name, value, message] of cases) {
    it(`${name}: ${JSON.stringify(value)}`, () => {
      expect(() => retryFetch(fetch, { [name]: value } as never)).toThrow(message);
    });
  }
  it('retry(): breaker: true rejects naming circuitBreaker()', async () => {
    const { retry } = await import('@retryline/core');
    await expect(retry(async () => 1, { breaker: true } as never)).rejects.toThrow(/circuitBreaker\(\)/);
  });
});
