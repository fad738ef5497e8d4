import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quotaSpentUntil } from './quota';
import { MAX_HINT_DELAY, parseRetryHint, parseSpentQuota } from './retry-hint';

const NOW = 1_000_000;
const spent = (status: number, headers: Record<string, string>) =>
  quotaSpentUntil(status, headers, parseRetryHint(headers, NOW));

describe('quotaSpentUntil', () => {
  it.each([
    [429, { 'retry-after': '7' }, NOW + 7000],
    [429, { 'x-ratelimit-reset': '7' }, NOW + 7000],
    [200, { ratelimit: '"default";r=0;t=7' }, NOW + 7000],
    [200, { ratelimit: '"burst";r=3;t=1, "day";r=0;t=7' }, NOW + 7000],
    [200, { 'ratelimit-remaining': '0', 'ratelimit-reset': '7' }, NOW + 7000],
    [503, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '7' }, NOW + 7000],
    [200, { 'x-ratelimit-remaining': '0.0', 'x-ratelimit-reset': '7' }, NOW + 7000],
    // A Retry-After next to a spent quota does not hide it.
    [200, { 'retry-after': '3', ratelimit: '"default";r=0;t=7' }, NOW + 7000],
    [503, { 'retry-after': '3', 'ratelimit-remaining': '0', 'ratelimit-reset': '7' }, NOW + 7000],
    // A reset whose remaining count is missing says nothing; the next convention still may.
    [200, { 'ratelimit-reset': '3', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '7' }, NOW + 7000],
  ] as const)('%i %o: spent until the reset', (status, headers, until) => {
    expect(spent(status, headers)).toBe(until);
  });

  it.each([200, 429, 503])(
    '%i: a reset in epoch seconds is spent until that time, not that many seconds on',
    (status) => {
      const at = Date.UTC(2058, 0, 1);
      for (const family of ['ratelimit', 'x-ratelimit']) {
        const headers = { [`${family}-remaining`]: '0', [`${family}-reset`]: String(at / 1000) };
        expect(spent(status, headers), family).toBe(at);
      }
    },
  );

  it('is never NaN, Infinity or before now, and never past now + MAX_HINT_DELAY, whatever the headers', () => {
    const name = fc.constantFrom(
      'retry-after',
      'ratelimit',
      'ratelimit-remaining',
      'ratelimit-reset',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
    );
    const value = fc.oneof(
      fc.string(),
      fc.string({ unit: 'binary' }),
      fc.constantFrom(
        '0',
        '-1',
        '1e9',
        '1000000000',
        '1e30',
        'NaN',
        '"d";r=0;t=1000000000',
        '9'.repeat(10_240),
      ),
      fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(200, 429, 503),
        fc.dictionary(name, value),
        // Whole milliseconds, as clocks give them: a fraction could round by an ulp on the way.
        fc.double({ min: -1e15, max: 1e15, noNaN: true }).map(Math.trunc),
        (status, headers, now) => {
          const until = quotaSpentUntil(status, headers, parseRetryHint(headers, now));
          if (until === undefined) return;
          expect(Number.isFinite(until)).toBe(true);
          expect(until).toBeGreaterThanOrEqual(now);
          expect(until - now).toBeLessThanOrEqual(MAX_HINT_DELAY);
        },
      ),
      { numRuns: 500 },
    );
  });

  it.each([
    [200, {}],
    [429, {}],
    [429, { 'retry-after': 'soon' }],
    [503, { 'retry-after': '7' }],
    [200, { ratelimit: '"default";r=5;t=7' }],
    [200, { 'x-ratelimit-reset': '7' }],
    [200, { 'x-ratelimit-remaining': '2', 'x-ratelimit-reset': '7' }],
    [200, { 'ratelimit-remaining': 'none', 'ratelimit-reset': '7' }],
  ] as const)('%i %o: says nothing about a spent quota', (status, headers) => {
    expect(spent(status, headers)).toBeUndefined();
  });
});

describe('parseSpentQuota', () => {
  /** Headers that record which fields were asked for, as fetch's `Headers.get` would be called. */
  const recording = (fields: Record<string, string>) => {
    const asked: string[] = [];
    return {
      asked,
      headers: {
        get(name: string) {
          asked.push(name);
          return fields[name] ?? null;
        },
      },
    };
  };

  it('reads three fields of a response that says nothing of its quota, and no Retry-After', () => {
    const { asked, headers } = recording({ 'retry-after': '7', 'content-type': 'text/plain' });
    expect(parseSpentQuota(headers, NOW)).toBeUndefined();
    expect(asked).toEqual(['ratelimit', 'ratelimit-remaining', 'x-ratelimit-remaining']);
  });

  it('reads a reset only once its remaining count says zero', () => {
    const left = recording({ 'x-ratelimit-remaining': '4', 'x-ratelimit-reset': '7' });
    expect(parseSpentQuota(left.headers, NOW)).toBeUndefined();
    expect(left.asked).not.toContain('x-ratelimit-reset');

    const spentOut = recording({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '7' });
    expect(parseSpentQuota(spentOut.headers, NOW)).toEqual({
      delay: 7000,
      retryAt: NOW + 7000,
      source: 'x-ratelimit-reset',
      value: '7',
    });
  });

  it('rejects a clock reading that is not a finite number', () => {
    expect(() => parseSpentQuota({}, Number.NaN)).toThrow(/finite number of epoch milliseconds, got NaN/);
  });
});
