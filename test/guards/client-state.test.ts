import { attachRetry } from '@retryline/axios';
import {
  circuitBreaker,
  createRetry,
  isRetrylineError,
  memoryStore,
  pacing,
  type RetrylineEvent,
  seededRandom,
  virtualClock,
} from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import axios from 'axios';
import { describe, expect, it } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

/**
 * Guard state belongs to the client that made it. Nothing is shared through a hidden
 * process-wide store: two clients share state only when given the same store, so one test's
 * failures cannot leak into the next, and a per-request option never changes whose state counts.
 */
const server = useFaultServer();
const T0 = Date.UTC(2026, 0, 1);

/** A fail-fast client's options with a breaker of its own, opened by one failure. */
const once = () => ({ retries: 0, breaker: circuitBreaker({ consecutiveFailures: 1, openMs: 60_000 }) });

describe("each client owns its guards' state", () => {
  it('a breaker opened by one client leaves another client of the same origin closed', async () => {
    server.script('/down', [{ status: 503 }]);
    const first = retryFetch(fetch, once());
    const second = retryFetch(fetch, once());
    expect((await first(`${server.url}/down`)).status).toBe(503);
    // The first client's breaker is open: its next call is refused, nothing sent.
    expect(isRetrylineError((await settle(first(`${server.url}/down`))).error, 'CircuitOpenError')).toBe(
      true,
    );
    // The second client's own breaker has seen nothing: its call goes out.
    expect((await second(`${server.url}/down`)).status).toBe(503);
    expect(server.requests('/down')).toHaveLength(2);
  });

  it('two clients with no guard value in common never share state, even their default budgets', async () => {
    server.script('/flaky', [{ status: 503 }]);
    // Without the recovery gate, which would park these retries (every one fails): this is about budgets.
    const spent = retryFetch(fetch, {
      retries: 5,
      backoff: { strategy: 'constant', base: 1 },
      jitter: 'none',
      gate: false,
    });
    const fresh = retryFetch(fetch, {
      retries: 1,
      backoff: { strategy: 'constant', base: 1 },
      jitter: 'none',
      gate: false,
    });
    // The default budget's floor is 10 retries a second over 10 s: 100 retries, then it is spent.
    for (let i = 0; i < 20; i++) await spent(`${server.url}/flaky`);
    expect(getRetryInfo(await spent(`${server.url}/flaky`))?.stoppedBy).toBe('budget');
    // The other client's budget has seen none of it: its retry goes out.
    const response = await fresh(`${server.url}/flaky`);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 2, stoppedBy: 'exhausted' });
  });

  it('clients given the same store share it: one opens the breaker for both', async () => {
    server.script('/down', [{ status: 503 }]);
    const store = memoryStore();
    const first = retryFetch(fetch, { ...once(), store });
    const second = retryFetch(fetch, { ...once(), store });
    await first(`${server.url}/down`);
    expect(isRetrylineError((await settle(second(`${server.url}/down`))).error, 'CircuitOpenError')).toBe(
      true,
    );
    expect(server.requests('/down')).toHaveLength(1);
  });

  it('clients given the same guard value share it, whatever their stores; state() shows it', async () => {
    server.script('/down', [{ status: 503 }]);
    const shared = once();
    const first = retryFetch(fetch, shared);
    const second = retryFetch(fetch, shared);
    expect(shared.breaker.state(server.url).state).toBe('closed');
    await first(`${server.url}/down`);
    expect(shared.breaker.state(server.url)).toMatchObject({ state: 'open', retryAt: expect.any(Number) });
    const refused = (await settle(second(`${server.url}/down`))).error;
    expect(isRetrylineError(refused, 'CircuitOpenError')).toBe(true);
    expect(server.requests('/down')).toHaveLength(1);
  });

  it('a shared circuitBreaker() opened through fetch is open for an axios client using it', async () => {
    server.script('/down', [{ status: 503 }]);
    const breaker = circuitBreaker({ consecutiveFailures: 1, openMs: 60_000 });
    const viaFetch = retryFetch(fetch, { retries: 0, breaker });
    const viaAxios = axios.create();
    attachRetry(viaAxios, { retries: 0, breaker });
    expect((await viaFetch(`${server.url}/down`)).status).toBe(503);
    const refused = (await settle(viaAxios.get(`${server.url}/down`))).error;
    // Through axios every rejection is an AxiosError; its cause is the breaker's refusal.
    expect(axios.isAxiosError(refused)).toBe(true);
    expect((refused as { code?: string }).code).toBe('ERR_CIRCUIT_OPEN');
    expect(isRetrylineError((refused as { cause?: unknown }).cause, 'CircuitOpenError')).toBe(true);
    expect(server.requests('/down')).toHaveLength(1);
  });

  it('a guard value given a store of its own keeps its state there, whatever the client was given', async () => {
    server.script('/down', [{ status: 503 }]);
    const home = memoryStore();
    const breaker = circuitBreaker({ consecutiveFailures: 1, openMs: 60_000, store: home });
    const client = retryFetch(fetch, { retries: 0, breaker, store: memoryStore() });
    await client(`${server.url}/down`);
    expect(home.size().breakers).toBe(1);
    // A second breaker on the same store sees the same state: the store is where it lives.
    const twin = circuitBreaker({ consecutiveFailures: 1, openMs: 60_000, store: home });
    expect(twin.state(server.url).state).toBe('open');
  });

  it('a guard value with no store of its own keeps its state in the store given to its client', async () => {
    server.script('/down', [{ status: 503 }]);
    const store = memoryStore();
    const client = retryFetch(fetch, { ...once(), store });
    await client(`${server.url}/down`);
    expect(store.size().breakers).toBe(1);
  });

  it("a request's own options override the client's policy, never whose state it counts in", async () => {
    server.script('/down', [{ status: 503 }]);
    const client = retryFetch(fetch, once());
    await client(`${server.url}/down`, { retry: { retries: 0, jitter: 'none' } });
    // The breaker the request above opened is the client's: the next plain call is refused.
    expect(isRetrylineError((await settle(client(`${server.url}/down`))).error, 'CircuitOpenError')).toBe(
      true,
    );
  });

  it('createRetry with a guard value keeps one state for its calls; another value shares none', async () => {
    const failing = () => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNRESET' }));
    const bound = createRetry({ ...once(), guardKey: 'db' });
    await settle(bound(failing));
    expect(isRetrylineError((await settle(bound(failing))).error, 'CircuitOpenError')).toBe(true);
    const other = createRetry({ ...once(), guardKey: 'db' });
    expect(isRetrylineError((await settle(other(failing))).error, 'CircuitOpenError')).toBe(false);
  });
});

// Two tests in one file share one client, as a suite's
// module-level client would. The first test's 429 must not reach into the second.
describe('pacing is opt-in: without it, a 429 in one test does not delay the next', () => {
  const clock = virtualClock(T0);
  const events: RetrylineEvent[] = [];
  const client = retryFetch(fetch, {
    clock,
    random: seededRandom(7),
    onEvent: (event) => events.push(event),
  });

  it('the first test gets a 429 with Retry-After: 30', async () => {
    server.script('/api/limited', [{ status: 429, headers: { 'Retry-After': '30' } }]);
    expect((await client(`${server.url}/api/limited`, { retry: false })).status).toBe(429);
  });

  it('the second test calls another path of the same origin through the same client: not delayed', async () => {
    server.script('/api/other', [{ status: 200, body: 'ok' }]);
    const response = await client(`${server.url}/api/other`);
    expect(response.status).toBe(200);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 1, totalDelay: 0, delays: [] });
    // Nothing waited: the virtual clock never had a sleep to run, and no guard-wait was reported.
    expect(clock.now()).toBe(T0);
    expect(events.filter((e) => e.type === 'guard-wait')).toEqual([]);
  });
});

describe('with pacing() configured, the next request waits, at most maxRetryAfter, and says so', () => {
  const clock = virtualClock(T0);
  const events: RetrylineEvent[] = [];
  const paced = pacing();
  const client = retryFetch(fetch, {
    clock,
    random: seededRandom(7),
    pacing: paced,
    maxRetryAfter: 1_000,
    onEvent: (event) => events.push(event),
  });

  it('the first test gets a 429 with Retry-After: 30; the pause is kept capped at maxRetryAfter', async () => {
    server.script('/api/limited', [{ status: 429, headers: { 'Retry-After': '30' } }]);
    expect((await client(`${server.url}/api/limited`, { retry: false })).status).toBe(429);
    // Keyed by origin and first path segment, and stored no longer than maxRetryAfter.
    expect(paced.state(`${server.url}/api`, T0)).toEqual({ until: T0 + 1_000 });
    expect(paced.state(`${server.url}/elsewhere`, T0)).toEqual({ until: undefined });
  });

  it('the second test, another path under the same segment, waits exactly maxRetryAfter, in its retry info and events', async () => {
    server.script('/api/other', [{ status: 200, body: 'ok' }]);
    const pending = client(`${server.url}/api/other`);
    while (clock.pending() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await clock.runAll();
    const response = await pending;
    expect(response.status).toBe(200);
    const info = getRetryInfo(response);
    // A pacing wait is a wait: in the request's delays and totalDelay, as a backoff would be.
    expect(info?.delays).toEqual([{ retry: 0, delay: 1_000, reason: 'pacing' }]);
    expect(info?.totalDelay).toBe(1_000);
    expect(server.requests('/api/other')).toHaveLength(1);
    const waits = events.filter((e) => e.type === 'guard-wait');
    expect(waits).toMatchObject([{ guard: 'pacing', waited: 1_000, key: `${server.url}/api` }]);
    // The wait came before the request's attempt started.
    const other = waits[0]?.requestId;
    const order = events.filter((e) => e.requestId === other).map((e) => e.type);
    expect(order.indexOf('guard-wait')).toBeLessThan(order.indexOf('attempt-start'));
  });

  it('a path under another first segment of the same origin is not held', async () => {
    server.script('/v2/orders', [{ status: 200, body: 'ok' }]);
    await client(`${server.url}/api/limited`, { retry: false }).catch(() => undefined);
    const response = await client(`${server.url}/v2/orders`);
    expect(getRetryInfo(response)).toMatchObject({ totalDelay: 0, delays: [] });
  });
});
