import {
  type HttpRetryOptions,
  InvalidOptionsError,
  isRetrylineError,
  RetriesExhaustedError,
  type RetryInfo,
  type RetrylineError,
} from '@retryline/core';
import {
  encodeFormData,
  type FaultAnswer,
  type HttpAttempt,
  invalid,
  keepRetryInfo,
  mergeOptions,
  type PreparedHttpOptions,
  prepareHttpOptions,
  requestRetryOptions,
  resolveHttpOptions,
  retryInfoOf,
  runHttpRequest,
} from '@retryline/core/adapter';
import axios, {
  type AxiosAdapter,
  AxiosError,
  AxiosHeaders,
  type AxiosInstance,
  type AxiosResponse,
  type AxiosStatic,
  CanceledError,
  type CancelToken,
  type InternalAxiosRequestConfig,
} from 'axios';

// Bundlers replace it; read only where core's fault injection already has (see core's fault.ts).
declare const process: { readonly env: { readonly NODE_ENV?: string } };

/** Options of `attachRetry`: Retryline's HTTP retry options. */
export type AxiosRetryOptions = HttpRetryOptions;

declare module 'axios' {
  interface AxiosRequestConfig {
    /** Retryline options for this request, over the instance's; `false` fails fast; a number of retries. */
    retry?: AxiosRetryOptions | false | number;
  }
}

/** One attempt that got a response: axios resolved it, or rejected it for failing `validateStatus`. */
interface Answered {
  readonly response: AxiosResponse;
  readonly error?: AxiosError;
  /** validateResponse's verdict, asked once: the error it makes, or `null` for a pass. */
  refused?: AxiosError | null;
}

const ATTACHED = Symbol.for('retryline.axios.attached');
// Retryline's wrapped adapters, each with the adapter it wraps. A config sent again (a token
// refreshed on a 401, then `instance(error.config)`) still names the wrapper as its adapter; it is
// unwrapped, not wrapped again, so its retries do not multiply (3 × 3 sends).
const wrappedAdapters = new WeakMap<AxiosAdapter, AxiosAdapter>();
const warned = new WeakSet<AxiosInstance>();

/**
 * How a request through an instance with Retryline went: attempts, total delay, each wait and why,
 * how it ended (`outcome`) and why no retry followed (`stoppedBy`). Give it what the request ended
 * with: its response, or whatever it rejected with (the last attempt's `AxiosError`, the
 * `AxiosError` standing for a Retryline refusal, the `ECONNABORTED` of a per-attempt timeout, or the
 * `CanceledError` of the caller's abort, `outcome: 'aborted'`, each made for its request alone).
 * `undefined` for anything else, and for a cancel axios made before Retryline saw the request (a
 * signal already aborted). A `CancelToken`'s reason, which one token gives every request it
 * cancels, answers only while exactly one request has ended with it.
 *
 * @example
 * ```ts
 * const response = await api.get('/orders');
 * console.log(getRetryInfo(response)?.attempts);
 * ```
 */
export function getRetryInfo(responseOrError: unknown): RetryInfo | undefined {
  return retryInfoOf(responseOrError);
}

// A URL with a scheme (`https://…`) or protocol-relative (`//host/…`): axios sends it as it is.
const ABSOLUTE_URL = /^([a-z][a-z\d+\-.]*:)?\/\//i;

/**
 * The URL axios sends `config` to. `instance.getUri()` first merges the instance's defaults into
 * the config, some 40 µs a request, though the config an adapter sees is already merged: without
 * `params` the URL is `url` on `baseURL` (unless it is absolute and absolute URLs are allowed),
 * joined with one slash; with `params`, axios's serializer decides, so axios builds it.
 */
function requestUrl(instance: AxiosInstance, config: InternalAxiosRequestConfig): string {
  const { baseURL, url = '', params, allowAbsoluteUrls } = config;
  if (params !== undefined && params !== null) return instance.getUri(config);
  if (!baseURL || (allowAbsoluteUrls !== false && ABSOLUTE_URL.test(url))) return url;
  return url === '' ? baseURL : `${baseURL.replace(/\/?\/$/, '')}/${url.replace(/^\/+/, '')}`;
}

/**
 * Points an attempt's config at the URL the engine moved it to (its `endpoints` option): `to` is
 * `from`, the URL the engine was given, on another endpoint's base, so the two share their tail
 * (path and query) and differ in their head. The config's own URL, after its interceptors ran
 * again for this attempt, gets the same head swapped, and `baseURL` goes: the URL is absolute now,
 * which axios would otherwise still join onto `baseURL` under `allowAbsoluteUrls: false`. `params`
 * stay for axios to append once, as they were (an interceptor may have renewed one). A URL an
 * interceptor moved off that head goes to `to` as it is, its query already in it.
 */
function moveTo(instance: AxiosInstance, config: InternalAxiosRequestConfig, from: string, to: string): void {
  let shared = 0;
  while (
    shared < from.length &&
    shared < to.length &&
    from.charCodeAt(from.length - 1 - shared) === to.charCodeAt(to.length - 1 - shared)
  ) {
    shared++;
  }
  const oldHead = from.slice(0, from.length - shared);
  const newHead = to.slice(0, to.length - shared);
  const own = requestUrl(instance, { ...config, params: undefined });
  if (own.startsWith(oldHead)) {
    config.url = newHead + own.slice(oldHead.length);
  } else {
    config.url = to;
    config.params = undefined;
  }
  delete config.baseURL;
}

function isStream(data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false;
  return (
    typeof (data as { pipe?: unknown }).pipe === 'function' ||
    (typeof ReadableStream !== 'undefined' && data instanceof ReadableStream)
  );
}

// axios's Node adapter, which can answer before reading the body. Browser builds have none
// (getAdapter throws): their adapters read bodies as they always did.
let nodeAdapter: AxiosAdapter | null | undefined;
function isNodeAdapter(adapter: AxiosAdapter): boolean {
  if (nodeAdapter === undefined) {
    try {
      nodeAdapter = axios.getAdapter('http');
    } catch {
      nodeAdapter = null;
    }
  }
  return adapter === nodeAdapter;
}

/** The error classes of one copy of axios. */
export interface AxiosClasses {
  readonly AxiosError: typeof AxiosError;
  readonly CanceledError: typeof CanceledError;
}

const OWN_CLASSES: AxiosClasses = { AxiosError, CanceledError };

/**
 * The copy of axios an instance was made with, as Retryline deals with it. An app may hold an
 * instance of another copy than the one this package resolves (a monorepo, a bundle): whatever
 * reaches that instance must be of its own copy (the adapter that sends, the errors it rejects
 * with, the headers it is handed), or its `instanceof` checks and its header handling fail.
 */
interface AxiosCopy {
  /** The function that sends with an adapter setting: a name, a list of names, or a function. */
  adapter(setting: InternalAxiosRequestConfig['adapter']): AxiosAdapter;
  /** The copy's error classes; `undefined` until `ready` has found them. */
  classes: AxiosClasses | undefined;
  readonly ready?: Promise<void>;
}

function copyOf(instance: AxiosInstance): AxiosCopy {
  const own = { adapter: axios.getAdapter, classes: OWN_CLASSES };
  if (instance.interceptors.request.constructor === axios.interceptors.request.constructor) return own;
  // Another copy's default export carries that copy's own getAdapter and classes.
  const { getAdapter, AxiosError: Failure, CanceledError: Cancel } = instance as Partial<AxiosStatic>;
  if (typeof getAdapter === 'function' && Failure && Cancel) {
    return { adapter: getAdapter, classes: { AxiosError: Failure, CanceledError: Cancel } };
  }
  if (typeof instance.create !== 'function') return own;
  // An instance made with `create()` has neither: that copy's adapters are reached through its
  // own dispatch, on a bare instance (no interceptors, no default headers to add again).
  const bare = instance.create();
  bare.defaults.headers = {} as typeof bare.defaults.headers;
  const copy: AxiosCopy = {
    adapter: (setting) => (typeof setting === 'function' ? setting : dispatchedBy(bare, setting)),
    classes: undefined,
    ready: classesOf(bare).then((classes) => {
      copy.classes = classes ?? OWN_CLASSES;
    }),
  };
  return copy;
}

/**
 * An adapter that sends through `bare`'s own dispatch, with the adapter `setting` names as that
 * copy resolves them. Bodies pass as they are (the caller's instance transforms them, once), and
 * the response or error comes back with the config the adapter was given, as from any adapter.
 */
function dispatchedBy(bare: AxiosInstance, setting: InternalAxiosRequestConfig['adapter']): AxiosAdapter {
  const asIs = [(data: unknown) => data];
  return async (config) => {
    try {
      const sent = { ...config, transformRequest: asIs, transformResponse: asIs };
      // Not the wrapper this config names: the adapter it stands for.
      if (setting === undefined) delete sent.adapter;
      else sent.adapter = setting;
      const response = await bare.request(sent);
      response.config = config;
      return response;
    } catch (error) {
      if (axios.isAxiosError(error)) {
        error.config = config;
        if (error.response) error.response.config = config;
      }
      throw error;
    }
  };
}

/**
 * The error classes of `bare`'s copy of axios, from a cancel it makes itself: handed a signal
 * already aborted, axios refuses the request with its CanceledError before any adapter runs
 * (lib/core/dispatchRequest.js), and a CanceledError is an AxiosError.
 */
async function classesOf(bare: AxiosInstance): Promise<AxiosClasses | undefined> {
  try {
    await bare.request({ signal: AbortSignal.abort(), adapter: () => Promise.reject(new Error('unsent')) });
  } catch (error) {
    const Cancel = axios.isCancel(error) ? (error as object).constructor : undefined;
    const Failure = Cancel && Object.getPrototypeOf(Cancel.prototype)?.constructor;
    if (typeof Failure === 'function' && axios.isAxiosError(error)) {
      return { AxiosError: Failure, CanceledError: Cancel as typeof CanceledError };
    }
  }
  return undefined;
}

/** The AxiosHeaders class of the instance's copy: axios's dispatch hands an adapter its headers as one. */
function headersClassOf(config: InternalAxiosRequestConfig | undefined): typeof AxiosHeaders {
  const made = (config?.headers as object | undefined)?.constructor as typeof AxiosHeaders | undefined;
  return typeof made?.from === 'function' ? made : AxiosHeaders;
}

/** Node's Buffer, as much of it as reading a body takes (this package has no Node types). */
interface NodeBuffer {
  concat(chunks: Uint8Array[]): Uint8Array & { toString(encoding?: string): string };
}

/**
 * A shallow copy of an axios config, its own enumerable properties as `Object.assign({}, config)`
 * would give them. axios merges a request's config into an object in dictionary mode, which
 * `Object.assign` and `{ ...config }` copy on a slow path in V8 (Node 20: about 5 µs for its 16
 * fields, against under 1 µs for this loop), on every request in Node, where the first attempt is
 * streamed.
 */
function copyConfig(config: InternalAxiosRequestConfig): InternalAxiosRequestConfig {
  const copy: Record<PropertyKey, unknown> = {};
  const keys = Object.keys(config);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    copy[key] = (config as unknown as Record<string, unknown>)[key];
  }
  for (const key of Object.getOwnPropertySymbols(config)) {
    if (Object.prototype.propertyIsEnumerable.call(config, key)) {
      copy[key] = (config as unknown as Record<symbol, unknown>)[key];
    }
  }
  return copy as unknown as InternalAxiosRequestConfig;
}

/**
 * Reads a body the Node adapter handed on as a stream, as that adapter reads one for the caller's
 * `responseType` (axios's lib/adapters/http.js): a Buffer for 'arraybuffer', else text in
 * `responseEncoding` less a UTF-8 byte order mark. It fails as axios would: with axios's own error
 * (maxContentLength, a cancel), or the socket's wrapped as a network error; once the attempt was
 * aborted, with the abort's reason.
 */
async function readBody(
  response: AxiosResponse,
  caller: InternalAxiosRequestConfig,
  classes: AxiosClasses,
): Promise<void> {
  const { config, data } = response;
  if (typeof (data as { pipe?: unknown } | null)?.pipe !== 'function') return;
  const { responseType, responseEncoding } = caller;
  const chunks: Uint8Array[] = [];
  const signal = config.signal as AbortSignal | undefined;
  const stopFollowing = followAbort(response);
  try {
    for await (const chunk of data as AsyncIterable<Uint8Array>) chunks.push(chunk);
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    if (axios.isAxiosError(error)) throw error;
    // As axios reads a body: a connection cut mid-body is 'stream has been aborted', any other
    // failure (a bad gzip stream) axios's error for it, both with the response.
    const { AxiosError: Failure } = classes;
    if ((error as { message?: unknown } | null)?.message === 'aborted') {
      throw new Failure(
        'stream has been aborted',
        Failure.ERR_BAD_RESPONSE,
        config,
        response.request,
        response,
      );
    }
    throw Failure.from(error, undefined, config, response.request, response);
  } finally {
    stopFollowing();
  }
  const bytes = (globalThis as unknown as { Buffer: NodeBuffer }).Buffer.concat(chunks);
  Object.assign(config, { responseType });
  const text = responseType === 'arraybuffer' ? undefined : bytes.toString(responseEncoding);
  const bom = (!responseEncoding || responseEncoding === 'utf8') && text?.charCodeAt(0) === 0xfeff;
  response.data = text === undefined ? bytes : bom ? text.slice(1) : text;
}

/**
 * Ends a streamed body when the attempt it came from is aborted (the caller's abort, the deadline):
 * axios stops listening to the signal once it has answered, and for a status it rejects at once,
 * so a body that stalls would otherwise outlive both (the deadline bounds the body handed back too).
 * Returns the function that stops.
 */
function followAbort(response: AxiosResponse): () => void {
  const signal = response.config?.signal as AbortSignal | undefined;
  const stream = response.data as {
    destroy?: (error?: unknown) => void;
    once?: (event: string, listener: () => void) => void;
  } | null;
  if (typeof signal?.addEventListener !== 'function' || typeof stream?.destroy !== 'function')
    return () => {};
  const end = () => stream.destroy?.(signal.reason);
  if (signal.aborted) {
    end();
    return () => {};
  }
  signal.addEventListener('abort', end, { once: true });
  const stop = () => signal.removeEventListener('abort', end);
  // A stream that ended or was destroyed needs no more ending.
  stream.once?.('close', stop);
  return stop;
}

// What the engine resolved with, kept while the response it holds lives: the engine's abort links
// and the deadline's timer last as long as that value (attempt-loop's keepFollowing), and the
// caller holds only the response.
const engineValues = new WeakMap<object, object>();

function warnOnce(instance: AxiosInstance, message: string): void {
  if (warned.has(instance)) return;
  warned.add(instance);
  console.warn(`[Retryline] ${message}`);
}

/**
 * Re-runs the instance's request interceptors (all but Retryline's own) on a retry, in the order
 * axios runs them (last registered first), as a fresh request would: a token, a signature or a
 * timestamp an interceptor sets is renewed for every attempt.
 */
async function rerunRequestInterceptors(
  instance: AxiosInstance,
  config: InternalAxiosRequestConfig,
  own: Interceptor,
): Promise<InternalAxiosRequestConfig> {
  const handlers = instance.interceptors.request.handlers ?? [];
  let current = config;
  for (let index = handlers.length - 1; index >= 0; index--) {
    const handler = handlers[index];
    // Retryline's own is known by its function: axios's ids are not positions in `handlers`.
    if (!handler || handler.fulfilled === own || !handler.fulfilled) continue;
    if (handler.runWhen && !handler.runWhen(current)) continue;
    current = await handler.fulfilled(current);
  }
  return current;
}

/** What a layer over `installRetry` (the axios-retry compat layer) may decide per request. */
export interface RequestHooks {
  /** Options for this request, laid over the instance's (before `config.retry`). */
  readonly options?: AxiosRetryOptions;
  /** Decides whether a response is a success, instead of `validateStatus`. */
  readonly validateResponse?: (response: AxiosResponse) => boolean;
  /** Called with the final error once retries are exhausted, before it is thrown. */
  readonly onExhausted?: (error: unknown, retries: number) => void | Promise<void>;
  /** Called before each retry is sent, after the request interceptors ran again for it. */
  readonly beforeRetry?: (config: InternalAxiosRequestConfig) => void;
  /**
   * Reshapes the error the request finally rejects with (the compat layer's axios-retry shapes);
   * an error it makes is of the instance's copy of axios, `classes`.
   */
  readonly mapError?: (error: unknown, classes: AxiosClasses) => unknown;
  /**
   * Whether an error core knows no transport failure by is still judged as one that may have
   * reached the server (the compat layer: axios-retry asks its retryCondition about every error).
   * @default no: it is thrown at once
   */
  readonly judgeUnknown?: (error: unknown) => boolean;
  /**
   * Whether a callback may read a failed response's body (`error.response.data`): it is then read
   * before the response is judged. Without one, a response retried past is destroyed unread.
   * @default whether the options have a `retryOn`, `onRetry` or backoff function
   */
  readonly readsBody?: boolean;
}

/** How `installRetry` is configured by the layers built on it. */
export interface InstallOptions {
  /** Per-request hooks. */
  readonly perRequest?: (config: InternalAxiosRequestConfig) => RequestHooks;
  /** The compat layer owns the `axios-retry` config key, so it must not be taken for axios-retry itself. */
  readonly ownsAxiosRetryKey?: boolean;
  /**
   * Whether a Retryline error the request would reject with (a refusal, a stop with no response)
   * reaches the caller as an AxiosError whose `code` names it and whose `cause` it is.
   * @default no: it is thrown as it is (the compat layer's axios-retry shapes)
   */
  readonly axiosErrors?: boolean;
}

/**
 * Installs Retryline on an axios instance and returns `detach()`. Each request runs through
 * Retryline's engine inside the adapter: request interceptors run before the first attempt and
 * again before every retry; response interceptors run once, on the final outcome. Final failures
 * reject with axios's own `AxiosError` (`getRetryInfo(error)` has the attempts); aborts reject with
 * `CanceledError` at once and are never retried. Per request, `config.retry` overrides the options.
 *
 * @example
 * ```ts
 * const api = axios.create({ baseURL: 'https://api.example' });
 * const detach = attachRetry(api, { retries: 3, idempotencyKey: true });
 * await api.post('/orders', order, { retry: { retries: 5 } });
 * ```
 */
export function attachRetry(instance: AxiosInstance, options: AxiosRetryOptions = {}): () => void {
  return installRetry(instance, options, { axiosErrors: true }).detach;
}

/**
 * Whether Retryline's interceptor is still on the instance: attached and neither detached nor
 * ejected by its id (`interceptors.request.eject(requestInterceptorId)`, axios-retry's way to
 * remove it) or cleared.
 */
function stillAttached(instance: AxiosInstance): boolean {
  const own = (instance as unknown as Record<symbol, unknown>)[ATTACHED];
  if (typeof own !== 'function') return false;
  const handlers = instance.interceptors.request.handlers;
  // Known by its function: axios's ids are not positions in `handlers` (it trims ejected ones).
  return !Array.isArray(handlers) || handlers.some((handler) => handler?.fulfilled === own);
}

/** Retryline's request interceptor: it puts the retrying adapter in place. */
type Interceptor = (config: InternalAxiosRequestConfig) => InternalAxiosRequestConfig;

/** Installs the interceptor; returns its id and `detach()`. The base of `attachRetry` and the compat layer. */
export function installRetry(
  instance: AxiosInstance,
  options: AxiosRetryOptions,
  install: InstallOptions = {},
): { readonly id: number; readonly detach: () => void } {
  if (typeof instance?.interceptors?.request?.use !== 'function') {
    throw invalid('instance', 'an axios instance', instance);
  }
  if (stillAttached(instance)) {
    throw new InvalidOptionsError(
      'Expected an axios instance without Retryline, got one that already has it: retries would stack. Call the first detach() before attaching again',
      { option: 'instance' },
    );
  }
  const defaults = prepareHttpOptions(options);
  const copy = copyOf(instance);

  const retrying = (original: AxiosAdapter): AxiosAdapter => {
    const wrapped: AxiosAdapter = (config) =>
      runWithRetry(instance, copy, original, config, defaults, intercept, install);
    wrappedAdapters.set(wrapped, original);
    return wrapped;
  };
  // The last adapter setting seen and its wrapped adapter: most requests use the instance's own.
  let lastSetting: InternalAxiosRequestConfig['adapter'];
  let lastWrapped: AxiosAdapter | undefined;

  const intercept: Interceptor = (config) => {
    // Wrap whichever adapter this request resolves to (the instance's, or one set per request).
    const setting = config.adapter ?? instance.defaults.adapter;
    if (setting === lastWrapped && lastWrapped !== undefined) return config;
    if (lastWrapped === undefined || setting !== lastSetting) {
      const wrapped = typeof setting === 'function' ? wrappedAdapters.get(setting) : undefined;
      lastWrapped = retrying(wrapped ?? copy.adapter(setting));
      lastSetting = setting;
    }
    config.adapter = lastWrapped;
    return config;
  };
  const id = instance.interceptors.request.use(intercept, undefined, { synchronous: true });
  Object.defineProperty(instance, ATTACHED, { value: intercept, configurable: true });
  const detach = () => {
    instance.interceptors.request.eject(id);
    delete (instance as unknown as Record<symbol, unknown>)[ATTACHED];
  };
  return { id, detach };
}

const received = new WeakMap<object, AxiosError | AxiosResponse>();
// Each copy made for a callback, with the error it stands for: the caller gets the original.
const originals = new WeakMap<object, AxiosError>();

/** The body as the caller will receive it: through the config's `transformResponse`. */
function transformed(response: AxiosResponse): unknown {
  const { config, data } = response;
  const transforms = config?.transformResponse;
  // A stream is handed on as it is: a transform that pipes it would take it from the caller.
  if (!transforms || typeof (data as { pipe?: unknown } | null)?.pipe === 'function') return data;
  try {
    const headers = headersClassOf(config)
      .from(response.headers as Record<string, string>)
      .normalize(false);
    let result: unknown = data;
    for (const transform of Array.isArray(transforms) ? transforms : [transforms]) {
      result = transform.call(config, result, headers, response.status);
    }
    return result;
  } catch {
    return data; // a body axios cannot parse reaches the caller's catch, not here
  }
}

/**
 * A response as the caller receives it: its data through the config's `transformResponse` (JSON
 * parsed), as axios does once the adapter has answered. The adapter judges responses before that,
 * so what it shows the caller's callbacks (validateResponse, retryCondition, onRetry …) is this
 * copy, its data transformed the first time a callback reads it; the response itself is left for
 * axios to transform, once.
 */
function asReceived(response: AxiosResponse): AxiosResponse {
  const known = received.get(response) as AxiosResponse | undefined;
  if (known) return known;
  let data: { value: unknown } | undefined;
  const copy = { ...response };
  Object.defineProperty(copy, 'data', {
    enumerable: true,
    configurable: true,
    get: () => {
      data ??= { value: transformed(response) };
      return data.value;
    },
    set: (value: unknown) => {
      data = { value };
    },
  });
  received.set(response, copy);
  return copy;
}

/**
 * Runs `hook` with `error`'s body as the caller will receive it, then puts the raw body back for
 * axios to transform once, as it does every rejected response: the hook sees the very error the
 * caller gets (axios-retry's onMaxRetryTimesExceeded does), parsed.
 */
async function whileReceived(error: AxiosError, hook: () => unknown): Promise<void> {
  const { response } = error;
  if (!response) {
    await hook();
    return;
  }
  const raw: unknown = response.data;
  response.data = asReceived(response).data;
  try {
    await hook();
  } finally {
    response.data = raw;
  }
}

/** An axios error whose response (if any) is {@link asReceived}: the same error otherwise. */
function asReceivedError(error: AxiosError): AxiosError {
  if (!error.response) return error;
  const known = received.get(error) as AxiosError | undefined;
  if (known) return known;
  const copy = Object.create(
    Object.getPrototypeOf(error),
    Object.getOwnPropertyDescriptors(error),
  ) as AxiosError;
  copy.response = asReceived(error.response);
  received.set(error, copy);
  originals.set(copy, error);
  return copy;
}

/**
 * The error the caller gets for one a callback was shown ({@link asReceivedError}'s copy, which
 * the engine keeps as a stop's `cause`): the original, its body left for axios to transform once.
 */
export function callerError(error: unknown): unknown {
  return (typeof error === 'object' && error !== null && originals.get(error)) || error;
}

/** The error axios itself raises for a response that fails validation, of the instance's copy. */
function badResponse(
  response: AxiosResponse,
  config: InternalAxiosRequestConfig,
  classes: AxiosClasses,
): AxiosError {
  // axios's settle: a 4xx is the request's fault, anything else refused (5xx, or a 2xx a
  // validateResponse turned down) the response's.
  const code =
    response.status >= 400 && response.status < 500
      ? AxiosError.ERR_BAD_REQUEST
      : AxiosError.ERR_BAD_RESPONSE;
  return new classes.AxiosError(
    `Request failed with status code ${response.status}`,
    code,
    config,
    response.request,
    response,
  );
}

/**
 * An adapter answering with a fault the Retryline DevTools panel injects, as axios's own adapters
 * answer: a response settled by `validateStatus` as axios's lib/core/settle.js settles one (an
 * AxiosError with the response when it fails), or, for a network error, the `ERR_NETWORK`
 * AxiosError its browser adapters reject with.
 */
function faultAdapter(
  step: FaultAnswer,
  classes: AxiosClasses,
  Headers: typeof AxiosHeaders,
  responseType: InternalAxiosRequestConfig['responseType'],
): AxiosAdapter {
  return async (config) => {
    if (step.step === 'networkError') {
      const error = new classes.AxiosError('Network Error', AxiosError.ERR_NETWORK, config);
      error.cause = new Error('[Retryline] a network error injected from the Retryline DevTools panel');
      throw error;
    }
    const body = step.body ?? '';
    const response: AxiosResponse = {
      // A body as the caller's responseType asks for it; text otherwise (what JSON is parsed from).
      data:
        responseType === 'arraybuffer'
          ? new TextEncoder().encode(body).buffer
          : responseType === 'blob'
            ? new Blob([body])
            : body,
      status: step.status,
      statusText: step.statusText ?? '',
      headers: Headers.from(step.headers ?? {}),
      config,
    };
    const validate = config.validateStatus;
    if (!validate || validate(step.status)) return response;
    throw badResponse(response, config, classes);
  };
}

async function runWithRetry(
  instance: AxiosInstance,
  copy: AxiosCopy,
  original: AxiosAdapter,
  config: InternalAxiosRequestConfig,
  defaults: PreparedHttpOptions,
  own: Interceptor,
  install: InstallOptions,
): Promise<AxiosResponse> {
  if (copy.classes === undefined) await copy.ready;
  const classes = copy.classes ?? OWN_CLASSES;
  const hooks = install.perRequest?.(config) ?? {};
  if (!hooks.mapError && !install.axiosErrors) {
    return runRequest(instance, original, config, defaults, own, install, hooks, classes);
  }
  try {
    return await runRequest(instance, original, config, defaults, own, install, hooks, classes);
  } catch (error) {
    const mapped = hooks.mapError ? hooks.mapError(error, classes) : error;
    // Options a request got wrong are the programmer's to see as they are, not a request's failure.
    if (install.axiosErrors && isRetrylineError(mapped) && !isRetrylineError(mapped, 'InvalidOptionsError')) {
      throw asAxiosError(mapped, config, classes);
    }
    // Reshaped into another error (a stop's cause): getRetryInfo still tells how the request went.
    if (mapped !== error) keepRetryInfo(mapped, retryInfoOf(error));
    throw mapped;
  }
}

/** The `code` of the AxiosError a Retryline error reaches the caller as, by the error's name. */
const AXIOS_CODES: Readonly<Record<string, string>> = {
  CircuitOpenError: 'ERR_CIRCUIT_OPEN',
  RateLimitedError: 'ERR_RATE_LIMITED',
  BulkheadRejectedError: 'ERR_BULKHEAD_FULL',
  ThrottledError: 'ERR_THROTTLED',
  RetryBudgetExhaustedError: 'ERR_RETRY_BUDGET',
  DeadlineExceededError: 'ERR_DEADLINE',
  BodyNotReplayableError: 'ERR_BODY_NOT_REPLAYABLE',
};

/**
 * A Retryline error as the caller of an axios instance gets it: an AxiosError of the instance's
 * copy, so `axios.isAxiosError(e)` holds for every rejection. Its `code` names the guard
 * (`ERR_CIRCUIT_OPEN` …, `ERR_RETRYLINE` for any other), its `cause` is the Retryline error, and
 * `retryAt` is kept where it has one; `getRetryInfo()` answers for it as for the Retryline error.
 */
function asAxiosError(
  error: RetrylineError,
  config: InternalAxiosRequestConfig,
  classes: AxiosClasses,
): AxiosError {
  const code = Object.hasOwn(AXIOS_CODES, error.name) ? AXIOS_CODES[error.name] : 'ERR_RETRYLINE';
  const wrapped = new classes.AxiosError(error.message, code, config, undefined, undefined);
  wrapped.cause = error;
  const retryAt = (error as { retryAt?: unknown }).retryAt;
  if (typeof retryAt === 'number') Object.assign(wrapped, { retryAt });
  keepRetryInfo(wrapped, retryInfoOf(error));
  return wrapped;
}

/**
 * The request's headers as the engine reads them, names and values as axios would send them;
 * worked out on first read and kept.
 */
class LazyHeaders implements Iterable<readonly [string, string]> {
  #entries: Array<[string, string]> | undefined;
  readonly #config: InternalAxiosRequestConfig;

  constructor(config: InternalAxiosRequestConfig) {
    this.#config = config;
  }

  [Symbol.iterator](): Iterator<readonly [string, string]> {
    this.#entries ??= Object.entries(
      headersClassOf(this.#config).from(this.#config.headers).toJSON(true) as Record<string, string>,
    );
    return this.#entries[Symbol.iterator]();
  }
}

/**
 * A response's headers as the engine reads them. axios's own `get` lower-cases every field name on
 * every lookup; the adapters axios ships store names lower-cased already, so once one pass has seen
 * that, a lookup is a property read (some 1 µs less per response with pacing on). Mixed-case names,
 * from a custom adapter or an interceptor, are looked up through axios's `get` as before.
 */
class ResponseHeaders implements Iterable<[string, unknown]> {
  readonly #headers: AxiosHeaders;
  #lowerCased: boolean | undefined;

  constructor(headers: AxiosHeaders) {
    this.#headers = headers;
  }

  // Typed as HeadersLike's accessor; values are what axios holds (a string, or an array or number
  // for some fields), which the engine's header reader joins or reads as text.
  get(name: string): string | null | undefined {
    const headers = this.#headers;
    this.#lowerCased ??= Object.keys(headers).every((key) => key === key.toLowerCase());
    if (!this.#lowerCased) return headers.get(name) as string | null | undefined;
    const wanted = name.toLowerCase();
    return Object.hasOwn(headers, wanted) ? (headers[wanted] as string | undefined) : undefined;
  }

  [Symbol.iterator](): Iterator<[string, unknown]> {
    return this.#headers[Symbol.iterator]() as Iterator<[string, unknown]>;
  }
}

/**
 * Whether axios followed a redirect before it failed with `error`: follow-redirects counts the
 * hops on the request axios hands back; with `maxRedirects: 0` axios sends through node's own
 * request, which follows none; axios's fetch adapter hands back the Request, whose mode says.
 */
function followedRedirect(error: unknown): boolean | undefined {
  if (!axios.isAxiosError(error)) return undefined;
  const request = error.request as { _redirectCount?: unknown; redirect?: unknown; getHeader?: unknown };
  if (typeof request?._redirectCount === 'number') return request._redirectCount > 0;
  if (typeof request?.redirect === 'string') return request.redirect === 'follow' ? undefined : false;
  if (error.config?.maxRedirects === 0 && typeof request?.getHeader === 'function') return false;
  return undefined;
}

async function runRequest(
  instance: AxiosInstance,
  original: AxiosAdapter,
  config: InternalAxiosRequestConfig,
  defaults: PreparedHttpOptions,
  own: Interceptor,
  install: InstallOptions,
  hooks: RequestHooks,
  classes: AxiosClasses,
): Promise<AxiosResponse> {
  const { validateResponse } = hooks;
  // Headers handed to the adapter are of the instance's own copy of axios.
  const Headers = headersClassOf(config);
  if (!install.ownsAxiosRetryKey && 'axios-retry' in config) {
    warnOnce(
      instance,
      'this axios instance also has axios-retry installed: retries stack (3 × 3 sends). Remove axios-retry, or switch its import to @retryline/axios/compat.',
    );
  }
  const { retry } = config;
  // The URL the engine is given: what `endpoints` rebases an attempt from.
  const url = requestUrl(instance, config);
  const given = config.signal as AbortSignal | undefined;
  const configSignal = typeof given?.addEventListener === 'function' ? given : undefined;
  // A CancelToken (axios's older way to cancel) stops waits and retries as a signal does.
  const cancellation = config.cancelToken ? cancelSignal(config.cancelToken, configSignal) : undefined;
  const signal = cancellation ? cancellation.signal : configSignal;
  const perRequest = requestRetryOptions(retry);
  // The client's options were resolved once; compat's per-request options mean resolving again.
  const options = hooks.options
    ? resolveHttpOptions(mergeOptions(mergeOptions(defaults.defaults, hooks.options), perRequest ?? {}))
    : defaults.with(perRequest);
  // In Node, each attempt is answered at its headers (responseType 'stream') and its body read
  // here only if Retryline hands the response back, or a callback may read it: a response retried
  // past is destroyed unread, not downloaded and parsed.
  const streamed = config.responseType !== 'stream' && isNodeAdapter(original);
  const readsBody =
    validateResponse !== undefined ||
    (hooks.readsBody ??
      (options.predicate !== undefined ||
        options.onRetry !== undefined ||
        options.policy.backoff.strategy === 'custom'));
  // axios draws a new multipart boundary each time it sends a FormData: one that may be sent again
  // is encoded once, so every attempt sends the same bytes (its files referred to, not copied).
  const form =
    options.policy.retries > 0 && typeof FormData !== 'undefined' && config.data instanceof FormData
      ? encodeFormData(config.data)
      : undefined;
  const failure = (answered: Answered): AxiosError | undefined => {
    if (answered.error) return answered.error;
    if (!validateResponse) return undefined;
    if (answered.refused === undefined) {
      answered.refused = validateResponse(asReceived(answered.response))
        ? null
        : badResponse(answered.response, config, classes);
    }
    return answered.refused ?? undefined;
  };

  // One attempt through `adapter`: axios's own, or one answering a fault the DevTools panel injects.
  const sendThrough = async (
    adapter: AxiosAdapter,
    { attempt, signal: attemptSignal, headers: added, url: moved }: HttpAttempt,
  ): Promise<Answered> => {
    // The first attempt goes out with axios's own config unless something in it must change; a
    // retry gets a copy for its interceptors to work on (see copyConfig for what a copy costs).
    const copy =
      attempt > 1 ||
      attemptSignal !== undefined ||
      moved !== undefined ||
      validateResponse !== undefined ||
      streamed ||
      !!form;
    let attemptConfig: InternalAxiosRequestConfig = copy ? copyConfig(config) : config;
    if (copy) attemptConfig.headers = Headers.from(config.headers);
    if (attemptSignal) attemptConfig.signal = attemptSignal;
    // An attempt's signal follows the config's CancelToken (see cancelSignal), so the token cancels
    // nothing the signal does not, except in a replay (the DevTools panel's, development builds),
    // whose signal follows nothing of the caller's: there a token cancelled since would have axios
    // cancel the attempt at once. Dropped in development builds only, where replays are.
    if (process.env.NODE_ENV !== 'production' && attemptSignal) attemptConfig.cancelToken = undefined;
    // With validateResponse, every response reaches Retryline, which then judges it.
    if (validateResponse) attemptConfig.validateStatus = () => true;
    if (attempt > 1) {
      attemptConfig = await rerunRequestInterceptors(instance, attemptConfig, own);
      hooks.beforeRetry?.(attemptConfig);
    }
    // Last, so the interceptors see the request as the caller made it and the endpoint stays the engine's pick.
    if (moved !== undefined) moveTo(instance, attemptConfig, url, moved);
    if (streamed) attemptConfig.responseType = 'stream';
    if (form) attemptConfig.data = form;
    const headers = form ? { ...added, 'Content-Type': form.type } : added;
    for (const name in headers) {
      // An interceptor may have replaced the headers with a plain object, as axios allows.
      if (!(attemptConfig.headers instanceof Headers)) {
        attemptConfig.headers = Headers.from(attemptConfig.headers as Record<string, string>);
      }
      attemptConfig.headers.set(name, headers[name] as string);
    }
    let answered: Answered;
    try {
      answered = { response: await adapter(attemptConfig) };
    } catch (error) {
      // axios rejects a response that fails validateStatus; Retryline judges it as a response.
      if (!(axios.isAxiosError(error) && error.response)) throw error;
      answered = { response: error.response, error };
    }
    // A response that passed is the one handed back.
    if (streamed && (!answered.error || readsBody)) await readBody(answered.response, config, classes);
    return answered;
  };

  // How the request went, when the engine rejects: what a CanceledError made here answers with.
  let stopped: RetryInfo | undefined;
  try {
    const { response: answered, info } = await runHttpRequest<Answered>({
      client: 'axios',
      method: config.method ?? 'get',
      url,
      // Read only when the engine needs them (a header an option names, a failure, an event).
      headers: new LazyHeaders(config),
      replayable: !isStream(config.data),
      options,
      signal,
      send: (attempt) => sendThrough(original, attempt),
      // Called only by core's faultFor, which asks nothing in a production build: this folds away with it.
      inject: (step, attempt) =>
        (process.env.NODE_ENV !== 'production' &&
          sendThrough(
            faultAdapter(step, classes, Headers, config.responseType),
            attempt,
          )) as Promise<Answered>,
      inspect: ({ response }) => ({
        status: response.status,
        statusText: response.statusText,
        headers: new ResponseHeaders(Headers.from(response.headers as Record<string, string>)),
      }),
      failed: (answered) => failure(answered) !== undefined,
      // What retryOn, the backoff and onRetry see: the error with its body as the caller gets it.
      errorOf: (answered) => {
        const error = failure(answered);
        return error && asReceivedError(error);
      },
      redirected: followedRedirect,
      ended: (info) => {
        stopped = info;
      },
      ...(hooks.judgeUnknown ? { judgeUnknown: hooks.judgeUnknown } : {}),
      discard({ response }) {
        // A streamed body holds its socket until consumed or destroyed.
        const data = response.data as { destroy?: () => void } | undefined;
        if (typeof data?.destroy === 'function') data.destroy();
      },
    });
    engineValues.set(answered.response, answered);
    // The response handed back, whatever ended the retries, is read as the caller's config asks.
    if (streamed) await readBody(answered.response, config, classes);
    // A stream the caller asked for ends too when its request is aborted or its deadline passes.
    else if (config.responseType === 'stream') followAbort(answered.response);
    const error = failure(answered);
    if (error) {
      keepRetryInfo(error, info);
      if (info.outcome === 'exhausted' && hooks.onExhausted) {
        const { onExhausted } = hooks;
        await whileReceived(error, () => onExhausted(error, info.attempts - 1));
      }
      throw error;
    }
    // Kept on the response itself (a WeakMap entry per response costs a request microseconds).
    keepRetryInfo(answered.response, info);
    return answered.response;
  } catch (error) {
    // Transport failures that outlast the retries reject with axios's own error, as axios would.
    if (error instanceof RetriesExhaustedError && axios.isAxiosError(error.cause)) {
      keepRetryInfo(error.cause, retryInfoOf(error));
      await hooks.onExhausted?.(error.cause, error.attempts - 1);
      throw error.cause;
    }
    // Retryline's own per-attempt timeout ended the request, after the retries ran out or with no
    // retry allowed (a POST without a key): reported as axios reports timeouts.
    const exhausted = error instanceof RetriesExhaustedError;
    const timedOut = exhausted ? error.cause : error;
    if (isRetrylineError(timedOut, 'AttemptTimeoutError')) {
      const timeout = new classes.AxiosError(
        `timeout of ${timedOut.timeout}ms exceeded`,
        AxiosError.ECONNABORTED,
        config,
        undefined,
        undefined,
      );
      timeout.cause = error as Error;
      keepRetryInfo(timeout, retryInfoOf(error));
      if (exhausted) await hooks.onExhausted?.(timeout, error.attempts - 1);
      throw timeout;
    }
    if (signal?.aborted && error === signal.reason) {
      // A CancelToken's reason is axios's own CanceledError, with the message it was given: one
      // token may cancel many requests, so core answers for it as for any shared reason. Any other
      // abort rejects with a CanceledError of this request's own, which answers for it.
      if (axios.isCancel(error)) throw error;
      const canceled = new classes.CanceledError(undefined, config);
      keepRetryInfo(canceled, stopped);
      throw canceled;
    }
    throw error;
  } finally {
    cancellation?.stop();
  }
}

/**
 * A signal that aborts when `token` is cancelled (with the token's CanceledError) or `signal`
 * aborts; `stop()` unsubscribes from both once the request is over.
 */
function cancelSignal(
  token: CancelToken,
  signal: AbortSignal | undefined,
): { readonly signal: AbortSignal; stop(): void } {
  const controller = new AbortController();
  const cancel = (reason: unknown) => controller.abort(reason);
  const follow = () => controller.abort(signal?.reason);
  if (token.reason) cancel(token.reason);
  else token.subscribe(cancel);
  if (signal?.aborted) follow();
  else signal?.addEventListener('abort', follow, { once: true });
  return {
    signal: controller.signal,
    stop() {
      token.unsubscribe(cancel);
      signal?.removeEventListener('abort', follow);
    },
  };
}
