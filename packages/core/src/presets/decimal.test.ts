import { describe, expect, it } from 'vitest';
import { decimalValue, noneLeft } from './decimal';

describe('decimalValue', () => {
  it.each([
    ['0', 0],
    ['30', 30],
    ['1.5', 1.5],
    [' 1500 ', 1500],
    ['\t7\t', 7],
    ['1717000000', 1_717_000_000],
    ['007', 7],
  ])('reads %j as %d', (text, value) => {
    expect(decimalValue(text)).toBe(value);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['blank', '  '],
    ['a sign', '-1'],
    ['a plus', '+1'],
    ['an exponent', '1e3'],
    ['a unit', '30s'],
    ['a trailing point', '1.'],
    ['a leading point', '.5'],
    ['two numbers', '1 2'],
    ['a repeated header', '1, 2'],
    ['a date', 'Wed, 21 Oct 2015 07:28:00 GMT'],
    ['hex', '0x10'],
    ['a line break', '1\n'],
  ])('refuses %s', (_name, text) => {
    expect(decimalValue(text)).toBeUndefined();
  });

  it('reads a number too long for a double as Infinity, for the caller to clamp, in one scan', () => {
    expect(decimalValue('9'.repeat(1 << 20))).toBe(Number.POSITIVE_INFINITY);
    expect(decimalValue(`${'9'.repeat(1 << 20)}x`)).toBeUndefined();
  });
});

describe('noneLeft', () => {
  it('says a remaining count of zero is none left, and nothing else', () => {
    expect(noneLeft('0')).toBe(true);
    expect(noneLeft(' 00 ')).toBe(true);
    expect(noneLeft('0.0')).toBe(true);
    expect(noneLeft('1')).toBe(false);
    expect(noneLeft('-0')).toBe(false);
    expect(noneLeft(undefined)).toBe(false);
    expect(noneLeft('')).toBe(false);
  });
});
