import type { HttpRetryOptions, RetryInfo } from '@retryline/core';
import {
  encodeFormData,
  type HeaderSource,
  type HttpAttempt,
  type HttpExchange,
  invalid,
  keepRetryInfo,
  prepareHttpOptions,
  retryInfoOf,
  runHttpRequest,
} from '@retryline/core/adapter';

/** Options of `retryFetch`: Retryline's HTTP retry options. */
export interface FetchRetryOptions extends HttpRetryOptions {
  /** Names the client in events (adapters built on `retryFetch`, such as ky's, pass their own). @default 'fetch' */
  client?: string;
}

/**
 * `fetch`'s init, plus `retry`: per-request options over the client's, `false` to fail fast, or a
 * number of retries (`retry: 0` fails fast too).
 */
export interface RetryRequestInit extends RequestInit {
  retry?: FetchRetryOptions | false | number;
}

/** A `fetch` with retries: assignable to `typeof fetch`, and it takes `init.retry`. */
export type RetryFetch = (input: RequestInfo | URL, init?: RetryRequestInit) => Promise<Response>;

/**
 * How a `retryFetch` request went: attempts, total delay, each wait and why, how it ended
 * (`outcome`) and why no retry followed (`stoppedBy`). Give it what the call ended with:
 *
 * - the `Response` it resolved with (a success, or the last failed response, whatever stopped the
 *   retries);
 * - the error it rejected with (`RetriesExhaustedError`, fetch's own error, a guard's refusal …);
 * - the caller's abort reason it rejected with (`outcome: 'aborted'`). One reason may end many
 *   requests (one controller for a page): it answers only while exactly one request has ended with
 *   it, and `undefined` once a second has, since it cannot say which one is meant.
 *
 * `undefined` for anything that did not come through `retryFetch`.
 *
 * @example
 * ```ts
 * const response = await fetchWithRetry(url);
 * console.log(getRetryInfo(response)?.attempts);
 * ```
 */
export function getRetryInfo(responseOrError: unknown): RetryInfo | undefined {
  return retryInfoOf(responseOrError);
}

// Bodies fetch can send again from the same value: each call extracts a fresh copy.
function isReplayable(body: unknown): boolean {
  return (
    body === undefined ||
    body === null ||
    typeof body === 'string' ||
    body instanceof ArrayBuffer ||
    ArrayBuffer.isView(body) ||
    (typeof Blob !== 'undefined' && body instanceof Blob) ||
    (typeof FormData !== 'undefined' && body instanceof FormData) ||
    (typeof URLSearchParams !== 'undefined' && body instanceof URLSearchParams)
  );
}

/** `init` without Retryline's own `retry` field, which is not fetch's. */
function withoutRetry(init: RetryRequestInit): RequestInit {
  const { retry: _retry, ...rest } = init;
  return rest;
}

const isFormData = (body: unknown): body is FormData =>
  typeof FormData !== 'undefined' && body instanceof FormData;

/**
 * fetch draws a new multipart boundary each time it sends a FormData, so two attempts would differ.
 * Encoded once, every attempt sends the same bytes under the same content type; its files are
 * referred to, not copied.
 */
function freezeFormData(init: RequestInit, form: FormData): RequestInit {
  const body = encodeFormData(form);
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', body.type);
  return { ...init, body, headers };
}

/**
 * A copy of `headers`. A `Headers` is copied through its entries: `new Headers(headers)` can lose
 * all but `content-type` when the source is a patched Request's (msw 2.15 with a body), while
 * iterating it sees every field.
 */
const copyHeaders = (headers: HeadersInit | undefined): Headers =>
  new Headers(typeof Headers !== 'undefined' && headers instanceof Headers ? [...headers] : headers);

// A string is the common case, and reading the global `Request` costs a lazy getter in Node.
const isRequest = (input: unknown): input is Request =>
  typeof input === 'object' && typeof Request !== 'undefined' && input instanceof Request;

/**
 * One `fetchWithRetry` call as the request engine sees it: one object whose methods make each
 * attempt, rather than a literal of closures made per request.
 */
class FetchExchange implements HttpExchange<Response> {
  readonly method: string;
  readonly url: string;
  readonly replayable: boolean;
  readonly signal: AbortSignal | undefined;
  readonly ownSignal: boolean;
  private readonly request: Request | undefined;
  private readonly mayRetry: boolean;

  constructor(
    private readonly fetchImpl: typeof fetch,
    readonly client: string,
    private readonly input: RequestInfo | URL,
    private readonly init: RequestInit,
    readonly options: HttpExchange<Response>['options'],
  ) {
    const request = isRequest(input) ? input : undefined;
    this.request = request;
    this.method = init.method ?? request?.method ?? 'GET';
    this.url = request ? request.url : input instanceof URL ? input.href : String(input);
    // A Request's own body is replayed from clones of the untouched original.
    this.replayable = init.body === undefined ? true : isReplayable(init.body);
    this.signal = init.signal ?? request?.signal ?? undefined;
    // A Request's signal is made with it (it follows the one the Request was given), so it is
    // this request's alone; a signal in init may be shared by many requests.
    this.ownSignal = init.signal == null && request !== undefined;
    this.mayRetry = !('policy' in options) || options.policy.retries > 0;
  }

  /** The caller's headers, read only when the engine needs them (an event, a failure, an option). */
  get headers(): HeaderSource | undefined {
    // fetch's rule: init.headers, when given, replace the Request's headers.
    return (this.init.headers ?? this.request?.headers) as HeaderSource | undefined;
  }

  send({ signal, headers: added }: HttpAttempt): Promise<Response> {
    // `fetchImpl` is called on its own, never as `this.fetchImpl(…)`: a browser's fetch called on
    // any receiver but the window throws "Illegal invocation".
    const { init, request, fetchImpl } = this;
    // Each attempt gets its own init, in case the fetch it calls changes it.
    const attemptInit: RequestInit = Object.assign({}, init);
    if (signal) attemptInit.signal = signal;
    let headers: Headers | undefined;
    for (const name in added) {
      headers ??= copyHeaders(this.headers as HeadersInit | undefined);
      headers.set(name, added[name] as string);
    }
    if (headers) attemptInit.headers = headers;
    // A Request with a body is sent as a clone, so the original stays unread for the next
    // attempt; one without (a GET), or one no retry can follow, is sent as it is (a clone tees
    // the body: an upload of a gigabyte would be held in memory for a retry that never comes).
    const sent = request && request.body !== null && this.mayRetry ? request.clone() : this.input;
    return fetchImpl(sent, attemptInit);
  }

  // A Response has the fields the engine reads; its headers are read only when needed.
  inspect(response: Response): Response {
    return response;
  }

  discard(response: Response): void {
    // Cancelling the body frees the connection for the next attempt.
    if (response.body && !response.bodyUsed) response.body.cancel().catch(() => {});
  }

  redirected(): boolean | undefined {
    // fetch never says which hop failed: only a request that follows no redirect is known to have
    // failed on its first (a refused connection then proves it was never sent).
    const mode = this.init.redirect ?? this.request?.redirect;
    return mode === 'manual' || mode === 'error' ? false : undefined;
  }
}

/**
 * Wraps a `fetch` so that each request retries per Retryline's policy: transient failures with
 * backoff and jitter, server hints honoured, POST and PATCH only when they carry an idempotency key
 * or never reached the server. HTTP failures resolve the last `Response`, as fetch does; transport
 * failures that run out of retries reject with `RetriesExhaustedError` (`cause`: fetch's error).
 * No header is added unless an option asks for it.
 *
 * Without a `fetchImpl` (`retryFetch()` or `retryFetch(options)`), each attempt calls whatever
 * `globalThis.fetch` is at that moment, so mocks installed later (msw's `server.listen()`, a spy)
 * are honoured. `retryFetch(fetch)` keeps the function it was given.
 *
 * @example
 * ```ts
 * const fetchWithRetry = retryFetch(fetch, { retries: 3, idempotencyKey: true });
 * const response = await fetchWithRetry('https://api.example/orders', { method: 'POST', body });
 * const once = await fetchWithRetry('https://api.example/health', { retry: false });
 * ```
 */
export function retryFetch(options?: FetchRetryOptions): RetryFetch;
export function retryFetch(fetchImpl: typeof fetch | undefined, options?: FetchRetryOptions): RetryFetch;
export function retryFetch(
  first?: typeof fetch | FetchRetryOptions,
  second: FetchRetryOptions = {},
): RetryFetch {
  const given = typeof first === 'object' && first !== null ? undefined : first;
  const options = typeof first === 'object' && first !== null ? first : second;
  if (given !== undefined && typeof given !== 'function')
    throw invalid('fetchImpl', 'a fetch function', given);
  // Looked up per attempt, not once: a mock installed after this client was made still applies.
  const fetchImpl: typeof fetch = given ?? ((input, init) => globalThis.fetch(input, init));
  const { client = 'fetch', ...rest } = options;
  if (typeof client !== 'string' || client === '') throw invalid('client', 'a non-empty string', client);
  const prepared = prepareHttpOptions(rest);

  // Not an async function: the engine's promise is handed on with one `then`, not another await.
  return function fetchWithRetry(input, init) {
    try {
      const retry = init?.retry;
      // Not `const { retry, ...given } = init`: V8 (Node 20) copies with a rest pattern on a slow path.
      const given = init == null ? NO_INIT : retry === undefined ? init : withoutRetry(init);
      const options = prepared.with(retry);
      const run = (rest: RequestInit) =>
        runHttpRequest(new FetchExchange(fetchImpl, client, input, rest, options)).then(settled);
      // Sent once at most, a FormData goes to fetch as it is: nothing to keep for a retry.
      if (given.body != null && isFormData(given.body) && options.policy.retries > 0)
        return run(freezeFormData(given, given.body));
      return run(given);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

// A call without init (or with null, which fetch takes as none): each attempt still gets its own copy.
const NO_INIT: RequestInit = Object.freeze({});

/** A settled request's response, its retry info kept for `getRetryInfo`. */
function settled({ response, info }: { response: Response; info: RetryInfo }): Response {
  keepRetryInfo(response, info);
  return response;
}
