/**
 * Review of endpoint failover and hedged requests: each test is a defect a review found (kept as
 * its regression test once fixed), in the shape of failover.test.ts's fake client.
 */
import { describe, expect, it } from 'vitest';
import { A, B, base, client, everyHedge } from '../../../../test/support/failover-client';
import { CircuitOpenError, InvalidOptionsError } from '../errors';
import type { RetrylineEvent } from '../events/types';
import { bulkhead } from '../guard/bulkhead';
import { localStore } from '../guard/local-store';
import { rateLimiter } from '../guard/rate-limiter';
import { memoryStore, type Store } from '../guard/store';
import { type VirtualClock, virtualClock } from '../time/virtual-clock';
import { failover, hedging, poolOf, rebase } from './failover';

/** Lets every pending continuation run (a few real turns of the event loop). */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 0));
};

/** Watches `pending` from now on: `settled`, and its value or error once it has. */
function watch<T>(pending: Promise<T>) {
  const state: { value?: T; error?: unknown; settled: boolean } = { settled: false };
  pending.then(
    (value) => {
      state.value = value;
      state.settled = true;
    },
    (error: unknown) => {
      state.error = error;
      state.settled = true;
    },
  );
  return state;
}

/** How `pending` stands after a few real turns: settled (either way) or still pending. */
async function standing<T>(pending: Promise<T> | ReturnType<typeof watch<T>>, n = 10) {
  const state = pending instanceof Promise ? watch(pending) : pending;
  await turns(n);
  return state;
}

/** A shared-store stand-in: a local store whose operations can be made to hang or fail. */
function slowStore(overrides: (local: Store) => Partial<Store>): Store & { size: () => unknown } {
  const local = localStore();
  return { ...local, ...overrides(local) } as Store & { size: () => unknown };
}

const never = <T>() => new Promise<T>(() => {});

describe('the caller’s abort and the deadline while an endpoint is picked', () => {
  it('stops at once on the caller’s abort while the endpoint’s breaker waits on a slow store', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => 200, clock);
    const store = slowStore((local) => ({
      breakerAdmit: (key, config, now) =>
        key.startsWith('endpoint ') ? never() : local.breakerAdmit(key, config, now),
    }));
    const controller = new AbortController();
    const pending = request(
      'GET',
      '/x',
      base(clock, { store, endpoints: failover([A, B]), signal: controller.signal }),
    );
    await turns();
    controller.abort(new Error('caller gave up'));
    const state = await standing(pending);
    expect(state.settled).toBe(true);
    expect(state.error).toBe(controller.signal.reason);
    expect(sends).toHaveLength(0);
  });

  it('stops at its deadline while the endpoint’s breaker waits on a slow store', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => 200, clock);
    const store = slowStore((local) => ({
      breakerAdmit: (key, config, now) =>
        key.startsWith('endpoint ') ? never() : local.breakerAdmit(key, config, now),
    }));
    const pending = watch(
      request('GET', '/x', base(clock, { store, endpoints: failover([A, B]), deadline: 100 })),
    );
    await turns();
    await clock.advance(100);
    const state = await standing(pending);
    expect(state.settled).toBe(true);
    expect((state.error as Error | undefined)?.name).toBe('DeadlineExceededError');
    expect(sends).toHaveLength(0);
  });
});

describe('a hedge’s decision never holds up or loses the attempt it hedges', () => {
  it('returns the attempt’s answer when it comes while the budget’s store is still deciding on the hedge', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => ({ after: 30, status: 200 }), clock);
    const store = slowStore(() => ({ budgetRetry: () => never() }));
    const pending = request(
      'GET',
      `${A}/x`,
      base(clock, { store, budget: everyHedge(), hedge: hedging(10) }),
    );
    await turns();
    await clock.advance(30);
    const state = await standing(pending);
    expect(state.settled).toBe(true);
    expect(state.value?.response.status).toBe(200);
    expect(sends).toHaveLength(1);
  });

  it('takes the attempt’s answer, and leaves no copy in flight, when the budget’s store fails on the hedge', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => ({ after: 30, status: 200 }), clock);
    const store = slowStore(() => ({ budgetRetry: () => Promise.reject(new Error('store unreachable')) }));
    const pending = watch(
      request('GET', `${A}/x`, base(clock, { store, budget: everyHedge(), hedge: hedging(10) })),
    );
    await turns();
    await clock.advance(30);
    const state = await standing(pending);
    // Whatever the request ends with, the copy it sent is not left running for nobody.
    expect(sends.every((s) => s.settled || s.aborted())).toBe(true);
    expect(state.error).toBeUndefined();
    expect(state.value?.response.status).toBe(200);
  });
});

describe('an endpoint’s one half-open probe', () => {
  const halfOpenA = async (clock: VirtualClock, store: ReturnType<typeof memoryStore>) => {
    const value = failover([A], { breaker: { consecutiveFailures: 1, openMs: 1000 } });
    const opener = client(() => 'refuse', clock);
    await expect(
      opener.request('GET', '/x', base(clock, { store, endpoints: value, retries: 0 })),
    ).rejects.toThrow();
    await clock.advance(1000);
    return value;
  };

  it('is freed when a later guard’s wait is cut short by the caller’s abort', async () => {
    const clock = virtualClock(0);
    const store = memoryStore();
    const value = await halfOpenA(clock, store);
    const limiter = rateLimiter({ capacity: 1, refillPerSecond: 0.001 });
    const { sends, request } = client(() => 200, clock);
    // The limiter's one token (per origin: A's) goes to a request sent to A directly.
    await request('GET', `${A}/warm`, base(clock, { store, limiter, budget: false }));
    const controller = new AbortController();
    const waiting = request(
      'GET',
      '/x',
      base(clock, { store, endpoints: value, limiter, signal: controller.signal, budget: false }),
    );
    await turns();
    controller.abort(new Error('caller gave up'));
    await expect(waiting).rejects.toBe(controller.signal.reason);
    // The probe was never sent: the next request may take it.
    const next = await standing(request('GET', '/x', base(clock, { store, endpoints: value, retries: 0 })));
    expect(next.error).toBeUndefined();
    expect(sends.map((s) => s.url)).toEqual([`${A}/warm`, `${A}/x`]);
  });

  it('is not given away by a request that picked the endpoint before it opened, and was then aborted', async () => {
    const clock = virtualClock(0);
    const store = memoryStore();
    const value = failover([A], { breaker: { consecutiveFailures: 1, openMs: 1000 } });
    // Y picks A while its breaker is closed, and hangs.
    const hanging = client(() => 'hang', clock);
    const controller = new AbortController();
    const y = hanging.request(
      'GET',
      '/y',
      base(clock, { store, endpoints: value, signal: controller.signal, retries: 0 }),
    );
    y.catch(() => {});
    await turns();
    // Another request fails on A: its breaker opens. After openMs, X takes the one probe, and hangs.
    await expect(
      client(() => 'refuse', clock).request(
        'GET',
        '/f',
        base(clock, { store, endpoints: value, retries: 0 }),
      ),
    ).rejects.toThrow();
    await clock.advance(1000);
    const x = hanging.request('GET', '/x', base(clock, { store, endpoints: value, retries: 0 }));
    x.catch(() => {});
    await turns();
    expect(hanging.sends.map((s) => new URL(s.url).pathname)).toEqual(['/y', '/x']);
    // Y is aborted: it was no probe, so it frees none.
    controller.abort(new Error('caller gave up'));
    await expect(y).rejects.toBe(controller.signal.reason);
    // While X's probe is out, A takes no other request.
    const z = client(() => 200, clock);
    await expect(
      z.request('GET', '/z', base(clock, { store, endpoints: value, retries: 0 })),
    ).rejects.toBeInstanceOf(CircuitOpenError);
    expect(z.sends).toHaveLength(0);
  });
});

describe('rebase', () => {
  it('moves a URL on the longer of two bases that share a prefix by that base, not the shorter', () => {
    const list = failover(['https://a.example/v1', 'https://a.example/v1/admin']).endpoints ?? [];
    const admin = list[1] as (typeof list)[number];
    // The URL is on `/v1/admin`: on the picked endpoint (the same one) it stays where it is.
    expect(rebase('https://a.example/v1/admin/users', list, admin)).toBe('https://a.example/v1/admin/users');
  });

  it.each([
    ['https://A.API.EXAMPLE/x', `${B}/x`],
    ['https://a.api.example:443/x', `${B}/x`],
    ['HTTPS://a.api.example/x', `${B}/x`],
  ])('moves %s, the same URL as the endpoint’s spelt another way, onto the picked endpoint', (url, moved) => {
    const list = failover([A, B]).endpoints ?? [];
    const b = list[1] as (typeof list)[number];
    expect(rebase(url, list, b)).toBe(moved);
  });
});

describe('failover() input', () => {
  it('never puts a credential or query in its message when given a URL instead of a list', () => {
    const given = 'https://user:hunter2@a.example/?token=t0k3n';
    const error = (() => {
      try {
        failover(given as never);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as Error).message).not.toMatch(/hunter2|t0k3n/);
  });

  it('never puts a credential in the message of a list function that returns a string', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => 200, clock);
    const given = 'https://user:hunter2@a.example/?token=t0k3n';
    const error = await request('GET', '/x', base(clock, { endpoints: failover(() => given as never) })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as Error).message).not.toMatch(/hunter2|t0k3n/);
    expect(sends).toHaveLength(0);
  });
});

describe('hedges and the other guards', () => {
  it('a hedge is refused beside a bulkhead or a rate limiter, which it would go around', async () => {
    const clock = virtualClock(0);
    const c = client(() => ({ after: 100, status: 200 }), clock);
    for (const guard of [
      { bulkhead: bulkhead({ maxConcurrent: 1, maxQueue: 10 }) },
      { limiter: rateLimiter({ capacity: 10, refillPerSecond: 10 }) },
    ]) {
      const options = base(clock, { budget: everyHedge(), hedge: hedging(10), ...guard });
      await expect(c.request('GET', `${A}/x`, options)).rejects.toThrow(/bulkhead or a rate limiter/);
    }
    expect(c.sends).toHaveLength(0);
  });
});

// retryOn is told where the failed attempt went.
describe('retryOn', () => {
  it('sees the URL the failed attempt was sent to', async () => {
    const clock = virtualClock(0);
    const { request } = client((b) => (b === A ? 503 : 200), clock);
    const seen: string[] = [];
    const options = base(clock, {
      endpoints: failover([A, B], { balance: 'round-robin' }),
      retryOn: (outcome) => {
        seen.push(outcome.url);
        return outcome.retryable;
      },
    });
    const pending = request('GET', '/x', options);
    await clock.runAll();
    await pending;
    expect(seen).toEqual([`${A}/x`]);
  });
});

describe('events', () => {
  it('a hedge that lost ends before its request does', async () => {
    const clock = virtualClock(0);
    const late = client((_b, n) => (n === 1 ? { after: 80, status: 200 } : 'hang'), clock);
    const events: RetrylineEvent[] = [];
    const options = base(clock, {
      budget: everyHedge(),
      hedge: hedging(50),
      onEvent: (event) => events.push(event),
    });
    const pending = late.request('GET', `${A}/x`, options);
    await clock.runAll();
    await pending;
    await turns();
    const types = events.map((e) => `${e.type}${(e as { hedge?: true }).hedge ? ' (hedge)' : ''}`);
    expect(types.indexOf('attempt-end (hedge)')).toBeGreaterThan(-1);
    expect(types.indexOf('attempt-end (hedge)')).toBeLessThan(types.indexOf('request-end'));
  });
});

// A `hint` that throws frees the response it was reading, on the first attempt's shortcut as in the loop.
describe('the hint option', () => {
  it('a hint that throws on the first attempt’s failure frees the response it was reading', async () => {
    const clock = virtualClock(0);
    const { discarded, request } = client(() => 503, clock);
    const options = base(clock, {
      hint: () => {
        throw new Error('bad header');
      },
    });
    await expect(request('GET', `${A}/x`, options)).rejects.toThrow('bad header');
    expect(discarded).toHaveLength(1);
  });
});

// A store's pool is capped: it forgets the endpoints used longest ago with nothing in flight.
describe('what a store’s pool keeps', () => {
  it('forgets the endpoints of requests long done: a client that hedges across many origins does not grow for ever', async () => {
    const clock = virtualClock(0);
    const { request } = client(() => 200, clock);
    const store = memoryStore();
    const options = base(clock, { store, budget: everyHedge(), hedge: hedging(50) });
    for (let i = 0; i < 2_000; i++) await request('GET', `https://tenant-${i}.hooks.example/x`, options);
    // Two idle minutes later (the store forgets an idle breaker after one), one more request.
    await clock.advance(120_000);
    await request('GET', 'https://tenant-new.hooks.example/x', options);
    expect(poolOf(store).stats.size).toBeLessThan(2_000);
  });
});

// Hedges are held to the budget's ratio, not its floor (which is for retries).
describe('the README’s promise: hedges never add more than the budget’s ratio (10 %) of load', () => {
  it('holds with the default budget, for a client sending a few requests a second', async () => {
    const clock = virtualClock(0);
    const { sends, request } = client(() => ({ after: 100, status: 200 }), clock);
    const options = base(clock, { hedge: hedging(10) });
    for (let i = 0; i < 10; i++) {
      const pending = request('GET', `${A}/x`, options);
      await clock.runAll();
      await pending;
    }
    expect(sends.length - 10).toBeLessThanOrEqual(1);
  });
});
