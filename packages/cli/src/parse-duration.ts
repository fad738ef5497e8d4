import { UsageError } from './usage-error';

// A plain decimal and a unit. No sign and no exponent: '-1s' and '1e999' are mistakes, not durations.
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;

type Unit = 'ms' | 's' | 'm' | 'h';

// The power of ten is applied to the decimal text (`Number('1.005e3')`), so '1.005s' is exactly
// 1005 ms rather than 1.005 * 1000 = 1004.9999999999999.
const UNITS: Record<Unit, { readonly exponent: number; readonly multiplier: number }> = {
  ms: { exponent: 0, multiplier: 1 },
  s: { exponent: 3, multiplier: 1 },
  m: { exponent: 3, multiplier: 60 },
  h: { exponent: 3, multiplier: 3600 },
};

/**
 * Parses a duration written for people into milliseconds: `250ms`, `1s`, `1.5s`, `2m`, `1h`, or a
 * bare number of milliseconds. Anything else throws a {@link UsageError} that names the flag; the
 * result is never NaN, negative or infinite.
 *
 * @example
 * ```ts
 * parseDuration('1.5s'); // 1500
 * parseDuration('250'); // 250
 * parseDuration('abc', '--base');
 * // UsageError: Expected --base to be a duration such as 250ms, 1s or 2m, got 'abc'
 * ```
 */
export function parseDuration(text: string, flag?: string): number {
  const match = DURATION.exec(text);
  let ms = Number.NaN;
  if (match?.[1] !== undefined) {
    const unit = UNITS[(match[2] ?? 'ms') as Unit];
    ms = Number(`${match[1]}e${unit.exponent}`) * unit.multiplier;
  }
  if (!Number.isFinite(ms)) {
    const subject = flag === undefined ? 'a duration' : `${flag} to be a duration`;
    throw new UsageError(`Expected ${subject} such as 250ms, 1s or 2m, got '${text}'`);
  }
  return ms;
}
