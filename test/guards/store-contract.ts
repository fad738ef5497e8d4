import { circuitBreaker, type RetrylineEvent, recoveryGate, retryBudget, type Store } from '@retryline/core';
import {
  type BreakerOutcome,
  type BreakerState,
  type BucketState,
  type BudgetState,
  type BulkheadState,
  breakerAdmit,
  breakerRecord,
  bucketInit,
  bucketTake,
  budgetInit,
  budgetRecordRequest,
  budgetTryRetry,
  bulkheadAcquire,
  bulkheadInit,
  bulkheadRelease,
  type GateState,
  gateAdmit,
  gateInit,
  gateRecord,
  initialBreakerState,
  normalizeBreaker,
  normalizeBucket,
  normalizeBudget,
  normalizeBulkhead,
  normalizeGate,
} from '@retryline/core/store';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';

/**
 * The guard suite every Store runs unchanged: the memory store here, the Redis store in
 * its own package. A store under test must take time from the `now` it is given (a shared store that
 * normally reads its own clock offers a mode that does not, for this suite), and `create` must give
 * a store with no state (a fresh instance, or a fresh key prefix).
 *
 * What it checks: each operation follows the pure rules of core's guard modules exactly (fast-check
 * drives random sequences against a reference model); operations are atomic under concurrency; keys
 * never leak into each other; and two real clients sharing the store share their guards.
 *
 * The recovery gate's operations (`gateAdmit`, `gateRecord`) are optional in the Store interface;
 * every store under test here has them.
 */
export function describeStoreContract(name: string, create: () => Store | Promise<Store>): void {
  const T = 1_700_000_000_000;
  const KEYS = ['https://a.example', 'https://b.example:8443', '__proto__'] as const;

  describe(`Store contract: ${name}`, () => {
    it('breaker operations follow breakerAdmit/breakerRecord exactly, per key', async () => {
      const config = normalizeBreaker({ windowSize: 4, minCalls: 2, consecutiveFailures: 3, openMs: 1000 });
      const op = fc.record({
        key: fc.constantFrom(...KEYS),
        kind: fc.constantFrom('admit', 'success', 'failure', 'ignored'),
        advance: fc.integer({ min: 0, max: 700 }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
          const store = await create();
          const model = new Map<string, BreakerState>();
          let now = T;
          for (const { key, kind, advance } of ops) {
            now += advance;
            const state = model.get(key) ?? initialBreakerState();
            if (kind === 'admit') {
              const expected = breakerAdmit(state, config, now);
              model.set(key, expected.state);
              const actual = await store.breakerAdmit(key, config, now);
              expect(strip(actual)).toEqual(strip(expected));
            } else {
              const expected = breakerRecord(state, config, kind as BreakerOutcome, now);
              model.set(key, expected.state);
              const actual = await store.breakerRecord(key, config, kind as BreakerOutcome, now);
              expect(strip(actual)).toEqual(strip(expected));
            }
          }
        }),
        { numRuns: 60 },
      );
    });

    it('budget operations follow budgetRecordRequest/budgetTryRetry exactly, per key', async () => {
      const config = normalizeBudget({ ratio: 0.5, windowMs: 1000, minPerSecond: 2 });
      const op = fc.record({
        key: fc.constantFrom(...KEYS),
        kind: fc.constantFrom('request', 'retry'),
        advance: fc.integer({ min: 0, max: 300 }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
          const store = await create();
          const model = new Map<string, BudgetState>();
          let now = T;
          for (const { key, kind, advance } of ops) {
            now += advance;
            const state = model.get(key) ?? budgetInit();
            if (kind === 'request') {
              const expected = budgetRecordRequest(state, config, now);
              model.set(key, expected.state);
              expect(strip(await store.budgetRequest(key, config, now))).toEqual(strip(expected));
            } else {
              const expected = budgetTryRetry(state, config, now);
              model.set(key, expected.state);
              expect(strip(await store.budgetRetry(key, config, now))).toEqual(strip(expected));
            }
          }
        }),
        { numRuns: 60 },
      );
    });

    it('limiter takes follow bucketTake exactly, per key, with retryAt when refused', async () => {
      const config = normalizeBucket({ capacity: 3, refillPerSecond: 4 });
      const op = fc.record({
        key: fc.constantFrom(...KEYS),
        n: fc.integer({ min: 1, max: 3 }),
        advance: fc.integer({ min: 0, max: 400 }),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
          const store = await create();
          const model = new Map<string, BucketState>();
          let now = T;
          for (const { key, n, advance } of ops) {
            now += advance;
            const expected = bucketTake(model.get(key) ?? bucketInit(config, now), config, n, now);
            model.set(key, expected.state);
            const actual = await store.limiterTake(key, config, n, now);
            expect(actual.allowed).toBe(expected.allowed);
            if (!expected.allowed) expect(actual.retryAt).toBeCloseTo(expected.retryAt, 3);
          }
        }),
        { numRuns: 60 },
      );
    });

    it('bulkhead operations follow bulkheadAcquire/bulkheadRelease exactly, per key', async () => {
      const config = normalizeBulkhead({ maxConcurrent: 2, maxQueue: 2 });
      const op = fc.record({
        key: fc.constantFrom(...KEYS),
        kind: fc.constantFrom('acquire', 'release'),
        holder: fc.constantFrom('h1', 'h2', 'h3', 'h4', 'h5', 'h6'),
      });
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 60 }), async (ops) => {
          const store = await create();
          const model = new Map<string, BulkheadState>();
          for (const { key, kind, holder } of ops) {
            const state = model.get(key) ?? bulkheadInit();
            if (kind === 'acquire') {
              const expected = bulkheadAcquire(state, config, holder);
              model.set(key, expected.state);
              expect(await store.bulkheadAcquire(key, config, holder, T)).toBe(expected.result);
            } else {
              model.set(key, bulkheadRelease(state, holder));
              await store.bulkheadRelease(key, holder, T);
            }
          }
        }),
        { numRuns: 60 },
      );
    });

    it('pacing keeps the latest reset per key and forgets it once passed', async () => {
      const store = await create();
      const [a, b] = KEYS;
      expect(await store.pacingGet(a, T)).toBeUndefined();
      await store.pacingSet(a, T + 5000, T);
      await store.pacingSet(a, T + 2000, T); // an earlier reset does not shorten the pause
      expect(await store.pacingGet(a, T + 1)).toBe(T + 5000);
      expect(await store.pacingGet(b, T + 1)).toBeUndefined();
      await store.pacingSet(b, T - 1, T); // already passed: nothing to wait for
      expect(await store.pacingGet(b, T)).toBeUndefined();
      expect(await store.pacingGet(a, T + 5000)).toBeUndefined();
    });

    it('is atomic under concurrency: no token, place or retry is handed out twice', async () => {
      const store = await create();
      const bucket = normalizeBucket({ capacity: 50, refillPerSecond: 1 });
      const takes = await Promise.all(
        Array.from({ length: 200 }, () => store.limiterTake('https://c.example', bucket, 1, T)),
      );
      expect(takes.filter((take) => take.allowed)).toHaveLength(50);

      const bulkhead = normalizeBulkhead({ maxConcurrent: 10, maxQueue: 20 });
      const entries = await Promise.all(
        Array.from({ length: 100 }, (_, i) =>
          store.bulkheadAcquire('https://c.example', bulkhead, `h${i}`, T),
        ),
      );
      expect(count(entries)).toEqual({ acquired: 10, queued: 20, rejected: 70 });

      const budget = normalizeBudget({ ratio: 0, windowMs: 1000, minPerSecond: 10 });
      const retries = await Promise.all(
        Array.from({ length: 50 }, () => store.budgetRetry('https://c.example', budget, T)),
      );
      expect(retries.filter((retry) => retry.allowed)).toHaveLength(10);

      const breaker = normalizeBreaker({ consecutiveFailures: 5, openMs: 1000 });
      const records = await Promise.all(
        Array.from({ length: 20 }, () => store.breakerRecord('https://c.example', breaker, 'failure', T)),
      );
      // Exactly one of the concurrent failures opened it.
      expect(records.filter((record) => record.transition?.to === 'open')).toHaveLength(1);
    });

    it('applies the config each caller gives for the same key', async () => {
      const store = await create();
      const small = normalizeBucket({ capacity: 1, refillPerSecond: 1 });
      const large = normalizeBucket({ capacity: 5, refillPerSecond: 1 });
      expect((await store.limiterTake('k', large, 1, T)).allowed).toBe(true); // 4 left of 5
      // The smaller capacity caps what is left once it refills, not what was already taken.
      expect((await store.limiterTake('k', small, 1, T)).allowed).toBe(true);
      const open = normalizeBreaker({ consecutiveFailures: 1, openMs: 1000 });
      const lenient = normalizeBreaker({ consecutiveFailures: 3, openMs: 1000 });
      expect((await store.breakerRecord('b', lenient, 'failure', T)).transition).toBeUndefined();
      expect((await store.breakerRecord('b', open, 'failure', T)).transition).toEqual({
        from: 'closed',
        to: 'open',
      });
    });

    describe('the recovery gate', () => {
      const config = normalizeGate({ holdAfter: 3 });
      const gate = async () => {
        const store = await create();
        const { gateAdmit, gateRecord } = store;
        if (!gateAdmit || !gateRecord) throw new Error(`${name} has no gate operations`);
        return {
          admit: (key: string, now: number, leaseMs = 1000, given = config) =>
            gateAdmit.call(store, key, given, now, leaseMs),
          record: (
            key: string,
            health: 'success' | 'failure' | 'ignored',
            now: number,
            { probe = false, probeWait = 0, given = config } = {},
          ) => gateRecord.call(store, key, given, health, probe, probeWait, now),
        };
      };

      it('gate operations follow gateAdmit/gateRecord exactly, per key, whatever config each caller gives', async () => {
        const configs = [normalizeGate({ holdAfter: 2 }), normalizeGate({ holdAfter: 3 })] as const;
        const op = fc.record({
          key: fc.constantFrom(...KEYS),
          kind: fc.constantFrom('admit', 'success', 'failure', 'failure', 'ignored'),
          config: fc.constantFrom(0, 1),
          probe: fc.boolean(),
          wait: fc.integer({ min: 1, max: 900 }),
          advance: fc.integer({ min: 0, max: 400 }),
        });
        await fc.assert(
          fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 50 }), async (ops) => {
            const { admit, record } = await gate();
            const model = new Map<string, GateState>();
            let now = T;
            for (const { key, kind, config: which, probe, wait, advance } of ops) {
              now += advance;
              const given = configs[which];
              const state = model.get(key) ?? gateInit();
              if (kind === 'admit') {
                const expected = gateAdmit(state, now, wait);
                model.set(key, expected.state);
                expect(await admit(key, now, wait, given)).toBe(expected.verdict);
              } else {
                const health = kind as 'success' | 'failure' | 'ignored';
                const expected = gateRecord(state, given, health, probe, wait, now);
                model.set(key, expected.state);
                expect(await record(key, health, now, { probe, probeWait: wait, given })).toEqual({
                  recovered: expected.recovered,
                  failures: expected.state.failures,
                });
              }
            }
          }),
          { numRuns: 60 },
        );
      });

      it('holds a key after holdAfter failures in a row, and only that key', async () => {
        const { admit, record } = await gate();
        const [a, b] = KEYS;
        expect(await admit(a, T)).toBe('go'); // a key that has seen nothing
        expect(await record(a, 'failure', T)).toEqual({ recovered: false, failures: 1 });
        expect(await record(a, 'failure', T)).toEqual({ recovered: false, failures: 2 });
        expect(await admit(a, T)).toBe('go');
        expect(await record(a, 'failure', T)).toEqual({ recovered: false, failures: 3 });
        expect(await admit(b, T)).toBe('go');
        expect(await admit(a, T + 1)).toBe('probe');
      });

      it('gives the probe place to one retry at a time, atomically', async () => {
        const { admit, record } = await gate();
        const key = 'https://c.example';
        for (let i = 0; i < 3; i++) await record(key, 'failure', T);
        const verdicts = await Promise.all(Array.from({ length: 30 }, () => admit(key, T)));
        expect(verdicts.filter((verdict) => verdict === 'probe')).toHaveLength(1);
        expect(verdicts.filter((verdict) => verdict === 'park')).toHaveLength(29);
        // A probe that ends with no outcome (an abort) frees the place.
        await record(key, 'ignored', T, { probe: true });
        expect(await admit(key, T)).toBe('probe');
      });

      it('puts the next probe probeWait after a failed one', async () => {
        const { admit, record } = await gate();
        const [key] = KEYS;
        for (let i = 0; i < 3; i++) await record(key, 'failure', T);
        expect(await admit(key, T)).toBe('probe');
        expect(await record(key, 'failure', T + 10, { probe: true, probeWait: 500 })).toEqual({
          recovered: false,
          failures: 4,
        });
        expect(await admit(key, T + 10)).toBe('park');
        expect(await admit(key, T + 509)).toBe('park');
        expect(await admit(key, T + 510)).toBe('probe');
      });

      it('frees the probe place once its lease runs out', async () => {
        const { admit, record } = await gate();
        const [key] = KEYS;
        for (let i = 0; i < 3; i++) await record(key, 'failure', T);
        expect(await admit(key, T, 2000)).toBe('probe');
        expect(await admit(key, T + 1999, 2000)).toBe('park');
        expect(await admit(key, T + 2000, 2000)).toBe('probe');
      });

      it('a success clears the state and says the key recovered; on a key with no state it does nothing', async () => {
        const { admit, record } = await gate();
        const [a, b] = KEYS;
        expect(await record(b, 'success', T)).toEqual({ recovered: false, failures: 0 });
        expect(await admit(b, T)).toBe('go');
        for (let i = 0; i < 3; i++) await record(a, 'failure', T);
        expect(await admit(a, T)).toBe('probe');
        expect(await record(a, 'success', T + 1, { probe: true })).toEqual({ recovered: true, failures: 0 });
        expect(await admit(a, T + 1)).toBe('go');
        expect(await record(a, 'success', T + 2)).toEqual({ recovered: false, failures: 0 });
        // Cleared: the count starts again from nothing.
        expect(await record(a, 'failure', T + 3)).toEqual({ recovered: false, failures: 1 });
        // A success that freed nothing held only clears the count.
        expect(await record(a, 'success', T + 4)).toEqual({ recovered: false, failures: 0 });
        expect(await record(a, 'failure', T + 5)).toEqual({ recovered: false, failures: 1 });
      });

      it('applies the config each caller gives for the same key', async () => {
        const { admit, record } = await gate();
        const lenient = normalizeGate({ holdAfter: 5 });
        const strict = normalizeGate({ holdAfter: 2 });
        await record('g', 'failure', T, { given: lenient });
        expect(await admit('g', T, 1000, lenient)).toBe('go');
        // The second failure in a row holds the key for the caller whose holdAfter is 2 …
        await record('g', 'failure', T, { given: strict });
        // … and once held, it is held for everyone until a success.
        expect(await admit('g', T, 1000, lenient)).toBe('probe');
        expect(await admit('g', T, 1000, strict)).toBe('park');
      });
    });

    describe('through real clients', () => {
      const server = useFaultServer();

      it('two clients sharing the store share one breaker and one budget', async () => {
        const store = await create();
        server.script('/down', [{ status: 503, body: 'down' }]);
        const guards = {
          store,
          retries: 3,
          backoff: { strategy: 'constant', base: 1 },
          jitter: 'none',
          breaker: circuitBreaker({ consecutiveFailures: 4, openMs: 60_000 }),
          budget: retryBudget({ ratio: 0, minPerSecond: 0.2, windowMs: 10_000 }), // two retries in the window
        } as const;
        const one = retryFetch(fetch, guards);
        const two = retryFetch(fetch, guards);
        // One: three attempts (two retries spend the budget), then the budget stops it: the last 503
        // comes back as fetch gives it, and getRetryInfo() says why no retry followed.
        const first = await one(`${server.url}/down`);
        expect(first.status).toBe(503);
        expect(await first.text()).toBe('down');
        expect(getRetryInfo(first)).toMatchObject({
          attempts: 3,
          stoppedBy: 'budget',
          outcome: 'budget-exhausted',
        });
        // Two: no budget left for it either; its one failure is the fourth in a row: the breaker opens.
        const second = await two(`${server.url}/down`);
        expect(second.status).toBe(503);
        expect(await second.text()).toBe('down');
        expect(getRetryInfo(second)).toMatchObject({
          attempts: 1,
          stoppedBy: 'budget',
          outcome: 'budget-exhausted',
        });
        // Refused before anything was sent: that still rejects with the Retryline error.
        await expect(one(`${server.url}/down`)).rejects.toMatchObject({ name: 'CircuitOpenError' });
        expect(server.requests('/down')).toHaveLength(4);
      });

      it("a client's retry is parked while another client's failures hold the key, and released by its success", async () => {
        const store = await create();
        server.script('/gate', [{ status: 503, body: 'down' }]);
        // One: four attempts, the last of them the probe, whose failure puts the next probe
        // 5-15 minutes off: retries to the key are parked until a success.
        const one = retryFetch(fetch, {
          store,
          retries: 3,
          backoff: { strategy: 'constant', base: 1 },
          jitter: 'none',
          budget: false,
          gate: recoveryGate({ store, holdAfter: 3, probeMs: 600_000 }),
        });
        const first = await one(`${server.url}/gate`);
        expect(first.status).toBe(503);
        expect(await first.text()).toBe('down');
        expect(getRetryInfo(first)).toMatchObject({ attempts: 4 });
        // Two: a gate of its own on the same store, asking again every 10-30 ms while parked.
        const events: RetrylineEvent[] = [];
        let parked: () => void = () => {};
        const isParked = new Promise<void>((resolve) => {
          parked = resolve;
        });
        const two = retryFetch(fetch, {
          store,
          retries: 1,
          backoff: { strategy: 'constant', base: 1 },
          jitter: 'none',
          maxDelay: 60_000,
          budget: false,
          gate: recoveryGate({ store, holdAfter: 3, probeMs: 20, maxParkMs: 60_000 }),
          onEvent: (event) => {
            events.push(event);
            if (event.type === 'retry-parked') parked();
          },
        });
        const second = two(`${server.url}/gate`);
        await Promise.race([
          isParked,
          second.then((response) => {
            throw new Error(`two's retry was never parked: it ended with ${response.status}`);
          }),
        ]);
        expect(server.requests('/gate')).toHaveLength(5);
        // One's success frees the key: two's parked retry goes, and gets the 200.
        server.script('/gate', [{ status: 200, body: 'up' }]);
        expect(await (await one(`${server.url}/gate`)).text()).toBe('up');
        const answer = await second;
        expect(answer.status).toBe(200);
        expect(await answer.text()).toBe('up');
        expect(getRetryInfo(answer)).toMatchObject({ attempts: 2 });
        const gateEvents = events.filter((e) => e.type === 'retry-parked' || e.type === 'retry-released');
        expect(gateEvents).toMatchObject([
          { type: 'retry-parked', attempt: 2, failures: 5 },
          { type: 'retry-released', attempt: 2, reason: 'released' },
        ]);
        expect(server.requests('/gate')).toHaveLength(7);
      });

      it('a store without gate operations (written before the gate) keeps the gate in each process', async () => {
        const { gateAdmit: _admit, gateRecord: _record, ...older } = await create();
        server.script('/older', [{ status: 503, body: 'down' }]);
        const options = {
          retries: 3,
          backoff: { strategy: 'constant', base: 1 },
          jitter: 'none',
          budget: false,
        } as const;
        const gate = { holdAfter: 3, probeMs: 600_000, maxParkMs: 0 };
        const call = async (api: typeof fetch) => {
          const response = await api(`${server.url}/older`);
          await response.text();
          return getRetryInfo(response);
        };
        const one = retryFetch(fetch, {
          ...options,
          store: older,
          gate: recoveryGate({ store: older, ...gate }),
        });
        expect(await call(one)).toMatchObject({ attempts: 4 });
        // Another client on the same store object, in this process: its retry is parked (and,
        // with maxParkMs 0, stopped by the gate at once).
        const two = retryFetch(fetch, {
          ...options,
          store: older,
          gate: recoveryGate({ store: older, ...gate }),
        });
        expect(await call(two)).toMatchObject({
          attempts: 1,
          stoppedBy: 'gate',
        });
        // The same store as another process sees it: nothing there has failed yet.
        const elsewhere = { ...older };
        const three = retryFetch(fetch, {
          ...options,
          retries: 1,
          store: elsewhere,
          gate: recoveryGate({ store: elsewhere, ...gate }),
        });
        expect(await call(three)).toMatchObject({
          attempts: 2,
          stoppedBy: 'exhausted',
        });
      });
    });
  });
}

/** Drops the state from an operation's answer: a store need not keep state in the reference's shape. */
function strip<T extends { state: unknown }>(result: T): Omit<T, 'state'> {
  const { state: _state, ...rest } = result;
  return rest;
}

function count(results: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = { acquired: 0, queued: 0, rejected: 0 };
  for (const result of results) counts[result] = (counts[result] ?? 0) + 1;
  return counts;
}
