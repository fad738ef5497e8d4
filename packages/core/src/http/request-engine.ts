import {
  AttemptControl,
  type AttemptResult,
  keepFollowing,
  type LoopAttempt,
  type LoopSpec,
  type RequestSummary,
  raceAbort,
  runAttemptLoop,
  type ScheduledDelay,
  type Verdict,
} from '../engine/attempt-loop';
import { stoppedByOf } from '../engine/outcome';
import { BodyNotReplayableError, isRetrylineError } from '../errors';
import {
  anyoneListening,
  createEmitter,
  type Emit,
  helloDevtools,
  offerDevtoolsReplay,
} from '../events/emitter';
import { claimRequestId, createRequestId } from '../events/request-id';
import type { RequestOutcome, RetrylineEventListener } from '../events/types';
import { type GuardKey, guardKeyOption } from '../guard/guard';
import {
  admitFirstAtOnce,
  anyGuard,
  type GuardHooks,
  type GuardOptions,
  guardHooks,
  HTTP_OWN_GUARDS,
  resolveGuards,
} from '../guard/guards';
import type { Pacing } from '../guard/pacing';
import { refuseStore, withOwnStore } from '../guard/store';
import type { DelayReason } from '../policy/decide';
import {
  CALL_OPTIONS,
  expectObject,
  invalid,
  mergeOptions,
  normalizePolicy,
  optionalSignal,
  own,
} from '../policy/normalize';
import type { PolicyOptions } from '../policy/options';
import { attemptHeaderHooks, hookHeaders } from './attempt-headers';
import {
  classifyTransportError,
  type HttpOutcome,
  IDEMPOTENT_METHODS,
  isRetryableByDefault,
  RETRYABLE_STATUSES,
  type RetryRules,
  type TransportFailure,
} from './classify';
import type { Failover, Hedging } from './failover';
import { type FaultAnswer, faultFor, type SendAsUsual } from './fault';
import { type HeadersLike, headerValue } from './headers';
import {
  headerName,
  type IdempotencyKeyOption,
  isKey,
  keyOf,
  newIdempotencyKey,
  resolveIdempotencyKey,
} from './idempotency-key';
import { originOf } from './origin';
import { PLAN, type PlanHost, type Planner, type RequestPlan } from './plan';
import { type HeaderRedaction, type HeaderSource, headerRedaction, redactHeaders, redactUrl } from './redact';
import { optionHint, parseRetryHint } from './retry-hint';
import { keepRetryInfo, keepSharedRetryInfo, type RetryInfo, type StoppedBy } from './retry-info';

export { originOf };

// Bundlers replace it (see fault.ts); declared for this module alone (core's build has no Node types).
declare const process: { readonly env: { readonly NODE_ENV?: string } };

/** What `onRetry` is told before each wait of an HTTP request. */
export interface HttpRetryEvent {
  /** The attempt that failed. */
  readonly attempt: number;
  readonly nextAttempt: number;
  readonly delay: number;
  readonly reason: DelayReason;
  /** The transport error, when the attempt failed without a response. */
  readonly error: unknown;
  /** The response status, when the attempt got one. */
  readonly status?: number;
  readonly requestId: string;
}

/**
 * The options of every HTTP adapter (fetch, axios, ky): the shared policy plus HTTP semantics.
 * Give them per client and override them per request.
 */
export interface HttpRetryOptions extends PolicyOptions, GuardOptions {
  /**
   * What is retried. Lists replace the defaults (statuses 408, 429, 500, 502, 503, 504; methods
   * GET, HEAD, OPTIONS, TRACE, PUT, DELETE); a predicate sees each classified failure, with
   * Retryline's own verdict in `outcome.retryable`, and decides.
   * @example
   * ```ts
   * retryFetch(fetch, { retryOn: (outcome) => outcome.retryable || outcome.status === 425 });
   * ```
   */
  retryOn?:
    | { statuses?: readonly number[]; methods?: readonly string[] }
    | ((outcome: HttpOutcome) => boolean | Promise<boolean>);
  /**
   * Adds an idempotency key to POST, PATCH and other non-idempotent requests (one per logical
   * request, the same on every attempt), which makes them retryable. A key the caller set is kept.
   * @default false: a POST the server cannot deduplicate is never retried once it may have been sent
   * @example
   * ```ts
   * retryFetch(fetch, { idempotencyKey: { header: 'Idempotency-Key', format: 'sf-string' } });
   * ```
   */
  idempotencyKey?: IdempotencyKeyOption;
  /** Sends one id per logical request in this header (kept if the caller set one). @default none */
  requestIdHeader?: string;
  /** Sends `attempt=2; max=3` in this header. @default none */
  attemptHeader?: string;
  /** Sends the milliseconds left before the deadline in this header. @default none */
  deadlineHeader?: string;
  /**
   * Header names whose values events redact even though they are shown by default or in
   * `exposeHeaders`. Every header off the allowlist is redacted anyway (see `exposeHeaders`).
   * @default none
   * @example
   * ```ts
   * retryFetch(fetch, { redactHeaders: ['Idempotency-Key'] });
   * ```
   */
  redactHeaders?: readonly string[];
  /**
   * Header names whose values events may show (redaction is an allowlist). Shown by
   * default: Content-Type, Content-Length, Date, Retry-After, the RateLimit and X-RateLimit
   * families, Idempotency-Key and the headers Retryline writes (`requestIdHeader`, `attemptHeader`,
   * `deadlineHeader`); every other value becomes `[redacted]`, its name kept. Credential headers
   * (Authorization, Cookie, X-Api-Key …) are refused with `InvalidOptionsError`.
   * @default none
   * @example
   * ```ts
   * retryFetch(fetch, { exposeHeaders: ['Accept', 'Cache-Control', 'ETag'] });
   * ```
   */
  exposeHeaders?: readonly string[];
  /** Aborting stops everything at once; the request rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Called before each wait; throwing stops retrying with what it threw. */
  onRetry?: (event: HttpRetryEvent) => void | Promise<void>;
  /** Receives this request's events. */
  onEvent?: RetrylineEventListener;
  /**
   * The request id to use instead of a fresh UUID; `id#2`, `id#3` … in this request's events and
   * retry info while an earlier request with the same id is in flight.
   */
  requestId?: string;
  /**
   * Server-informed pacing, a `pacing()` value: once a response says the quota is spent (a 429
   * with a hint, or `RateLimit: r=0` / `X-RateLimit-Remaining: 0` with a reset), later requests
   * with the same key (origin and first path segment) wait for the reset (never longer than
   * `maxRetryAfter`; the wait is reported with reason `pacing`) instead of collecting more 429s —
   * or fail at once with `RateLimitedError` when the reset is past the deadline. Opt-in: without
   * it, a hint delays only the request that received it.
   * @default none
   * @example
   * ```ts
   * retryFetch(fetch, { pacing: pacing() });
   * ```
   */
  pacing?: Pacing;
  /**
   * The key a request's guard state is kept under, for guard values that have no `key` of their
   * own: a string puts every request of the client under one key (`'payments'`), a function picks
   * one per request. `retry()` takes the same option as a string.
   * @default its origin (`https://api.example`); pacing: origin and first path segment
   * @example
   * ```ts
   * retryFetch(fetch, { breaker: circuitBreaker(), guardKey: ({ url }) => new URL(url).host });
   * ```
   */
  guardKey?: GuardKey;
  /**
   * Several base URLs for one service, a `failover()` value: each attempt picks one, a retry
   * prefers one that has not failed the request, and each has its own circuit breaker. Relative
   * URLs (and URLs on an endpoint's base) go to the picked endpoint; others are left alone.
   * @default none: every attempt goes to the request's own URL
   * @example
   * ```ts
   * const api = retryFetch(fetch, { endpoints: failover(['https://a.api.example', 'https://b.api.example']) });
   * await api('/v1/items');
   * ```
   */
  endpoints?: Failover;
  /**
   * Hedged requests, a `hedging()` value: an idempotent attempt still unanswered after its delay
   * gets a second copy (to another endpoint where there is one); the first good answer is taken,
   * the other cancelled. Each hedge takes a retry from the retry budget. `false` on a request
   * turns its client's hedging off for it.
   * @default none
   * @example
   * ```ts
   * retryFetch(fetch, { hedge: hedging({ delay: 'p95', fallback: 200 }) });
   * ```
   */
  hedge?: Hedging | false;
  /**
   * Reads a wait from a failed response in a provider's own headers (`retry-after-ms`, a reset
   * given as a duration): milliseconds from `now`, or `undefined` to fall back to the standard
   * headers (Retry-After, RateLimit, X-RateLimit-Reset). Held to `maxRetryAfter` like every server
   * hint. The presets use it.
   * @default none
   * @example
   * ```ts
   * retryFetch(fetch, { hint: ({ headers }) => Number(headerValue(headers, 'retry-after-ms')) || undefined });
   * ```
   */
  hint?: (
    response: { readonly status: number; readonly headers: HeadersLike },
    now: number,
  ) => number | undefined;
}

/** What one attempt must send besides the caller's request. */
export interface HttpAttempt {
  readonly attempt: number;
  /**
   * Abort the send when this aborts. `undefined` when nothing can abort the attempt (no signal,
   * deadline or timeout): send without one.
   */
  readonly signal: AbortSignal | undefined;
  /** Headers Retryline adds to this attempt (idempotency key, request id …); empty by default. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * The absolute URL to send this attempt to instead of the request's own: set only when
   * `endpoints` moved it onto another base.
   */
  readonly url?: string;
}

/** What an adapter tells the engine about its client's request and response. */
export interface HttpExchange<R> {
  /** `'fetch'`, `'axios'`, `'ky'`: names the client in events. */
  readonly client: string;
  readonly method: string;
  readonly url: string;
  /** The caller's request headers: a key or id the caller set is kept, and events show them redacted. */
  readonly headers: HeaderSource | undefined;
  /** `false` for a one-shot body (a stream): a retry then stops with `BodyNotReplayableError`. */
  readonly replayable: boolean;
  /** The request's options, as given or as {@link prepareHttpOptions} resolved them. */
  readonly options: HttpRetryOptions | ResolvedHttpOptions;
  /** Sends one attempt; resolves with any response, rejects on a transport failure. */
  send(attempt: HttpAttempt): Promise<R>;
  /**
   * Answers an attempt with a fault the DevTools panel injects (development builds only; see
   * `fault.ts`), as the client would have received it instead of sending: a `status` step as the
   * client's response (and, where it rejects a failed status, its error), a `networkError` step
   * rejected with the client's own transport failure. Throwing sends the attempt as usual.
   * @default none: this client's requests are never faulted
   */
  inject?(step: FaultAnswer, attempt: HttpAttempt): Promise<R>;
  /** Reads a response's status and headers. */
  inspect(response: R): {
    readonly status: number;
    readonly statusText?: string;
    readonly headers: HeadersLike;
  };
  /**
   * Whether the client followed a redirect before the send failed with `error`: `false` only when
   * it provably did not (the request's own first hop failed), `true` when it did, `undefined` when
   * it cannot tell. A refused connection or failed lookup proves the request was never sent only
   * on its first hop (a 303 to a host that refuses comes after the server processed a POST), so
   * without a `false` here it counts as `unknown`. @default cannot tell
   */
  redirected?(error: unknown): boolean | undefined;
  /**
   * Whether an error that is no transport failure core knows by its code (axios's `EHOSTDOWN`, an
   * AxiosError with no code) is still to be judged, as a failure that may have reached the server
   * (`unknown`), rather than thrown at once. The axios-retry layer says yes for every AxiosError of
   * a request, since axios-retry asks its `retryCondition` about every one. @default no
   */
  judgeUnknown?(error: unknown): boolean;
  /** Frees a response that will not be returned (cancels its body so the socket is released). */
  discard(response: R): void;
  /** Whether a response is a failure (axios: it failed `validateStatus`). @default status ≥ 400 */
  failed?(response: R): boolean;
  /** The client's error for a failed response (axios's `AxiosError`), shown to `retryOn` and `onRetry`. */
  errorOf?(response: R): unknown;
  /**
   * `true` when the options' `signal` belongs to this request alone (a fetch `Request`'s own
   * signal, made with the Request): attempts may then follow it as it is, with no controller of
   * Retryline's in between. A signal the caller may share between requests is never handed on.
   * @default false
   */
  readonly ownSignal?: boolean;
  /**
   * The request's abort signal as its client carries it (fetch's `init.signal`, a Request's own),
   * over the options' `signal`: given here, it costs no resolving of options per request.
   */
  readonly signal?: AbortSignal | undefined;
  /**
   * Told how the request went when it rejects (the caller's abort included), before the rejection
   * reaches the adapter: for an error the adapter hands the caller instead, made per request
   * (axios's `CanceledError` for the caller's abort), to keep with {@link keepRetryInfo}.
   */
  ended?(info: RetryInfo): void;
}

type RetryPredicate = (outcome: HttpOutcome) => boolean | Promise<boolean>;

/** The lists the default verdict uses, and the caller's predicate when `retryOn` is one. */
function resolveRules(retryOn: HttpRetryOptions['retryOn']): {
  rules: RetryRules;
  predicate?: RetryPredicate;
} {
  const defaults: RetryRules = {
    statuses: new Set(RETRYABLE_STATUSES),
    methods: new Set(IDEMPOTENT_METHODS),
  };
  if (retryOn === undefined) return { rules: defaults };
  if (typeof retryOn === 'function') return { rules: defaults, predicate: retryOn };
  // An array (`retryOn: [503]`) would otherwise pass as an object and silently keep the defaults.
  if (typeof retryOn !== 'object' || retryOn === null || Array.isArray(retryOn))
    throw invalid('retryOn', 'an object or a function', retryOn);
  const statuses = own(retryOn, 'statuses');
  const methods = own(retryOn, 'methods');
  if (
    statuses !== undefined &&
    !(Array.isArray(statuses) && statuses.every((s) => Number.isInteger(s) && s >= 100 && s <= 599))
  ) {
    throw invalid('retryOn.statuses', 'an array of HTTP status codes', statuses);
  }
  if (methods !== undefined && !(Array.isArray(methods) && methods.every((m) => typeof m === 'string'))) {
    throw invalid('retryOn.methods', 'an array of method names', methods);
  }
  return {
    rules: {
      statuses: statuses ? new Set(statuses) : defaults.statuses,
      methods: methods ? new Set(methods.map((m) => m.toUpperCase())) : defaults.methods,
    },
  };
}

/** An error an exchange asked to judge as `unknown` (see `judgeUnknown`), with its own code if any. */
function unknownFailure(error: unknown): TransportFailure {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? { phase: 'unknown', code } : { phase: 'unknown' };
}

const NOTHING_REDACTED: HeaderRedaction = () => false;

const statusText = (status: number, text: string | undefined) => (text ? `${status} ${text}` : `${status}`);

/** Options as the engine uses them: validated, every default filled in (see {@link resolveHttpOptions}). */
export type ResolvedHttpOptions = ReturnType<typeof resolveOptions>;

// Marks options that went through resolveHttpOptions: a property, read per request faster than a WeakSet.
const RESOLVED = Symbol('retryline.resolvedOptions');

const isResolved = (options: object): options is ResolvedHttpOptions =>
  (options as Record<symbol, unknown>)[RESOLVED] === true;

/**
 * Validates HTTP retry options once and fills in every default. Adapters call it on their client's
 * defaults at creation, so a mistake surfaces where it was made; `runHttpRequest` takes the result
 * as it is.
 */
export function resolveHttpOptions(input: HttpRetryOptions | undefined): ResolvedHttpOptions {
  const options = resolveOptions(input);
  (options as Record<symbol, unknown>)[RESOLVED] = true;
  return options;
}

function resolveOptions(input: HttpRetryOptions | undefined) {
  const options = expectObject('options', input) as HttpRetryOptions;
  const policy = normalizePolicy(options);
  const { rules, predicate } = resolveRules(own(options, 'retryOn'));
  const key = resolveIdempotencyKey(own(options, 'idempotencyKey'));
  const requestIdHeader = headerName('requestIdHeader', own(options, 'requestIdHeader'));
  const attemptHeader = headerName('attemptHeader', own(options, 'attemptHeader'));
  const deadlineHeader = headerName('deadlineHeader', own(options, 'deadlineHeader'));
  // The values of the headers Retryline writes itself (ids, keys, counts) carry no secret.
  const redacted = headerRedaction(own(options, 'redactHeaders'), own(options, 'exposeHeaders'), [
    key?.header,
    requestIdHeader,
    attemptHeader,
    deadlineHeader,
  ]);
  const signal = optionalSignal(own(options, 'signal'));
  const requestId = CALL_OPTIONS.requestId(own(options, 'requestId'));
  const hint = own(options, 'hint');
  if (hint !== undefined && typeof hint !== 'function') throw invalid('hint', 'a function', hint);
  return {
    policy,
    rules,
    ...(predicate ? { predicate } : {}),
    key,
    requestIdHeader,
    attemptHeader,
    deadlineHeader,
    redacted,
    signal,
    onRetry: CALL_OPTIONS.onRetry(own(options, 'onRetry')) as HttpRetryOptions['onRetry'],
    onEvent: CALL_OPTIONS.onEvent(own(options, 'onEvent')) as RetrylineEventListener | undefined,
    requestId,
    hint: hint as HttpRetryOptions['hint'],
    endpoints: planValue(own(options, 'endpoints'), 'endpoints', 'failover'),
    hedge: hedgeValue(own(options, 'hedge'), options),
    store: own(options, 'store'),
    guards: resolveGuards(
      options,
      { own: HTTP_OWN_GUARDS, pacing: true },
      guardKeyOption('guardKey', own(options, 'guardKey')),
    ),
  };
}

/** A client's options, resolved once, and how to apply a request's own on top of them. */
export interface PreparedHttpOptions {
  /** The client's options as given (a copy). */
  readonly defaults: HttpRetryOptions;
  /**
   * The options of one request: the client's, with `overrides` (the request's own `retry`) on top:
   * an object of options, `false` to fail fast, a number of retries, or `true` for the client's.
   * Anything else throws {@link InvalidOptionsError}.
   */
  with(overrides?: HttpRetryOptions | boolean | number): ResolvedHttpOptions;
}

const isLight = (key: string): key is keyof typeof CALL_OPTIONS => Object.hasOwn(CALL_OPTIONS, key);

/**
 * A request's own `retry` (fetch's `init.retry`, axios's `config.retry`) as options: an object as
 * it is, `false` and a number of retries as the option `retry` takes them, `true` or nothing as
 * no options of its own. Anything else throws {@link InvalidOptionsError}: ignored, it would
 * silently keep the client's retries.
 */
export function requestRetryOptions(value: unknown): HttpRetryOptions | undefined {
  if (value === undefined || value === true) return undefined;
  if (value === false || typeof value === 'number') return { retry: value };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('retry', 'an object of options, a boolean or a number of retries', value);
  }
  return value as HttpRetryOptions;
}

/**
 * Resolves a client's options once (throwing on a mistake, at creation). A request with no options
 * of its own, or only a signal, listener or request id, then costs no resolving at all: most of what
 * the happy path spent before its request was sent.
 */
export function prepareHttpOptions(options: HttpRetryOptions | undefined): PreparedHttpOptions {
  // The client's guard state is its own, made here once: a request's own options change policy,
  // never whose state it counts in.
  const defaults = withOwnStore(
    mergeOptions<HttpRetryOptions>(expectObject('options', options) as HttpRetryOptions, undefined),
  );
  const base = resolveHttpOptions(defaults);
  // Every adapter's client is made here, once: the devtools panel learns the page uses Retryline
  // before its first request (valid options only: a client that failed to be made is none).
  helloDevtools();
  return {
    defaults,
    with(given) {
      const overrides = requestRetryOptions(given);
      if (overrides === undefined) return base;
      refuseStore(overrides);
      const keys = Object.keys(overrides).filter(
        (key) => (overrides as Record<string, unknown>)[key] !== undefined,
      );
      if (keys.length === 0) return base;
      if (!keys.every(isLight)) return resolveHttpOptions(mergeOptions(defaults, overrides));
      // The copy keeps the mark of resolved options (a symbol-keyed property) with the rest.
      const light: Record<string, unknown> = { ...base };
      for (const key of keys) light[key] = CALL_OPTIONS[key](own(overrides, key));
      return light as ResolvedHttpOptions;
    },
  };
}

/**
 * Runs one logical HTTP request through the attempt loop: adds the configured headers, classifies
 * each failure (not-sent / unknown / response), honours server hints, refuses to replay one-shot
 * bodies, frees discarded responses, and emits redacted events. Adapters call this and map the
 * result back to their client's conventions.
 */
export async function runHttpRequest<R>(
  exchange: HttpExchange<R>,
): Promise<{ response: R; info: RetryInfo }> {
  const options = isResolved(exchange.options)
    ? exchange.options
    : resolveHttpOptions(exchange.options as HttpRetryOptions);
  const signal = exchange.signal === undefined ? options.signal : optionalSignal(exchange.signal);
  const method = exchange.method.toUpperCase();
  const { guards, policy } = options;
  const request = { method, url: exchange.url };
  // The happy path's shortcut. With nobody listening, no deadline, no header to add and
  // guards that admit it at once, the first attempt is made here and a success that says nothing
  // of the quota is returned at once, before any of the attempt loop's set-up (its closures and
  // state are most of what a request would cost Retryline on the happy path). Anything else (a
  // failure, a spent quota, an abort) goes on to the loop, which judges this first attempt as it
  // judges its own.
  if (
    !sendsFirstAtOnce(options, exchange, signal, method) ||
    // Last: it counts the request in the budget when it admits it.
    !admitFirstAtOnce(guards, request, policy.clock.now())
  ) {
    return runLoop(exchange, options, signal, request, undefined);
  }
  let value: R;
  const timeout = policy.timeout;
  // With a timeout, the attempt has its own signal (the caller's, if any, aborts it too).
  const control = timeout === undefined ? undefined : new AttemptControl(signal);
  try {
    if (control === undefined) {
      value = await raceAbort(exchange.send({ attempt: 1, signal, headers: NO_HEADERS }), signal);
    } else {
      const attemptSignal = control.signal;
      control.time(policy.clock, timeout as number, requestLabel(method, exchange.url), 1, 0);
      value = await control.race(() =>
        exchange.send({ attempt: 1, signal: attemptSignal, headers: NO_HEADERS }),
      );
    }
  } catch (error) {
    control?.done();
    return runLoop(exchange, options, signal, request, {
      ok: false,
      error,
      timedOut: control?.timedOut(error) === true,
    });
  }
  control?.done();
  // The caller's abort keeps reaching the attempt's signal while the response lives: its body is
  // read after this returns.
  if (control && signal) keepFollowing(value, signal, control);
  let read: ReturnType<typeof readResponse>;
  try {
    read = readResponse(exchange, options, value);
  } catch (error) {
    // The `hint` option threw: the response it was reading will not be returned.
    exchange.discard(value);
    throw error;
  }
  const { failed, spentUntil } = read;
  if (signal?.aborted || failed || spentUntil !== undefined) {
    return runLoop(exchange, options, signal, request, { ok: true, value });
  }
  // Admitted while the gate was quiet: a key that failed since learns of this success too.
  guards.gate?.recordAtOnce(request, policy.clock);
  return {
    response: value,
    info: new SettledRetryInfo(options.requestId, {
      attempts: 1,
      totalDelay: 0,
      delays: [],
      outcome: 'success',
    }),
  };
}

/** Names a request in messages: `GET https://api.example/x`, its URL redacted. */
const requestLabel = (method: string, url: string) => `${method} ${redactUrl(url)}`;

// The mark of an attempt answered by an injected fault, in its attempt-start and attempt-end.
const INJECTED = { injected: true } as const;

// What the shortcut sends as added headers: nothing (it is taken only when nothing is added).
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Whether the first attempt may be made before the loop is set up: nobody listens (so no event is
 * owed), no deadline runs, no header is added to it, and its signal, if any, is its own or reaches
 * it through the attempt's own controller (a timed attempt's).
 */
function sendsFirstAtOnce(
  options: ResolvedHttpOptions,
  exchange: HttpExchange<unknown>,
  signal: AbortSignal | undefined,
  method: string,
): boolean {
  return (
    options.onEvent === undefined &&
    !anyoneListening() &&
    // A signal the caller may share reaches a timed attempt through its own controller; without a
    // timeout, only a signal that is this request's alone is handed to the send as it is.
    (signal === undefined ||
      (!signal.aborted && (exchange.ownSignal === true || options.policy.timeout !== undefined))) &&
    options.policy.deadline === undefined &&
    options.endpoints === undefined &&
    options.hedge === undefined &&
    (options.key === undefined || IDEMPOTENT_METHODS.includes(method)) &&
    options.requestIdHeader === undefined &&
    options.attemptHeader === undefined &&
    options.deadlineHeader === undefined &&
    !attemptHeaderHooks()
  );
}

/**
 * What a response says: whether it failed, the wait it asks for, and until when the server's
 * quota is spent (read only with pacing on). A success asks for no wait: with pacing off it reads
 * no header, with pacing on only the quota's.
 */
function readResponse<R>(exchange: HttpExchange<R>, options: ResolvedHttpOptions, value: R) {
  const { guards, policy } = options;
  const response = exchange.inspect(value);
  const failed = exchange.failed ? exchange.failed(value) : response.status >= 400;
  const { pacing } = guards;
  const now = policy.clock.now();
  const hint = failed
    ? ((options.hint && optionHint(options.hint(response, now), now)) ??
      parseRetryHint(response.headers, now))
    : undefined;
  const spentUntil = pacing?.spentUntil(response.status, failed, response.headers, hint, now);
  return { response, failed, hint, spentUntil };
}

/**
 * The `hedge` option: a `hedging()` value, refused beside a bulkhead or a rate limiter, which a
 * hedge would go around (a second request in flight that took no place and no token).
 */
function hedgeValue(value: unknown, options: HttpRetryOptions): object | undefined {
  const hedge = planValue(value, 'hedge', 'hedging');
  if (hedge && (own(options, 'bulkhead') !== undefined || own(options, 'limiter') !== undefined)) {
    throw invalid(
      'hedge',
      'left out of a client with a bulkhead or a rate limiter (a hedge would go around them)',
      value,
    );
  }
  return hedge;
}

/**
 * A `failover()` or `hedging()` value given as option `name` (`kind` is its factory's name); a
 * clear error for anything else (`endpoints: ['https://a.example']` included).
 */
function planValue(value: unknown, name: string, kind: string): object | undefined {
  // `hedge: false` on one request turns off its client's hedging.
  if (value === undefined || (value === false && name === 'hedge')) return undefined;
  if (
    (value as { [PLAN]?: unknown; kind?: unknown } | null)?.[PLAN] &&
    (value as { kind: unknown }).kind === kind
  )
    return value as object;
  throw invalid(name, `a ${kind}() value: import { ${kind} } from your adapter`, value);
}

/** The attempt loop of a request, set up around its `first` attempt when that was already made. */
function runLoop<R>(
  exchange: HttpExchange<R>,
  options: ResolvedHttpOptions,
  signal: AbortSignal | undefined,
  request: { readonly method: string; readonly url: string },
  first: LoopSpec<R>['first'],
): Promise<{ response: R; info: RetryInfo }> {
  return new HttpRequest(exchange, options, signal, request, first).run();
}

/** What a failed attempt is judged by: its phase, status, error and code. */
type FailureFacts = Pick<HttpOutcome, 'phase' | 'hinted'> &
  Partial<Pick<HttpOutcome, 'status' | 'error' | 'code' | 'headers'>>;

/**
 * One HTTP request through the attempt loop: the headers it adds, how it classifies and judges
 * each attempt, its events and its retry info. A class rather than one long closure: each part is a
 * method a screen long, and what they share is a few fields.
 */
class HttpRequest<R> {
  readonly #exchange: HttpExchange<R>;
  readonly #options: ResolvedHttpOptions;
  readonly #signal: AbortSignal | undefined;
  readonly #method: string;
  readonly #first: LoopSpec<R>['first'];
  // The caller's headers, names lower-cased: read only when something needs them (an option that
  // names a header, a failure to classify, an event), as copying them is a cost on the happy path.
  #callerCopy: Record<string, string> | undefined;
  readonly #url: string;
  readonly #label: string;
  // The caller's id for this request, if it chose one (its header, or the requestId option); a
  // fresh id is drawn only when something reads it (an event, a header, the retry info).
  readonly #chosen: string | undefined;
  #requestId: string | undefined;
  readonly #callerKey: string | undefined;
  /** The headers every attempt adds: the idempotency key and the request id, chosen once. */
  readonly #added: Record<string, string> = {};
  // The headers the current attempt adds, worked out once per attempt (for `attempt-start` and the send).
  #attemptHeaders: Record<string, string>;
  #headersOfAttempt = 0;
  readonly #emit: Emit;
  readonly #hooks: GuardHooks | undefined;
  #lastStatus: number | undefined;
  #ended: RequestSummary | undefined;
  // How the devtools hook has the attempt being made answered (see fault.ts), and which attempt
  // that is: asked as the attempt is prepared for its attempt-start. A hook is a listener, so every
  // attempt is prepared while one is there; an attempt nobody listens to is never faulted.
  #faultOf = 0;
  #fault: ((attempt: HttpAttempt, send: SendAsUsual<R>) => Promise<R>) | undefined;
  // Endpoint failover and hedging, when the client has them (see failover.ts).
  readonly #plan: RequestPlan<R> | undefined;
  readonly #idOf = () => {
    this.#requestId ??= createRequestId();
    return this.#requestId;
  };

  constructor(
    exchange: HttpExchange<R>,
    options: ResolvedHttpOptions,
    signal: AbortSignal | undefined,
    request: { readonly method: string; readonly url: string },
    first: LoopSpec<R>['first'],
  ) {
    const { method } = request;
    const { key, requestIdHeader, guards, policy } = options;
    this.#exchange = exchange;
    this.#options = options;
    this.#signal = signal;
    this.#method = method;
    this.#first = first;
    this.#url = redactUrl(exchange.url);
    this.#label = requestLabel(method, exchange.url);
    const callerRequestId = requestIdHeader
      ? this.#callerHeaders()[requestIdHeader.toLowerCase()]
      : undefined;
    this.#chosen = callerRequestId || options.requestId;
    this.#requestId = this.#chosen;
    // The key is chosen once, before the first attempt, and sent unchanged on every attempt. An
    // empty or blank key is no key: the request is unkeyed, and the option adds one.
    this.#callerKey = key ? keyOf(this.#callerHeaders()[key.header.toLowerCase()]) : undefined;
    if (key && !IDEMPOTENT_METHODS.includes(method) && this.#callerKey === undefined) {
      this.#added[key.header] = newIdempotencyKey(key, { method, url: exchange.url });
    }
    if (requestIdHeader && callerRequestId === undefined) this.#added[requestIdHeader] = this.#idOf();
    this.#attemptHeaders = this.#added;
    this.#emit = createEmitter(options.onEvent, this.#idOf, policy.clock);
    const planner = (options.endpoints ?? options.hedge) as { [PLAN]?: Planner } | undefined;
    this.#plan = planner?.[PLAN]?.(this.#host(), options.endpoints, options.hedge);
    // A request on the endpoints is guarded as the service's: its URL on the first endpoint.
    const serviceUrl = this.#plan?.serviceUrl;
    const guarded = serviceUrl === undefined ? request : { method, url: serviceUrl };
    this.#hooks = anyGuard(guards)
      ? guardHooks(guards, { request: guarded, policy, emit: this.#emit, label: this.#label })
      : undefined;
  }

  #callerHeaders(): Record<string, string> {
    this.#callerCopy ??= redactHeaders(this.#exchange.headers, NOTHING_REDACTED);
    return this.#callerCopy;
  }

  /** Whether the request carries an idempotency key: asked only once an attempt has failed. */
  #isKeyed(): boolean {
    const { key } = this.#options;
    return key !== undefined
      ? this.#callerKey !== undefined || this.#added[key.header] !== undefined
      : isKey(headerValue(this.#callerHeaders(), 'idempotency-key'));
  }

  /** The headers `context`'s attempt adds to the caller's. */
  #headersFor(context: LoopAttempt): Record<string, string> {
    if (this.#headersOfAttempt === context.attempt) return this.#attemptHeaders;
    this.#headersOfAttempt = context.attempt;
    const { attemptHeader, deadlineHeader, policy } = this.#options;
    const hooked = hookHeaders(() => ({
      requestId: this.#idOf(),
      attempt: context.attempt,
      client: this.#exchange.client,
      method: this.#method,
      url: this.#url,
    }));
    if (!attemptHeader && !deadlineHeader && !hooked) return this.#attemptHeaders;
    const headers: Record<string, string> = { ...this.#added };
    // Instrumentation's headers (trace context), unless the caller or an option set the same one.
    for (const name of hooked ? Object.keys(hooked) : []) {
      if (this.#callerHeaders()[name.toLowerCase()] === undefined && !Object.hasOwn(this.#added, name)) {
        headers[name] = hooked?.[name] as string;
      }
    }
    if (attemptHeader) {
      const max = Number.isFinite(policy.retries) ? `; max=${policy.retries + 1}` : '';
      headers[attemptHeader] = `attempt=${context.attempt}${max}`;
    }
    if (deadlineHeader && Number.isFinite(context.remaining)) {
      headers[deadlineHeader] = String(Math.max(0, Math.floor(context.remaining)));
    }
    this.#attemptHeaders = headers;
    return headers;
  }

  #classifyFailure(error: unknown): TransportFailure | undefined {
    const exchange = this.#exchange;
    return (
      classifyTransportError(error, {
        url: this.#plan?.sentTo() ?? exchange.url,
        redirected: exchange.redirected?.(error),
      }) ?? (exchange.judgeUnknown?.(error) ? unknownFailure(error) : undefined)
    );
  }

  /**
   * A failed attempt as `retryOn` sees it. Built in one literal: V8 (Node 20) takes a slow path of
   * microseconds for `{ ...base, more }`.
   */
  #classify(context: LoopAttempt, failure: FailureFacts): Omit<HttpOutcome, 'retryable'> {
    const keyed = this.#isKeyed();
    const method = this.#method;
    const outcome: Record<string, unknown> = {
      attempt: context.attempt,
      method,
      // Where the attempt went: with failover, its endpoint's URL.
      url: this.#plan?.sentTo() ?? this.#exchange.url,
      keyed,
      idempotent: keyed || this.#options.rules.methods.has(method),
      phase: failure.phase,
      hinted: failure.hinted,
    };
    if (failure.status !== undefined) outcome.status = failure.status;
    if (failure.error !== undefined) outcome.error = failure.error;
    if (failure.code !== undefined) outcome.code = failure.code;
    if (failure.headers !== undefined) outcome.headers = failure.headers;
    return outcome as unknown as Omit<HttpOutcome, 'retryable'>;
  }

  /**
   * The verdict on a failed attempt: retried or not by the rules (and the caller's `retryOn`, which
   * may be async), with how it reflects on the origin's health.
   */
  async #judgeFailure(
    outcome: AttemptResult<R>,
    classified: Omit<HttpOutcome, 'retryable'>,
    hint: ReturnType<typeof parseRetryHint>,
    summary: string | undefined,
  ): Promise<Verdict<R>> {
    const { rules, predicate } = this.#options;
    const byDefault = isRetryableByDefault(classified, rules);
    const retryable = predicate
      ? (await predicate(Object.assign({}, classified, { retryable: byDefault }))) === true
      : byDefault;
    // What the breaker counts: transport failures and transient statuses, whether or not this
    // request may be retried (a 503 on a POST still says the origin is failing); not 4xx.
    const health =
      classified.phase !== 'response' || rules.statuses.has(classified.status ?? 0) ? 'failure' : 'ignored';
    if (!outcome.ok)
      return retryable
        ? { action: 'retry', error: outcome.error, health }
        : { action: 'throw', error: outcome.error, health };
    if (!retryable) return { action: 'return', value: outcome.value, outcome: 'not-retryable', health };
    // A 4xx the caller's `retryOn` retries is still an answer the server gave: 'ignored', not a failure.
    return {
      action: 'retry',
      health,
      fallback: outcome.value,
      ...(classified.error === undefined ? {} : { error: classified.error }),
      ...(hint ? { hint } : {}),
      ...(summary ? { summary } : {}),
    };
  }

  /** Judges how an attempt settled: a transport failure, or a response. */
  #judge(
    outcome: AttemptResult<R>,
    context: LoopAttempt,
    timedOut: boolean,
  ): Verdict<R> | Promise<Verdict<R>> {
    if (!outcome.ok) {
      this.#lastStatus = undefined;
      // An attempt that ran out of `timeout` may have reached the server.
      const failure = timedOut ? { phase: 'unknown' as const } : this.#classifyFailure(outcome.error);
      if (!failure) return { action: 'throw', error: outcome.error };
      const classified = this.#classify(context, {
        phase: failure.phase,
        hinted: false,
        error: outcome.error,
        ...(failure.code === undefined ? {} : { code: failure.code }),
      });
      return this.#judgeFailure(outcome, classified, undefined, undefined);
    }
    const exchange = this.#exchange;
    const { response, failed, hint, spentUntil } = readResponse(exchange, this.#options, outcome.value);
    this.#lastStatus = response.status;
    const verdict = (): Verdict<R> | Promise<Verdict<R>> => {
      if (!failed) return { action: 'return', value: outcome.value };
      const error = exchange.errorOf?.(outcome.value);
      const classified = this.#classify(context, {
        phase: 'response',
        status: response.status,
        hinted: hint !== undefined,
        headers: response.headers,
        ...(error === undefined ? {} : { error }),
      });
      return this.#judgeFailure(outcome, classified, hint, statusText(response.status, response.statusText));
    };
    // Only a response that says the quota is spent waits on the store: the happy path takes no
    // turn of the event loop.
    const hooks = this.#hooks;
    return spentUntil === undefined || hooks === undefined ? verdict() : hooks.pace(spentUntil).then(verdict);
  }

  /** What `attempt-end` says of an attempt: phase, status and headers, or the failure's code. */
  #describe(outcome: AttemptResult<R>): Record<string, unknown> {
    if (outcome.ok) {
      const response = this.#exchange.inspect(outcome.value);
      return {
        phase: 'response',
        status: response.status,
        headers: redactHeaders(toEntries(response.headers), this.#options.redacted),
      };
    }
    // A timeout may have reached the server; an error that is no transport failure (a bug) has no phase.
    if (isRetrylineError(outcome.error, 'AttemptTimeoutError')) return { phase: 'unknown' };
    const failure = this.#classifyFailure(outcome.error);
    if (!failure) return {};
    return { phase: failure.phase, ...(failure.code ? { code: failure.code } : {}) };
  }

  /** The caller's onRetry, told the request's id and the last status. */
  #onRetry(): LoopSpec<R>['onRetry'] {
    const { onRetry } = this.#options;
    if (!onRetry) return undefined;
    return ({ attempt, nextAttempt, delay, reason, error }) =>
      onRetry({
        attempt,
        nextAttempt,
        delay,
        reason,
        error,
        requestId: this.#idOf(),
        ...(this.#lastStatus === undefined ? {} : { status: this.#lastStatus }),
      });
  }

  /** The loop's spec for this request. */
  #spec(): LoopSpec<R> {
    const exchange = this.#exchange;
    const { policy, redacted } = this.#options;
    const hooks = this.#hooks;
    return {
      policy,
      settled: (summary) => {
        this.#ended = summary;
      },
      signal: this.#signal,
      ownSignal: exchange.ownSignal === true,
      // A response's body is read after the request: the caller's abort must still end it.
      outlives: true,
      label: this.#label,
      emit: this.#emit,
      first: this.#first,
      start: { client: exchange.client, method: this.#method, url: this.#url },
      // Only when someone listens: the headers of `attempt-start`, redacted, and a fault's mark.
      prepare: (context) => {
        this.#faultOf = context.attempt;
        // A function, so that nothing is read (no request id drawn) unless a hook is asked.
        this.#fault = faultFor(() => ({
          exchange,
          clock: policy.clock,
          query: {
            client: exchange.client,
            method: this.#method,
            url: this.#url,
            attempt: context.attempt,
            requestId: this.#idOf(),
          },
          // The client could not build the answer, so the server was asked: its end is not marked.
          unanswered: () => {
            if (this.#faultOf === context.attempt) this.#fault = undefined;
          },
        }));
        return {
          headers: redactHeaders({ ...this.#callerHeaders(), ...this.#headersFor(context) }, redacted),
          ...(this.#fault && INJECTED),
          ...this.#plan?.startFields(),
        };
      },
      run: (context) => {
        const attempt: HttpAttempt = {
          attempt: context.attempt,
          signal: context.signal,
          headers: this.#headersFor(context),
        };
        if (this.#faultOf !== context.attempt) this.#fault = undefined;
        const fault = this.#fault;
        // A fault that lets the attempt go on sends it as usual: to the plan's endpoint, hedged.
        if (fault) return fault(attempt, (sent) => this.#send(context, sent));
        return this.#send(context, attempt);
      },
      judge: (outcome, context, timedOut) => this.#judge(outcome, context, timedOut),
      // The attempt described is the one just run: its fault, if any, is still this.#fault (unless
      // the attempt was sent as usual instead, see `unanswered`).
      describe: (outcome) => ({
        ...this.#describe(outcome),
        ...(this.#fault && INJECTED),
        ...this.#plan?.endFields(),
      }),
      refuse: () =>
        exchange.replayable
          ? undefined
          : new BodyNotReplayableError(
              `${this.#label} needs a retry, but its body is a one-shot stream that cannot be sent again: pass a string, bytes, a Blob, FormData or URLSearchParams to make it retryable`,
            ),
      onRetry: this.#onRetry(),
      discard: (response) => exchange.discard(response),
      ...(this.#plan?.hooks(hooks) ?? {
        admit: hooks?.admit,
        record: hooks?.record,
        abandon: hooks?.abandon,
      }),
      release: hooks?.release,
      allowRetry: hooks?.allowRetry,
      takeWaits: hooks?.takeWaits,
    };
  }

  /** What a failover or hedging plan may use of this request (see plan.ts). */
  /** An attempt sent as usual: to the endpoint the request's plan picked, if it has one. */
  #send(context: LoopAttempt, attempt: HttpAttempt): Promise<R> {
    return this.#plan ? this.#plan.send(context, attempt) : this.#exchange.send(attempt);
  }

  #host(): PlanHost<R> {
    return {
      exchange: this.#exchange,
      options: this.#options,
      method: this.#method,
      label: this.#label,
      emit: this.#emit,
      hooks: () => this.#hooks,
      transportFailure: (error) => this.#classifyFailure(error) !== undefined,
      describe: (result) => this.#describe(result),
      callerHeaders: () => this.#callerHeaders(),
    };
  }

  async run(): Promise<{ response: R; info: RetryInfo }> {
    // A caller-chosen id another request in flight already carries: this one's events get `id#2`
    // (the header sent is still the caller's), so the panel and traces keep the two apart.
    const claim = this.#chosen ? claimRequestId(this.#chosen) : undefined;
    if (claim) this.#requestId = claim.id;
    // Development builds: the devtools hook may keep a way to send this request again (see
    // offerReplay): its loop run anew, as a request of its own. Read once per request the loop
    // runs, never on the happy path's shortcut.
    try {
      if (process.env.NODE_ENV !== 'production') {
        const exchange = this.#exchange;
        const method = this.#method;
        const header = this.#options.requestIdHeader;
        offerReplay(
          this.#idOf,
          { client: exchange.client, method, url: this.#url },
          exchange,
          this.#options,
          header !== undefined && this.#callerHeaders()[header.toLowerCase()] !== undefined,
          (options, signal) => runLoop(exchange, options, signal, { method, url: exchange.url }, undefined),
        );
      }
    } catch {
      // No `process` (a module loaded as it is, unbundled): nothing is offered.
    }
    try {
      const result = await runAttemptLoop<R>(this.#spec());
      return { response: result.value, info: new SettledRetryInfo(this.#idOf, result) };
    } catch (error) {
      this.#keepInfo(error);
      throw error;
    } finally {
      claim?.release();
    }
  }

  /** Keeps the retry info of a request that rejected with `error`, for getRetryInfo(error). */
  #keepInfo(error: unknown): void {
    const signal = this.#signal;
    const callerReason = signal?.aborted === true && error === signal.reason;
    // Aborted before the loop began, the loop reports nothing: the first attempt counts if it was made.
    const summary: RequestSummary | undefined =
      this.#ended ??
      (callerReason
        ? { outcome: 'aborted', attempts: this.#first ? 1 : 0, totalDelay: 0, delays: [] }
        : undefined);
    if (!summary) return;
    const retryAt = (error as { retryAt?: unknown } | null | undefined)?.retryAt;
    const info = new SettledRetryInfo(
      this.#idOf(),
      typeof retryAt === 'number' ? { ...summary, retryAt } : summary,
    );
    // The caller's abort reason may end many requests; any other error is this request's own.
    if (callerReason) keepSharedRetryInfo(error, info);
    else keepRetryInfo(error, info);
    this.#exchange.ended?.(info);
  }
}

/**
 * A settled request's {@link RetryInfo}. Its id is drawn the first time it is read, then kept
 * as an ordinary property: a UUID costs microseconds, and most requests are never asked for theirs.
 */
class SettledRetryInfo implements RetryInfo {
  readonly attempts: number;
  readonly totalDelay: number;
  readonly delays: readonly ScheduledDelay[];
  readonly outcome: RequestOutcome;
  // Declared only: absent, not `undefined`, after a success (spreading or `in` sees no key).
  declare readonly stoppedBy?: StoppedBy;
  declare readonly retryAt?: number;
  // The request's id as given, or where to draw it (the loop's, shared with its events); neither: a fresh one.
  readonly #id: string | (() => string) | undefined;

  constructor(
    id: string | (() => string) | undefined,
    result: RequestSummary & { readonly retryAt?: number },
  ) {
    this.#id = id;
    this.attempts = result.attempts;
    this.totalDelay = result.totalDelay;
    this.delays = result.delays;
    this.outcome = result.outcome;
    const stoppedBy = stoppedByOf(result.outcome);
    if (stoppedBy !== undefined) this.stoppedBy = stoppedBy;
    if (result.retryAt !== undefined) this.retryAt = result.retryAt;
  }

  get requestId(): string {
    // Read through another receiver (a test library's copy of the object), there is nothing to draw.
    if (!(#id in this)) return undefined as unknown as string;
    const id = this.#id;
    const requestId = typeof id === 'function' ? id() : (id ?? createRequestId());
    Object.defineProperty(this, 'requestId', { value: requestId, enumerable: true });
    return requestId;
  }
}

/** Response headers as entries or a record, whatever the client gave (fetch Headers, AxiosHeaders). */
function toEntries(headers: HeadersLike): HeaderSource {
  const value = headers as unknown as { [Symbol.iterator]?: unknown; toJSON?: () => Record<string, unknown> };
  if (typeof value[Symbol.iterator] === 'function') return headers as unknown as HeaderSource;
  if (typeof value.toJSON === 'function') return value.toJSON();
  return headers as HeaderSource;
}

/**
 * Replay, for the Retryline DevTools panel: a request the page sent is sent again by the page,
 * through the same client (its options, guards, and the faults the panel injects), so that its
 * retries can be watched again after a fault rule changed. Core keeps nothing: as each request
 * starts, the devtools hook is offered a function that sends it again (its `replayable`), with the
 * request as its `request-start` names it, and the hook keeps the latest few.
 *
 * Only a request that is safe to send without its caller is offered: a safe method (RFC 9110
 * §9.2.1; TRACE aside, which fetch refuses) whose body, if any, can be sent again (the exchange's
 * `replayable`: the engine's own retries send that body again too), and that its client would send
 * again itself: its method in the rules' methods (`retryOn.methods`), and retries allowed
 * (`retry: false` resolves to no retries, as `retries: 0` does: either says send it once).
 *
 * A replay is no caller's: the caller's abort signal (aborted long ago, perhaps) does not reach it,
 * its response is freed unread, and how it ends goes nowhere but its events. `again` runs the
 * request's loop anew with the options and signal given; nothing aborts that signal, so every
 * attempt is sent with a signal of Retryline's, over the one the caller's request carries (fetch's
 * `init.signal`, a `Request`'s own, axios's `config.signal`). Its events carry a fresh id, always:
 * under the caller's own id (its `requestId`, or the header `requestIdHeader` names, which
 * `callerSendsId` says it sent) they would be recorded as the original's. That header still goes
 * out as it was, among the caller's headers: the option is dropped from the replay's, so the engine
 * neither takes the header as the id nor writes one of its own.
 *
 * In development builds only: called behind `process.env.NODE_ENV !== 'production'` (see
 * fault.ts), so a production bundle carries none of it. Kept at the end of this module, with no
 * constant of its own: a bundle that drops it keeps nothing of it, not even a break between its
 * neighbours' declarations.
 */
function offerReplay<R>(
  requestId: () => string,
  request: { readonly client: string; readonly method: string; readonly url: string },
  exchange: HttpExchange<R>,
  options: ResolvedHttpOptions,
  callerSendsId: boolean,
  again: (options: ResolvedHttpOptions, signal: AbortSignal) => Promise<{ readonly response: R }>,
): void {
  const { method } = request;
  if (
    !exchange.replayable ||
    !['GET', 'HEAD', 'OPTIONS'].includes(method) ||
    !options.rules.methods.has(method) ||
    options.policy.retries === 0
  ) {
    return;
  }
  offerDevtoolsReplay(requestId, request, (signal) => {
    const own = { ...options, requestId: createRequestId() };
    if (callerSendsId) own.requestIdHeader = undefined;
    return again(own, signal ?? new AbortController().signal)
      .then(({ response }) => exchange.discard(response))
      .catch(() => {});
  });
}
