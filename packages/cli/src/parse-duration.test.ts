import { describe, expect, it } from 'vitest';
import { parseDuration } from './parse-duration';
import { UsageError } from './usage-error';

describe('parseDuration', () => {
  it.each([
    ['250ms', 250],
    ['1s', 1000],
    ['1.5s', 1500],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['250', 250],
    ['0', 0],
    ['0.5', 0.5],
    ['64s', 64_000],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('reads decimal seconds exactly, without binary rounding', () => {
    // 1.005 * 1000 is 1004.9999999999999 in floating point.
    expect(parseDuration('1.005s')).toBe(1005);
    expect(parseDuration('0.1s')).toBe(100);
    expect(parseDuration('1.5m')).toBe(90_000);
  });

  it.each([
    '',
    '1x',
    '-1s',
    'NaN',
    '1e999',
    '1e3',
    'Infinity',
    'abc',
    '1.',
    '.5s',
    ' 1s',
    '1s ',
    '1 s',
    '1S',
    '1ms2',
    '0x10',
  ])('refuses %j', (text) => {
    expect(() => parseDuration(text)).toThrow(UsageError);
  });

  it('refuses a value too large to be finite instead of returning Infinity', () => {
    expect(() => parseDuration(`${'9'.repeat(400)}h`)).toThrow(UsageError);
  });

  it('names the flag and echoes the value in its message', () => {
    expect(() => parseDuration('abc', '--base')).toThrow(
      "Expected --base to be a duration such as 250ms, 1s or 2m, got 'abc'",
    );
    expect(() => parseDuration('1x')).toThrow("Expected a duration such as 250ms, 1s or 2m, got '1x'");
  });
});
