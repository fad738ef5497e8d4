import { localStore, normalizeBreaker, normalizeBucket, normalizeBudget } from '@retryline/core/store';
import { describe, expect, it } from 'vitest';
import { describeStoreContract } from './store-contract';

describeStoreContract('memory (localStore(): every guard on one memory store)', () => localStore());

describe('memory store housekeeping', () => {
  const T = 1_700_000_000_000;

  it('sweeps 10,000 idle keys of every guard, and keeps the ones still in use', async () => {
    const store = localStore();
    const bucket = normalizeBucket({ capacity: 5, refillPerSecond: 10 });
    const budget = normalizeBudget();
    const breaker = normalizeBreaker();
    for (let i = 0; i < 10_000; i++) {
      const key = `https://tenant-${i}.example`;
      await store.limiterTake(key, bucket, 1, T);
      await store.budgetRequest(key, budget, T);
      await store.breakerRecord(key, breaker, 'success', T);
      await store.pacingSet(key, T + 1000, T);
    }
    const open = normalizeBreaker({ consecutiveFailures: 1, openMs: 3_600_000 });
    await store.breakerRecord('https://down.example', open, 'failure', T);
    expect(store.size()).toEqual({
      breakers: 10_001,
      budgets: 10_000,
      limiters: 10_000,
      bulkheads: 0,
      pacing: 10_000,
      gates: 0,
      throttles: 0,
    });
    // A minute later, the next sweep (every 1,000 operations) drops them all, but the open breaker.
    const later = T + 61_000;
    for (let i = 0; i < 1000; i++) await store.limiterTake('https://busy.example', bucket, 0, later);
    expect(store.size()).toEqual({
      breakers: 1,
      budgets: 0,
      limiters: 1,
      bulkheads: 0,
      pacing: 0,
      gates: 0,
      throttles: 0,
    });
    // Its openMs and a minute after it last changed, the open breaker goes too, as a Redis key expires.
    const muchLater = T + 3_600_000 + 61_000;
    for (let i = 0; i < 1000; i++) await store.limiterTake('https://busy.example', bucket, 0, muchLater);
    expect(store.size()).toEqual({
      breakers: 0,
      budgets: 0,
      limiters: 1,
      bulkheads: 0,
      pacing: 0,
      gates: 0,
      throttles: 0,
    });
  });

  it('keeps a bucket that is still refilling, and a budget whose window is longer than a minute', async () => {
    const store = localStore();
    const slow = normalizeBucket({ capacity: 100, refillPerSecond: 1 });
    const long = normalizeBudget({ windowMs: 300_000 });
    await store.limiterTake('https://slow.example', slow, 100, T);
    await store.budgetRequest('https://slow.example', long, T);
    const later = T + 61_000;
    for (let i = 0; i < 1000; i++) await store.pacingSet('https://x.example', later - 1, later);
    expect(store.size()).toMatchObject({ limiters: 1, budgets: 1 });
  });
});
