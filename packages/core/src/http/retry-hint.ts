/**
 * Server hints: how long a response asks the client to wait before trying again. Reads
 * `Retry-After` (RFC 9110 §10.2.3), then the `RateLimit` field of draft-ietf-httpapi-ratelimit-headers,
 * then the older `RateLimit-Reset` and the de facto `X-RateLimit-Reset`. A value that does not
 * parse is skipped, never guessed: the caller falls back to its own backoff. Pure: `now` is passed in.
 */

import { type HeadersLike, headerValue, trimOws } from './headers';
import { parseHttpDate } from './http-date';

/**
 * The longest delay a hint can carry: 100 years (of 365.25 days) in milliseconds. Larger values,
 * even ones too long for a `number`, are clamped to it, so an absurd hint still reads as "a very
 * long wait" (which the caller refuses as too long) instead of being dropped and retried at once.
 */
export const MAX_HINT_DELAY = 3_155_760_000_000;

/** The header a {@link RetryHint} was read from, lower-cased. */
export type RetryHintSource = 'retry-after' | 'ratelimit' | 'ratelimit-reset' | 'x-ratelimit-reset';

/** A server's request to wait before the next attempt. */
export interface RetryHint {
  /** Milliseconds to wait from `now`: a whole number, finite, in [0, {@link MAX_HINT_DELAY}]. */
  readonly delay: number;
  /** Epoch milliseconds to wait until: exactly `now + delay`. */
  readonly retryAt: number;
  /** The header the hint came from, or `'hint'`: the client's `hint` option read it. */
  readonly source: RetryHintSource | 'hint';
  /** The header's raw value, repeated fields joined with `', '`: for logs and events. */
  readonly value: string;
}

/** Reads one header value into a delay in milliseconds (unclamped), or `undefined` if malformed. */
type DelayReader = (value: string, now: number) => number | undefined;

const DIGITS = /^\d+$/;
const DECIMAL = /^\d+(?:\.\d+)?$/;
const SECOND = 1000;

/**
 * The wait a response asks for, or `undefined` when it asks for none (or only in a form that
 * does not parse). Headers are tried in this order, and a malformed one falls through to the next:
 *
 * 1. `Retry-After`: delay-seconds (digits only) or an HTTP-date; a date in the past means 0.
 * 2. `RateLimit` (IETF draft): the largest `t` among policies with `r=0`, e.g. `"default";r=0;t=10`;
 *    also the older dictionary form `limit=100, remaining=0, reset=10`.
 * 3. `RateLimit-Reset`: delay-seconds, or an epoch timestamp in seconds (≥ 10^9) or milliseconds
 *    (≥ 10^12), unless `RateLimit-Remaining` says quota is left.
 * 4. `X-RateLimit-Reset`: the same, decimals allowed. Skipped when `X-RateLimit-Remaining` says
 *    quota is left.
 *
 * An epoch timestamp becomes the delay from `now` before anything else sees it (a past one is 0).
 * Every delay is rounded up to a whole millisecond and clamped to [0, {@link MAX_HINT_DELAY}]:
 * never NaN, negative or Infinity, however hostile the value. How long a client actually waits is
 * the caller's to bound (`maxRetryAfter`).
 *
 * @param headers The response headers: fetch `Headers`, axios headers, or a plain object.
 * @param now The current time in epoch milliseconds (from the injected clock); HTTP-dates and
 *   epoch timestamps are measured from it.
 * @throws {TypeError} When `now` is not a finite number.
 *
 * @example
 * ```ts
 * parseRetryHint({ 'retry-after': '120' }, 0); // { delay: 120000, retryAt: 120000, source: 'retry-after', value: '120' }
 * parseRetryHint({ ratelimit: '"burst";r=5;t=1, "day";r=0;t=3600' }, 0)?.delay; // 3600000
 * parseRetryHint(new Headers({ 'Retry-After': 'soon' }), 0); // undefined: not a delay or a date
 * ```
 */
export function parseRetryHint(headers: HeadersLike | undefined, now: number): RetryHint | undefined {
  expectNow(now);
  for (const [source, header] of HINT_ORDER) {
    const value = headerValue(headers, source);
    // A reset is no wait while its remaining count says quota is left.
    if (value === undefined || (header.remaining && hasQuotaLeft(headers, header.remaining))) continue;
    const hint = readHint(source, value, header.read, now);
    if (hint) return hint;
  }
  return undefined;
}

/**
 * The hint of a response that says the client's quota is spent, whatever its status: the
 * `RateLimit` field with a policy at `r=0` (or the older `remaining=0`), else a `RateLimit-Remaining`
 * or `X-RateLimit-Remaining` of zero with its reset. `Retry-After` says nothing of a quota and is
 * not read, and a reset only once its remaining count says zero: a response with none of these
 * fields, as most successes are, costs three header reads.
 *
 * @param headers The response headers: fetch `Headers`, axios headers, or a plain object.
 * @param now The current time in epoch milliseconds.
 * @throws {TypeError} When `now` is not a finite number.
 *
 * @example
 * ```ts
 * parseSpentQuota({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '30' }, 0)?.retryAt; // 30000
 * parseSpentQuota({ 'retry-after': '30' }, 0); // undefined: a wait, but no word of a quota
 * ```
 */
export function parseSpentQuota(headers: HeadersLike | undefined, now: number): RetryHint | undefined {
  expectNow(now);
  for (const [source, header] of HINT_ORDER) {
    // A reset speaks of a spent quota only once its remaining count says zero (read first: most
    // responses carry no remaining count, and then the reset is not read at all).
    if (!header.quota || (header.remaining && !saysNoneLeft(headerValue(headers, header.remaining))))
      continue;
    const value = headerValue(headers, source);
    const hint = value === undefined ? undefined : readHint(source, value, header.read, now);
    if (hint) return hint;
  }
  return undefined;
}

/** Whether a remaining-quota count is zero (`0`, `00`, `0.0`), allowing surrounding whitespace. */
function saysNoneLeft(remaining: string | undefined): boolean {
  return remaining !== undefined && /^0+(?:\.0*)?$/.test(trimOws(remaining));
}

function expectNow(now: number): void {
  if (typeof now !== 'number' || !Number.isFinite(now)) {
    throw new TypeError(`Expected now to be a finite number of epoch milliseconds, got ${String(now)}`);
  }
}

/**
 * The hint a client's `hint` option gave (milliseconds from `now`), held to the same bounds as a
 * header's: rounded up, at most {@link MAX_HINT_DELAY}; `undefined` for no number or a negative one.
 */
export function optionHint(ms: unknown, now: number): RetryHint | undefined {
  if (typeof ms !== 'number' || ms < 0) return undefined;
  const delay = clampDelay(ms);
  return delay === undefined ? undefined : { delay, retryAt: now + delay, source: 'hint', value: String(ms) };
}

/** The hint a header's value gives, if it parses. */
function readHint(
  source: RetryHintSource,
  value: string,
  read: DelayReader,
  now: number,
): RetryHint | undefined {
  const delay = clampDelay(read(value, now));
  return delay === undefined ? undefined : { delay, retryAt: now + delay, source, value };
}

function clampDelay(ms: number | undefined): number | undefined {
  if (ms === undefined || Number.isNaN(ms)) return undefined;
  // Round up: waiting a fraction of a millisecond too long is harmless, too short is not.
  return Math.min(Math.max(Math.ceil(ms), 0), MAX_HINT_DELAY);
}

// RFC 9110 §10.2.3: Retry-After = HTTP-date / delay-seconds.
const readRetryAfter: DelayReader = (value, now) => {
  const text = trimOws(value);
  // RFC 9110 §10.2.3: delay-seconds = 1*DIGIT; signs, decimals, units or inner spaces make it no delay.
  if (DIGITS.test(text)) return Number(text) * SECOND;
  // RFC 9110 §10.2.3: otherwise an HTTP-date; RFC 9110 §5.6.7 needs `now` for RFC 850 years.
  const date = parseHttpDate(text, now);
  // A date already past asks for no wait at all (clampDelay turns the negative into 0).
  return date === undefined ? undefined : date - now;
};

// draft-ietf-httpapi-ratelimit-headers-10 §4: RateLimit is a List of Service Limit Items.
const readRateLimit: DelayReader = (value) => {
  const text = trimOws(value);
  const items = parseList(text);
  if (items !== undefined) {
    let wait: number | undefined;
    for (const params of items) {
      // draft-10 §4.1.1: r is the remaining quota; only a policy with none left refuses the next request.
      if (params.get('r') !== 0) continue;
      // draft-10 §4.1.2: t is delay-seconds until quota returns; an item without it gives no time.
      const reset = params.get('t');
      if (typeof reset !== 'number' || reset < 0) continue;
      // Every exhausted policy must have recovered, so the longest reset is the one to wait for.
      wait = Math.max(wait ?? 0, reset);
    }
    return wait === undefined ? undefined : wait * SECOND;
  }
  // draft-ietf-httpapi-ratelimit-headers-07 §3.1, §3.3–3.4: the older Dictionary
  // `limit=…, remaining=…, reset=…`, reset in delay-seconds; §5: a malformed field is ignored.
  const members = parseDictionary(text);
  if (members === undefined || members.get('remaining') !== 0) return undefined;
  const reset = members.get('reset');
  return typeof reset === 'number' && reset >= 0 ? reset * SECOND : undefined;
};

// The reset headers have no single form in the wild: RateLimit-Reset is delay-seconds in
// draft-ietf-httpapi-ratelimit-headers-01 §3.3 (up to -06), yet servers send epoch seconds there
// as GitHub does in X-RateLimit-Reset, and other APIs epoch milliseconds. A delay that long is
// no delay anyone means, so a value of timestamp size is read as one; measured from `now`, a
// reset already past asks for no wait.
const EPOCH_MS_FROM = 1_000_000_000_000; // ≥ 10^12: epoch ms (since Sep 2001); as seconds: 31,700 years
const EPOCH_SECONDS_FROM = 1_000_000_000; // ≥ 10^9: epoch s (since Sep 2001); as a delay: 31.7 years

function resetDelay(reset: number, now: number): number {
  if (reset >= EPOCH_MS_FROM) return reset - now;
  if (reset >= EPOCH_SECONDS_FROM) return reset * SECOND - now;
  return reset * SECOND;
}

// draft-01 §3.3: RateLimit-Reset = delay-seconds, digits only (no sign, fraction or unit).
const readResetTime: DelayReader = (value, now) => {
  const text = trimOws(value);
  return DIGITS.test(text) ? resetDelay(Number(text), now) : undefined;
};

const readXResetTime: DelayReader = (value, now) => {
  const text = trimOws(value);
  // De facto: digits, optionally with a decimal fraction (`1.5`); no sign, exponent or unit.
  return DECIMAL.test(text) ? resetDelay(Number(text), now) : undefined;
};

/** How one hint header is read. */
interface HintHeader {
  /** Its value as a delay in milliseconds (unclamped), or `undefined` when malformed. */
  readonly read: DelayReader;
  /** Whether it speaks of a spent quota (`parseSpentQuota` reads only these). */
  readonly quota: boolean;
  /**
   * The count of quota left that governs it: a count above zero makes it no wait, and only a
   * count of zero makes it a spent quota. draft-01 §3.2, §4 for `RateLimit-Remaining`; the
   * de facto `X-RateLimit-Remaining` by analogy.
   */
  readonly remaining?: string;
}

/**
 * The hint headers, one row each, keyed by the source a hint names and tried in this order: a
 * source added to `RetryHintSource` does not compile until it has its row.
 */
const HINT_HEADERS: Readonly<Record<RetryHintSource, HintHeader>> = {
  'retry-after': { read: readRetryAfter, quota: false },
  ratelimit: { read: readRateLimit, quota: true },
  'ratelimit-reset': { read: readResetTime, quota: true, remaining: 'ratelimit-remaining' },
  'x-ratelimit-reset': { read: readXResetTime, quota: true, remaining: 'x-ratelimit-remaining' },
};
const HINT_ORDER = Object.entries(HINT_HEADERS) as ReadonlyArray<[RetryHintSource, HintHeader]>;

function hasQuotaLeft(headers: HeadersLike | undefined, name: string): boolean {
  const value = headerValue(headers, name);
  if (value === undefined) return false;
  const text = trimOws(value);
  return DIGITS.test(text) && Number(text) > 0;
}

// ---------------------------------------------------------------------------------------------
// Structured Field Values (RFC 9651, formerly RFC 8941), only as far as the RateLimit field needs:
// Lists and Dictionaries of bare items with parameters. Inner lists are not Service Limit Items,
// so a field holding one is treated as malformed. Every pattern is anchored at the cursor
// (sticky) and linear, so a hostile header costs time proportional to its length.

/** A parameter or dictionary value: an Integer as a number, any other bare item as 'other'. */
type SfValue = number | 'other';
type SfParams = Map<string, SfValue>;

// RFC 9651 §3.1.2: key = ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" ).
const KEY = /[a-z*][a-z0-9_.*-]*/y;
// RFC 9651 §3.3.4: sf-token = ( ALPHA / "*" ) *( tchar / ":" / "/" ).
const TOKEN = /[A-Za-z*][!#$%&'*+.^_`|~:/A-Za-z0-9-]*/y;
// RFC 9651 §3.3.3: sf-string = DQUOTE *( unescaped / escaped ) DQUOTE: printable ASCII, \" and \\ escaped.
const STRING = /"(?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*"/y;
// RFC 9651 §3.3.1–3.3.2: sf-integer = ["-"] 1*15DIGIT; sf-decimal adds "." 1*3DIGIT. Longer runs
// of digits are accepted on purpose: a huge reset must clamp to a long wait, not vanish.
const NUMBER = /-?\d+(\.\d+)?/y;
// RFC 9651 §3.3.5–3.3.8: byte sequence, boolean, date and display string: parsed only to skip.
const OTHER_ITEM =
  /:[A-Za-z0-9+/=]*:|\?[01]|@-?\d+|%"(?:[\x20\x21\x23\x24\x26-\x5b\x5d-\x7e]|%[0-9a-f]{2})*"/y;

class SfCursor {
  private position = 0;

  constructor(private readonly text: string) {}

  get done(): boolean {
    return this.position >= this.text.length;
  }

  /** Consumes `char` if it is next. */
  eat(char: string): boolean {
    if (this.text[this.position] !== char) return false;
    this.position++;
    return true;
  }

  /** Consumes a match of the sticky `pattern` at the cursor. */
  match(pattern: RegExp): RegExpExecArray | undefined {
    pattern.lastIndex = this.position;
    const found = pattern.exec(this.text);
    if (found) this.position = pattern.lastIndex;
    return found ?? undefined;
  }

  // RFC 9651 §4.2.1: OWS around the commas between members.
  skipOws(): void {
    while (this.text[this.position] === ' ' || this.text[this.position] === '\t') this.position++;
  }

  // RFC 9651 §4.2.3.2: SP only (no tabs) after each ";".
  skipSp(): void {
    while (this.text[this.position] === ' ') this.position++;
  }

  /** A bare item, or `undefined` when none starts here. */
  bareItem(): SfValue | undefined {
    const number = this.match(NUMBER);
    if (number) return number[1] === undefined ? Number(number[0]) : 'other';
    return this.match(STRING) || this.match(TOKEN) || this.match(OTHER_ITEM) ? 'other' : undefined;
  }

  /** `*( ";" *SP key [ "=" bare-item ] )`; a later duplicate key wins (RFC 9651 §4.2.3.2). */
  params(): SfParams | undefined {
    const params: SfParams = new Map();
    while (this.eat(';')) {
      this.skipSp();
      const key = this.match(KEY)?.[0];
      if (key === undefined) return undefined;
      // RFC 9651 §4.2.3.2: a key without a value is Boolean true.
      const value = this.eat('=') ? this.bareItem() : 'other';
      if (value === undefined) return undefined;
      params.set(key, value);
    }
    return params;
  }

  /** After a member: end of input, or a comma followed by another member. */
  nextMember(): 'end' | 'more' | 'malformed' {
    this.skipOws();
    if (this.done) return 'end';
    if (!this.eat(',')) return 'malformed';
    this.skipOws();
    // RFC 9651 §4.2.1: a trailing comma is an error.
    return this.done ? 'malformed' : 'more';
  }
}

// The parameters of each item of a List whose items are policy names (sf-string or sf-token,
// draft-10 §4.1), or `undefined` if `text` is not such a List. `text` is already trimmed.
function parseList(text: string): SfParams[] | undefined {
  const cursor = new SfCursor(text);
  const items: SfParams[] = [];
  if (cursor.done) return items;
  for (;;) {
    if (!cursor.match(STRING) && !cursor.match(TOKEN)) return undefined;
    const params = cursor.params();
    if (params === undefined) return undefined;
    items.push(params);
    const next = cursor.nextMember();
    if (next === 'malformed') return undefined;
    if (next === 'end') return items;
  }
}

// The members of a Dictionary (RFC 9651 §3.2) with their values, or `undefined` if `text` is not one.
function parseDictionary(text: string): Map<string, SfValue> | undefined {
  const cursor = new SfCursor(text);
  const members = new Map<string, SfValue>();
  if (cursor.done) return undefined;
  for (;;) {
    const key = cursor.match(KEY)?.[0];
    if (key === undefined) return undefined;
    // RFC 9651 §4.2.2: a member without "=" is Boolean true.
    const value = cursor.eat('=') ? cursor.bareItem() : 'other';
    if (value === undefined || cursor.params() === undefined) return undefined;
    members.set(key, value);
    const next = cursor.nextMember();
    if (next === 'malformed') return undefined;
    if (next === 'end') return members;
  }
}
