import { UsageError } from './usage-error';

// Decimal notation only: 'Infinity', 'NaN', '0x10' and '1e3' are refused rather than read the way
// `Number()` would read them.
const DECIMAL = /^-?\d+(?:\.\d+)?$/;
const WHOLE = /^\d+$/;

/**
 * Parses a plain decimal number such as `2`, `1.5` or `-1`. Ranges are left to the option's own
 * validation, which knows them and says so.
 */
export function parseNumber(text: string, flag: string): number {
  const value = DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value)) {
    throw new UsageError(`Expected ${flag} to be a number such as 2 or 1.5, got '${text}'`);
  }
  return value;
}

/** Parses a whole number from `min` (0 unless given) to `max`, such as a count of retries. */
export function parseCount(text: string, flag: string, max: number, min = 0): number {
  const value = WHOLE.test(text) ? Number(text) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(`Expected ${flag} to be a whole number from ${min} to ${max}, got '${text}'`);
  }
  return value;
}
