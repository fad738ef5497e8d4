/**
 * `@retryline/axios/compat`: axios-retry 4.x's API on Retryline's engine. Migrating is one line:
 * `import axiosRetry from 'axios-retry'` becomes `import axiosRetry from '@retryline/axios/compat'`.
 * Options, defaults, helpers and the per-request `'axios-retry'` key keep axios-retry's documented
 * meaning; the waiting, abort handling, server hints and events are Retryline's.
 */
import { InvalidOptionsError, isRetrylineError, parseRetryHint } from '@retryline/core';
import {
  type HeadersLike,
  headerValue,
  invalid,
  MAX_DELAY_LIMIT,
  mergeOptions,
  normalizePolicy,
  requestRetryOptions,
  systemClock,
  systemRandom,
} from '@retryline/core/adapter';
import {
  AxiosError,
  type AxiosInstance,
  type AxiosRequestConfig,
  type AxiosResponse,
  type AxiosStatic,
  type InternalAxiosRequestConfig,
  isAxiosError,
} from 'axios';
import {
  type AxiosClasses,
  type AxiosRetryOptions,
  callerError,
  installRetry,
  type RequestHooks,
} from './attach-retry';

// The types below repeat axios-retry 4.x's member for member: a program that still has axios-retry
// installed merges both `'axios-retry'` augmentations, which TypeScript accepts only when they match.

/** axios-retry's options, with its defaults. */
export interface IAxiosRetryConfig {
  /**
   * Retries after the first attempt: `retries: 1` is one retry after the first failure.
   * @default 3
   */
  retries?: number;
  /**
   * `false`: the request's `timeout` bounds all attempts together (a Retryline `deadline`);
   * `true`: every attempt gets the whole `timeout` again.
   * @default false
   */
  shouldResetTimeout?: boolean;
  /**
   * Whether a failed attempt is retried, asked about every error as axios-retry asks; may be async
   * (a promise that rejects means no). The default, unlike axios-retry's, never resends a POST or
   * PATCH without an idempotency key once it may have reached the server.
   * @default isNetworkOrIdempotentRequestError
   * @example
   * ```ts
   * axiosRetry(client, { retryCondition: (error) => error.response?.status === 503 });
   * ```
   */
  retryCondition?: (error: AxiosError) => boolean | Promise<boolean>;
  /**
   * The wait in milliseconds before retry `retryCount` (1 for the first).
   * @default noDelay (no wait, except what Retry-After asks)
   * @example
   * ```ts
   * axiosRetry(client, { retryDelay: axiosRetry.exponentialDelay });
   * ```
   */
  retryDelay?: (retryCount: number, error: AxiosError) => number;
  /**
   * Called before each wait with the retry's number, the error and the request config; changes to
   * the config (a refreshed token in its headers) go out with the retry. May be async.
   * @default none
   */
  onRetry?: (
    retryCount: number,
    error: AxiosError,
    requestConfig: AxiosRequestConfig,
  ) => Promise<void> | void;
  /**
   * Called once, with the last error, when every retry has been used, before the error is thrown.
   * @default none
   */
  onMaxRetryTimesExceeded?: (error: AxiosError, retryCount: number) => Promise<void> | void;
  /**
   * Decides whether a response is a success, instead of axios's `validateStatus`; a response it
   * refuses fails like an error status (and is retried if `retryCondition` says so).
   * @default null (axios's `validateStatus`)
   */
  validateResponse?: ((response: AxiosResponse) => boolean) | null;
}

/** What `config['axios-retry']` holds: options for one request, then its retry state. */
export interface IAxiosRetryConfigExtended extends IAxiosRetryConfig {
  /** Retries made so far. */
  retryCount?: number;
  /** When the latest attempt started (epoch milliseconds). */
  lastRequestTime?: number;
}

/** The ids of the interceptors `axiosRetry()` registered: eject both to remove it. */
export interface IAxiosRetryReturn {
  requestInterceptorId: number;
  responseInterceptorId: number;
}

/** Retryline options axios-retry has its own name for (so `retryline` may not set them), with that name. */
const MAPPED = {
  retries: 'retries',
  retry: 'retries',
  backoff: 'retryDelay',
  retryOn: 'retryCondition',
  onRetry: 'onRetry',
} as const;
type Mapped = keyof typeof MAPPED;

/** axios-retry's options plus Retryline's own. */
export interface AxiosRetryCompatConfig extends IAxiosRetryConfig {
  /**
   * Retryline options axios-retry has no name for: `onEvent`, `deadline`, `idempotencyKey`,
   * `maxRetryAfter`, `requestIdHeader` … (per request, use axios's `retry` key, as with `attachRetry`).
   * @default none
   * @example
   * ```ts
   * axiosRetry(client, { retries: 3, retryline: { onEvent: console.log, idempotencyKey: true } });
   * ```
   */
  retryline?: Omit<AxiosRetryOptions, Mapped>;
}

/** What `axiosRetry()` returns: the interceptor ids, and `detach()`, which removes it all. */
export interface AxiosRetryCompatReturn extends IAxiosRetryReturn {
  detach(): void;
}

/**
 * An axios instance, or axios's default export, of any copy of axios. Another copy's types are
 * not the ones this package resolves (two versions in a monorepo, one bundled), and TypeScript
 * takes them for unrelated types: only their shape is asked for.
 */
export interface AnyAxiosInstance {
  readonly defaults: object;
  readonly interceptors: {
    readonly request: { use(...args: never[]): number; eject(id: number): void };
    readonly response: { use(...args: never[]): number; eject(id: number): void };
  };
}

/** The default export: `axiosRetry(instance, config)` with the helpers as properties. */
export interface AxiosRetry {
  (
    axiosInstance: AxiosStatic | AxiosInstance | AnyAxiosInstance,
    axiosRetryConfig?: AxiosRetryCompatConfig,
  ): AxiosRetryCompatReturn;
  isNetworkError(error: AxiosError): boolean;
  isRetryableError(error: AxiosError): boolean;
  isSafeRequestError(error: AxiosError): boolean;
  isIdempotentRequestError(error: AxiosError): boolean;
  isNetworkOrIdempotentRequestError(error: AxiosError): boolean;
  exponentialDelay(retryNumber?: number, error?: AxiosError, delayFactor?: number): number;
  linearDelay(delayFactor?: number): (retryNumber: number, error: AxiosError | undefined) => number;
  noDelay(retryNumber?: number, error?: AxiosError): number;
  retryAfter(error?: AxiosError): number;
  readonly namespace: typeof namespace;
  readonly DEFAULT_OPTIONS: Required<IAxiosRetryConfig>;
}

declare module 'axios' {
  interface AxiosRequestConfig {
    /** axios-retry options for this request, over the instance's. */
    'axios-retry'?: IAxiosRetryConfigExtended;
  }
}

/** The request config key axios-retry (and this layer) reads per-request options from. */
export const namespace: 'axios-retry' = 'axios-retry';

// Not network trouble: the caller cancelled, or axios's own timeout fired.
const NOT_NETWORK = new Set(['ERR_CANCELED', 'ECONNABORTED']);
// Failures that a retry cannot mend: the name does not resolve, no route, or the peer's certificate
// is refused. The list is is-retry-allowed 2.x's (axios-retry's definition of a network error).
const PERMANENT = new Set([
  'ENOTFOUND',
  'ENETUNREACH',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_CRL',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECRYPT_CRL_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CRL_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'CRL_NOT_YET_VALID',
  'CRL_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'ERROR_IN_CRL_LAST_UPDATE_FIELD',
  'ERROR_IN_CRL_NEXT_UPDATE_FIELD',
  'OUT_OF_MEM',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);
const SAFE_METHODS = ['get', 'head', 'options'];
const IDEMPOTENT_METHODS = [...SAFE_METHODS, 'put', 'delete'];

/**
 * Whether the request failed without a response for a reason a retry may mend (a reset, a refused
 * connection) — whatever its method. Not for cancels, axios timeouts, unknown hosts or bad certificates.
 */
export function isNetworkError(error: unknown): boolean {
  // Anything, as axios-retry takes it: `catch (error) { if (isNetworkError(error)) … }`.
  const { code, response } = (error ?? {}) as Partial<AxiosError>;
  if (response || !code) return false;
  return !NOT_NETWORK.has(code) && !PERMANENT.has(code);
}

/** Whether the failure is worth retrying for any method: no response, a 429 or a 5xx (not a timeout). */
export function isRetryableError(error: AxiosError): boolean {
  if (error?.code === 'ECONNABORTED') return false;
  const status = error?.response?.status;
  return status === undefined || status === 429 || (status >= 500 && status <= 599);
}

const methodIn = (error: AxiosError, methods: readonly string[]) => {
  const method = error?.config?.method;
  // Without a method nobody can say whether a repeat is safe.
  return typeof method === 'string' && methods.includes(method.toLowerCase());
};

/** A retryable failure of a safe request (GET, HEAD, OPTIONS). */
export function isSafeRequestError(error: AxiosError): boolean {
  return methodIn(error, SAFE_METHODS) && isRetryableError(error);
}

/** A retryable failure of an idempotent request (GET, HEAD, OPTIONS, PUT, DELETE). */
export function isIdempotentRequestError(error: AxiosError): boolean {
  return methodIn(error, IDEMPOTENT_METHODS) && isRetryableError(error);
}

/** The default `retryCondition`: a network error (any method) or a retryable idempotent request. */
export function isNetworkOrIdempotentRequestError(error: AxiosError): boolean {
  return isNetworkError(error) || isIdempotentRequestError(error);
}

/**
 * The wait the response's `Retry-After` asks for, in milliseconds; 0 without one. Read strictly
 * (RFC 9110 §10.2.3): whole seconds or an HTTP-date; anything else (`1.5`, `soon`) is no wait.
 */
export function retryAfter(error?: AxiosError): number {
  const value = headerValue(error?.response?.headers as HeadersLike | undefined, 'retry-after');
  if (value === undefined) return 0;
  return parseRetryHint({ 'retry-after': value }, systemClock.now())?.delay ?? 0;
}

/** The default `retryDelay`: no wait, except what the response's `Retry-After` asks. */
export function noDelay(_retryNumber = 0, error?: AxiosError): number {
  return retryAfter(error);
}

/**
 * `delayFactor · 2^retryNumber` ms (at least what Retry-After asks), plus 0–20 % of it at random.
 * @example
 * ```ts
 * axiosRetry(client, { retryDelay: exponentialDelay }); // ≈ 200, 400, 800 ms
 * ```
 */
export function exponentialDelay(retryNumber = 0, error?: AxiosError, delayFactor = 100): number {
  const delay = Math.max(2 ** retryNumber * delayFactor, retryAfter(error));
  return delay + delay * 0.2 * systemRandom();
}

/**
 * A `retryDelay` of `delayFactor · retryNumber` ms (at least what Retry-After asks).
 * @example
 * ```ts
 * axiosRetry(client, { retryDelay: linearDelay(500) }); // 500, 1000, 1500 ms
 * ```
 */
export function linearDelay(
  delayFactor = 100,
): (retryNumber: number, error: AxiosError | undefined) => number {
  return (retryNumber = 0, error = undefined) => Math.max(retryNumber * delayFactor, retryAfter(error));
}

const noop = () => {};

/** axios-retry's defaults. Read at each request, as axios-retry does. */
export const DEFAULT_OPTIONS: Required<IAxiosRetryConfig> = {
  retries: 3,
  retryCondition: isNetworkOrIdempotentRequestError,
  retryDelay: noDelay,
  shouldResetTimeout: false,
  onRetry: noop,
  onMaxRetryTimesExceeded: noop,
  validateResponse: null,
};

// axios-retry's own callbacks: they read a failure's status and headers, never its body.
const BODY_UNREAD = new Set<unknown>([
  isNetworkError,
  isRetryableError,
  isSafeRequestError,
  isIdempotentRequestError,
  isNetworkOrIdempotentRequestError,
  exponentialDelay,
  noDelay,
  noop,
]);

type Settings = Required<IAxiosRetryConfig>;

/** Defaults, then the instance's options, then the request's: axios-retry's order. */
function settingsOf(...layers: (IAxiosRetryConfig | undefined)[]): Settings {
  const settings: Record<string, unknown> = { ...DEFAULT_OPTIONS };
  for (const layer of layers) {
    if (layer === undefined) continue;
    if (typeof layer !== 'object' || layer === null)
      throw invalid("config['axios-retry']", 'an object', layer);
    for (const [key, value] of Object.entries(layer)) if (value !== undefined) settings[key] = value;
  }
  for (const name of ['retryCondition', 'retryDelay', 'onRetry', 'onMaxRetryTimesExceeded'] as const) {
    if (typeof settings[name] !== 'function') throw invalid(name, 'a function', settings[name]);
  }
  const { validateResponse } = settings;
  if (validateResponse !== null && typeof validateResponse !== 'function') {
    throw invalid('validateResponse', 'a function or null', validateResponse);
  }
  return settings as unknown as Settings;
}

/** axios-retry keeps retrying only while a sync condition is truthy or an async one does not say `false`. */
async function conditionHolds(condition: Settings['retryCondition'], error: AxiosError): Promise<boolean> {
  const verdict: unknown = condition(error);
  if (typeof (verdict as PromiseLike<unknown> | null)?.then !== 'function') return Boolean(verdict);
  try {
    return (await verdict) !== false;
  } catch {
    return false;
  }
}

// setTimeout takes anything that is not a positive number as 0; the engine refuses it, so clamp here.
const delayOf = (ms: unknown) =>
  typeof ms === 'number' && ms > 0 && ms !== Number.POSITIVE_INFINITY ? ms : 0;

/** What this layer remembers of a request while Retryline runs it. */
interface Tracked {
  /** The deadline that stands for the request's `timeout` (`shouldResetTimeout: false`). */
  readonly timeoutDeadline: number | undefined;
  /** Attempts whose failure `retryCondition` was asked about. */
  judged: number;
}

const tracked = new WeakMap<InternalAxiosRequestConfig, Tracked>();

/**
 * axios-retry's answer when the whole-request `timeout` runs out: while an attempt runs, axios's
 * own timeout error; when the next wait (a backoff, or a server's Retry-After) would not fit, the
 * last attempt's error. After a response the engine already hands that error back itself, whatever
 * stopped the retries, the reason in `getRetryInfo()`. What reaches here is a
 * `DeadlineExceededError` with the timeout as its `deadline`: after a transport failure (the last
 * error its `cause`), or for an attempt the timeout ran out in.
 */
function asAxiosRetryError(
  error: unknown,
  config: InternalAxiosRequestConfig,
  classes: AxiosClasses,
): unknown {
  const request = tracked.get(config);
  const deadline = request?.timeoutDeadline;
  if (
    deadline === undefined ||
    !isRetrylineError(error, 'DeadlineExceededError') ||
    error.deadline !== deadline
  ) {
    return error;
  }
  // The failure of attempt n was judged and the wait after it refused (n attempts, n judged): the
  // last error.
  if (isAxiosError(error.cause) && error.attempts === request?.judged) {
    return callerError(error.cause);
  }
  const timedOut = new classes.AxiosError(
    config.timeoutErrorMessage ?? `timeout of ${deadline}ms exceeded`,
    config.transitional?.clarifyTimeoutError ? AxiosError.ETIMEDOUT : AxiosError.ECONNABORTED,
    config,
  );
  timedOut.cause = error;
  return timedOut;
}

/**
 * Whether the engine judges an error it knows no transport failure by. axios-retry asks its
 * retryCondition about every error of a request; Retryline's engine knows a transport failure by
 * its code and throws anything else at once. So an AxiosError with a code it does not know
 * (`EHOSTDOWN`, `EPROTO`, none at all) is judged as a failure of unknown phase, which may have
 * reached the server, and retryCondition decides. A cancel is never judged, and an error without a
 * config is not axios-retry's to retry.
 */
function judgeUnknown(error: unknown): boolean {
  return (
    isAxiosError(error) &&
    error.config !== undefined &&
    (error as { __CANCEL__?: unknown }).__CANCEL__ === undefined
  );
}

function checkRetryline(retryline: AxiosRetryCompatConfig['retryline']): AxiosRetryOptions {
  if (retryline === undefined) return {};
  if (typeof retryline !== 'object' || retryline === null) throw invalid('retryline', 'an object', retryline);
  for (const [name, own] of Object.entries(MAPPED)) {
    if (Object.hasOwn(retryline, name)) {
      throw new InvalidOptionsError(
        `Expected retryline not to set ${name}, got retryline.${name}: axios-retry's ${own} option says it`,
        { option: `retryline.${name}` },
      );
    }
  }
  return retryline;
}

/**
 * Installs axios-retry's behaviour on an axios instance (or the axios default export) of any copy
 * of axios, running on Retryline: `retries`, `retryCondition`, `retryDelay`, `shouldResetTimeout`,
 * `onRetry`, `onMaxRetryTimesExceeded` and `validateResponse` as axios-retry documents them, per
 * request through `config['axios-retry']`. `retryCondition` is asked about every error, as by
 * axios-retry; its default never resends a POST or PATCH without an idempotency key that may have
 * reached the server. An abort stops at once, even during a wait, and nothing is sent after it.
 * Returns the interceptor ids and `detach()`.
 *
 * @example
 * ```ts
 * import axiosRetry from '@retryline/axios/compat';
 * const client = axios.create({ baseURL: 'https://api.example' });
 * axiosRetry(client, { retries: 2, retryDelay: axiosRetry.exponentialDelay });
 * await client.get('/items', { 'axios-retry': { retries: 0 } });
 * ```
 */
function axiosRetryCompat(
  axiosInstance: AxiosStatic | AxiosInstance | AnyAxiosInstance,
  axiosRetryConfig: AxiosRetryCompatConfig = {},
): AxiosRetryCompatReturn {
  if (typeof axiosRetryConfig !== 'object' || axiosRetryConfig === null) {
    throw invalid('axiosRetryConfig', 'an object', axiosRetryConfig);
  }
  const { retryline, ...instanceConfig } = axiosRetryConfig;
  const extras = checkRetryline(retryline);
  const instanceSettings = settingsOf(instanceConfig);
  // Whichever copy of axios it is from, it has an AxiosInstance's members (installRetry checks).
  const instance = axiosInstance as AxiosInstance;

  /** Per request: axios-retry's options for it, as Retryline options and hooks. */
  const perRequest = (config: InternalAxiosRequestConfig): RequestHooks => {
    const settings = settingsOf(instanceConfig, config[namespace]);
    const state: IAxiosRetryConfigExtended = {
      ...settings,
      retryCount: 0,
      lastRequestTime: systemClock.now(),
    };
    config[namespace] = state;
    const timeout = config.timeout ?? 0;
    const timeoutDeadline =
      !settings.shouldResetTimeout && timeout > 0 && extras.deadline === undefined ? timeout : undefined;
    const request: Tracked = { timeoutDeadline, judged: 0 };
    let retries: number | undefined;
    tracked.set(config, request);

    const options = mergeOptions<AxiosRetryOptions>(
      {
        retries: settings.retries,
        // axios-retry has no cap, and a delay function is taken as it is.
        // axios-retry counts the retry before asking for its delay: retryDelay reads it on the config.
        backoff: (retry, { error }) => {
          state.retryCount = retry;
          return delayOf(settings.retryDelay(retry, error as AxiosError));
        },
        jitter: 'none',
        maxDelay: MAX_DELAY_LIMIT,
        ...(timeoutDeadline === undefined ? {} : { deadline: timeoutDeadline }),
        // axios-retry asks its retryCondition about every error that carries a request config
        // (its README: "a callback to further control if a request should be retried").
        retryOn: async (outcome) => {
          const error = outcome.error;
          // Retryline's own (an attempt that ran out of `retryline.timeout`): Retryline's rules.
          if (isRetrylineError(error)) return outcome.retryable;
          // axios-retry leaves an error without a config alone: nothing tells how to repeat it.
          if (!(error as Partial<AxiosError> | undefined)?.config) return false;
          request.judged = outcome.attempt;
          // axios-retry does not ask about the last attempt: it has used every retry, so it counts
          // as exhausted (onMaxRetryTimesExceeded runs) whatever the condition would have said.
          if (outcome.attempt > allowedRetries()) return true;
          // The one deliberate difference: axios-retry's default condition resends any method
          // after a network error (isNetworkError). Retryline's never resends a request that is
          // not idempotent (a POST or PATCH without an idempotency key) once it may have reached
          // the server; a refused connection, provably unsent, still is. A retryCondition of the
          // caller's own decides for itself.
          if (
            settings.retryCondition === isNetworkOrIdempotentRequestError &&
            outcome.phase === 'unknown' &&
            !outcome.idempotent
          ) {
            return false;
          }
          return conditionHolds(settings.retryCondition, error as AxiosError);
        },
        onRetry: async ({ attempt, error }) => {
          state.retryCount = attempt;
          await settings.onRetry(attempt, error as AxiosError, config);
        },
      },
      extras,
    );
    // The retries the engine will allow, after axios's own per-request `retry` key: worked out by
    // retryOn above when an attempt first fails, so a request that succeeds at once resolves no
    // options twice.
    const { retry } = config;
    const allowedRetries = () =>
      (retries ??= normalizePolicy(mergeOptions(options, requestRetryOptions(retry))).retries);
    const { validateResponse } = settings;
    return {
      options,
      ...(validateResponse ? { validateResponse } : {}),
      // A failed body is read for the caller's own callbacks, and for a whole-request timeout,
      // which may hand the caller an earlier attempt's error.
      readsBody:
        timeoutDeadline !== undefined ||
        ![settings.retryCondition, settings.retryDelay, settings.onRetry].every((f) => BODY_UNREAD.has(f)),
      onExhausted: (error, retryCount) => settings.onMaxRetryTimesExceeded(error as AxiosError, retryCount),
      // A retry starts now (axios-retry's lastRequestTime).
      beforeRetry: (attempt) => {
        const state = attempt[namespace];
        if (state) state.lastRequestTime = systemClock.now();
      },
      // Give a whole-request timeout axios-retry's shape (see asAxiosRetryError).
      mapError: (error, classes) => asAxiosRetryError(error, config, classes),
      judgeUnknown,
    };
  };

  const installed = installRetry(
    instance,
    mergeOptions<AxiosRetryOptions>({ retries: instanceSettings.retries }, extras),
    { perRequest, ownsAxiosRetryKey: true, axiosErrors: true },
  );
  const id = installed.id;
  // Response interceptors run once, on the final outcome; this one only holds axios-retry's second id.
  const responseInterceptorId = instance.interceptors.response.use((response) => response);
  return {
    requestInterceptorId: id,
    responseInterceptorId,
    detach() {
      installed.detach();
      instance.interceptors.response.eject(responseInterceptorId);
    },
  };
}

/** axios-retry 4.x, on Retryline. */
const axiosRetry: AxiosRetry = Object.assign(axiosRetryCompat, {
  isNetworkError,
  isRetryableError,
  isSafeRequestError,
  isIdempotentRequestError,
  isNetworkOrIdempotentRequestError,
  exponentialDelay,
  linearDelay,
  noDelay,
  retryAfter,
  namespace,
  DEFAULT_OPTIONS,
});

export default axiosRetry;
