import { describe, expect, it } from 'vitest';
import { quotaSpentUntil } from './quota';
import { parseRetryHint } from './retry-hint';

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
  ] as const)('%i %o: spent until the reset', (status, headers, until) => {
    expect(spent(status, headers)).toBe(until);
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
