import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../errors';
import {
  BUDGET_BUCKETS,
  BUDGET_DEFAULTS,
  type BudgetState,
  budgetInit,
  budgetRecordRequest,
  budgetSnapshot,
  budgetTryRetry,
  normalizeBudget,
  type RetryBudgetConfig,
} from './retry-budget';

const DEFAULTS = normalizeBudget();
// The floor over one default window: 10 retries/s × 10 s.
const FLOOR = 100;

/** Retries until the budget refuses one, all at `now`; returns how many were granted. */
function retryUntilRefused(state: BudgetState, config: RetryBudgetConfig, now: number) {
  let granted = 0;
  let current = state;
  for (;;) {
    const decision = budgetTryRetry(current, config, now);
    current = decision.state;
    if (!decision.allowed) return { granted, state: current };
    granted += 1;
  }
}

describe('normalizeBudget', () => {
  it('takes the documented defaults for no options and for an empty object', () => {
    expect(normalizeBudget()).toEqual({ ratio: 0.1, windowMs: 10_000, minPerSecond: 10 });
    expect(normalizeBudget({})).toEqual(normalizeBudget());
    expect(BUDGET_DEFAULTS).toEqual(normalizeBudget());
  });

  it('keeps the options it is given', () => {
    expect(normalizeBudget({ ratio: 0.5, windowMs: 1000, minPerSecond: 0 })).toEqual({
      ratio: 0.5,
      windowMs: 1000,
      minPerSecond: 0,
    });
  });

  it('ignores inherited options (a polluted prototype changes nothing)', () => {
    const options = Object.create({ ratio: 0.9 }) as object;
    expect(normalizeBudget(options).ratio).toBe(0.1);
  });

  it.each([
    [{ ratio: -0.1 }, 'budget.ratio', 'Expected budget.ratio to be a finite number ≥ 0, got -0.1'],
    [{ ratio: Number.NaN }, 'budget.ratio', 'Expected budget.ratio to be a finite number ≥ 0, got NaN'],
    [{ ratio: '0.1' }, 'budget.ratio', "Expected budget.ratio to be a finite number ≥ 0, got '0.1'"],
    [{ windowMs: 0 }, 'budget.windowMs', 'Expected budget.windowMs to be a finite number ≥ 1, got 0'],
    [
      { windowMs: Number.POSITIVE_INFINITY },
      'budget.windowMs',
      'Expected budget.windowMs to be a finite number ≥ 1, got Infinity',
    ],
    [
      { minPerSecond: -1 },
      'budget.minPerSecond',
      'Expected budget.minPerSecond to be a finite number ≥ 0, got -1',
    ],
    [null, 'budget', 'Expected budget to be an object of budget options, got null'],
    [false, 'budget', 'Expected budget to be an object of budget options, got false'],
    [[], 'budget', 'Expected budget to be an object of budget options, got an array'],
    [10, 'budget', 'Expected budget to be an object of budget options, got 10'],
  ])('rejects %o', (input, option, message) => {
    let error: unknown;
    try {
      normalizeBudget(input as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as InvalidOptionsError).message).toBe(message);
    expect((error as InvalidOptionsError).option).toBe(option);
  });
});

describe('retry budget', () => {
  it('grants a quiet client the floor: minPerSecond × windowMs / 1000 retries', () => {
    expect(budgetSnapshot(budgetInit(), DEFAULTS, 0)).toEqual({ requests: 0, retries: 0, remaining: FLOOR });
    const { granted, state } = retryUntilRefused(budgetInit(), DEFAULTS, 0);
    expect(granted).toBe(FLOOR);
    expect(budgetSnapshot(state, DEFAULTS, 0)).toEqual({ requests: 0, retries: FLOOR, remaining: 0 });
  });

  it('counts an allowed retry and reports what is left', () => {
    const first = budgetTryRetry(budgetInit(), DEFAULTS, 0);
    expect(first).toMatchObject({ allowed: true, remaining: FLOOR - 1 });
    expect(budgetSnapshot(first.state, DEFAULTS, 0).retries).toBe(1);
  });

  it('earns one more retry for every 1/ratio requests, and refused retries cost nothing', () => {
    let { state } = retryUntilRefused(budgetInit(), DEFAULTS, 0);
    // Refusals are not counted: hammering an empty budget does not push it further into debt.
    for (let i = 0; i < 1000; i++) state = budgetTryRetry(state, DEFAULTS, 0).state;
    for (let i = 0; i < 9; i++) state = budgetRecordRequest(state, DEFAULTS, 0).state;
    expect(budgetTryRetry(state, DEFAULTS, 0).allowed).toBe(false);
    const tenth = budgetRecordRequest(state, DEFAULTS, 0);
    expect(tenth.remaining).toBe(1);
    const retry = budgetTryRetry(tenth.state, DEFAULTS, 0);
    expect(retry.allowed).toBe(true);
    expect(budgetTryRetry(retry.state, DEFAULTS, 0).allowed).toBe(false);
  });

  it('never ends a window above a fractional limit (100.5 allows 100 retries, not 101)', () => {
    let state = budgetInit();
    for (let i = 0; i < 5; i++) state = budgetRecordRequest(state, DEFAULTS, 0).state;
    expect(retryUntilRefused(state, DEFAULTS, 0).granted).toBe(100);
  });

  it('never refuses or blocks a first attempt, even with the budget spent', () => {
    let { state } = retryUntilRefused(budgetInit(), DEFAULTS, 0);
    for (let i = 1; i <= 2000; i++) {
      const record = budgetRecordRequest(state, DEFAULTS, i);
      // The result has no `allowed`: a first attempt is counted, never judged.
      expect(Object.keys(record).sort()).toEqual(['remaining', 'state']);
      state = record.state;
    }
    expect(budgetSnapshot(state, DEFAULTS, 2000)).toMatchObject({ requests: 2000, retries: FLOOR });
  });

  it('1,000 requests in one window to an always-failing origin get ratio × 1000 + floor retries', () => {
    // One request every 10 ms over 10 s, each retrying until the budget refuses.
    let state = budgetInit();
    let retries = 0;
    for (let i = 0; i < 1000; i++) {
      const now = i * 10;
      state = budgetRecordRequest(state, DEFAULTS, now).state;
      const run = retryUntilRefused(state, DEFAULTS, now);
      retries += run.granted;
      state = run.state;
    }
    const bound = 0.1 * 1000 + FLOOR;
    expect(bound).toBe(200);
    // Greedy callers reach the bound exactly, and not one retry past it.
    expect(retries).toBe(bound);
  });

  it('1,000 requests over 20 s of an always-failing origin stay within ratio × requests + floor per window', () => {
    // One request every 20 ms, spanning two windows: each window grants its own floor.
    let state = budgetInit();
    let retries = 0;
    const perSecond = new Map<number, number>();
    for (let i = 0; i < 1000; i++) {
      const now = i * 20;
      state = budgetRecordRequest(state, DEFAULTS, now).state;
      const run = retryUntilRefused(state, DEFAULTS, now);
      retries += run.granted;
      const second = Math.floor(now / 1000);
      perSecond.set(second, (perSecond.get(second) ?? 0) + run.granted);
      state = run.state;
    }
    const windows = 20_000 / DEFAULTS.windowMs;
    const bound = DEFAULTS.ratio * 1000 + FLOOR * windows;
    expect(bound).toBe(300);
    expect(retries).toBeLessThanOrEqual(bound);
    expect(retries).toBeGreaterThanOrEqual(bound * 0.95);
    // Each 10 s window holds at most ratio × (its requests and those of the 9 s before) + floor.
    const window = (from: number) => [...perSecond].filter(([s]) => s >= from && s < from + 10);
    for (let from = 0; from <= 10; from++) {
      const granted = window(from).reduce((sum, [, n]) => sum + n, 0);
      const requests = 50 * (Math.min(from + 10, 20) - Math.max(from - 9, 0));
      expect(granted).toBeLessThanOrEqual(0.1 * requests + FLOOR);
    }
    // The floor does not all go at once: the second window still grants retries.
    expect(window(10).reduce((sum, [, n]) => sum + n, 0)).toBeGreaterThan(FLOOR);
  });

  it('refills once the origin recovers and the spent window has slid past', () => {
    const spent = retryUntilRefused(budgetInit(), DEFAULTS, 0).state;
    // Still in the window: the bucket of second 0 counts until second 10 begins.
    expect(budgetTryRetry(spent, DEFAULTS, 9_999).allowed).toBe(false);
    const later = budgetTryRetry(spent, DEFAULTS, 10_000);
    expect(later).toMatchObject({ allowed: true, remaining: FLOOR - 1 });
    expect(retryUntilRefused(spent, DEFAULTS, 10_000).granted).toBe(FLOOR);
  });

  it('slides bucket by bucket: retries leave the window a bucket at a time', () => {
    let state = budgetInit();
    for (let second = 0; second < 10; second++) {
      for (let i = 0; i < 10; i++) state = budgetTryRetry(state, DEFAULTS, second * 1000).state;
    }
    expect(budgetTryRetry(state, DEFAULTS, 9_999).allowed).toBe(false);
    // At 10 s only second 0's ten retries have left.
    expect(retryUntilRefused(state, DEFAULTS, 10_000).granted).toBe(10);
    expect(retryUntilRefused(state, DEFAULTS, 12_500).granted).toBe(30);
  });

  it('keeps at most BUDGET_BUCKETS buckets whatever the traffic, as plain JSON', () => {
    let state = budgetInit();
    for (let i = 0; i < 20_000; i++) {
      const now = i * 7;
      state = budgetRecordRequest(state, DEFAULTS, now).state;
      if (i % 3 === 0) state = budgetTryRetry(state, DEFAULTS, now).state;
      expect(state.buckets.length).toBeLessThanOrEqual(BUDGET_BUCKETS);
    }
    expect(state.buckets).toHaveLength(BUDGET_BUCKETS);
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
  });

  it('counts a `now` behind the newest bucket in the newest bucket (time never runs back)', () => {
    const ahead = budgetRecordRequest(budgetInit(), DEFAULTS, 20_000).state;
    const behind = budgetRecordRequest(ahead, DEFAULTS, 5_000).state;
    expect(behind.buckets).toEqual([{ slot: 20, requests: 2, retries: 0 }]);
  });

  it('cuts a custom window into BUDGET_BUCKETS buckets', () => {
    const config = normalizeBudget({ windowMs: 2000, minPerSecond: 5, ratio: 0 });
    const spent = retryUntilRefused(budgetInit(), config, 0);
    expect(spent.granted).toBe(10);
    expect(budgetTryRetry(spent.state, config, 1_999).allowed).toBe(false);
    expect(budgetTryRetry(spent.state, config, 2_000).allowed).toBe(true);
    expect(budgetRecordRequest(spent.state, config, 2_000).state.buckets).toEqual([
      { slot: 10, requests: 1, retries: 0 },
    ]);
  });

  it('property: retries granted in any window never exceed ratio × requests + floor', () => {
    type Op = { kind: 'request' | 'retry' } | { kind: 'advance'; ms: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.constant({ kind: 'request' as const }),
      fc.constant({ kind: 'retry' as const }),
      fc.integer({ min: 0, max: 3_000 }).map((ms) => ({ kind: 'advance' as const, ms })),
    );
    const config = fc.record({
      ratio: fc.constantFrom(0, 0.1, 0.25, 1.5),
      windowMs: fc.constantFrom(1_000, 2_500, 10_000),
      minPerSecond: fc.constantFrom(0, 1, 10),
    });
    fc.assert(
      fc.property(config, fc.array(op, { maxLength: 400 }), (options, ops) => {
        const budget = normalizeBudget(options);
        const floor = (budget.minPerSecond * budget.windowMs) / 1000;
        const slotOf = (now: number) => Math.floor((now * 10) / budget.windowMs);
        // The reference log: which bucket each counted event fell in.
        const requests: number[] = [];
        const retries: number[] = [];
        const inWindow = (log: number[], slot: number) =>
          log.filter((s) => s > slot - 10 && s <= slot).length;
        let state = budgetInit();
        let now = 0;
        for (const step of ops) {
          if (step.kind === 'advance') {
            now += step.ms;
          } else if (step.kind === 'request') {
            state = budgetRecordRequest(state, budget, now).state;
            requests.push(slotOf(now));
          } else {
            const slot = slotOf(now);
            const decision = budgetTryRetry(state, budget, now);
            state = decision.state;
            const before = inWindow(retries, slot);
            const allowance = budget.ratio * inWindow(requests, slot) + floor;
            // Granted exactly when this retry fits: never over the bound, never refused below it.
            expect(decision.allowed).toBe(before + 1 <= allowance);
            if (decision.allowed) retries.push(slot);
            expect(decision.remaining).toBe(Math.max(0, Math.floor(allowance - inWindow(retries, slot))));
          }
          expect(state.buckets.length).toBeLessThanOrEqual(BUDGET_BUCKETS);
        }
        // Any 10 consecutive buckets: at most ratio × (their requests and the 9 before) + floor.
        const last = slotOf(now);
        for (let slot = 0; slot <= last; slot++) {
          const granted = inWindow(retries, slot);
          const backing = requests.filter((s) => s > slot - 19 && s <= slot).length;
          expect(granted).toBeLessThanOrEqual(budget.ratio * backing + floor + 1e-9);
        }
        // And the whole run: ratio × all requests + one floor per window it spans.
        const windows = Math.ceil((last + 1) / BUDGET_BUCKETS);
        expect(retries.length).toBeLessThanOrEqual(budget.ratio * requests.length + floor * windows + 1e-9);
      }),
      { numRuns: 300 },
    );
  });
});
