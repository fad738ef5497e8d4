import {
  bulkhead,
  circuitBreaker,
  type HttpRetryOptions,
  InvalidOptionsError,
  memoryStore,
  pacing,
  type RetrylineEvent,
  rateLimiter,
  retryBudget,
  seededRandom,
  subscribe,
  virtualClock,
} from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { axiosDriver, type Driver, drivers, fetchDriver } from '../conformance/drivers';
import { observe } from '../support/observe';
import { onClock, untilWaiting } from '../support/on-clock';
import { useFaultServer } from '../support/use-fault-server';

// The breaker and the retry budget, wired through every adapter, against the real fault server.
// Waits run on a virtual clock, so what a test says of time is exact and never a race with the
// machine's load; real time passes only for the sockets.
const server = useFaultServer();

const T0 = Date.UTC(2026, 0, 1);
const fast: HttpRetryOptions = { backoff: { strategy: 'constant', base: 5 }, jitter: 'none' };
const get = (driver: Driver, path: string, options: HttpRetryOptions) =>
  driver.send({ method: 'GET', url: `${server.url}${path}`, options });
const transitions = (events: RetrylineEvent[]) =>
  events.flatMap((e) => (e.type === 'breaker-state' ? [`${e.from}→${e.to}`] : []));
/** Options on a fresh virtual clock (with a seeded random), and the clock. */
const onVirtualTime = (options: HttpRetryOptions) => {
  const clock = virtualClock(T0);
  return { clock, options: { ...fast, clock, random: seededRandom(13), ...options } };
};

describe.each(drivers)('guards through $name', (driver) => {
  it('a breaker opens after consecutive failures, fails fast without sending, and closes after a good trial', async () => {
    const { clock, options } = onVirtualTime({
      retries: 0,
      store: memoryStore(),
      breaker: circuitBreaker({ consecutiveFailures: 3, openMs: 300 }),
    });
    server.script('/flaky', [{ status: 503 }]);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) seen.push(...transitions((await get(driver, '/flaky', options)).events));
    expect(seen).toEqual(['closed→open']);
    const refused = await get(driver, '/flaky', options);
    expect(refused.outcome).toMatchObject({
      kind: 'retryline-error',
      name: 'CircuitOpenError',
      retryAt: T0 + 300,
    });
    expect(refused.events.some((e) => e.type === 'attempt-start')).toBe(false);
    expect(refused.events.at(-1)).toMatchObject({
      type: 'request-end',
      outcome: 'breaker-open',
      attempts: 0,
    });
    expect(server.requests('/flaky')).toHaveLength(3); // the refused call never reached the server

    await clock.advance(299);
    expect((await get(driver, '/flaky', options)).outcome).toMatchObject({ name: 'CircuitOpenError' });
    await clock.advance(1);
    server.script('/flaky', [{ status: 200, body: 'back' }]);
    const trial = await get(driver, '/flaky', options);
    expect(trial.outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(transitions(trial.events)).toEqual(['open→half-open', 'half-open→closed']);
  });

  it('a retry budget keeps retries within its ratio of requests', async () => {
    const { clock, options } = onVirtualTime({
      retries: 5,
      store: memoryStore(),
      budget: retryBudget({ ratio: 0.5, minPerSecond: 0 }),
    });
    server.script('/down', [{ status: 503 }]);
    const ends: string[] = [];
    for (let i = 0; i < 10; i++) {
      const { outcome, events } = await onClock(clock, get(driver, '/down', options));
      // A refused retry hands back the last 503 as the client gives it; request-end
      // says why no retry followed.
      expect(outcome).toMatchObject({ kind: 'response', status: 503 });
      const end = events.at(-1);
      ends.push(end?.type === 'request-end' ? end.outcome : String(end?.type));
    }
    const sent = server.requests('/down').length;
    // 10 requests may earn at most 0.5 · 10 = 5 retries; without the budget they would send 60.
    expect(sent).toBeGreaterThanOrEqual(10);
    expect(sent).toBeLessThanOrEqual(15);
    expect(ends).toContain('budget-exhausted');
    for (const why of ends) expect(['budget-exhausted', 'exhausted']).toContain(why);
  });
});

describe.each(drivers)('rate limiter through $name', (driver) => {
  it("'reject' mode: a request without a token fails at once with RateLimitedError and is not sent", async () => {
    const { options } = onVirtualTime({
      store: memoryStore(),
      limiter: rateLimiter({ capacity: 2, refillPerSecond: 0.5, mode: 'reject' }),
    });
    server.script('/r', [{ status: 200 }]);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push((await get(driver, '/r', options)).outcome);
    expect(outcomes.slice(0, 2)).toMatchObject([{ status: 200 }, { status: 200 }]);
    // Two tokens taken at T0; the next one is back after 1 / 0.5 per second.
    expect(outcomes[2]).toMatchObject({
      kind: 'retryline-error',
      name: 'RateLimitedError',
      retryAt: T0 + 2000,
    });
    expect(server.requests('/r')).toHaveLength(2);
  });

  it("'wait' mode: requests wait for a token instead of failing", async () => {
    const { clock, options } = onVirtualTime({
      store: memoryStore(),
      limiter: rateLimiter({ capacity: 1, refillPerSecond: 10 }),
    });
    server.script('/w', [{ status: 200 }]);
    // Three at once: the bucket holds one token, so two of them must wait for the next ones.
    const sent = await onClock(clock, Promise.all([0, 1, 2].map(() => get(driver, '/w', options))));
    for (const { outcome } of sent) expect(outcome).toMatchObject({ status: 200 });
    expect(server.requests('/w')).toHaveLength(3);
    const waits = sent.map(({ events }) =>
      events.some((event) => event.type === 'guard-wait' && event.guard === 'limiter'),
    );
    expect(waits.filter(Boolean)).toHaveLength(2);
    // One token per 100 ms: one attempt starts at once, the others a token apart, on the clock.
    const admitted = sent
      .map(({ events }) => events.find((event) => event.type === 'attempt-start')?.t)
      .sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(admitted).toEqual([T0, T0 + 100, T0 + 200]);
  });

  it("'wait' mode never waits past the deadline, and an abort ends the wait at once", async () => {
    const { clock, options } = onVirtualTime({
      store: memoryStore(),
      limiter: rateLimiter({ capacity: 1, refillPerSecond: 0.2 }),
    });
    server.script('/d', [{ status: 200 }]);
    await get(driver, '/d', options);
    // The next token is 5 s away: past a 1 s deadline, so no wait at all.
    const late = await get(driver, '/d', { ...options, deadline: 1000 });
    expect(late.outcome).toMatchObject({ kind: 'retryline-error', name: 'RateLimitedError' });
    expect(late.events.some((e) => e.type === 'guard-wait')).toBe(false);
    expect(clock.now()).toBe(T0);

    const controller = new AbortController();
    const aborted = observe(
      driver.send({ method: 'GET', url: `${server.url}/d`, options, signal: controller.signal }),
    );
    await untilWaiting(clock); // waiting for the token
    controller.abort(new Error('gone'));
    await aborted.done;
    expect(aborted.state.value?.outcome).toMatchObject({ kind: 'aborted' });
    // Ended without the clock moving, and no sleep left behind.
    expect(clock.now()).toBe(T0);
    expect(clock.pending()).toBe(0);
    expect(server.requests('/d')).toHaveLength(1);
  });
});

describe.each(drivers)('bulkhead and pacing through $name', (driver) => {
  it('a bulkhead of one place refuses a concurrent request with BulkheadRejectedError, unsent; a queue slot makes it wait', async () => {
    // On the real clock: the queue waits for a real response, not for time.
    const store = memoryStore();
    server.script('/slow', [{ status: 200, body: 'done', delayMs: 200 }]);
    const refusing: HttpRetryOptions = { ...fast, store, bulkhead: bulkhead({ maxConcurrent: 1 }) };
    const [first, second] = await Promise.all([
      get(driver, '/slow', refusing),
      get(driver, '/slow', refusing),
    ]);
    expect(first.outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(second.outcome).toMatchObject({ kind: 'retryline-error', name: 'BulkheadRejectedError' });
    expect(server.requests('/slow')).toHaveLength(1);

    // Every event of both requests, in the order they happened.
    const order: string[] = [];
    const stop = subscribe((event) => {
      if (event.type === 'attempt-start' || event.type === 'guard-wait' || event.type === 'request-end') {
        order.push(`${event.requestId} ${event.type}`);
      }
    });
    const queueing: HttpRetryOptions = {
      ...fast,
      store,
      bulkhead: bulkhead({ maxConcurrent: 1, maxQueue: 1 }),
    };
    const both = await Promise.all([get(driver, '/slow', queueing), get(driver, '/slow', queueing)]).finally(
      stop,
    );
    expect(both.map(({ outcome }) => outcome)).toMatchObject([{ status: 200 }, { status: 200 }]);
    expect(server.requests('/slow')).toHaveLength(3);
    const queued = both.find(({ events }) => events.some((e) => e.type === 'guard-wait'));
    const holder = both.find((result) => result !== queued);
    expect(queued?.events.find((e) => e.type === 'guard-wait')).toMatchObject({ guard: 'bulkhead' });
    const idOf = (result: typeof queued) => result?.events[0]?.requestId;
    // The queued request starts only after the holder was sent, by waiting for its place.
    expect(order.filter((line) => !line.endsWith('request-end'))).toEqual([
      `${idOf(holder)} attempt-start`,
      `${idOf(queued)} guard-wait`,
      `${idOf(queued)} attempt-start`,
    ]);
  });

  it('after a 429 with Retry-After: 1, a later request to the same origin and first path segment waits for the reset instead of getting another 429', async () => {
    const { clock, options } = onVirtualTime({ store: memoryStore(), pacing: pacing() });
    server.script('/api/quota', [{ status: 429, headers: { 'Retry-After': '1' } }]);
    server.script('/api/other', [{ status: 200, body: 'ok' }]);
    const limited = await onClock(clock, get(driver, '/api/quota', { ...options, retries: 0 }));
    expect(limited.outcome).toMatchObject({ status: 429 });
    const later = await onClock(clock, get(driver, '/api/other', options));
    expect(later.outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(server.requests('/api/quota')).toHaveLength(1);
    expect(server.requests('/api/other')).toHaveLength(1);
    // Sent no sooner than the reset, and spread by at most min(1 s / 10, 1 s).
    const wait = later.events.find((e) => e.type === 'guard-wait');
    expect(wait).toMatchObject({ guard: 'pacing' });
    const waited = wait?.type === 'guard-wait' ? wait.waited : 0;
    expect(waited).toBeGreaterThanOrEqual(1000);
    expect(waited).toBeLessThanOrEqual(1100);
    expect(later.events.find((e) => e.type === 'attempt-start')?.t).toBe(T0 + waited);
  });

  it("with onRetryAfterTooLong: 'clamp', a retry after a long Retry-After waits maxRetryAfter once and is sent", async () => {
    server.script('/long-quota', [
      { status: 429, headers: { 'Retry-After': '120' } },
      { status: 200, body: 'ok' },
    ]);
    const { clock, options } = onVirtualTime({
      store: memoryStore(),
      maxRetryAfter: 200,
      onRetryAfterTooLong: 'clamp',
    });
    const result = await onClock(clock, get(driver, '/long-quota', options));
    expect(result.outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(server.requests('/long-quota')).toHaveLength(2);
    // The clamped wait (200 ms: no spread past maxRetryAfter), not 120 s, and not held again by
    // pacing after it.
    const scheduled = result.events.find((e) => e.type === 'retry-scheduled');
    const delay = scheduled?.type === 'retry-scheduled' ? scheduled.delay : 0;
    expect(delay).toBe(200);
    expect(result.events.filter((e) => e.type === 'attempt-start').map((e) => e.t)).toEqual([T0, T0 + delay]);
    expect(result.events.some((e) => e.type === 'guard-wait')).toBe(false);
  });
});

describe.each(drivers)('guard options through $name', (driver) => {
  it.each(['budget', 'breaker', 'store', 'pacing', 'limiter', 'bulkhead'])(
    '%s: null is refused when the client is made, like any wrong value, and nothing is sent',
    async (name) => {
      server.script('/null-option', [{ status: 200 }]);
      const sent = get(driver, '/null-option', { ...fast, [name]: null } as HttpRetryOptions);
      await expect(sent).rejects.toThrow(InvalidOptionsError);
      await expect(sent).rejects.toThrow(new RegExp(`^Expected ${name} to be .*, got null$`));
      expect(server.requests('/null-option')).toHaveLength(0);
    },
  );
});

describe('what the breaker counts', () => {
  it('counts 503s and resets on POSTs that are not retried, but not 4xx', async () => {
    const options: HttpRetryOptions = {
      ...fast,
      store: memoryStore(),
      breaker: circuitBreaker({ consecutiveFailures: 2, openMs: 10_000 }),
    };
    const post = (path: string) =>
      fetchDriver.send({ method: 'POST', url: `${server.url}${path}`, body: 'b', options });
    server.script('/bad-request', [{ status: 400 }]);
    for (let i = 0; i < 3; i++) expect((await post('/bad-request')).outcome).toMatchObject({ status: 400 });
    server.script('/orders', [{ status: 503 }, { fault: 'reset-before-headers' }, { status: 201 }]);
    expect((await post('/orders')).outcome).toMatchObject({ status: 503 });
    expect((await post('/orders')).outcome).toMatchObject({ kind: 'network-error' });
    expect((await post('/orders')).outcome).toMatchObject({ name: 'CircuitOpenError' });
    expect(server.requests('/orders')).toHaveLength(2);
  });
});

describe('shared guard state', () => {
  it('a breaker opened through fetch is open for an axios client sharing the store', async () => {
    const store = memoryStore();
    const options: HttpRetryOptions = {
      ...fast,
      retries: 0,
      store,
      breaker: circuitBreaker({ consecutiveFailures: 2, openMs: 10_000 }),
    };
    server.script('/shared', [{ status: 503 }]);
    await get(fetchDriver, '/shared', options);
    await get(fetchDriver, '/shared', options);
    const other = await get(axiosDriver, '/shared', options);
    expect(other.outcome).toMatchObject({ kind: 'retryline-error', name: 'CircuitOpenError' });
    expect(server.requests('/shared')).toHaveLength(2);
  });

  it('keys guards per origin: another origin is unaffected', async () => {
    const store = memoryStore();
    const options: HttpRetryOptions = {
      ...fast,
      retries: 0,
      store,
      breaker: circuitBreaker({ consecutiveFailures: 1, openMs: 10_000 }),
    };
    server.script('/x', [{ status: 503 }]);
    await get(fetchDriver, '/x', options);
    expect((await get(fetchDriver, '/x', options)).outcome).toMatchObject({ name: 'CircuitOpenError' });
    const otherOrigin = server.url.replace('127.0.0.1', 'localhost');
    const { outcome } = await fetchDriver.send({ method: 'GET', url: `${otherOrigin}/x`, options });
    expect(outcome).toMatchObject({ kind: 'response', status: 503 });
  });
});
