import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../time/random';
import { computeDelay } from './delay';
import { normalizePolicy } from './normalize';
import type { JitterConfig, PolicyOptions } from './options';

const DRAWS = 100_000;
const d = 8000; // the capped backoff of every draw below: constant 8 s, cap well above.

function sample(jitter: JitterConfig, seed: number) {
  const policy = normalizePolicy({ backoff: { strategy: 'constant', base: d }, maxDelay: 60_000, jitter });
  const random = seededRandom(seed);
  const delays = new Float64Array(DRAWS);
  for (let i = 0; i < DRAWS; i++) delays[i] = computeDelay(policy, 1 + (i % 10), d, random).delay;
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const value of delays) {
    sum += value;
    min = Math.min(min, value);
    max = Math.max(max, value);
  }
  return { mean: sum / DRAWS, min, max };
}

describe('jitter over 100,000 seeded draws', () => {
  const cases: Array<{ jitter: JitterConfig; low: number; high: number; mean: number }> = [
    { jitter: { type: 'none' }, low: d, high: d, mean: d },
    { jitter: { type: 'full' }, low: 0, high: d, mean: d / 2 },
    { jitter: { type: 'equal' }, low: d / 2, high: d, mean: (3 * d) / 4 },
    { jitter: { type: 'proportional' }, low: d * 0.8, high: d * 1.2, mean: d },
    { jitter: { type: 'proportional', ratio: 0.5 }, low: d * 0.5, high: d * 1.5, mean: d },
    { jitter: { type: 'constant' }, low: d, high: d + 1000, mean: d + 500 },
    { jitter: { type: 'constant', spread: 3000 }, low: d, high: d + 3000, mean: d + 1500 },
  ];
  for (const { jitter, low, high, mean } of cases) {
    it(`${JSON.stringify(jitter)} stays within [${low}, ${high}] with a mean within 2% of ${mean}`, () => {
      const stats = sample(jitter, 42);
      expect(stats.min).toBeGreaterThanOrEqual(low);
      expect(stats.max).toBeLessThanOrEqual(high);
      expect(Math.abs(stats.mean - mean) / mean).toBeLessThan(0.02);
      if (high > low) expect(stats.max - stats.min).toBeGreaterThan((high - low) * 0.99);
    });
  }

  it('decorrelated obeys min(cap, U(base, 3·previous)), walking from the previous delay', () => {
    const base = 100;
    const cap = 5000;
    const policy = normalizePolicy({ backoff: { base }, maxDelay: cap, jitter: 'decorrelated' });
    const random = seededRandom(3);
    let previous = base;
    let sum = 0;
    let uncappedDraws = 0;
    let hitCap = 0;
    for (let i = 0; i < DRAWS; i++) {
      const { delay, raw } = computeDelay(policy, 1 + (i % 10), previous, random);
      expect(delay).toBeGreaterThanOrEqual(Math.min(cap, base));
      expect(delay).toBeLessThanOrEqual(Math.min(cap, 3 * previous));
      expect(delay).toBe(Math.min(cap, raw));
      expect(raw).toBeGreaterThanOrEqual(base);
      expect(raw).toBeLessThanOrEqual(3 * previous);
      if (delay === cap) hitCap++;
      if (previous === base) {
        // From the base, the draw is U(base, 3·base): mean 2·base.
        sum += raw;
        uncappedDraws++;
      }
      previous = delay;
      if (i % 50 === 49) previous = base; // restart walks so the first step is sampled often
    }
    expect(hitCap).toBeGreaterThan(0);
    expect(Math.abs(sum / uncappedDraws - 2 * base) / (2 * base)).toBeLessThan(0.02);
  });

  it('draws nothing for jitter none, so seeded sequences are not shifted', () => {
    let calls = 0;
    const policy = normalizePolicy({
      jitter: 'none',
      random: () => {
        calls++;
        return 0.5;
      },
    });
    computeDelay(policy, 1, 100, policy.random);
    expect(calls).toBe(0);
  });

  it('rejects a random source that returns NaN or values outside [0, 1]', () => {
    const policy = normalizePolicy({ jitter: 'full', random: () => Number.NaN });
    expect(() => computeDelay(policy, 1, 100, policy.random)).toThrow(
      'Expected random() to be a number in [0, 1), got NaN',
    );
    expect(() => computeDelay(policy, 1, 100, () => 2)).toThrow(/got 2/);
  });
});

describe('delay properties for arbitrary valid options (fast-check)', () => {
  const strategy = fc.constantFrom('constant', 'linear', 'polynomial', 'exponential');
  const jitterType = fc.constantFrom('none', 'constant', 'equal', 'full', 'decorrelated', 'proportional');
  const options = fc.record({
    backoff: fc.record({
      strategy,
      base: fc.double({ min: 1, max: 100_000, noNaN: true }),
      step: fc.double({ min: 0, max: 100_000, noNaN: true }),
      factor: fc.double({ min: 1, max: 10, noNaN: true }),
      exponent: fc.double({ min: 0, max: 6, noNaN: true }),
    }),
    maxDelay: fc.double({ min: 0, max: 2_147_483_647, noNaN: true }),
    jitter: fc.record({
      type: jitterType,
      spread: fc.double({ min: 0, max: 60_000, noNaN: true }),
      ratio: fc.double({ min: 0, max: 1, noNaN: true }),
    }),
  });

  it('every delay is finite, ≥ 0 and ≤ its bound', () => {
    fc.assert(
      fc.property(options, fc.integer({ min: 1, max: 2000 }), fc.integer(), (input, n, seed) => {
        const policy = normalizePolicy(input as PolicyOptions);
        const random = seededRandom(seed);
        let previous = policy.backoff.base;
        for (let retry = n; retry < n + 5; retry++) {
          const { delay, capped } = computeDelay(policy, retry, previous, random);
          const jitter = policy.jitter;
          const bound =
            jitter.type === 'constant'
              ? capped + jitter.spread
              : jitter.type === 'proportional'
                ? capped * (1 + jitter.ratio)
                : jitter.type === 'decorrelated'
                  ? Math.min(policy.maxDelay, 3 * previous)
                  : capped;
          expect(Number.isFinite(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(bound * (1 + 1e-12));
          expect(capped).toBeLessThanOrEqual(policy.maxDelay);
          previous = delay;
        }
      }),
      { numRuns: 2000 },
    );
  });
});
