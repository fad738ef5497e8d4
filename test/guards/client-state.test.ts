import { createRetry, isRetrylineError, memoryStore, type RetrylineEvent } from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

/**
 * DESIGN §7: guard state belongs to the client that made it. Nothing is shared through a hidden
 * process-wide store: two clients share state only when given the same store, so one test's
 * failures cannot leak into the next, and a per-request option never changes whose state counts.
 */
const server = useFaultServer();

const breaker = { consecutiveFailures: 1, openMs: 60_000 } as const;
const once = { retries: 0, breaker } as const;

describe("each client owns its guards' state", () => {
  it('a breaker opened by one client leaves another client of the same origin closed', async () => {
    server.script('/down', [{ status: 503 }]);
    const first = retryFetch(fetch, once);
    const second = retryFetch(fetch, once);
    expect((await first(`${server.url}/down`)).status).toBe(503);
    // The first client's breaker is open: its next call is refused, nothing sent.
    expect(isRetrylineError((await settle(first(`${server.url}/down`))).error, 'CircuitOpenError')).toBe(
      true,
    );
    // The second client's own breaker has seen nothing: its call goes out.
    expect((await second(`${server.url}/down`)).status).toBe(503);
    expect(server.requests('/down')).toHaveLength(2);
  });

  it('clients given the same store share it: one opens the breaker for both', async () => {
    server.script('/down', [{ status: 503 }]);
    const store = memoryStore();
    const first = retryFetch(fetch, { ...once, store });
    const second = retryFetch(fetch, { ...once, store });
    await first(`${server.url}/down`);
    expect(isRetrylineError((await settle(second(`${server.url}/down`))).error, 'CircuitOpenError')).toBe(
      true,
    );
    expect(server.requests('/down')).toHaveLength(1);
  });

  it("a request's own options override the client's policy, never whose state it counts in", async () => {
    server.script('/down', [{ status: 503 }]);
    const client = retryFetch(fetch, once);
    await client(`${server.url}/down`, { retry: { retries: 0, jitter: 'none' } });
    // The breaker the request above opened is the client's: the next plain call is refused.
    expect(isRetrylineError((await settle(client(`${server.url}/down`))).error, 'CircuitOpenError')).toBe(
      true,
    );
  });

  it('createRetry keeps one state for its calls; bare retry() calls share none', async () => {
    const failing = () => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNRESET' }));
    const bound = createRetry({ ...once, guardKey: 'db' });
    await settle(bound(failing));
    expect(isRetrylineError((await settle(bound(failing))).error, 'CircuitOpenError')).toBe(true);
    const other = createRetry({ ...once, guardKey: 'db' });
    expect(isRetrylineError((await settle(other(failing))).error, 'CircuitOpenError')).toBe(false);
  });
});

describe('pacing is opt-in', () => {
  it('a 429 with Retry-After: 30 to a fail-fast request does not hold the next request to another path', async () => {
    server.script('/limited', [{ status: 429, headers: { 'Retry-After': '30' } }]);
    server.script('/other', [{ status: 200, body: 'ok' }]);
    const events: RetrylineEvent[] = [];
    const client = retryFetch(fetch, { onEvent: (event) => events.push(event) });
    expect((await client(`${server.url}/limited`, { retry: false })).status).toBe(429);
    expect((await client(`${server.url}/other`)).status).toBe(200);
    expect(server.requests('/other')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'guard-wait')).toEqual([]);
  });

  it('with pacing on, the next request waits for the reset (a guard-wait of reason pacing), never past maxRetryAfter', async () => {
    server.script('/limited', [{ status: 429, headers: { 'Retry-After': '30' } }]);
    server.script('/other', [{ status: 200, body: 'ok' }]);
    const events: RetrylineEvent[] = [];
    const client = retryFetch(fetch, {
      pacing: true,
      maxRetryAfter: 1_000,
      onEvent: (event) => events.push(event),
    });
    await client(`${server.url}/limited`, { retry: false });
    // The 30 s pause was capped at maxRetryAfter when it was stored: the request waits, then goes.
    const response = await client(`${server.url}/other`);
    expect(response.status).toBe(200);
    // A pacing wait is a wait: in the request's delays and totalDelay, as a backoff would be.
    const info = getRetryInfo(response);
    expect(info?.delays).toMatchObject([{ retry: 0, reason: 'pacing' }]);
    expect(info?.totalDelay).toBe(info?.delays[0]?.delay);
    expect(info?.totalDelay).toBeGreaterThan(0);
    expect(server.requests('/other')).toHaveLength(1);
    const waits = events.filter((e) => e.type === 'guard-wait');
    expect(waits).toMatchObject([{ guard: 'pacing' }]);
    // The wait came before the request's attempt started.
    const other = waits[0]?.requestId;
    const order = events.filter((e) => e.requestId === other).map((e) => e.type);
    expect(order.indexOf('guard-wait')).toBeLessThan(order.indexOf('attempt-start'));
  });
});
