import type { FaultAnswer } from './fault';
import { encodeFormData } from './form-data';
import type { HeaderSource } from './redact';
import {
  type HttpAttempt,
  type HttpExchange,
  type HttpRetryOptions,
  type PreparedHttpOptions,
  type ResolvedHttpOptions,
  runHttpRequest,
} from './request-engine';
import { keepRetryInfo, type RetryInfo } from './retry-info';

// Bundlers replace it (see fault.ts); declared for this module alone (core's build has no Node types).
declare const process: { readonly env: { readonly NODE_ENV?: string } };

// How a fetch call maps onto the request engine, for every adapter whose client sends with fetch
// (@retryline/fetch, and ky, which hands each request to the fetch it is given).

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

/** What a Request was made with, for the same request to another URL (its body aside). */
function requestInit(request: Request): RequestInit {
  return {
    method: request.method,
    headers: request.headers,
    redirect: request.redirect,
    credentials: request.credentials,
    cache: request.cache,
    integrity: request.integrity,
    keepalive: request.keepalive,
    referrer: request.referrer,
    referrerPolicy: request.referrerPolicy,
    signal: request.signal,
  };
}

/**
 * One call of a retrying fetch as the request engine sees it: one object whose methods make each
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
    readonly options: ResolvedHttpOptions,
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
    // A hedge sends a second copy of an attempt, as a retry does.
    this.mayRetry = options.policy.retries > 0 || options.hedge !== undefined;
  }

  /** The caller's headers, read only when the engine needs them (an event, a failure, an option). */
  get headers(): HeaderSource | undefined {
    // fetch's rule: init.headers, when given, replace the Request's headers.
    return (this.init.headers ?? this.request?.headers) as HeaderSource | undefined;
  }

  send({ signal, headers: added, url }: HttpAttempt): Promise<Response> {
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
    if (url === undefined) return fetchImpl(sent, attemptInit);
    // Moved onto another endpoint: the same request, to `url`.
    if (!isRequest(sent)) return fetchImpl(url, attemptInit);
    if (sent.body === null) return fetchImpl(new Request(url, requestInit(sent)), attemptInit);
    // Its bytes, read whole: a stream as a request body needs `duplex`, which not every browser has.
    return sent
      .arrayBuffer()
      .then((body) => fetchImpl(new Request(url, { ...requestInit(sent), body }), attemptInit));
  }

  /** A fault as fetch answers: a `Response` for a status, its `TypeError` for a network error. */
  inject(step: FaultAnswer): Promise<Response> {
    // Called only by faultFor, which asks nothing in a production build: this folds away with it.
    return (process.env.NODE_ENV !== 'production' && fetchAnswer(step, this.url)) as Promise<Response>;
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

/** A fault step as fetch would have answered: a `Response`, or the `TypeError` of a network failure. */
function fetchAnswer(step: FaultAnswer, url: string): Promise<Response> {
  if (step.step === 'networkError') {
    // The message is one classified as the network's (Chromium's); the cause says who failed it.
    const cause = new Error('[Retryline] a network error injected from the Retryline DevTools panel');
    return Promise.reject(new TypeError('Failed to fetch', { cause }));
  }
  const { status, statusText = '', headers, body = null } = step;
  const response = new Response(body, headers ? { status, statusText, headers } : { status, statusText });
  // As a fetched response's: the URL it answers (a constructed one has none).
  Object.defineProperty(response, 'url', { value: url });
  return Promise.resolve(response);
}

/**
 * A fetch that retries, as a fetch-based adapter's client is built on: `fetchImpl` for each attempt,
 * `options` the client's (prepared once, by {@link prepareHttpOptions}), `client` naming it in
 * events. A call takes fetch's arguments, `init` without any field of the adapter's own, and the
 * request's own options apart (`retry`: as {@link PreparedHttpOptions.with} takes them). HTTP
 * failures resolve the last `Response`, as fetch does, and what a request ended with keeps its
 * retry info (read with {@link retryInfoOf}); a call never throws, it rejects.
 *
 * @example
 * ```ts
 * const send = retryingFetch(undefined, prepareHttpOptions({ retries: 3 }), 'my-client');
 * const response = await send(url, { method: 'PUT', body }, { retries: 5 });
 * ```
 */
export function retryingFetch(
  fetchImpl: typeof fetch | undefined,
  options: PreparedHttpOptions,
  client: string,
): (
  input: RequestInfo | URL,
  init?: RequestInit | null,
  retry?: HttpRetryOptions | boolean | number,
) => Promise<Response> {
  // Without one, the global fetch is looked up per attempt, not once: a mock installed after the
  // client was made (msw's `server.listen()`, a spy) still applies.
  const send: typeof fetch = fetchImpl ?? ((input, init) => globalThis.fetch(input, init));

  // Not an async function: the engine's promise is handed on with one `then`, not another await.
  return function fetchWithRetry(input, init, retry) {
    try {
      // A call without init (or with null, which fetch takes as none): each attempt still gets its own copy.
      const given = init ?? NO_INIT;
      const resolved = options.with(retry);
      // Sent once at most, a FormData goes to fetch as it is: nothing to keep for a retry.
      const sent =
        given.body != null && isFormData(given.body) && resolved.policy.retries > 0
          ? freezeFormData(given, given.body)
          : given;
      return runHttpRequest(new FetchExchange(send, client, input, sent, resolved)).then(settled);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

const NO_INIT: RequestInit = Object.freeze({});

/** A settled request's response, its retry info kept for `retryInfoOf`. */
function settled({ response, info }: { response: Response; info: RetryInfo }): Response {
  keepRetryInfo(response, info);
  return response;
}
