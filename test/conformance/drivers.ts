import { attachRetry, getRetryInfo as axiosRetryInfo } from '@retryline/axios';
import {
  type HttpRetryOptions,
  isRetrylineError,
  type RetryInfo,
  type RetrylineEvent,
  type StoppedBy,
} from '@retryline/core';
import { getRetryInfo as fetchRetryInfo, retryFetch } from '@retryline/fetch';
import { getRetryInfo as kyRetryInfo, retryline } from '@retryline/ky';
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

/**
 * What a scenario expects of the adapter's own `getRetryInfo()` for the result the caller got (the
 * Response, the AxiosError, ky's HTTPError, or the error thrown), as far as it says.
 */
export interface RetryInfoView {
  readonly attempts?: number | undefined;
  readonly totalDelay?: number | undefined;
  readonly outcome?: string | undefined;
  readonly stoppedBy?: StoppedBy | undefined;
  readonly retryAt?: number | undefined;
}

/** What a driver hands back: the outcome, the events, and the adapter's retry info for the result. */
export interface DriverResult {
  readonly outcome: Outcome;
  /** Whether the client's promise resolved or rejected: each client has its own convention. */
  readonly settled: 'resolved' | 'rejected';
  readonly events: RetrylineEvent[];
  /** What the adapter's `getRetryInfo()` says of the result: one type for every adapter. */
  readonly info: RetryInfo | undefined;
}

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
  /**
   * The client's own convention for an HTTP error status (≥ 400), kept whatever stopped the
   * retries: fetch resolves the Response; axios rejects with its AxiosError, ky throws HTTPError.
   */
  readonly httpErrors: 'resolve' | 'reject';
  send(request: DriverRequest): Promise<DriverResult>;
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
    httpErrors: 'resolve',
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
          info: fetchRetryInfo(response),
          settled: 'resolved',
        };
      } catch (error) {
        const info = fetchRetryInfo(error);
        const rejected = (outcome: Outcome): DriverResult => ({ outcome, events, info, settled: 'rejected' });
        // fetch's convention here: transport failures that outlast the retries are
        // RetriesExhaustedError with fetch's TypeError as the cause.
        if (isRetrylineError(error, 'RetriesExhaustedError') && error.cause instanceof TypeError) {
          return rejected({ kind: 'network-error' });
        }
        if (error instanceof TypeError) return rejected({ kind: 'network-error' });
        const mapped = common(error, signal);
        if (mapped) return rejected(mapped);
        throw error;
      }
    },
  };
}

// No fetch given: the client calls the global fetch of the moment, so msw's (patched after import) applies.
export const fetchDriver = makeFetchDriver('fetch');

export const axiosDriver: Driver = {
  name: 'axios',
  httpErrors: 'reject',
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
      return {
        outcome: { kind: 'response', status: response.status, body: String(response.data) },
        events,
        info: axiosRetryInfo(response),
        settled: 'resolved',
      };
    } catch (error) {
      const info = axiosRetryInfo(error);
      const rejected = (outcome: Outcome): DriverResult => ({ outcome, events, info, settled: 'rejected' });
      if (axios.isCancel(error)) return rejected({ kind: 'aborted', reason: signal?.reason });
      if (error instanceof AxiosError && error.response) {
        const { status, data } = error.response;
        return rejected({ kind: 'response', status, body: String(data ?? '') });
      }
      if (error instanceof AxiosError && error.code === AxiosError.ECONNABORTED) {
        return rejected({ kind: 'timeout' });
      }
      // A Retryline refusal comes as an AxiosError whose code names it and whose cause is Retryline's
      // error: read as that error, so every adapter's row expects the same.
      if (
        error instanceof AxiosError &&
        isRetrylineError(error.cause) &&
        /^ERR_[A-Z_]+$/.test(error.code ?? '')
      ) {
        const refused = common(error.cause, signal);
        if (refused) return rejected(refused);
      }
      if (error instanceof AxiosError) return rejected({ kind: 'network-error' });
      const mapped = common(error, signal);
      if (mapped) return rejected(mapped);
      throw error;
    }
  },
};

export const kyDriver: Driver = {
  name: 'ky',
  httpErrors: 'reject',
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
      return {
        outcome: { kind: 'response', status: response.status, body: await response.text() },
        events,
        info: kyRetryInfo(response),
        settled: 'resolved',
      };
    } catch (error) {
      // For ky's HTTPError, the info of the Response it wraps.
      const info = kyRetryInfo(error);
      const rejected = (outcome: Outcome): DriverResult => ({ outcome, events, info, settled: 'rejected' });
      if (error instanceof HTTPError) {
        return rejected({
          kind: 'response',
          status: error.response.status,
          body: await error.response.text(),
        });
      }
      if (error instanceof TimeoutError) return rejected({ kind: 'timeout' });
      const mapped = common(error, signal);
      if (mapped) return rejected(mapped);
      if (error instanceof TypeError) return rejected({ kind: 'network-error' });
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
