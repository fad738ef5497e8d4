import {
  errorRetryInfo,
  type HeaderSource,
  type HttpErrorRetryInfo,
  type HttpRetryInfo,
  type HttpRetryOptions,
  invalid,
  prepareHttpOptions,
  revealRetryInfo,
  runHttpRequest,
} from '@retryline/core';

/** Options of `retryFetch`: Retryline's HTTP retry options. */
export interface FetchRetryOptions extends HttpRetryOptions {
  /** Names the client in events (adapters built on `retryFetch`, such as ky's, pass their own). @default 'fetch' */
  client?: string;
}

/** `fetch`'s init, plus `retry`: per-request options over the client's, or `false` to fail fast. */
export interface RetryRequestInit extends RequestInit {
  retry?: FetchRetryOptions | false;
}

/** A `fetch` with retries: assignable to `typeof fetch`, and it takes `init.retry`. */
export type RetryFetch = (input: RequestInfo | URL, init?: RetryRequestInit) => Promise<Response>;

const infoByResponse = new WeakMap<Response, HttpRetryInfo>();

/**
 * How the request behind `response` went: attempts, total delay, each wait and why. Given the error
 * a `retryFetch` call rejected with, how that request went and why it stopped (`exhausted`,
 * `deadline` …). `undefined` for anything that did not come through `retryFetch`, and for the
 * caller's own abort reason (one reason may end many requests).
 *
 * @example
 * ```ts
 * const response = await fetchWithRetry(url);
 * console.log(getRetryInfo(response)?.attempts);
 * ```
 */
export function getRetryInfo(response: Response): HttpRetryInfo | undefined;
export function getRetryInfo(error: unknown): HttpRetryInfo | HttpErrorRetryInfo | undefined;
export function getRetryInfo(responseOrError: unknown): HttpRetryInfo | HttpErrorRetryInfo | undefined {
  if (typeof Response !== 'undefined' && responseOrError instanceof Response) {
    return revealRetryInfo(infoByResponse.get(responseOrError));
  }
  return errorRetryInfo(responseOrError);
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
 * Serialised once, every attempt sends the same bytes under the same content type.
 */
async function freezeFormData(init: RequestInit): Promise<RequestInit> {
  const encoded = new Response(init.body);
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', encoded.headers.get('content-type') ?? '');
  return { ...init, body: await encoded.arrayBuffer(), headers };
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

  return async function fetchWithRetry(input, init = {}) {
    // Not `const { retry, ...given } = init`: V8 (Node 20) copies with a rest pattern on a slow path.
    const retry = init.retry;
    const given = retry === undefined ? init : withoutRetry(init);
    const rest = given.body != null && isFormData(given.body) ? await freezeFormData(given) : given;
    const perCall: HttpRetryOptions | undefined = retry === false ? { retry: false } : retry;
    const request = isRequest(input) ? input : undefined;
    const signal = rest.signal ?? request?.signal;
    // fetch's rule: init.headers, when given, replace the Request's headers.
    const callerHeaders = rest.headers ?? request?.headers;
    const url = request ? request.url : input instanceof URL ? input.href : String(input);

    const { response, info } = await runHttpRequest<Response>({
      client,
      method: rest.method ?? request?.method ?? 'GET',
      url,
      headers: callerHeaders as HeaderSource | undefined,
      // A Request's own body is replayed from clones of the untouched original.
      replayable: rest.body === undefined ? true : isReplayable(rest.body),
      options: prepared.with(perCall),
      signal: signal ?? undefined,
      // A Request's signal is made with it (it follows the one the Request was given), so it is
      // this request's alone; a signal in init may be shared by many requests.
      ownSignal: rest.signal == null && request !== undefined,
      send({ signal: attemptSignal, headers: added }) {
        const names = Object.keys(added);
        const headers =
          names.length === 0 && rest.headers === undefined ? undefined : copyHeaders(callerHeaders);
        for (const name of names) headers?.set(name, added[name] as string);
        // Each attempt gets its own init, in case the fetch it calls changes it.
        const attemptInit: RequestInit = Object.assign({}, rest);
        if (attemptSignal) attemptInit.signal = attemptSignal;
        if (headers) attemptInit.headers = headers;
        // A Request with a body is sent as a clone, so the original stays unread for the next
        // attempt; one without (a GET) can be sent as it is, every time.
        const sent = request && request.body !== null ? request.clone() : input;
        return fetchImpl(sent, attemptInit);
      },
      // A Response has the fields the engine reads; its headers are read only when needed.
      inspect: (res) => res,
      discard(res) {
        // Cancelling the body frees the connection for the next attempt.
        if (res.body && !res.bodyUsed) res.body.cancel().catch(() => {});
      },
    });
    infoByResponse.set(response, info);
    return response;
  };
}
