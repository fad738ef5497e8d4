import { describe, expect, it } from 'vitest';
import { MAX_DELAY_LIMIT } from '../policy/normalize';
import { localStore } from './local-store';
import {
  type BudgetRecord,
  budgetCountInPlace,
  budgetInit,
  budgetOps,
  budgetRecordRequest,
  normalizeBudget,
  type RetryBudgetConfig,
} from './retry-budget';
import { memoryOf, memoryStore } from './store';

const T = 1_700_000_000_000;
const BUDGET = normalizeBudget(); // 10 buckets of 1 s
const KEY = 'https://api.example';

/** A memory store's budget operations: the fast path's count, and the rest answering at once. */
function budgetOnMemory() {
  const ops = budgetOps(memoryStore());
  const store = {
    ...ops,
    budgetRequest: (key: string, config: RetryBudgetConfig, now: number) =>
      ops.budgetRequest(key, config, now) as BudgetRecord,
  };
  return { fast: { countRequest: ops.countAtOnce }, store };
}

describe("the memory store's fast path for a first attempt", () => {
  it('is there for a memory store only', () => {
    expect(memoryOf(memoryStore())).toBeDefined();
    const lookalike = { ...memoryStore() };
    expect(memoryOf(lookalike)).toBeUndefined();
    expect(budgetOps(localStore()).countAtOnce(KEY, BUDGET, T)).toBe(false);
  });

  it('counts every request, in one bucket per tenth of the window', () => {
    const { fast, store } = budgetOnMemory();
    for (let i = 0; i < 5; i++) fast.countRequest(KEY, BUDGET, T);
    for (let i = 0; i < 3; i++) fast.countRequest(KEY, BUDGET, T + 1000);
    const { state } = store.budgetRequest(KEY, BUDGET, T + 1000);
    expect(state.buckets.map(({ requests }) => requests)).toEqual([5, 4]);
  });

  it('never changes a state the store handed out', () => {
    const { fast, store } = budgetOnMemory();
    const handedOut = store.budgetRequest(KEY, BUDGET, T);
    const before = structuredClone(handedOut.state);
    for (let i = 0; i < 3; i++) fast.countRequest(KEY, BUDGET, T);
    expect(handedOut.state).toEqual(before);
    expect(store.budgetRequest(KEY, BUDGET, T).state.buckets.at(-1)?.requests).toBe(5);
  });

  it('keeps counting when a retry is drawn between requests', async () => {
    const { fast, store } = budgetOnMemory();
    fast.countRequest(KEY, BUDGET, T);
    const decision = await store.budgetRetry(KEY, BUDGET, T);
    fast.countRequest(KEY, BUDGET, T);
    expect(decision.state.buckets).toEqual([{ slot: expect.any(Number), requests: 1, retries: 1 }]);
    expect(store.budgetRequest(KEY, BUDGET, T).state.buckets).toEqual([
      { slot: expect.any(Number), requests: 3, retries: 1 },
    ]);
  });
});

describe('budgetCountInPlace', () => {
  it('counts into the newest bucket when now falls in it, and leaves any other state alone', () => {
    const { state } = budgetRecordRequest(budgetInit(), BUDGET, T);
    expect(budgetCountInPlace(state, BUDGET, T + 99)).toBe(true);
    expect(state.buckets).toEqual([{ slot: expect.any(Number), requests: 2, retries: 0 }]);
    expect(budgetCountInPlace(state, BUDGET, T + 1000)).toBe(false);
    expect(state.buckets).toEqual([{ slot: expect.any(Number), requests: 2, retries: 0 }]);
    expect(budgetCountInPlace(budgetInit(), BUDGET, T)).toBe(false);
  });
});

describe("the memory store's pacing", () => {
  const memoryStore = localStore;
  it('keeps the later of two pauses until it passes', async () => {
    const store = memoryStore();
    await store.pacingSet(KEY, T + 5000, T);
    await store.pacingSet(KEY, T + 2000, T);
    expect(store.pacingGet(KEY, T + 4999)).toBe(T + 5000);
    expect(store.pacingGet(KEY, T + 5000)).toBeUndefined();
  });

  it('never pauses a key for longer than the longest maxRetryAfter, whatever it is told', async () => {
    const store = memoryStore();
    for (const until of [Number.POSITIVE_INFINITY, 1e30, T + MAX_DELAY_LIMIT + 1]) {
      await store.pacingSet(KEY, until, T);
      expect(store.pacingGet(KEY, T)).toBe(T + MAX_DELAY_LIMIT);
    }
  });

  it('pauses nothing for a time that is not after now, NaN included', async () => {
    const store = memoryStore();
    for (const until of [Number.NaN, T, T - 1, Number.NEGATIVE_INFINITY])
      await store.pacingSet(KEY, until, T);
    expect(store.pacingGet(KEY, T)).toBeUndefined();
    expect(store.size().pacing).toBe(0);
  });
});
