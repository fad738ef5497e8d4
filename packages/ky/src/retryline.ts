import type { HttpRetryOptions } from '@retryline/core';
import {
  invalid,
  keepRetryInfo,
  prepareHttpOptions,
  retryInfoOf,
  retryingFetch,
} from '@retryline/core/adapter';
import type { BeforeRetryHook, Input, Options } from 'ky';
import { toKyError } from './ky-error';

/**
 * Per-request Retryline options, given to ky as `retryline`: laid over the client's options from
 * `retryline()`. The same options as every Retryline adapter.
 */
export type KyRequestRetryOptions = HttpRetryOptions;

/**
 * Options of `retryline()`: Retryline's HTTP retry options, plus the `fetch` each attempt calls.
 *
 * `timeout` bounds **each attempt** and `deadline` the whole request, waits included. ky's own
 * `timeout` is switched off: ky sees one fetch call per request, so it would bound every attempt
 * and every wait together.
 */
export interface KyRetryOptions extends KyRequestRetryOptions {
  /**
   * The fetch each attempt calls. ky's own `fetch` option is where Retryline plugs in, so pass
   * yours here instead of to ky.
   * @default globalThis.fetch, looked up on every attempt (so a mock installed later, msw's say, is used)
   * @example
   * ```ts
   * ky.create(retryline({ fetch: instrumentedFetch }));
   * ```
   */
  fetch?: typeof fetch;
}

declare module 'ky' {
  interface Options {
    /**
     * Retryline options for this request, over the client's from `retryline()`; `false` fails fast
     * (one attempt).
     * @example
     * ```ts
     * await api.get('reports/latest', { retryline: { retries: 5, deadline: 30_000 } });
     * await api.get('health', { retryline: false });
     * ```
     */
    retryline?: KyRequestRetryOptions | false;
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function withoutRetryline(init: RequestInit): RequestInit {
  const { retryline: _retryline, ...rest } = init as RequestInit & { retryline?: unknown };
  return rest;
}

const KY_RETRY_WARNING =
  "[Retryline] ky's own retry is switched off for this client: Retryline already retries each request, " +
  'and retrying at two layers multiplies the attempts (and the load on a failing server). ' +
  "ky's `retry` option is ignored: set `retries` (and the rest of the policy) in retryline() instead.";

/**
 * ky options that make every request retry with Retryline: transient failures with backoff and
 * jitter, `Retry-After` and rate-limit headers honoured, POST and PATCH only with an idempotency
 * key or when they never reached the server, every attempt reported in events (`client: 'ky'`).
 * Pass them to `ky.create()` or `ky.extend()`.
 *
 * Retrying happens at one layer only: the options set ky's `retry` to 0, and a `beforeRetry` hook
 * rethrows the error of any retry ky would still attempt (after a later `.extend({ retry: 3 })`,
 * say) and warns once. ky's `timeout` is `false`: use `timeout` (per attempt) and `deadline` (the
 * whole request) here.
 *
 * ky's error conventions hold: an HTTP failure that outlasts its retries throws ky's `HTTPError`
 * for the last response; retries ended by the per-attempt timeout throw ky's `TimeoutError`
 * (`cause`: the Retryline error); a network failure throws fetch's own `TypeError`. `getRetryInfo()`
 * reads the attempts behind any of them.
 *
 * @example
 * ```ts
 * const api = ky.create({ prefixUrl: 'https://api.example' }).extend(
 *   retryline({ retries: 3, idempotencyKey: true, timeout: 5_000, deadline: 20_000 }),
 * );
 * const order = await api.post('orders', { json: { sku: 1 } }).json();
 * await api.get('health', { retryline: false }); // fails fast
 * ```
 */
export function retryline(options: KyRetryOptions = {}): Options {
  if (!isPlainObject(options)) throw invalid('options', 'an object', options);
  const { fetch: given, ...policy } = options as KyRetryOptions;
  if (given !== undefined && typeof given !== 'function') throw invalid('fetch', 'a fetch function', given);
  // Validates the options now, so a mistake surfaces where the client is made. Without `given`,
  // the global fetch is looked up per attempt.
  const retrying = retryingFetch(given, prepareHttpOptions(policy), 'ky');

  let warned = false;
  const warnOnce = () => {
    if (warned) return;
    warned = true;
    console.warn(KY_RETRY_WARNING);
  };

  // Not an async function: ky gets the request's promise with one `then` for its errors, not another await.
  function fetchWithRetry(input: Input, init: RequestInit = {}): Promise<Response> {
    try {
      // ky (1.1.1 and later) hands fetch the options it does not know itself, `retryline` among them.
      const perCall = (init as RequestInit & { retryline?: unknown }).retryline;
      // Not a rest pattern, which V8 (Node 20) copies on a slow path: init is copied only to drop the field.
      const rest = perCall === undefined ? init : withoutRetryline(init);
      if (perCall !== undefined && perCall !== false && !isPlainObject(perCall)) {
        throw invalid('retryline', 'an object or false', perCall);
      }
      // The request's own options go to core apart from init, which fetch is given without them.
      return retrying(input, rest, perCall as KyRequestRetryOptions | false | undefined).then(
        undefined,
        (error: unknown) => {
          const signal = rest.signal ?? (input instanceof Request ? input.signal : undefined);
          // The caller's abort reason goes back as it is (its retry info is core's to give: one
          // reason may end many requests).
          if (signal?.aborted && error === signal.reason) throw error;
          const thrown = toKyError(error, input);
          if (thrown !== error) keepRetryInfo(thrown, retryInfoOf(error));
          throw thrown;
        },
      );
    } catch (error) {
      return Promise.reject(error);
    }
  }

  const refuseKyRetry: BeforeRetryHook = ({ error }) => {
    warnOnce();
    // ky's recommended way to stop a retry: throwing. Its error is what the request would have
    // thrown with ky's retry off. (Returning `ky.stop` would resolve the request with `undefined`.)
    throw error;
  };

  return {
    fetch: fetchWithRetry,
    retry: 0,
    timeout: false,
    // No beforeRequest hook: ky awaits every hook on every request (some 2 % of a loopback request),
    // and a retry ky would make is caught, and warned about, where it happens.
    hooks: { beforeRetry: [refuseKyRetry] },
  };
}
