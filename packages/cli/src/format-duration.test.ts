import { describe, expect, it } from 'vitest';
import { formatDuration, formatMinutes } from './format-duration';

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [250, '250ms'],
    [999, '999ms'],
    [999.6, '1s'],
    [1000, '1s'],
    [2000, '2s'],
    [1500, '1.5s'],
    [2252, '2.252s'],
    [64_785, '64.785s'],
    [64_240, '64.24s'],
    [38_200, '38.2s'],
    [204_600, '204.6s'],
    [2_046_000, '2046s'],
    [145_640.4, '145.64s'],
    [1000.0004, '1s'],
    [0.4, '0.4ms'],
    [3.2, '3.2ms'],
    [9.94, '9.9ms'],
    [9.96, '10ms'],
    [2.04, '2ms'],
    [-0.4, '-0.4ms'],
  ])('formats %d ms as %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('formatMinutes', () => {
  it.each([
    [59_999, ''],
    [60_000, '~1.0 min'],
    [62_000, '~1.0 min'],
    [190_000, '~3.2 min'],
    [382_000, '~6.4 min'],
    [1_024_000, '~17.1 min'],
    [2_046_000, '~34.1 min'],
    [3_025_000, '~50.4 min'],
  ])('formats %d ms as %j', (ms, text) => {
    expect(formatMinutes(ms)).toBe(text);
  });
});
