/**
 * Guards are values: each test states one behaviour a guard value promises.
 */
import {
  bulkhead,
  circuitBreaker,
  isRetrylineError,
  memoryStore,
  pacing,
  retry,
  retryBudget,
  seededRandom,
  virtualClock,
} from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { onClock } from '../support/on-clock';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

const server = useFaultServer();
const transient = () => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNRESET' }));
const openOnFirstFailure = () => circuitBreaker({ consecutiveFailures: 1, openMs: 60_000 });

describe('a guard value given to bare retry() keeps one state across calls', () => {
  it('a circuitBreaker() shared by two retry() calls opens for the second', async () => {
    const breaker = openOnFirstFailure();
    const options = { retries: 0, breaker, guardKey: 'db' } as const;
    await settle(retry(transient, options));
    // One guard value is one guard. The first call's failure opened it.
    expect(breaker.state('db').state).toBe('open');
    const second = await settle(retry(transient, options));
    expect(isRetrylineError(second.error, 'CircuitOpenError')).toBe(true);
  });

  it('a breaker shared by a fetch client and retry() is one breaker', async () => {
    server.script('/down', [{ status: 503 }]);
    const breaker = openOnFirstFailure();
    const client = retryFetch(fetch, { retries: 0, breaker });
    expect((await client(`${server.url}/down`)).status).toBe(503);
    expect(breaker.state(server.url).state).toBe('open');
    // retry() keyed like the client: same value, same key, so the same (open) breaker.
    const viaRetry = await settle(retry(transient, { retries: 0, breaker, guardKey: server.url }));
    expect(isRetrylineError(viaRetry.error, 'CircuitOpenError')).toBe(true);
  });

  it('a retryBudget() given to retry() counts every call, not one fresh budget per call', async () => {
    const budget = retryBudget({ ratio: 0, minPerSecond: 0.1, windowMs: 10_000 }); // a floor of 1 retry
    const options = {
      retries: 1,
      budget,
      guardKey: 'db',
      backoff: { strategy: 'constant', base: 0 },
    } as const;
    await settle(retry(transient, options)); // spends the one retry
    await settle(retry(transient, options));
    expect(budget.state('db').retries).toBe(1);
    expect(budget.state('db').requests).toBe(2);
  });
  it('a bulkhead() shared by concurrent retry() calls limits them', async () => {
    const pool = bulkhead({ maxConcurrent: 1 });
    let inFlight = 0;
    let most = 0;
    const op = async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 10));
      inFlight--;
      return 'ok';
    };
    const results = await Promise.all(
      [1, 2, 3].map(() => settle(retry(op, { retries: 0, bulkhead: pool, guardKey: 'db' }))),
    );
    // maxConcurrent 1, maxQueue 0: one call runs, the others are refused (BulkheadRejectedError).
    expect(most).toBe(1);
    expect(results.filter((r) => isRetrylineError(r.error, 'BulkheadRejectedError'))).toHaveLength(2);
  });
});

describe('guard.state() reads where the guard keeps its state', () => {
  it('state() called before the value is given to a client with a store still shows that state', async () => {
    server.script('/down', [{ status: 503 }]);
    const breaker = openOnFirstFailure();
    // A dashboard polling at start-up, before the client exists.
    expect(breaker.state(server.url).state).toBe('closed');
    const client = retryFetch(fetch, { retries: 0, breaker, store: memoryStore() });
    await client(`${server.url}/down`);
    // The client now refuses: the breaker it uses is open...
    expect(isRetrylineError((await settle(client(`${server.url}/down`))).error, 'CircuitOpenError')).toBe(
      true,
    );
    // ...and state() must say so.
    expect(breaker.state(server.url).state).toBe('open');
  });
  it('calling state() does not change which clients share the guard', async () => {
    server.script('/down', [{ status: 503 }]);
    /** Whether client A (given a store) is refused after client B (no store) opened the shared breaker. */
    const aRefusedAfterB = async (inspect: boolean) => {
      const breaker = openOnFirstFailure();
      const a = retryFetch(fetch, { retries: 0, breaker, store: memoryStore() });
      if (inspect) breaker.state(server.url); // a dashboard read, nothing more
      const b = retryFetch(fetch, { retries: 0, breaker });
      await b(`${server.url}/down`);
      return isRetrylineError((await settle(a(`${server.url}/down`))).error, 'CircuitOpenError');
    };
    expect(await aRefusedAfterB(true)).toBe(await aRefusedAfterB(false));
  });
});

describe('one guard value given to several clients is one guard, whatever their stores', () => {
  it('a breaker opened through a client given a store is open for a client without one', async () => {
    server.script('/down', [{ status: 503 }]);
    const breaker = openOnFirstFailure();
    const withStore = retryFetch(fetch, { retries: 0, breaker, store: memoryStore() });
    const plain = retryFetch(fetch, { retries: 0, breaker });
    await withStore(`${server.url}/down`);
    const second = await settle(plain(`${server.url}/down`));
    expect(isRetrylineError(second.error, 'CircuitOpenError')).toBe(true);
    expect(server.requests('/down')).toHaveLength(1);
  });
});

describe('a guard key is a string (one dependency) or a function (per request), for a guard and a client alike', () => {
  // A port nothing listens on: a request that reaches the network there fails to connect.
  const elsewhere = 'http://127.0.0.1:1/pay';

  for (const [name, makeClient] of [
    [
      "the client's guardKey: 'payments'",
      () => retryFetch(fetch, { retries: 0, breaker: openOnFirstFailure(), guardKey: 'payments' }),
    ],
    [
      "the breaker's key: 'payments'",
      () =>
        retryFetch(fetch, {
          retries: 0,
          breaker: circuitBreaker({ consecutiveFailures: 1, openMs: 60_000, key: 'payments' }),
        }),
    ],
  ] as const) {
    it(`${name} puts two origins under one breaker`, async () => {
      server.script('/down', [{ status: 503 }]);
      const client = makeClient();
      expect((await client(`${server.url}/down`)).status).toBe(503);
      // The other origin's request is refused by the breaker the first one opened, before any connection.
      const other = await settle(client(elsewhere));
      expect(isRetrylineError(other.error, 'CircuitOpenError')).toBe(true);
    });
  }

  it('by default each origin has its own breaker', async () => {
    server.script('/down', [{ status: 503 }]);
    const client = retryFetch(fetch, { retries: 0, breaker: openOnFirstFailure() });
    await client(`${server.url}/down`);
    const other = await settle(client(elsewhere));
    expect(isRetrylineError(other.error, 'CircuitOpenError')).toBe(false);
    expect(other.error).toBeInstanceOf(TypeError); // fetch's own connection failure
  });

  it('a function guardKey picks the key per request', async () => {
    server.script('/down', [{ status: 503 }]);
    const breaker = openOnFirstFailure();
    const client = retryFetch(fetch, { retries: 0, breaker, guardKey: ({ url }) => new URL(url).pathname });
    await client(`${server.url}/down`);
    expect(breaker.state('/down').state).toBe('open');
    const other = await settle(client(`http://127.0.0.1:1/down`));
    expect(isRetrylineError(other.error, 'CircuitOpenError')).toBe(true);
  });
});

describe('guard factories validate their own options at once', () => {
  it('circuitBreaker({ key: <neither a string nor a function> }) throws InvalidOptionsError at the factory', () => {
    for (const key of [42, '', {}]) {
      let thrown: unknown;
      try {
        circuitBreaker({ key: key as never });
      } catch (error) {
        thrown = error;
      }
      expect(isRetrylineError(thrown, 'InvalidOptionsError')).toBe(true);
      expect((thrown as Error).message).toMatch(/^Expected key to be a non-empty string or a function/);
    }
  });

  it('circuitBreaker({ store: <not a store> }) throws InvalidOptionsError at the factory', () => {
    let thrown: unknown;
    try {
      circuitBreaker({ store: {} as never });
    } catch (error) {
      thrown = error;
    }
    expect(isRetrylineError(thrown, 'InvalidOptionsError')).toBe(true);
  });

  it('retryFetch({ guardKey: <a number> }) throws InvalidOptionsError at creation', () => {
    expect(() => retryFetch(fetch, { guardKey: 42 as never })).toThrow(
      'Expected guardKey to be a non-empty string or a function, got 42',
    );
  });
});

describe('per-request options override policy, never state', () => {
  it("init.retry.store does not move a request's guard state out of the client's", async () => {
    server.script('/down', [{ status: 503 }]);
    const client = retryFetch(fetch, { retries: 0, breaker: openOnFirstFailure(), store: memoryStore() });
    await client(`${server.url}/down`);
    // The client's breaker is open; a request naming another store must not slip past it.
    const sneaky = await settle(client(`${server.url}/down`, { retry: { store: memoryStore() } as never }));
    expect(
      isRetrylineError(sneaky.error, 'CircuitOpenError') ||
        isRetrylineError(sneaky.error, 'InvalidOptionsError'),
    ).toBe(true);
    expect(server.requests('/down')).toHaveLength(1);
  });
});

describe('a guard that refuses a retry (not the first attempt) leaves the result shape alone', () => {
  const T0 = Date.UTC(2026, 0, 1);

  it('fetch resolves the last 503 (stoppedBy breaker) when the breaker it opened refuses the retry', async () => {
    server.script('/flap', [{ status: 503 }]);
    const clock = virtualClock(T0);
    const client = retryFetch(fetch, {
      clock,
      random: seededRandom(1),
      retries: 1,
      breaker: openOnFirstFailure(),
    });
    const { value, error } = await onClock(clock, settle(client(`${server.url}/flap`)));
    expect(error).toBeUndefined();
    expect(value?.status).toBe(503);
    expect(getRetryInfo(value)).toMatchObject({ attempts: 1, stoppedBy: 'breaker' });
  });

  it('fetch resolves the last 429 (stoppedBy pacing) when pacing refuses its retry past the deadline', async () => {
    server.script('/v1/a', [{ status: 429, headers: { 'retry-after': '1' } }, { status: 200 }]);
    server.script('/v1/b', [{ status: 429, headers: { 'retry-after': '30' } }]);
    const clock = virtualClock(T0);
    let scheduled = false;
    const client = retryFetch(fetch, {
      clock,
      random: seededRandom(1),
      retries: 1,
      deadline: 10_000,
      pacing: pacing(),
      onEvent: (event) => {
        if (event.type === 'retry-scheduled') scheduled = true;
      },
    });
    // A and B go out together (nothing paced yet); B's 429 says the /v1 quota is spent for 30 s.
    const a = settle(client(`${server.url}/v1/a`));
    const b = await settle(client(`${server.url}/v1/b`, { retry: 0 }));
    expect(b.value?.status).toBe(429);
    while (!scheduled) await new Promise((resolve) => setTimeout(resolve, 1));
    // A's own wait (Retry-After: 1) ends; its retry then meets B's pause, past A's deadline.
    await clock.advance(1_500);
    const { value, error } = await a;
    expect(server.requests('/v1/a')).toHaveLength(1);
    // A got a 429 of its own; pacing stopped its retry: the 429 is handed back.
    expect(error).toBeUndefined();
    expect(value?.status).toBe(429);
    expect(getRetryInfo(value)).toMatchObject({ stoppedBy: 'pacing' });
  });
});
