import { attachRetry } from '@retryline/axios';
import { type HttpRetryOptions, isRetrylineError, type RetrylineEvent } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios, { AxiosError } from 'axios';
import ky, { HTTPError, TimeoutError } from 'ky';

/**
 * What a request came to, in one vocabulary for every client. Each driver maps its client's own
 * conventions onto it: fetch resolves a Response for HTTP failures, axios rejects with an AxiosError
 * that holds the response, ky throws HTTPError; transport failures, timeouts and aborts likewise.
 */
export type Outcome =
  | { readonly kind: 'response'; readonly status: number; readonly body: string }
  | { readonly kind: 'network-error' }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'aborted'; readonly reason: unknown }
  | { readonly kind: 'retryline-error'; readonly name: string; readonly retryAt?: number };

export interface DriverRequest {
  readonly method: string;
  readonly url: string;
  readonly body?: string;
  readonly headers?: Record<string, string>;
  /** The client's options, as every adapter takes them. */
  readonly options: HttpRetryOptions;
  /** Per-request options through the client's own per-request channel. */
  readonly perCall?: HttpRetryOptions | false;
  readonly signal?: AbortSignal;
}

export interface Driver {
  readonly name: string;
  send(request: DriverRequest): Promise<{ outcome: Outcome; events: RetrylineEvent[] }>;
}

function common(error: unknown, signal: AbortSignal | undefined): Outcome | undefined {
  if (signal?.aborted) return { kind: 'aborted', reason: signal.reason };
  if (
    isRetrylineError(error, 'RetriesExhaustedError') &&
    isRetrylineError(error.cause, 'AttemptTimeoutError')
  ) {
    return { kind: 'timeout' };
  }
  if (isRetrylineError(error)) {
    const retryAt = (error as { retryAt?: number }).retryAt;
    return { kind: 'retryline-error', name: error.name, ...(retryAt === undefined ? {} : { retryAt }) };
  }
  return undefined;
}

function makeFetchDriver(name: string, fetchImpl?: typeof fetch): Driver {
  return {
    name,
    async send({ method, url, body, headers, options, perCall, signal }) {
      const events: RetrylineEvent[] = [];
      const client = retryFetch(fetchImpl, { ...options, onEvent: (e) => events.push(e) });
      try {
        const response = await client(url, {
          method,
          ...(body === undefined ? {} : { body }),
          ...(headers ? { headers } : {}),
          ...(perCall === undefined ? {} : { retry: perCall }),
          ...(signal ? { signal } : {}),
        });
        return {
          outcome: { kind: 'response', status: response.status, body: await response.text() },
          events,
        };
      } catch (error) {
        // fetch's convention here: transport failures that outlast the retries are
        // RetriesExhaustedError with fetch's TypeError as the cause.
        if (isRetrylineError(error, 'RetriesExhaustedError') && error.cause instanceof TypeError) {
          return { outcome: { kind: 'network-error' }, events };
        }
        if (error instanceof TypeError) return { outcome: { kind: 'network-error' }, events };
        const mapped = common(error, signal);
        if (mapped) return { outcome: mapped, events };
        throw error;
      }
    },
  };
}

// No fetch given: the client calls the global fetch of the moment, so msw's (patched after import) applies.
export const fetchDriver = makeFetchDriver('fetch');

export const axiosDriver: Driver = {
  name: 'axios',
  async send({ method, url, body, headers, options, perCall, signal }) {
    const events: RetrylineEvent[] = [];
    const instance = axios.create({ responseType: 'text', transitional: { silentJSONParsing: true } });
    attachRetry(instance, { ...options, onEvent: (e) => events.push(e) });
    try {
      const response = await instance.request({
        method,
        url,
        ...(body === undefined ? {} : { data: body }),
        ...(headers ? { headers } : {}),
        ...(perCall === undefined ? {} : { retry: perCall }),
        ...(signal ? { signal } : {}),
      });
      return { outcome: { kind: 'response', status: response.status, body: String(response.data) }, events };
    } catch (error) {
      if (axios.isCancel(error)) return { outcome: { kind: 'aborted', reason: signal?.reason }, events };
      if (error instanceof AxiosError && error.response) {
        const { status, data } = error.response;
        return { outcome: { kind: 'response', status, body: String(data ?? '') }, events };
      }
      if (error instanceof AxiosError && error.code === AxiosError.ECONNABORTED) {
        return { outcome: { kind: 'timeout' }, events };
      }
      if (error instanceof AxiosError) return { outcome: { kind: 'network-error' }, events };
      const mapped = common(error, signal);
      if (mapped) return { outcome: mapped, events };
      throw error;
    }
  },
};

export const kyDriver: Driver = {
  name: 'ky',
  async send({ method, url, body, headers, options, perCall, signal }) {
    const events: RetrylineEvent[] = [];
    const api = ky.create(retryline({ ...options, onEvent: (e) => events.push(e) }));
    try {
      const response = await api(url, {
        method,
        ...(body === undefined ? {} : { body }),
        ...(headers ? { headers } : {}),
        ...(perCall === undefined ? {} : { retryline: perCall }),
        ...(signal ? { signal } : {}),
      });
      return { outcome: { kind: 'response', status: response.status, body: await response.text() }, events };
    } catch (error) {
      if (error instanceof HTTPError) {
        return {
          outcome: { kind: 'response', status: error.response.status, body: await error.response.text() },
          events,
        };
      }
      if (error instanceof TimeoutError) return { outcome: { kind: 'timeout' }, events };
      const mapped = common(error, signal);
      if (mapped) return { outcome: mapped, events };
      if (error instanceof TypeError) return { outcome: { kind: 'network-error' }, events };
      throw error;
    }
  },
};

export const drivers: readonly Driver[] = [fetchDriver, axiosDriver, kyDriver];

/**
 * A deliberately broken adapter: fetch through Retryline, but with every server hint stripped from
 * responses before Retryline sees them, as an adapter that forgot Retry-After would behave. The
 * conformance suite must fail its hint rows with it.
 */
export const hintBlindDriver = makeFetchDriver(
  'hint-blind fetch',
  async (...args: Parameters<typeof fetch>) => {
    const response = await fetch(...args);
    const headers = new Headers(response.headers);
    for (const name of ['retry-after', 'ratelimit', 'ratelimit-reset', 'x-ratelimit-reset'])
      headers.delete(name);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  },
);
