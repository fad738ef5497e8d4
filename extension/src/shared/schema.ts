/**
 * The service worker's (and the viewer's) strict check of what a page sent. A page
 * controls everything it posts, so nothing it sends is trusted: each event is rebuilt field by
 * field from core's vocabulary, unknown fields are dropped, strings are capped, and credentials
 * are redacted again (core already does it; this is defence in depth against a page that
 * bypasses core and calls the hook itself).
 */

import type { RetrylineEvent } from '@retryline/core';
import {
  type AttemptEndEvent,
  type BreakerStateEvent,
  type ErrorSummary,
  type GuardWaitEvent,
  REDACTED,
  type RequestEndEvent,
  type RetryReleasedEvent,
  type RetryScheduledEvent,
  SENSITIVE_HEADERS,
} from '@retryline/core/instrument';

/** The longest request id accepted; a longer one drops the event (ids are UUIDs or short labels). */
export const MAX_ID_LENGTH = 200;
/** The longest free-text string kept (URL, message, header value…); longer ones are cut with `…`. */
export const MAX_STRING_LENGTH = 2048;
/** The longest header name kept; a header with a longer name is dropped. */
export const MAX_HEADER_NAME_LENGTH = 256;
/** The most headers kept in one header map; a map with more drops the event. */
export const MAX_HEADERS = 100;

/**
 * An own data property, read without running a getter or walking the prototype chain: a
 * `{ __proto__: { type } }` or a getter cannot smuggle a value through.
 */
function own(object: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(object, key);
  return descriptor !== undefined && 'value' in descriptor ? descriptor.value : undefined;
}

function isRecord(value: unknown): value is object {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Each check returns the cleaned value, or `INVALID`. */
const INVALID: unique symbol = Symbol('invalid');
type Invalid = typeof INVALID;

function text(value: unknown): string | Invalid {
  if (typeof value !== 'string') return INVALID;
  return value.length > MAX_STRING_LENGTH ? `${value.slice(0, MAX_STRING_LENGTH - 1)}…` : value;
}

/** An identifier (request id, guard key): never cut, since a cut id would name something else. */
function id(value: unknown, max = MAX_STRING_LENGTH): string | Invalid {
  return typeof value === 'string' && value.length > 0 && value.length <= max ? value : INVALID;
}

function finite(value: unknown): number | Invalid {
  return typeof value === 'number' && Number.isFinite(value) ? value : INVALID;
}

function count(value: unknown): number | Invalid {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : INVALID;
}

/** An HTTP status: fetch reports 0 for opaque and network-error responses. */
function status(value: unknown): number | Invalid {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 999 ? value : INVALID;
}

function oneOf<T extends string>(allowed: Readonly<Record<T, true>>): (value: unknown) => T | Invalid {
  return (value) => (typeof value === 'string' && Object.hasOwn(allowed, value) ? (value as T) : INVALID);
}

// `Record<Union, true>` makes each list exhaustive and exact: when core adds a value, this stops
// compiling instead of silently dropping the new events.
const attemptOutcome = oneOf<AttemptEndEvent['outcome']>({
  success: true,
  retry: true,
  error: true,
  timeout: true,
  aborted: true,
});
const phase = oneOf<NonNullable<AttemptEndEvent['phase']>>({
  'not-sent': true,
  unknown: true,
  response: true,
});
const requestOutcome = oneOf<RequestEndEvent['outcome']>({
  success: true,
  exhausted: true,
  'not-retryable': true,
  aborted: true,
  deadline: true,
  'breaker-open': true,
  'budget-exhausted': true,
  'rate-limited': true,
  'quota-spent': true,
  'bulkhead-rejected': true,
  throttled: true,
  'retry-after-too-long': true,
  'origin-failing': true,
});
const delayReason = oneOf<RetryScheduledEvent['reason']>({
  backoff: true,
  'retry-after': true,
  'rate-limit-reset': true,
});
const strategy = oneOf<RetryScheduledEvent['strategy']>({
  constant: true,
  linear: true,
  polynomial: true,
  exponential: true,
  custom: true,
});
const jitter = oneOf<RetryScheduledEvent['jitter']>({
  none: true,
  constant: true,
  equal: true,
  full: true,
  decorrelated: true,
  proportional: true,
});
const breakerState = oneOf<BreakerStateEvent['to']>({ closed: true, open: true, 'half-open': true });
const guard = oneOf<GuardWaitEvent['guard']>({ limiter: true, bulkhead: true, pacing: true, parked: true });
/** Who answered an attempt the loop sent: only its hedge can, so far (a hedged attempt's own end says so). */
const answeredBy = oneOf<NonNullable<AttemptEndEvent['answeredBy']>>({ hedge: true });
const releaseReason = oneOf<RetryReleasedEvent['reason']>({
  probe: true,
  released: true,
  'max-wait': true,
  deadline: true,
});

function bool(value: unknown): boolean | Invalid {
  return typeof value === 'boolean' ? value : INVALID;
}

/** A mark that is there or absent (`injected: true`): any other value is a malformed event. */
function mark(value: unknown): true | Invalid {
  return value === true ? true : INVALID;
}

/**
 * The backoff before the cap may be unbounded (an exponential backoff with unlimited retries);
 * JSON, and so Chrome's messaging and `storage.session`, carries `Infinity` as `null`.
 */
function unbounded(value: unknown): number | Invalid {
  if (value === null || value === Number.POSITIVE_INFINITY) return Number.POSITIVE_INFINITY;
  return finite(value);
}

const sensitive = new Set(SENSITIVE_HEADERS);

// RFC 9110 §5.1: a field name is a token.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** A header map: string → string, names lower-cased, credentials redacted whatever their case. */
function headers(value: unknown): Record<string, string> | Invalid {
  if (!isRecord(value)) return INVALID;
  const names = Object.keys(value);
  if (names.length > MAX_HEADERS) return INVALID;
  const out: Record<string, string> = {};
  for (const rawName of names) {
    const name = rawName.toLowerCase();
    // `__proto__` is a token, but as a key it would reach the prototype; no real header has it.
    if (name === '__proto__') continue;
    const raw = own(value, rawName);
    if (typeof raw !== 'string') return INVALID;
    if (name.length > MAX_HEADER_NAME_LENGTH || !TOKEN.test(name)) continue;
    out[name] = sensitive.has(name) ? REDACTED : (text(raw) as string);
  }
  return out;
}

function errorSummary(value: unknown): ErrorSummary | Invalid {
  if (!isRecord(value)) return INVALID;
  const name = text(own(value, 'name'));
  const message = text(own(value, 'message'));
  if (name === INVALID || message === INVALID) return INVALID;
  const rawCode = own(value, 'code');
  if (rawCode === undefined) return { name, message };
  const code = text(rawCode);
  return code === INVALID ? INVALID : { name, message, code };
}

function hint(value: unknown): { source: string; delay: number } | Invalid {
  if (!isRecord(value)) return INVALID;
  const source = text(own(value, 'source'));
  const delay = finite(own(value, 'delay'));
  return source === INVALID || delay === INVALID ? INVALID : { source, delay };
}

/** `scheme://user:password@host/…` → `scheme://host/…`, leaving every other URL untouched. */
export function stripUserinfo(url: string): string {
  if (!url.includes('@')) return url;
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.href;
  } catch {
    // Not an absolute URL: the authority, when there is one, ends at the first `/ ? # \`, and
    // WHATWG URL takes its last `@` as the end of the credentials.
    return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#\\]*@/i, '$1');
  }
}

function url(value: unknown): string | Invalid {
  // Strip before capping: a cut URL might no longer parse, and must still lose its credentials.
  return typeof value === 'string' ? text(stripUserinfo(value)) : INVALID;
}

type Check = (value: unknown) => unknown;
interface FieldSpec {
  readonly check: Check;
  readonly optional?: true;
}
type Spec = Readonly<Record<string, FieldSpec>>;

const required = (check: Check): FieldSpec => ({ check });
const optional = (check: Check): FieldSpec => ({ check, optional: true });

/** Each event type's fields besides `v`, `type`, `requestId`, `t`, checked against core's types. */
const SPECS = {
  'request-start': {
    client: required(text),
    operation: optional(text),
    method: optional(text),
    url: optional(url),
  },
  // An endpoint is a base URL the page's client was given: capped and stripped of credentials as
  // the request's URL is.
  'attempt-start': {
    attempt: required(count),
    headers: optional(headers),
    injected: optional(mark),
    endpoint: optional(url),
    hedge: optional(mark),
  },
  'attempt-end': {
    attempt: required(count),
    outcome: required(attemptOutcome),
    duration: required(finite),
    error: optional(errorSummary),
    phase: optional(phase),
    status: optional(status),
    headers: optional(headers),
    injected: optional(mark),
    endpoint: optional(url),
    hedge: optional(mark),
    answeredBy: optional(answeredBy),
  },
  'retry-scheduled': {
    attempt: required(count),
    retry: required(count),
    delay: required(finite),
    reason: required(delayReason),
    strategy: required(strategy),
    jitter: required(jitter),
    raw: required(unbounded),
    capped: required(finite),
    hint: optional(hint),
  },
  'request-end': {
    outcome: required(requestOutcome),
    attempts: required(count),
    totalDelay: required(finite),
    duration: required(finite),
    error: optional(errorSummary),
    status: optional(status),
  },
  'breaker-state': {
    key: required(id),
    from: required(breakerState),
    to: required(breakerState),
    retryAt: optional(finite),
  },
  budget: { key: required(id), remaining: required(finite), allowed: required(bool) },
  'guard-wait': {
    attempt: required(count),
    guard: required(guard),
    key: required(id),
    waited: required(finite),
  },
  'retry-parked': { attempt: required(count), key: required(id), failures: required(count) },
  'retry-released': {
    attempt: required(count),
    key: required(id),
    reason: required(releaseReason),
    waited: required(finite),
  },
} as const satisfies Record<RetrylineEvent['type'], Spec>;

// Each spec must name exactly its event's fields (checked at compile time).
type SpecFields<T extends RetrylineEvent['type']> = keyof (typeof SPECS)[T];
type EventFields<T extends RetrylineEvent['type']> = Exclude<
  keyof Extract<RetrylineEvent, { type: T }>,
  'v' | 'type' | 'requestId' | 't'
>;
type Exact<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const specsMatchCore: {
  [T in RetrylineEvent['type']]: Exact<SpecFields<T>, EventFields<T>>;
} = {
  'request-start': true,
  'attempt-start': true,
  'attempt-end': true,
  'retry-scheduled': true,
  'request-end': true,
  'breaker-state': true,
  budget: true,
  'guard-wait': true,
  'retry-parked': true,
  'retry-released': true,
};
void specsMatchCore;

/**
 * Rebuilds one event from untrusted data: `undefined` when anything about it is wrong (version,
 * type, a missing or mistyped field, an oversize id or header map). Free-text strings are cut to
 * {@link MAX_STRING_LENGTH}, unknown fields are dropped, credentials are redacted.
 */
export function validateEvent(value: unknown): RetrylineEvent | undefined {
  if (!isRecord(value)) return undefined;
  if (own(value, 'v') !== 1) return undefined;
  const type = own(value, 'type');
  if (typeof type !== 'string' || !Object.hasOwn(SPECS, type)) return undefined;
  const requestId = id(own(value, 'requestId'), MAX_ID_LENGTH);
  const t = finite(own(value, 't'));
  if (requestId === INVALID || t === INVALID) return undefined;
  const event: Record<string, unknown> = { v: 1, type, requestId, t };
  const spec: Spec = SPECS[type as RetrylineEvent['type']];
  for (const [key, field] of Object.entries(spec)) {
    const raw = own(value, key);
    if (raw === undefined) {
      if (field.optional) continue;
      return undefined;
    }
    const checked = field.check(raw);
    if (checked === INVALID) return undefined;
    event[key] = checked;
  }
  return event as unknown as RetrylineEvent;
}

/** The valid events among `values`, cleaned; the rest are dropped silently. */
export function sanitizeEvents(values: readonly unknown[]): RetrylineEvent[] {
  const out: RetrylineEvent[] = [];
  for (const value of values) {
    const event = validateEvent(value);
    if (event) out.push(event);
  }
  return out;
}
