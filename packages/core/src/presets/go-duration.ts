/**
 * Durations written the way Go's `time.Duration` prints them (`6m0s`, `1s`, `20ms`, `1h2m3.5s`):
 * the form OpenAI's `x-ratelimit-reset-requests` and `x-ratelimit-reset-tokens` take
 * (https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers). A strict scanner,
 * no pattern: one pass over at most {@link MAX_DURATION_TEXT} characters, so a hostile header costs
 * nothing however long it is.
 */

import { MAX_HINT_DELAY } from '../http/retry-hint';

/**
 * The longest text read as a duration. Go's own longest duration, `2562047h47m16.854775807s`, is
 * 24 characters; a longer value is no duration a server means, and it is refused unread.
 */
export const MAX_DURATION_TEXT = 64;

// Each unit in milliseconds, largest first. Go's units, and only those: ns, us (µs, μs), ms, s, m, h.
const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
  ['us', 1e-3],
  ['µs', 1e-3], // U+00B5 MICRO SIGN
  ['μs', 1e-3], // U+03BC GREEK SMALL LETTER MU
  ['ns', 1e-6],
];

// Where each unit ranks, so components must come largest first: `1h2m` but never `2m1h` or `1s1s`.
const RANK: Readonly<Record<string, number>> = { h: 0, m: 1, s: 2, ms: 3, us: 4, µs: 4, μs: 4, ns: 5 };

const isDigit = (code: number) => code >= 0x30 && code <= 0x39;

/**
 * The milliseconds a Go-style duration stands for, or `undefined` when `text` is not one.
 *
 * Accepted: one or more `number unit` components, units from hours down to nanoseconds, each unit
 * at most once and larger units first; a number is digits with an optional fraction (`3.5`); `0`
 * alone is zero, as in Go. Refused: signs, spaces, exponents, a bare number, an unknown or repeated
 * unit, text longer than {@link MAX_DURATION_TEXT}. A duration too long for any wait (`99999999h`)
 * is clamped to {@link MAX_HINT_DELAY}, so it still reads as "a very long wait" (which a client
 * refuses as too long) rather than vanishing into an immediate retry.
 *
 * @example
 * ```ts
 * parseGoDuration('6m0s'); // 360000
 * parseGoDuration('1h2m3.5s'); // 3723500
 * parseGoDuration('20ms'); // 20
 * parseGoDuration('-1s'); // undefined
 * ```
 */
export function parseGoDuration(text: string): number | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > MAX_DURATION_TEXT) return undefined;
  if (text === '0') return 0;
  let position = 0;
  let rank = -1;
  let total = 0;
  while (position < text.length) {
    const start = position;
    while (position < text.length && isDigit(text.charCodeAt(position))) position++;
    if (position === start) return undefined;
    if (text[position] === '.') {
      const fraction = ++position;
      while (position < text.length && isDigit(text.charCodeAt(position))) position++;
      if (position === fraction) return undefined;
    }
    const value = Number(text.slice(start, position));
    const unit = UNITS.find(([name]) => text.startsWith(name, position) && !isMilli(text, position, name));
    if (unit === undefined) return undefined;
    const [name, ms] = unit;
    const unitRank = RANK[name] as number;
    if (unitRank <= rank) return undefined;
    rank = unitRank;
    position += name.length;
    total += value * ms;
  }
  return Math.min(total, MAX_HINT_DELAY);
}

// `m` is a prefix of `ms`: at `ms`, the unit is milliseconds, not minutes.
function isMilli(text: string, position: number, name: string): boolean {
  return name === 'm' && text[position + 1] === 's';
}
