import { describe, expect, it } from 'vitest';
import { seededRandom } from '../time/random';
import { backoffSchedule } from './schedule';

// Each strategy's reference table at base 1 s, 10 retries, in seconds: constant 1 s each, linear
// 2 … 11, polynomial (exponent 3) 1 … 1000, exponential 2, 4, … 1024 and capped at 64 s.
const SEC = 1000;
const seconds = (schedule: ReturnType<typeof backoffSchedule>) => ({
  delays: schedule.rows.map((row) => row.delay / SEC),
  cumulative: schedule.rows.map((row) => row.cumulative / SEC),
  mean: schedule.meanDelay / SEC,
});
const deterministic = { jitter: 'none', maxDelay: 3_600_000 } as const;

describe('backoffSchedule reproduces the reference table of each strategy', () => {
  it('constant: 1 s every time, cumulative 10, mean 1', () => {
    const table = seconds(
      backoffSchedule({ ...deterministic, backoff: { strategy: 'constant', base: SEC } }, { retries: 10 }),
    );
    expect(table.delays).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect(table.cumulative).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(table.mean).toBe(1);
  });

  it('linear: 2 … 11, cumulative 65, mean 6.5', () => {
    const table = seconds(
      backoffSchedule(
        { ...deterministic, backoff: { strategy: 'linear', base: SEC, step: SEC } },
        { retries: 10 },
      ),
    );
    expect(table.delays).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(table.cumulative).toEqual([2, 5, 9, 14, 20, 27, 35, 44, 54, 65]);
    expect(table.mean).toBe(6.5);
  });

  it('linear: step defaults to base', () => {
    const table = seconds(
      backoffSchedule({ ...deterministic, backoff: { strategy: 'linear', base: SEC } }, { retries: 3 }),
    );
    expect(table.delays).toEqual([2, 3, 4]);
  });

  it('polynomial, exponent 3: 1 … 1000, cumulative 3025, mean 302.5', () => {
    const table = seconds(
      backoffSchedule(
        { ...deterministic, backoff: { strategy: 'polynomial', base: SEC, exponent: 3 } },
        { retries: 10 },
      ),
    );
    expect(table.delays).toEqual([1, 8, 27, 64, 125, 216, 343, 512, 729, 1000]);
    expect(table.cumulative).toEqual([1, 9, 36, 100, 225, 441, 784, 1296, 2025, 3025]);
    expect(table.mean).toBe(302.5);
  });

  it('polynomial: exponent defaults to 2', () => {
    const table = seconds(
      backoffSchedule({ ...deterministic, backoff: { strategy: 'polynomial', base: SEC } }, { retries: 4 }),
    );
    expect(table.delays).toEqual([1, 4, 9, 16]);
  });

  it('exponential: 2 … 1024, cumulative 2046, mean 204.6', () => {
    const table = seconds(
      backoffSchedule({ ...deterministic, backoff: { strategy: 'exponential', base: SEC } }, { retries: 10 }),
    );
    expect(table.delays).toEqual([2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
    expect(table.cumulative).toEqual([2, 6, 14, 30, 62, 126, 254, 510, 1022, 2046]);
    expect(table.mean).toBe(204.6);
  });

  it('exponential capped at 64 s: cumulative 382, mean 38.2', () => {
    const table = seconds(
      backoffSchedule(
        { jitter: 'none', maxDelay: 64 * SEC, backoff: { strategy: 'exponential', base: SEC } },
        { retries: 10 },
      ),
    );
    expect(table.delays).toEqual([2, 4, 8, 16, 32, 64, 64, 64, 64, 64]);
    expect(table.cumulative).toEqual([2, 6, 14, 30, 62, 126, 190, 254, 318, 382]);
    expect(table.mean).toBe(38.2);
  });

  it("onMaxDelay 'give-up' stops at the first backoff past the cap instead of clamping to it", () => {
    const schedule = backoffSchedule(
      {
        jitter: 'none',
        maxDelay: 64 * SEC,
        onMaxDelay: 'give-up',
        backoff: { strategy: 'exponential', base: SEC },
      },
      { retries: 10 },
    );
    expect(schedule.rows.map((row) => row.delay / SEC)).toEqual([2, 4, 8, 16, 32, 64]);
    expect(schedule.stop).toEqual({ retry: 7, reason: 'max-delay', delay: 64 * SEC, raw: 128 * SEC });
  });

  it('numbers rows as retries, each followed by attempt n + 1', () => {
    const schedule = backoffSchedule({ jitter: 'none' }, { retries: 3 });
    expect(schedule.rows.map((row) => [row.retry, row.attempt])).toEqual([
      [1, 2],
      [2, 3],
      [3, 4],
    ]);
  });

  it('uses the documented defaults: exponential from 100 ms, factor 2, 2 retries', () => {
    const schedule = backoffSchedule({ jitter: 'none' });
    expect(schedule.rows.map((row) => row.delay)).toEqual([200, 400]);
  });

  it('ends where the next wait would pass a deadline', () => {
    const schedule = backoffSchedule(
      { jitter: 'none', deadline: 10 * SEC, backoff: { strategy: 'constant', base: SEC } },
      { retries: 100 },
    );
    expect(schedule.rows).toHaveLength(9);
    expect(schedule.stop).toEqual({ retry: 10, reason: 'deadline', delay: SEC, raw: SEC });
  });

  it('is reproducible with a seeded random and differs between seeds', () => {
    const options = { jitter: 'full', backoff: { base: SEC } } as const;
    const a = backoffSchedule(options, { retries: 8, random: seededRandom(7) });
    const b = backoffSchedule(options, { retries: 8, random: seededRandom(7) });
    const c = backoffSchedule(options, { retries: 8, random: seededRandom(8) });
    expect(a).toEqual(b);
    expect(a.rows.map((row) => row.delay)).not.toEqual(c.rows.map((row) => row.delay));
  });

  it('has no rows and a zero mean for zero retries', () => {
    expect(backoffSchedule({}, { retries: 0 })).toEqual({ rows: [], meanDelay: 0, totalDelay: 0 });
  });

  it('refuses an infinite or fractional number of rows', () => {
    expect(() => backoffSchedule({}, { retries: Number.POSITIVE_INFINITY })).toThrow(
      'Expected retries to be a finite non-negative integer for a schedule, got Infinity',
    );
    expect(() => backoffSchedule({}, { retries: 1.5 })).toThrow(/got 1.5/);
  });

  it('keeps delays finite when the strategy overflows', () => {
    const schedule = backoffSchedule(
      { jitter: 'none', maxDelay: 5000, backoff: { base: 1, factor: 10 } },
      { retries: 400 },
    );
    expect(schedule.rows.every((row) => Number.isFinite(row.delay) && row.delay <= 5000)).toBe(true);
    expect(schedule.rows.at(-1)?.delay).toBe(5000);
  });
});
