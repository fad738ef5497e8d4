import { randomUUID } from 'node:crypto';
import { bulkhead as bulkheadGuard, InvalidOptionsError, pacing, type Store } from '@retryline/core';
import {
  type BreakerOutcome,
  type BreakerState,
  type BucketState,
  type BudgetState,
  breakerAdmit,
  breakerRecord,
  bucketInit,
  bucketTake,
  budgetInit,
  budgetRecordRequest,
  budgetTryRetry,
  type GateState,
  gateAdmit,
  gateInit,
  gateRecord,
  initialBreakerState,
  localStore,
  normalizeBreaker,
  normalizeBucket,
  normalizeBudget,
  normalizeBulkhead,
  normalizeGate,
} from '@retryline/core/store';
import { retryFetch } from '@retryline/fetch';
import {
  isStoreUnavailableError,
  type RedisStoreEvent,
  type RedisStoreOptions,
  redisStore,
} from '@retryline/redis';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeStoreContract } from '../guards/store-contract';
import { useFaultServer } from '../support/use-fault-server';
import { freePort, useRedisServer } from './redis-server';

const server = useRedisServer();
let client: Redis;

beforeAll(() => {
  client = new Redis(server.port, '127.0.0.1');
});
afterAll(async () => {
  await client.quit();
});

// The shared suite passes time in, so the store takes the caller's clock; a fresh prefix per
// store gives each an empty Redis.
describeStoreContract('redisStore()', () =>
  redisStore(client, { clock: 'caller', prefix: `test:${randomUUID()}` }),
);

const T = 1_700_000_000_000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const fresh = (options: RedisStoreOptions = {}) =>
  redisStore(client, { clock: 'caller', prefix: `test:${randomUUID()}`, ...options });

describe('redisStore() on a real Redis', () => {
  describe('the same answers as core, to the last bit', () => {
    // The shared suite uses whole milliseconds and round configs; here every number is a random
    // double, so a script that rounded (Redis integer replies, cjson's 14 digits) or did the
    // arithmetic in another order would answer differently. Whole answers are compared, state too.
    const advance = fc.double({ min: 0, max: 900, noNaN: true });

    it('token bucket', async () => {
      const setup = fc.record({
        capacity: fc.double({ min: 1, max: 40, noNaN: true }),
        refillPerSecond: fc.double({ min: 0.01, max: 500, noNaN: true }),
      });
      await fc.assert(
        fc.asyncProperty(
          setup,
          fc.array(fc.tuple(advance, fc.double({ min: 0, max: 1, noNaN: true }))),
          async (options, ops) => {
            const config = normalizeBucket(options);
            const store = fresh();
            let state: BucketState | undefined;
            let now = T + 0.5;
            for (const [step, share] of ops) {
              now += step;
              const n = share * config.capacity;
              const expected = bucketTake(state ?? bucketInit(config, now), config, n, now);
              state = expected.state;
              const actual = await store.limiterTake('k', config, n, now);
              expect(actual).toEqual(
                expected.allowed ? { allowed: true } : { allowed: false, retryAt: expected.retryAt },
              );
            }
          },
        ),
        { numRuns: 40 },
      );
    });

    it('retry budget', async () => {
      const setup = fc.record({
        ratio: fc.double({ min: 0, max: 3, noNaN: true }),
        windowMs: fc.double({ min: 1, max: 3000, noNaN: true }),
        minPerSecond: fc.double({ min: 0, max: 20, noNaN: true }),
      });
      await fc.assert(
        fc.asyncProperty(
          setup,
          fc.array(fc.tuple(advance, fc.boolean()), { maxLength: 60 }),
          async (options, ops) => {
            const config = normalizeBudget(options);
            const store = fresh();
            let state: BudgetState = budgetInit();
            let now = T + 0.25;
            for (const [step, isRetry] of ops) {
              now += step / 3;
              const expected = isRetry
                ? budgetTryRetry(state, config, now)
                : budgetRecordRequest(state, config, now);
              state = expected.state;
              const actual = isRetry
                ? await store.budgetRetry('k', config, now)
                : await store.budgetRequest('k', config, now);
              expect(actual).toEqual(expected);
            }
          },
        ),
        { numRuns: 40 },
      );
    });

    it('circuit breaker', async () => {
      const setup = fc
        .record({
          failureRate: fc.double({ min: 0, max: 1, noNaN: true }),
          windowSize: fc.integer({ min: 1, max: 12 }),
          minCalls: fc.integer({ min: 1, max: 12 }),
          consecutiveFailures: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
          openMs: fc.double({ min: 1, max: 2000, noNaN: true }),
          halfOpenCalls: fc.integer({ min: 1, max: 3 }),
        })
        .map(({ consecutiveFailures, minCalls, windowSize, ...rest }) => ({
          ...rest,
          windowSize,
          minCalls: Math.min(minCalls, windowSize),
          ...(consecutiveFailures === undefined ? {} : { consecutiveFailures }),
        }));
      const kind = fc.constantFrom('admit', 'success', 'failure', 'ignored');
      await fc.assert(
        fc.asyncProperty(
          setup,
          fc.array(fc.tuple(advance, kind), { maxLength: 50 }),
          async (options, ops) => {
            const config = normalizeBreaker(options);
            const store = fresh();
            let state: BreakerState = initialBreakerState();
            let now = T + 0.125;
            for (const [step, what] of ops) {
              now += step;
              if (what === 'admit') {
                const expected = breakerAdmit(state, config, now);
                state = expected.state;
                expect(await store.breakerAdmit('k', config, now)).toEqual(expected);
              } else {
                const expected = breakerRecord(state, config, what as BreakerOutcome, now);
                state = expected.state;
                expect(await store.breakerRecord('k', config, what as BreakerOutcome, now)).toEqual(expected);
              }
            }
          },
        ),
        { numRuns: 40 },
      );
    });

    it('recovery gate', async () => {
      const op = fc.oneof(
        fc.record({
          kind: fc.constant('admit' as const),
          leaseMs: fc.double({ min: 0, max: 900, noNaN: true }),
        }),
        fc.record({
          kind: fc.constant('record' as const),
          health: fc.constantFrom('success', 'failure', 'failure', 'ignored'),
          probe: fc.boolean(),
          probeWait: fc.double({ min: 0, max: 900, noNaN: true }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 4 }),
          fc.array(fc.tuple(advance, op), { maxLength: 50 }),
          async (holdAfter, ops) => {
            const config = normalizeGate({ holdAfter });
            const store = fresh();
            let state: GateState = gateInit();
            let now = T + 0.375;
            for (const [step, what] of ops) {
              now += step / 2;
              if (what.kind === 'admit') {
                const expected = gateAdmit(state, now, what.leaseMs);
                state = expected.state;
                expect(await store.gateAdmit('k', config, now, what.leaseMs)).toBe(expected.verdict);
              } else {
                const health = what.health as BreakerOutcome;
                const expected = gateRecord(state, config, health, what.probe, what.probeWait, now);
                state = expected.state;
                expect(await store.gateRecord('k', config, health, what.probe, what.probeWait, now)).toEqual({
                  recovered: expected.recovered,
                  failures: state.failures,
                });
              }
            }
          },
        ),
        { numRuns: 40 },
      );
    });
  });

  it('runs each operation as one script call: one round trip, nothing else sent', async () => {
    const own = new Redis(server.port, '127.0.0.1');
    const admin = new Redis(server.port, '127.0.0.1');
    try {
      const store = redisStore(own, { clock: 'caller', prefix: `test:${randomUUID()}` });
      await own.ping(); // connected, so the counts below are the store's alone
      const before = await commandCounts(admin);
      const breaker = normalizeBreaker({ consecutiveFailures: 2 });
      const budget = normalizeBudget();
      const bucket = normalizeBucket({ capacity: 5, refillPerSecond: 1 });
      const bulkhead = normalizeBulkhead({ maxConcurrent: 1 });
      const gate = normalizeGate({ holdAfter: 2 });
      for (let i = 0; i < 10; i++) {
        await store.breakerAdmit('k', breaker, T);
        await store.breakerRecord('k', breaker, 'failure', T);
        await store.budgetRequest('k', budget, T);
        await store.budgetRetry('k', budget, T);
        await store.limiterTake('k', bucket, 1, T);
        await store.bulkheadAcquire('k', bulkhead, `h${i}`, T);
        await store.bulkheadRelease('k', `h${i}`, T);
        await store.pacingSet('k', T + 1000, T);
        await store.pacingGet('k', T);
        await store.gateRecord('k', gate, 'failure', false, 0, T);
        await store.gateAdmit('k', gate, T, 1000);
      }
      const after = await commandCounts(admin);
      const sent = Object.fromEntries(
        Object.entries(after)
          .map(([name, calls]) => [name, calls - (before[name] ?? 0)] as const)
          .filter(([name, calls]) => calls > 0 && name !== 'info'),
      );
      // 110 operations, 110 commands: the first call of each of the 10 scripts on this connection
      // is EVAL (it loads the script), every later one EVALSHA. Each script reads TIME once; the
      // rest is what the scripts call inside (Redis counts those too), never a command of its own.
      const { eval: evals, evalsha, time, ...inside } = sent;
      expect({ evals, evalsha, time }).toEqual({ evals: 10, evalsha: 100, time: 110 });
      expect(Object.keys(inside).sort()).toEqual(['del', 'get', 'pexpire', 'set']);
      store.close();
    } finally {
      own.disconnect();
      admin.disconnect();
    }
  });

  describe('keys expire once their state no longer matters', () => {
    const ttl = (key: string) => client.pttl(key);

    it('gives every key a TTL matching its guard, and writes nothing for a breaker with nothing to remember', async () => {
      const store = fresh({ idleMs: 60_000, leaseMs: 30_000 });
      const p = store.prefix;
      const breaker = normalizeBreaker({ consecutiveFailures: 3, openMs: 10_000 });
      await store.breakerAdmit('k', breaker, T);
      await store.breakerRecord('k', breaker, 'ignored', T);
      expect(await client.exists(`${p}:breaker:k`)).toBe(0); // closed, empty window: the missing key
      await store.breakerRecord('k', breaker, 'failure', T);
      expectWithin(await ttl(`${p}:breaker:k`), 70_000 - 1000, 70_000); // openMs + idleMs

      await store.budgetRequest('k', normalizeBudget({ windowMs: 5000 }), T);
      expectWithin(await ttl(`${p}:budget:k`), 6000 - 1000, 6000); // windowMs + 1 s grace

      // 4 of 10 tokens taken at 5/s: full again in 800 ms.
      await store.limiterTake('k', normalizeBucket({ capacity: 10, refillPerSecond: 5 }), 4, T);
      expectWithin(await ttl(`${p}:limiter:k`), 1800 - 1000, 1800);

      const bulkhead = normalizeBulkhead({ maxConcurrent: 1 });
      expect(await store.bulkheadAcquire('k', bulkhead, 'h1', T)).toBe('acquired');
      expectWithin(await ttl(`${p}:bulkhead:k`), 31_000 - 1000, 31_000); // leaseMs + grace
      await store.bulkheadRelease('k', 'h1', T);
      expect(await client.exists(`${p}:bulkhead:k`)).toBe(0);

      await store.pacingSet('k', T + 5000, T);
      expectWithin(await ttl(`${p}:pacing:k`), 6000 - 1000, 6000);

      // The recovery gate: a key that has seen nothing, or only successes, is the missing key.
      const gate = normalizeGate({ holdAfter: 1 });
      expect(await store.gateAdmit('k', gate, T, 1000)).toBe('go');
      expect(await store.gateRecord('k', gate, 'success', false, 0, T)).toEqual({
        recovered: false,
        failures: 0,
      });
      expect(await client.exists(`${p}:gate:k`)).toBe(0);
      await store.gateRecord('k', gate, 'failure', false, 0, T);
      expectWithin(await ttl(`${p}:gate:k`), 61_000 - 1000, 61_000); // idleMs + grace
      // Never before the probe's lease is over …
      expect(await store.gateAdmit('k', gate, T, 120_000)).toBe('probe');
      expectWithin(await ttl(`${p}:gate:k`), 121_000 - 1000, 121_000);
      // … or the next probe is due.
      await store.gateRecord('k', gate, 'failure', true, 90_000, T);
      expectWithin(await ttl(`${p}:gate:k`), 91_000 - 1000, 91_000);
      expect(await store.gateRecord('k', gate, 'success', false, 0, T)).toEqual({
        recovered: true,
        failures: 0,
      });
      expect(await client.exists(`${p}:gate:k`)).toBe(0);
      store.close();
    });

    it('keeps state for configs whose expiry would pass what Redis can store: the TTL is capped', async () => {
      // Core accepts these; Redis refuses a PX past its integer range ('invalid expire time'), which
      // failOpen: false turns into StoreUnavailableError and the default into an outage of every guard.
      const store = fresh({ failOpen: false });
      const p = store.prefix;
      const year = 365 * 24 * 3_600_000;
      const budget = normalizeBudget({ windowMs: 1e19 });
      expect(await store.budgetRequest('k', budget, T)).toEqual(budgetRecordRequest(budgetInit(), budget, T));
      const bucket = normalizeBucket({ capacity: 1, refillPerSecond: 1e-16 });
      expect(await store.limiterTake('k', bucket, 1, T)).toEqual({ allowed: true });
      expect((await store.limiterTake('k', bucket, 1, T + year)).allowed).toBe(false);
      await store.pacingSet('k', T + 1e19, T);
      expect(await store.pacingGet('k', T)).toBe(T + 1e19);
      for (const guard of ['budget', 'limiter', 'pacing']) {
        expectWithin(await ttl(`${p}:${guard}:k`), 1000 * year, 1e15);
      }
      store.close();
    });

    it('drops a token bucket once it has refilled, and the next caller finds it full', async () => {
      const store = redisStore(client, { prefix: `test:${randomUUID()}` }); // Redis clock: real time
      const bucket = normalizeBucket({ capacity: 2, refillPerSecond: 20 });
      expect(await store.limiterTake('k', bucket, 2, 0)).toEqual({ allowed: true });
      expect((await store.limiterTake('k', bucket, 2, 0)).allowed).toBe(false);
      await sleep(1300); // 100 ms to refill + the 1 s grace
      expect(await client.exists(`${store.prefix}:limiter:k`)).toBe(0);
      expect(await store.limiterTake('k', bucket, 2, 0)).toEqual({ allowed: true });
    });
  });

  describe("on Redis's clock", () => {
    it('callers whose clocks are an hour apart agree on when an open breaker lets a trial through', async () => {
      const prefix = `test:${randomUUID()}`;
      const ahead = redisStore(client, { prefix }); // clock: 'redis' is the default
      const behind = redisStore(client, { prefix });
      const HOUR = 3_600_000;
      const breaker = normalizeBreaker({ consecutiveFailures: 1, openMs: 400 });
      const aheadNow = () => Date.now() + HOUR;
      const behindNow = () => Date.now() - HOUR;

      const opened = await ahead.breakerRecord('k', breaker, 'failure', aheadNow());
      expect(opened.transition).toEqual({ from: 'closed', to: 'open' });
      const asked = behindNow();
      const refused = await behind.breakerAdmit('k', breaker, asked);
      if (refused.allowed) throw new Error('expected the breaker to be open');
      // retryAt comes in the asking caller's own clock: about openMs from its now.
      expectWithin(refused.retryAt - asked, 100, 420);

      await sleep(450);
      const trial = await behind.breakerAdmit('k', breaker, behindNow());
      expect(trial).toMatchObject({ allowed: true, transition: { from: 'open', to: 'half-open' } });
      expect((await ahead.breakerAdmit('k', breaker, aheadNow())).allowed).toBe(false); // one trial only
    });

    it("with the callers' clocks instead, the same skew keeps one host out for an hour", async () => {
      const prefix = `test:${randomUUID()}`;
      const ahead = redisStore(client, { prefix, clock: 'caller' });
      const behind = redisStore(client, { prefix, clock: 'caller' });
      const breaker = normalizeBreaker({ consecutiveFailures: 1, openMs: 400 });
      await ahead.breakerRecord('k', breaker, 'failure', Date.now() + 3_600_000);
      await sleep(450);
      expect((await behind.breakerAdmit('k', breaker, Date.now() - 3_600_000)).allowed).toBe(false);
    });

    it('moves pacing and limiter times between each caller’s clock and Redis’s', async () => {
      const prefix = `test:${randomUUID()}`;
      const a = redisStore(client, { prefix });
      const b = redisStore(client, { prefix });
      const skew = 120_000;
      const aNow = Date.now() + skew;
      // A's server said: quota back in 5 s (by A's clock). B, two minutes behind, waits 5 s too.
      await a.pacingSet('k', aNow + 5000, aNow);
      const bNow = Date.now() - skew;
      const until = await b.pacingGet('k', bNow);
      expectWithin((until ?? 0) - bNow, 4000, 5001);

      const bucket = normalizeBucket({ capacity: 1, refillPerSecond: 2 });
      await a.limiterTake('k', bucket, 1, Date.now() + skew);
      const asked = Date.now() - skew;
      const take = await b.limiterTake('k', bucket, 1, asked);
      expect(take.allowed).toBe(false);
      expectWithin((take.retryAt ?? 0) - asked, 200, 501);
    });
  });

  describe('bulkhead places are leases', () => {
    const bulkhead = normalizeBulkhead({ maxConcurrent: 1 });

    it("frees a crashed process's place within leaseMs", async () => {
      const prefix = `test:${randomUUID()}`;
      const crashed = redisStore(client, { prefix, leaseMs: 300 });
      const other = redisStore(client, { prefix, leaseMs: 300 });
      expect(await crashed.bulkheadAcquire('k', bulkhead, 'dead', 0)).toBe('acquired');
      crashed.close(); // stops renewing, as a dead process would
      expect(await other.bulkheadAcquire('k', bulkhead, 'next', 0)).toBe('rejected');
      await sleep(350);
      expect(await other.bulkheadAcquire('k', bulkhead, 'next', 0)).toBe('acquired');
      other.close();
    });

    it('keeps a live holder’s place past leaseMs by renewing it, until it releases', async () => {
      const prefix = `test:${randomUUID()}`;
      const holder = redisStore(client, { prefix, leaseMs: 600 });
      const other = redisStore(client, { prefix, leaseMs: 600 });
      expect(await holder.bulkheadAcquire('k', bulkhead, 'slow', 0)).toBe('acquired');
      await sleep(1400); // more than twice the lease
      expect(await other.bulkheadAcquire('k', bulkhead, 'next', 0)).toBe('rejected');
      await holder.bulkheadRelease('k', 'slow', 0);
      expect(await other.bulkheadAcquire('k', bulkhead, 'next', 0)).toBe('acquired');
      holder.close();
      other.close();
    });

    it("renews in the callers' time on their clock (a virtual clock stays virtual)", async () => {
      const store = fresh({ leaseMs: 300 });
      expect(await store.bulkheadAcquire('k', bulkhead, 'held', T)).toBe('acquired');
      await sleep(450); // at least one renewal
      // Renewed to about T + 450 + 300 by the callers' clock: the key lives for the lease, not years.
      expectWithin(await client.pttl(`${store.prefix}:bulkhead:k`), 100, 1300);
      expect(await store.bulkheadAcquire('k', bulkhead, 'other', T + 450)).toBe('rejected');
      store.close();
    });

    describe('through real clients', () => {
      const http = useFaultServer();

      it('a request queued in one process goes out when another process releases (polling)', async () => {
        const prefix = `test:${randomUUID()}`;
        http.script('/slow', [{ status: 200, body: 'ok', delayMs: 300 }]);
        // A bulkhead value for each, as each process has its own: they share places through Redis.
        const options = () => ({ retries: 0, bulkhead: bulkheadGuard({ maxConcurrent: 1, maxQueue: 1 }) });
        const one = retryFetch(fetch, { ...options(), store: redisStore(client, { prefix }) });
        const two = retryFetch(fetch, { ...options(), store: redisStore(client, { prefix, pollMs: 50 }) });
        const first = one(`${http.url}/slow`);
        await sleep(100);
        const started = Date.now();
        const second = await two(`${http.url}/slow`);
        expect(second.status).toBe(200);
        expect((await first).status).toBe(200);
        // Two waited for one's 300 ms to end (less the 100 ms head start), then its own 300 ms.
        expect(Date.now() - started).toBeGreaterThanOrEqual(450);
        const [a, b] = http.requests('/slow');
        expect((b?.receivedAt ?? 0) - (a?.receivedAt ?? 0)).toBeGreaterThanOrEqual(290);
      });

      it.each([
        ['a 429 with Retry-After: 1000000000', 429, { 'retry-after': '1000000000' }],
        ['a 200 with RateLimit t=1000000000', 200, { ratelimit: '"default";r=0;t=1000000000' }],
        [
          'a 200 with RateLimit-Reset in epoch seconds (2058)',
          200,
          { 'ratelimit-remaining': '0', 'ratelimit-reset': '2800000000' },
        ],
      ])(
        '%s pauses the fleet no longer than maxRetryAfter: the pacing key expires with it',
        async (_what, status, headers) => {
          const store = redisStore(client, { prefix: `test:${randomUUID()}` });
          http.script('/quota', [{ status, headers }]);
          const api = retryFetch(fetch, { store, retries: 0, pacing: pacing(), maxRetryAfter: 2_000 });
          await api(`${http.url}/quota`);
          const keys = await client.keys(`${store.prefix}:pacing:*`);
          expect(keys).toHaveLength(1);
          // maxRetryAfter plus the store's grace of 1 s, not years.
          expectWithin(await client.pttl(keys[0] as string), 1, 3_000);
          store.close();
        },
      );
    });
  });

  describe('the recovery gate through real clients', () => {
    const http = useFaultServer();

    it('costs the happy path no round trip: only a process that saw a key fail sends its outcomes', async () => {
      const store = fresh({ clock: 'redis' });
      const calls: string[] = [];
      // The store as a client sees it, each gate operation noted as it is asked.
      const counted: Store = {
        ...store,
        gateAdmit: (...args) => {
          calls.push('admit');
          return store.gateAdmit(...args);
        },
        gateRecord: (...args) => {
          calls.push(`record ${args[2]}`);
          return store.gateRecord(...args);
        },
      };
      http.script('/ok', [{ status: 200, body: 'ok' }]);
      http.script('/fail', [{ status: 503 }]);
      const api = retryFetch(fetch, { store: counted, retries: 0, budget: false });
      const get = async (path: string) => (await api(`${http.url}${path}`)).text();
      for (let i = 0; i < 10; i++) await get('/ok');
      expect(calls).toEqual([]);
      // A failure is counted in Redis; the next success to the origin clears it, and once this
      // process knows nothing failing, successes are not sent again.
      await get('/fail');
      for (let i = 0; i < 5; i++) await get('/ok');
      expect(calls).toEqual(['record failure', 'record success']);
      expect(await client.exists(`${store.prefix}:gate:${http.url}`)).toBe(0);
    });
  });

  describe('judging Redis by its own answers, not by how long the caller waited', () => {
    /** Blocks the event loop, as a process busy with its own work does. */
    const busy = (ms: number) => {
      const end = performance.now() + ms;
      while (performance.now() < end) {}
    };
    const counting = normalizeBudget({ ratio: 1, minPerSecond: 0, windowMs: 60_000 });

    it('a process busy past timeoutMs while its commands are answered: nothing given up, each run once', async () => {
      const own = new Redis(server.port, '127.0.0.1');
      const admin = new Redis(server.port, '127.0.0.1');
      const events: RedisStoreEvent[] = [];
      try {
        await own.ping();
        const store = fresh({ timeoutMs: 100, onEvent: (event) => events.push(event) });
        const before = await scriptRuns(admin);
        const answers = Array.from({ length: 50 }, () => store.budgetRequest('k', counting, T));
        busy(300); // Redis answers within a millisecond; this process reads the answers 300 ms later
        const remaining = (await Promise.all(answers))
          .map((answer) => answer.remaining)
          .sort((a, b) => a - b);
        expect(remaining).toEqual(Array.from({ length: 50 }, (_, i) => i + 1)); // all 50 counted in Redis
        expect(events).toEqual([]);
        expect((await scriptRuns(admin)) - before).toBe(50);
      } finally {
        own.disconnect();
        admin.disconnect();
      }
    });

    it('operations asked for while the first connect is under way count their deadline from when they are written: each runs once', async () => {
      const admin = new Redis(server.port, '127.0.0.1');
      const before = await scriptRuns(admin);
      const connecting = new Redis(server.port, '127.0.0.1');
      const events: RedisStoreEvent[] = [];
      try {
        const store = redisStore(connecting, {
          clock: 'caller',
          prefix: `test:${randomUUID()}`,
          timeoutMs: 100,
          onEvent: (event) => events.push(event),
        });
        expect(connecting.status).toBe('connecting');
        const answers = Array.from({ length: 20 }, () => store.budgetRequest('k', counting, T));
        busy(300); // the connect is finished, and the commands written, only after this
        expect((await Promise.all(answers)).map((answer) => answer.remaining).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 20 }, (_, i) => i + 1),
        );
        expect(events).toEqual([]);
        // Not 40: none was sent with a deadline that passed before it was written, to come back late.
        expect((await scriptRuns(admin)) - before).toBe(20);
      } finally {
        connecting.disconnect();
        admin.disconnect();
      }
    });
  });

  describe('when Redis cannot answer', () => {
    const breaker = normalizeBreaker({ consecutiveFailures: 1 });
    const budget = normalizeBudget({ ratio: 0, minPerSecond: 0 });
    const bucket = normalizeBucket({ capacity: 1, refillPerSecond: 0.001 });
    const bulkhead = normalizeBulkhead({ maxConcurrent: 1 });
    const gate = normalizeGate({ holdAfter: 1 });

    /** Every operation once, as a guard would call them. */
    async function everyOperation(store: Store) {
      return {
        admit: await store.breakerAdmit('k', breaker, T),
        record: await store.breakerRecord('k', breaker, 'failure', T),
        request: await store.budgetRequest('k', budget, T),
        retry: await store.budgetRetry('k', budget, T),
        take: await store.limiterTake('k', bucket, 1, T),
        acquire: await store.bulkheadAcquire('k', bulkhead, 'h', T),
        release: await store.bulkheadRelease('k', 'h', T),
        paceSet: await store.pacingSet('k', T + 1000, T),
        pace: await store.pacingGet('k', T),
        gateRecord: await store.gateRecord?.('k', gate, 'failure', false, 0, T),
        gateAdmit: await store.gateAdmit?.('k', gate, T, 1000),
      };
    }

    it('answers from local memory when Redis is unreachable: every guard still acts, at once, one event, no error', async () => {
      const nobody = new Redis(await freePort(), '127.0.0.1');
      const events: RedisStoreEvent[] = [];
      const logged = vi.spyOn(console, 'error');
      try {
        // The store listens to the client's errors: ioredis logs none of its reconnect failures.
        const store = redisStore(nobody, { onEvent: (event) => events.push(event) });
        await once(nobody, 'close');
        const started = Date.now();
        const first = await everyOperation(store);
        const second = await everyOperation(store);
        expect(Date.now() - started).toBeLessThan(500); // the connection is down: nothing waits 250 ms
        // Exactly what a memory store answers: the failure opens the breaker (consecutiveFailures: 1),
        // the budget (ratio 0, no floor) refuses the retry, the bucket's one token is taken, and the
        // second round finds all of that, and the pause.
        const memory = localStore();
        expect(first).toEqual(await everyOperation(memory));
        expect(second).toEqual(await everyOperation(memory));
        expect(second).toMatchObject({
          admit: { allowed: false },
          retry: { allowed: false },
          take: { allowed: false },
          acquire: 'acquired', // the first round's place was given back
          pace: T + 1000,
          // The gate held the key at the first failure (holdAfter: 1); the first round's probe
          // still holds the probe place.
          gateRecord: { recovered: false, failures: 2 },
          gateAdmit: 'park',
        });
        expect(events).toEqual([
          expect.objectContaining({
            v: 1,
            type: 'store-unavailable',
            store: 'redis',
            prefix: 'retryline',
            operation: 'breakerAdmit',
            key: 'k',
            failOpen: true,
            error: expect.objectContaining({ message: expect.stringContaining('reconnecting') }),
          }),
        ]);
        expect(logged).not.toHaveBeenCalled();
      } finally {
        nobody.disconnect();
      }
    });

    it('fails closed with StoreUnavailableError when failOpen is false', async () => {
      const nobody = new Redis(await freePort(), '127.0.0.1');
      try {
        const store = redisStore(nobody, { failOpen: false });
        await once(nobody, 'close');
        const error = await store.breakerAdmit('https://api.example', breaker, T).catch((e: unknown) => e);
        expect(isStoreUnavailableError(error)).toBe(true);
        expect(error).toMatchObject({
          name: 'StoreUnavailableError',
          operation: 'breakerAdmit',
          key: 'https://api.example',
          message: expect.stringMatching(
            /^\[@retryline\/redis\] breakerAdmit for https:\/\/api\.example failed: the Redis connection is \w+\. .*failOpen: true answers from local memory/,
          ),
        });
        await expect(store.pacingGet('k', T)).rejects.toMatchObject({ name: 'StoreUnavailableError' });
        await expect(store.bulkheadAcquire('k', bulkhead, 'h', T)).rejects.toMatchObject({
          name: 'StoreUnavailableError',
        });
        await expect(store.gateAdmit('k', gate, T, 1000)).rejects.toMatchObject({
          name: 'StoreUnavailableError',
          operation: 'gateAdmit',
        });
        // What is told after a send never turns a response into an error.
        expect(await store.breakerRecord('k', breaker, 'failure', T)).toMatchObject({
          state: { state: 'open' },
        });
        await expect(store.bulkheadRelease('k', 'h', T)).resolves.toBeUndefined();
        await expect(store.pacingSet('k', T + 1000, T)).resolves.toBeUndefined();
        expect(await store.gateRecord('k', gate, 'failure', false, 0, T)).toEqual({
          recovered: false,
          failures: 1,
        });
      } finally {
        nobody.disconnect();
      }
    });

    it('a hung Redis: waits timeoutMs once, then answers locally at once, probes, recovers, and never applies a given-up operation late', async () => {
      const admin = new Redis(server.port, '127.0.0.1');
      const events: RedisStoreEvent[] = [];
      const store = fresh({ timeoutMs: 150, probeMs: 200, onEvent: (event) => events.push(event) });
      const counting = normalizeBudget({ ratio: 1, minPerSecond: 0, windowMs: 60_000 });
      try {
        expect(await store.budgetRequest('k', counting, T)).toMatchObject({ remaining: 1 });
        await admin.client('PAUSE', 1200, 'ALL');
        let started = Date.now();
        // Answered from local memory, where this is the first request: one retry allowed.
        expect(await store.budgetRequest('k', counting, T)).toMatchObject({ remaining: 1 });
        expectWithin(Date.now() - started, 140, 1000);
        started = Date.now();
        for (let i = 0; i < 20; i++) await store.budgetRequest('k', counting, T);
        expect(Date.now() - started).toBeLessThan(500); // the outage is known: not 20 × 150 ms
        // Probes every 200 ms until the pause ends (each waits out its timeout), then recovery.
        const until = Date.now() + 3000;
        while (!events.some((e) => e.type === 'store-recovered') && Date.now() < until) {
          await store.budgetRequest('k', counting, T);
          await sleep(20);
        }
        expect(events.map((e) => e.type)).toEqual(['store-unavailable', 'store-recovered']);
        expect(events[1]).toMatchObject({ downtime: expect.any(Number), failed: expect.any(Number) });
        // Only the first request and the probe that succeeded were counted: the ones that timed
        // out reached Redis after the pause (ioredis sends them then) and did nothing.
        expect(await store.budgetRetry('k', counting, T)).toMatchObject({ allowed: true, remaining: 1 });
      } finally {
        admin.disconnect();
      }
    });
  });

  it('validates its options', () => {
    expect(() => redisStore(client, { timeoutMs: 0 })).toThrow(InvalidOptionsError);
    expect(() => redisStore(client, { timeoutMs: 0 })).toThrow(
      'Expected redisStore.timeoutMs to be a number of milliseconds from 1 to 2147483647, got 0',
    );
    // Past a timer's limit Node fires after 1 ms: the store would time out at once, forever.
    for (const name of ['timeoutMs', 'leaseMs', 'probeMs', 'pollMs', 'idleMs'] as const) {
      expect(() => redisStore(client, { [name]: 3e9 })).toThrow(
        `Expected redisStore.${name} to be a number of milliseconds from ${name === 'idleMs' ? 0 : 1} to 2147483647, got 3000000000`,
      );
    }
    expect(() => redisStore(client, { clock: 'local' as never })).toThrow(
      "Expected redisStore.clock to be one of 'redis', 'caller', got 'local'",
    );
    expect(() => redisStore(client, { prefix: '' })).toThrow(
      'Expected redisStore.prefix to be a non-empty string',
    );
    expect(() => redisStore({} as never)).toThrow(
      'Expected redisStore client to be an ioredis client (Redis or Cluster), got an object',
    );
  });
});

async function commandCounts(admin: Redis): Promise<Record<string, number>> {
  const info = await admin.info('commandstats');
  const counts: Record<string, number> = {};
  for (const match of info.matchAll(/^cmdstat_(\w+):calls=(\d+)/gm))
    counts[match[1] ?? ''] = Number(match[2]);
  return counts;
}

/** How many scripts Redis has run (EVAL and EVALSHA), on every connection. */
async function scriptRuns(admin: Redis): Promise<number> {
  const { eval: evals = 0, evalsha = 0 } = await commandCounts(admin);
  return evals + evalsha;
}

function once(emitter: Redis, event: string): Promise<void> {
  return new Promise((resolve) => emitter.once(event, () => resolve()));
}

/** `value` in [min, max], saying which it missed. */
function expectWithin(value: number, min: number, max: number): void {
  expect(value).toBeGreaterThanOrEqual(min);
  expect(value).toBeLessThanOrEqual(max);
}
