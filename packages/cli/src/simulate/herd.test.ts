import { computeDelay, seededRandom } from '@retryline/core';
import { normalizePolicy } from '@retryline/core/adapter';
import { describe, expect, it } from 'vitest';
import {
  HERD_DEFAULTS,
  HERD_STRATEGIES,
  type HerdStrategy,
  herdPolicyOptions,
  MAX_HERD_WORK,
  simulateHerd,
  simulateHerds,
  sweepCounts,
  sweepWork,
} from './herd';

async function calls(clients: number, strategy: HerdStrategy, seed: number): Promise<number> {
  return (await simulateHerd({ clients, strategy, seed })).calls;
}

describe('simulateHerd: the model', () => {
  it('one client writes on its first call: two round trips', async () => {
    for (const strategy of HERD_STRATEGIES) {
      const result = await simulateHerd({ clients: 1, strategy, seed: 1 });
      expect(result).toMatchObject({ clients: 1, strategy, calls: 1 });
      // Four hops of about 10 ms each (|Normal(10, 2)|).
      expect(result.completionMs).toBeGreaterThan(20);
      expect(result.completionMs).toBeLessThan(60);
    }
  });

  it('every client writes once: at least one call each, and a conflict costs one more', async () => {
    for (const strategy of HERD_STRATEGIES) {
      const result = await simulateHerd({ clients: 20, strategy, seed: 2 });
      expect(result.calls).toBeGreaterThanOrEqual(20);
    }
  });

  it('without backoff, writes are serialised: each round trip lets about one client through', async () => {
    // All 10 read version 0 at about the same time; only one write can succeed per version, so the
    // herd needs at least 10 rounds and at most 1 + 2 + … + 10 calls.
    const result = await simulateHerd({ clients: 10, strategy: 'no-backoff', seed: 1 });
    expect(result.calls).toBeGreaterThan(10);
    expect(result.calls).toBeLessThanOrEqual(55);
    expect(result.completionMs).toBeGreaterThan(10 * 30);
  });

  it('no jitter keeps the herd together: waits are the bare exponential backoff', async () => {
    // With hops of exactly equal length (scaled down to nothing) and no jitter, the clients
    // collide every round, and the completion time is the sum of the backoffs.
    const policy = normalizePolicy(herdPolicyOptions('none', 5, 2000));
    const waits = [1, 2, 3].map((n) => computeDelay(policy, n, 5, seededRandom(1)).delay);
    expect(waits).toEqual([10, 20, 40]);
    const result = await simulateHerd({ clients: 4, strategy: 'none', seed: 1, hopMs: 1e-9 });
    // The network is (almost) instant, so ties are broken by start order: one writer a round.
    expect(result.calls).toBe(4 + 3 + 2 + 1);
    expect(result.completionMs).toBeCloseTo(10 + 20 + 40, 3);
  });

  it('uses the product policies', () => {
    expect(herdPolicyOptions('full', 5, 2000)).toEqual({
      retries: Number.POSITIVE_INFINITY,
      backoff: { strategy: 'exponential', base: 5, factor: 2 },
      maxDelay: 2000,
      jitter: 'full',
    });
    expect(normalizePolicy(herdPolicyOptions('no-backoff', 5, 2000)).backoff.base).toBe(0);
    expect(HERD_DEFAULTS).toMatchObject({ hopMs: 10, base: 5, cap: 2000 });
  });

  it('is deterministic for a seed, and a different seed gives a different run', async () => {
    const a = await simulateHerd({ clients: 40, strategy: 'full', seed: 7 });
    const b = await simulateHerd({ clients: 40, strategy: 'full', seed: 7 });
    const c = await simulateHerd({ clients: 40, strategy: 'full', seed: 8 });
    expect(b).toEqual(a);
    expect(c).not.toEqual(a);
  });

  it.each([
    [{ clients: 0, strategy: 'full' }, 'Expected clients to be a whole number from 1 to 2000, got 0'],
    [{ clients: 2.5, strategy: 'full' }, 'Expected clients to be a whole number from 1 to 2000, got 2.5'],
    [{ clients: 2001, strategy: 'full' }, 'Expected clients to be a whole number from 1 to 2000, got 2001'],
    [
      { clients: 10, strategy: 'fast' },
      'Expected strategy to be one of none, full, equal, decorrelated, no-backoff, got fast',
    ],
    [
      { clients: 10, strategy: 'full', seed: -1 },
      'Expected seed to be a whole number from 0 to 4294967295, got -1',
    ],
    [{ clients: 10, strategy: 'full', hopMs: 0 }, 'Expected hopMs to be a positive finite number, got 0'],
    [
      { clients: 10, strategy: 'full', base: Number.NaN },
      'Expected base to be a positive finite number, got NaN',
    ],
    [{ clients: 10, strategy: 'full', base: 10, cap: 5 }, 'Expected cap to be at least base (10), got 5'],
  ])('refuses %j', async (config, message) => {
    await expect(simulateHerd(config as never)).rejects.toThrow(new RangeError(message));
  });
});

describe('simulateHerd: the published ordering (Brooker, AWS 2015)', () => {
  it.each([1, 2, 3, 4, 5])('at 100 clients, seed %i', async (seed) => {
    const [none, full, equal, decorrelated] = await Promise.all(
      (['none', 'full', 'equal', 'decorrelated'] as const).map((strategy) =>
        simulateHerd({ clients: 100, strategy, seed }),
      ),
    );
    if (!none || !full || !equal || !decorrelated) throw new Error('missing result');
    // No jitter does far more work than full jitter (2.3–2.5× over seeds 1–5)…
    expect(none.calls).toBeGreaterThanOrEqual(2 * full.calls);
    // …full jitter the least; equal jitter slightly more; decorrelated between them and none.
    expect(full.calls).toBeLessThan(equal.calls);
    expect(full.calls).toBeLessThan(decorrelated.calls);
    expect(decorrelated.calls).toBeLessThan(none.calls);
    // Completion: no jitter is slowest by far; equal jitter is slower than full.
    expect(none.completionMs).toBeGreaterThan(5 * full.completionMs);
    expect(none.completionMs).toBeGreaterThan(5 * decorrelated.completionMs);
    expect(equal.completionMs).toBeGreaterThan(full.completionMs);
  });

  it('no jitter grows about quadratically, full jitter about linearly', async () => {
    const none = [await calls(50, 'none', 1), await calls(200, 'none', 1)];
    const full = [await calls(50, 'full', 1), await calls(200, 'full', 1)];
    expect((none[1] ?? 0) / (none[0] ?? 1)).toBeGreaterThan(6);
    expect((full[1] ?? 0) / (full[0] ?? 1)).toBeLessThan(6);
  });
});

describe('simulateHerds', () => {
  it('runs every count in the range for each strategy, in order', async () => {
    const rows = await simulateHerds({ from: 10, to: 30, step: 10, strategies: ['full', 'none'], seed: 3 });
    expect(rows.map((row) => [row.clients, row.strategy])).toEqual([
      [10, 'full'],
      [10, 'none'],
      [20, 'full'],
      [20, 'none'],
      [30, 'full'],
      [30, 'none'],
    ]);
    expect(rows[2]).toEqual(await simulateHerd({ clients: 20, strategy: 'full', seed: 3 }));
  });

  it('runs the end of the range even off the step, and counts the work of a sweep as its clients squared', () => {
    expect(sweepCounts(10, 25, 10)).toEqual([10, 20, 25]);
    expect(sweepCounts(10, 30, 10)).toEqual([10, 20, 30]);
    expect(sweepCounts(7, 7, 5)).toEqual([7]);
    expect(sweepWork([10, 20, 25])).toBe(100 + 400 + 625);
    // The default sweep is well within the limit; one herd of the most clients is just at it.
    expect(sweepWork(sweepCounts(10, 200, 10))).toBeLessThan(MAX_HERD_WORK / 10);
    expect(sweepWork([2000])).toBe(MAX_HERD_WORK);
  });

  it('defaults to 10..200 by 10 over every strategy', async () => {
    const rows = await simulateHerds({ to: 20 });
    expect(rows).toHaveLength(2 * HERD_STRATEGIES.length);
  });

  it.each([
    [{ from: 0 }, 'Expected from to be a whole number from 1 to 2000, got 0'],
    [{ from: 50, to: 10 }, 'Expected to to be at least from (50), got 10'],
    [{ step: 0 }, 'Expected step to be a whole number from 1 to 2000, got 0'],
    [{ strategies: [] }, 'Expected strategies to be at least one strategy, got none'],
    [
      { from: 1000, to: 2000, step: 100 },
      'Expected the sweep to be at most 4000000 clients² in all (raise step or narrow the range), got 25850000',
    ],
  ])('refuses %j', async (sweep, message) => {
    await expect(simulateHerds(sweep)).rejects.toThrow(new RangeError(message));
  });
});
