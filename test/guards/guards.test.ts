import { type HttpRetryOptions, memoryStore, type RetrylineEvent } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { axiosDriver, type Driver, drivers, fetchDriver } from '../conformance/drivers';
import { useFaultServer } from '../support/use-fault-server';

// The breaker and the retry budget, wired through every adapter, against the real fault server.
const server = useFaultServer();

const fast: HttpRetryOptions = { backoff: { strategy: 'constant', base: 5 }, jitter: 'none' };
const get = (driver: Driver, path: string, options: HttpRetryOptions) =>
  driver.send({ method: 'GET', url: `${server.url}${path}`, options });
const transitions = (events: RetrylineEvent[]) =>
  events.flatMap((e) => (e.type === 'breaker-state' ? [`${e.from}→${e.to}`] : []));

describe.each(drivers)('guards through $name', (driver) => {
  it('a breaker opens after consecutive failures, fails fast without sending, and closes after a good trial', async () => {
    const options: HttpRetryOptions = {
      ...fast,
      retries: 0,
      store: memoryStore(),
      breaker: { consecutiveFailures: 3, openMs: 300 },
    };
    server.script('/flaky', [{ status: 503 }]);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) seen.push(...transitions((await get(driver, '/flaky', options)).events));
    expect(seen).toEqual(['closed→open']);
    const refused = await get(driver, '/flaky', options);
    expect(refused.outcome).toMatchObject({ kind: 'retryline-error', name: 'CircuitOpenError' });
    expect((refused.outcome as { retryAt?: number }).retryAt).toBeGreaterThan(Date.now());
    expect(refused.events.some((e) => e.type === 'attempt-start')).toBe(false);
    expect(refused.events.at(-1)).toMatchObject({
      type: 'request-end',
      outcome: 'breaker-open',
      attempts: 0,
    });
    expect(server.requests('/flaky')).toHaveLength(3); // the refused call never reached the server

    await new Promise((resolve) => setTimeout(resolve, 320));
    server.script('/flaky', [{ status: 200, body: 'back' }]);
    const trial = await get(driver, '/flaky', options);
    expect(trial.outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(transitions(trial.events)).toEqual(['open→half-open', 'half-open→closed']);
  });

  it('a retry budget keeps retries within its ratio of requests', async () => {
    const options: HttpRetryOptions = {
      ...fast,
      retries: 5,
      store: memoryStore(),
      budget: { ratio: 0.5, minPerSecond: 0 },
    };
    server.script('/down', [{ status: 503 }]);
    const names: string[] = [];
    for (let i = 0; i < 10; i++) {
      const { outcome } = await get(driver, '/down', options);
      names.push(outcome.kind === 'retryline-error' ? outcome.name : outcome.kind);
    }
    const sent = server.requests('/down').length;
    // 10 requests may earn at most 0.5 · 10 = 5 retries; without the budget they would send 60.
    expect(sent).toBeGreaterThanOrEqual(10);
    expect(sent).toBeLessThanOrEqual(15);
    expect(names).toContain('RetryBudgetExhaustedError');
  });
});

describe.each(drivers)('rate limiter through $name', (driver) => {
  it("'reject' mode: a request without a token fails at once with RateLimitedError and is not sent", async () => {
    const options: HttpRetryOptions = {
      ...fast,
      store: memoryStore(),
      limiter: { capacity: 2, refillPerSecond: 0.5, mode: 'reject' },
    };
    server.script('/r', [{ status: 200 }]);
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push((await get(driver, '/r', options)).outcome);
    expect(outcomes.slice(0, 2)).toMatchObject([{ status: 200 }, { status: 200 }]);
    expect(outcomes[2]).toMatchObject({ kind: 'retryline-error', name: 'RateLimitedError' });
    expect((outcomes[2] as { retryAt?: number }).retryAt).toBeGreaterThan(Date.now());
    expect(server.requests('/r')).toHaveLength(2);
  });

  it("'wait' mode: requests wait for a token instead of failing", async () => {
    const options: HttpRetryOptions = {
      ...fast,
      store: memoryStore(),
      limiter: { capacity: 1, refillPerSecond: 10 },
    };
    server.script('/w', [{ status: 200 }]);
    // Three at once: the bucket holds one token, so two of them must wait for the next ones,
    // however long any request takes.
    const sent = await Promise.all([0, 1, 2].map(() => get(driver, '/w', options)));
    for (const { outcome } of sent) expect(outcome).toMatchObject({ status: 200 });
    expect(server.requests('/w')).toHaveLength(3);
    const waits = sent.map(({ events }) =>
      events.some((event) => event.type === 'guard-wait' && event.guard === 'limiter'),
    );
    expect(waits.filter(Boolean)).toHaveLength(2);
    // One token per 100 ms: attempts start at least that far apart, timed by the client's own clock
    // (arrivals at the server also carry connection set-up, which differs between attempts).
    const admitted = sent
      .map(({ events }) => events.find((event) => event.type === 'attempt-start')?.t ?? 0)
      .sort((a, b) => a - b);
    expect((admitted[1] ?? 0) - (admitted[0] ?? 0)).toBeGreaterThanOrEqual(95);
    expect((admitted[2] ?? 0) - (admitted[1] ?? 0)).toBeGreaterThanOrEqual(95);
  });

  it("'wait' mode never waits past the deadline, and an abort ends the wait at once", async () => {
    const store = memoryStore();
    const limiter = { capacity: 1, refillPerSecond: 0.2 };
    server.script('/d', [{ status: 200 }]);
    await get(driver, '/d', { ...fast, store, limiter });
    const late = await get(driver, '/d', { ...fast, store, limiter, deadline: 1000 });
    expect(late.outcome).toMatchObject({ kind: 'retryline-error', name: 'RateLimitedError' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('gone')), 50);
    const started = Date.now();
    const aborted = await driver.send({
      method: 'GET',
      url: `${server.url}/d`,
      options: { ...fast, store, limiter },
      signal: controller.signal,
    });
    expect(aborted.outcome).toMatchObject({ kind: 'aborted' });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(server.requests('/d')).toHaveLength(1);
  });
});

describe.each(drivers)('bulkhead and pacing through $name', (driver) => {
  it('a bulkhead of one place refuses a concurrent request with BulkheadRejectedError, unsent; a queue slot makes it wait', async () => {
    const store = memoryStore();
    server.script('/slow', [{ status: 200, body: 'done', delayMs: 200 }]);
    const refusing: HttpRetryOptions = { ...fast, store, bulkhead: { maxConcurrent: 1 } };
    const [first, second] = await Promise.all([
      get(driver, '/slow', refusing),
      get(driver, '/slow', refusing),
    ]);
    expect(first.outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(second.outcome).toMatchObject({ kind: 'retryline-error', name: 'BulkheadRejectedError' });
    expect(server.requests('/slow')).toHaveLength(1);

    const queueing: HttpRetryOptions = { ...fast, store, bulkhead: { maxConcurrent: 1, maxQueue: 1 } };
    const both = await Promise.all([get(driver, '/slow', queueing), get(driver, '/slow', queueing)]);
    expect(both.map(({ outcome }) => outcome)).toMatchObject([{ status: 200 }, { status: 200 }]);
    const [, a, b] = server.requests('/slow');
    // The second was sent only once the first had its response (200 ms later).
    expect((b?.receivedAt ?? 0) - (a?.receivedAt ?? 0)).toBeGreaterThanOrEqual(190);
    expect(both[1]?.events.find((e) => e.type === 'guard-wait')).toMatchObject({ guard: 'bulkhead' });
  });

  it('after a 429 with Retry-After: 1, a later request to the origin waits for the reset instead of getting another 429', async () => {
    const store = memoryStore();
    server.script('/quota', [{ status: 429, headers: { 'Retry-After': '1' } }]);
    server.script('/other', [{ status: 200, body: 'ok' }]);
    const limited = await get(driver, '/quota', { ...fast, store, retries: 0 });
    expect(limited.outcome).toMatchObject({ status: 429 });
    const later = await get(driver, '/other', { ...fast, store });
    expect(later.outcome).toMatchObject({ kind: 'response', status: 200 });
    const [quota] = server.requests('/quota');
    const [other] = server.requests('/other');
    expect((other?.receivedAt ?? 0) - (quota?.receivedAt ?? 0)).toBeGreaterThanOrEqual(990);
    expect(later.events.find((e) => e.type === 'guard-wait')).toMatchObject({ guard: 'pacing' });
  });

  it("with onRetryAfterTooLong: 'clamp', a retry after a long Retry-After waits maxRetryAfter once and is sent", async () => {
    server.script('/long-quota', [
      { status: 429, headers: { 'Retry-After': '120' } },
      { status: 200, body: 'ok' },
    ]);
    const result = await get(driver, '/long-quota', {
      ...fast,
      store: memoryStore(),
      maxRetryAfter: 200,
      onRetryAfterTooLong: 'clamp',
    });
    expect(result.outcome).toMatchObject({ kind: 'response', status: 200 });
    const [first, second] = server.requests('/long-quota');
    // The clamped wait (200 ms plus its spread of at most 20 ms), not pacing's 120 s refusal.
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(190);
    expect(result.events.some((e) => e.type === 'guard-wait')).toBe(false);
  });
});

describe('what the breaker counts', () => {
  it('counts 503s and resets on POSTs that are not retried, but not 4xx', async () => {
    const options: HttpRetryOptions = {
      ...fast,
      store: memoryStore(),
      breaker: { consecutiveFailures: 2, openMs: 10_000 },
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
      breaker: { consecutiveFailures: 2, openMs: 10_000 },
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
      breaker: { consecutiveFailures: 1, openMs: 10_000 },
    };
    server.script('/x', [{ status: 503 }]);
    await get(fetchDriver, '/x', options);
    expect((await get(fetchDriver, '/x', options)).outcome).toMatchObject({ name: 'CircuitOpenError' });
    const otherOrigin = server.url.replace('127.0.0.1', 'localhost');
    const { outcome } = await fetchDriver.send({ method: 'GET', url: `${otherOrigin}/x`, options });
    expect(outcome).toMatchObject({ kind: 'response', status: 503 });
  });
});
