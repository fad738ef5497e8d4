import type { HttpRetryOptions, RetryInfo } from '@retryline/core';
import { invalid, prepareHttpOptions, retryInfoOf, retryingFetch } from '@retryline/core/adapter';

/** Options of `retryFetch`: Retryline's HTTP retry options. */
export interface FetchRetryOptions extends HttpRetryOptions {
  /** Names the client in events (adapters built on `retryFetch` pass their own). @default 'fetch' */
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

/** `init` without Retryline's own `retry` field, which is not fetch's. */
function withoutRetry(init: RetryRequestInit): RequestInit {
  const { retry: _retry, ...rest } = init;
  return rest;
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
  const { client = 'fetch', ...rest } = options;
  if (typeof client !== 'string' || client === '') throw invalid('client', 'a non-empty string', client);
  // Without `given`, core's retrying fetch looks the global fetch up per attempt.
  const send = retryingFetch(given, prepareHttpOptions(rest), client);

  // Not an async function: core's promise is handed on as it is, not awaited again.
  return function fetchWithRetry(input, init) {
    try {
      const retry = init?.retry;
      // Not `const { retry, ...given } = init`: V8 (Node 20) copies with a rest pattern on a slow path.
      return retry === undefined
        ? send(input, init)
        : send(input, withoutRetry(init as RetryRequestInit), retry);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}
