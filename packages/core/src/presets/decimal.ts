/**
 * A provider header that holds a plain number (`retry-after-ms: 1500`, `retry-after: 1.5`,
 * `x-ratelimit-reset: 1717000000`), read strictly: digits with an optional fraction, the whitespace
 * around them ignored (RFC 9110 §5.5); no sign, exponent, unit or second number. One scan, no
 * pattern, so a hostile header costs time proportional to its length.
 */

import { trimOws } from '../http/headers';

const isDigit = (code: number) => code >= 0x30 && code <= 0x39;

/**
 * The number `value` holds, or `undefined` when it holds no plain decimal number (or is absent).
 * A number too long for a double is `Infinity`: a caller clamps it (as every hint is clamped) rather
 * than reading it as no wait at all.
 *
 * @example
 * ```ts
 * decimalValue(' 1.5 '); // 1.5
 * decimalValue('1e3'); // undefined
 * ```
 */
export function decimalValue(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = trimOws(value);
  let position = 0;
  while (position < text.length && isDigit(text.charCodeAt(position))) position++;
  if (position === 0) return undefined;
  if (position < text.length) {
    if (text[position] !== '.') return undefined;
    const fraction = ++position;
    while (position < text.length && isDigit(text.charCodeAt(position))) position++;
    if (position === fraction || position < text.length) return undefined;
  }
  return Number(text);
}

/** Whether a remaining-quota count says none is left: `0` (`00`, `0.0`), whitespace around it allowed. */
export function noneLeft(value: string | undefined): boolean {
  return decimalValue(value) === 0;
}
