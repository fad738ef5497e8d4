import { type HttpRetryOptions, isRetrylineError, type RetryInfo } from '@retryline/core';
import {
  encodeFormData,
  type HttpExchange,
  invalid,
  keepRetryInfo,
  prepareHttpOptions,
  retryInfoOf,
  runHttpRequest,
} from '@retryline/core/adapter';
import type { Dispatcher, request } from 'undici';

// An adapter for a client Retryline does not ship: undici's `request`, written as
// packages/core/ADAPTERS.md describes. undici's conventions are kept (every status resolves with its
// ResponseData; a transport failure rejects with undici's own error); Retryline's policy runs
// through runHttpRequest. test/examples/undici-adapter.test.ts runs it against a loopback server.

/** Options of `retryUndici`: Retryline's HTTP retry options, and one fact only its user knows. */
export interface UndiciRetryOptions extends HttpRetryOptions {
  /**
   * Whether the dispatcher may follow redirects. undici's `request` follows none unless the
   * dispatcher composes `interceptors.redirect`, which an adapter cannot see: say `false` when yours
   * does not, and a refused connection proves the request was never sent (a POST is retried too).
   * @default true: a refusal may come from a later hop, after a server processed the request
   */
  followsRedirects?: boolean;
}

/** undici's request options (an AbortSignal for `signal`), plus `retry`: this request's own options. */
export type RetryUndiciOptions = Omit<NonNullable<Parameters<typeof request>[1]>, 'signal'> & {
  signal?: AbortSignal | null;
  retry?: HttpRetryOptions | false | number;
};

type UndiciBody = NonNullable<RetryUndiciOptions['body']>;

/** undici's response: status, headers and a body to read (or `dump()`), whatever the status. */
export type ResponseData = Dispatcher.ResponseData<unknown>;

export type RetryUndici = (url: string | URL, options?: RetryUndiciOptions) => Promise<ResponseData>;

/** How a `retryUndici` request went, from its ResponseData or the error it rejected with. */
export const getRetryInfo = (value: unknown): RetryInfo | undefined => retryInfoOf(value);

// Node's global FormData and undici's own are different classes: `instanceof` knows only one.
const isFormData = (body: unknown): body is FormData =>
  Object.prototype.toString.call(body) === '[object FormData]';

// undici sends these again as they are; a stream or an async iterable is read once.
const isReplayable = (body: unknown) =>
  body == null || typeof body === 'string' || ArrayBuffer.isView(body) || isFormData(body);

/** undici's headers (a record, pairs, or a flat `[name, value, …]` array) as entries. */
function entriesOf(headers: RetryUndiciOptions['headers']): Array<[string, string]> {
  const entries: Array<[string, string]> = [];
  const add = (name: string, value: unknown) => {
    for (const one of Array.isArray(value) ? value : [value]) if (one != null) entries.push([name, `${one}`]);
  };
  if (headers == null) return entries;
  if (Array.isArray(headers) && typeof headers[0] === 'string') {
    for (let i = 0; i + 1 < headers.length; i += 2) add(headers[i] as string, headers[i + 1]);
  } else if (Symbol.iterator in headers) {
    for (const [name, value] of headers as Iterable<[string, unknown]>) add(name, value);
  } else {
    for (const [name, value] of Object.entries(headers)) add(name, value);
  }
  return entries;
}

/**
 * What a request that failed in transport rejects with once its retries are spent: undici's own
 * error, as undici rejects without retries (its retry info kept with it). Retryline's own errors
 * (a guard's refusal, the deadline, the per-attempt timeout, which undici has no error for) stay.
 */
function asUndiciError(error: unknown): unknown {
  if (!isRetrylineError(error, 'RetriesExhaustedError')) return error;
  const { cause } = error;
  if (typeof cause !== 'object' || cause === null || isRetrylineError(cause)) return error;
  keepRetryInfo(cause, retryInfoOf(error));
  return cause;
}

/**
 * Wraps undici's `request` so that each call retries per Retryline's policy: transient statuses and
 * failures with backoff and jitter, Retry-After honoured, POST and PATCH only with an idempotency
 * key or when they provably never left. Each response retried past is dumped, so its connection
 * serves the next attempt.
 *
 * @example
 * ```ts
 * const send = retryUndici(request, { retries: 3, idempotencyKey: true, deadline: 20_000 });
 * const { statusCode, body } = await send(`${base}/orders`, { method: 'POST', body: order });
 * ```
 */
export function retryUndici(send: typeof request, options: UndiciRetryOptions = {}): RetryUndici {
  if (typeof send !== 'function') throw invalid('request', "undici's request function", send);
  const { followsRedirects = true, ...policy } = options;
  if (typeof followsRedirects !== 'boolean') throw invalid('followsRedirects', 'a boolean', followsRedirects);
  // Validated once, here, so a mistake surfaces where the client is made.
  const prepared = prepareHttpOptions(policy);

  return async function requestWithRetry(url, { retry, signal, ...given } = {}) {
    const callerHeaders = entriesOf(given.headers);
    // undici draws a new multipart boundary per send: encoded once, every attempt sends the same
    // bytes (a server that fingerprints a keyed request sees one). undici sends a Blob under its
    // type, though its types list none.
    const form = isFormData(given.body) ? { body: encodeFormData(given.body) as unknown as UndiciBody } : {};
    const exchange: HttpExchange<ResponseData> = {
      client: 'undici',
      // undici's own default: PUT when there is a body.
      method: given.method ?? (given.body ? 'PUT' : 'GET'),
      url: String(url),
      headers: callerHeaders,
      replayable: isReplayable(given.body),
      options: prepared.with(retry),
      signal: signal ?? undefined,
      send: ({ signal: attemptSignal, headers: added }) => {
        const names = new Set(Object.keys(added).map((name) => name.toLowerCase()));
        const headers = callerHeaders
          .filter(([name]) => !names.has(name.toLowerCase()))
          .concat(Object.entries(added))
          .flat();
        return send(url, {
          ...given,
          ...form,
          ...(names.size > 0 ? { headers } : {}),
          ...(attemptSignal ? { signal: attemptSignal } : {}),
        });
      },
      inspect: ({ statusCode, statusText, headers }) => ({ status: statusCode, statusText, headers }),
      // Read to its end (up to 128 KiB), the body frees its connection for the next attempt.
      discard: ({ body }) => void body.dump().catch(() => {}),
      redirected: () => (followsRedirects ? undefined : false),
    };
    try {
      const { response, info } = await runHttpRequest(exchange);
      keepRetryInfo(response, info);
      return response;
    } catch (error) {
      throw asUndiciError(error);
    }
  };
}
