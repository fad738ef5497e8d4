import { describe, expect, it } from 'vitest';
import { MAX_HINT_DELAY } from '../http/retry-hint';
import { MAX_DURATION_TEXT, parseGoDuration } from './go-duration';

describe('parseGoDuration', () => {
  it.each([
    ['1s', 1_000],
    ['20ms', 20],
    ['6m0s', 360_000],
    ['1h2m3.5s', 3_723_500],
    ['0s', 0],
    ['0', 0],
    ['2h', 7_200_000],
    ['1.5m', 90_000],
    ['500us', 0.5],
    ['500µs', 0.5],
    ['500μs', 0.5],
    ['250ns', 0.00025],
    ['1m30s250ms', 90_250],
    ['1h1m1s1ms1us1ns', 3_661_001.001001],
  ])('reads %s as %d ms', (text, ms) => {
    expect(parseGoDuration(text)).toBeCloseTo(ms, 9);
  });

  it('tells minutes from milliseconds by the letter that follows the m', () => {
    expect(parseGoDuration('1m')).toBe(60_000);
    expect(parseGoDuration('1ms')).toBe(1);
    expect(parseGoDuration('1m1ms')).toBe(60_001);
  });

  it.each([
    ['empty', ''],
    ['a bare number', '5'],
    ['a bare zero with a fraction', '0.0'],
    ['a sign', '-1s'],
    ['a plus sign', '+1s'],
    ['a leading space', ' 1s'],
    ['an inner space', '1m 2s'],
    ['a trailing space', '1s '],
    ['an exponent', '1e3ms'],
    ['a fraction without digits after the point', '1.s'],
    ['a fraction without digits before the point', '.5s'],
    ['two points', '1.2.3s'],
    ['an unknown unit', '5d'],
    ['an upper-case unit', '5S'],
    ['a unit with no number', 'ms'],
    ['a repeated unit', '1s1s'],
    ['units smallest first', '1s1m'],
    ['micro- then milliseconds', '1us1ms'],
    ['two spellings of micro', '1us1µs'],
    ['a number after the last unit', '1m30'],
    ['a comma-joined repeat of the header', '1s, 2s'],
    ['infinity', 'Infinity'],
    ['not a number', 'NaNs'],
  ])('refuses %s', (_name, text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });

  it('refuses what is not a string at all', () => {
    expect(parseGoDuration(undefined as unknown as string)).toBeUndefined();
    expect(parseGoDuration(5 as unknown as string)).toBeUndefined();
  });

  it(`reads ${MAX_DURATION_TEXT} characters and refuses one more, however valid it looks`, () => {
    const fits = `${'0'.repeat(MAX_DURATION_TEXT - 2)}1s`;
    expect(parseGoDuration(fits)).toBe(1_000);
    expect(parseGoDuration(`0${fits}`)).toBeUndefined();
  });

  it('clamps a huge duration to the longest hint, so it still reads as a very long wait', () => {
    expect(parseGoDuration('99999999999999999999h')).toBe(MAX_HINT_DELAY);
    expect(parseGoDuration(`${'9'.repeat(62)}h`)).toBe(MAX_HINT_DELAY);
    expect(parseGoDuration('876600h')).toBe(MAX_HINT_DELAY); // 100 years of 365.25 days: the cap itself
    expect(parseGoDuration('876601h')).toBe(MAX_HINT_DELAY);
    expect(parseGoDuration('1000h')).toBe(3_600_000_000);
  });

  it('refuses 100 000 characters of hostile text without reading them: each answer is a refusal', () => {
    const big = 100_000;
    const shapes = [
      '9'.repeat(big),
      `${'9'.repeat(big)}h`,
      `${'0'.repeat(big)}1s`,
      `${'1.'.repeat(big / 2)}s`,
      `${'1h'.repeat(big / 2)}`,
      `${'m'.repeat(big)}s`,
      `1${'µ'.repeat(big)}s`,
      ' '.repeat(big),
    ];
    for (const text of shapes) expect(parseGoDuration(text), text.slice(0, 20)).toBeUndefined();
  });
});
