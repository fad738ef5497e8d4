import { attachRetry } from '@retryline/axios';
import type { HttpRetryOptions, RetrylineEvent } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios, { AxiosError } from 'axios';
import ky, { HTTPError } from 'ky';

/** A response as the caller got it, whichever client's convention (resolve or reject) carried it. */
export interface Answer {
  readonly status: number;
  readonly body: string;
}

export interface SendInit {
  readonly body?: string;
  readonly headers?: Record<string, string>;
  readonly signal?: AbortSignal;
}

/** One client of an adapter, as an application holds it: made once, used for many requests. */
export interface Client {
  /** Every event of every request this client made, in order. */
  readonly events: RetrylineEvent[];
  /**
   * Sends `target`: a path (`/items/1`), which each client resolves its own way (fetch: against the
   * endpoints alone; axios: on `baseURL`; ky: on `prefixUrl`), or an absolute URL. A rejection is
   * anything that is not a response (a transport failure, a Retryline refusal).
   */
  send(method: string, target: string, init?: SendInit): Promise<Answer>;
}

export interface Adapter {
  readonly name: 'fetch' | 'axios' | 'ky';
  /**
   * A client with `options`; `base` is where the client's own base URL points (axios's `baseURL`,
   * ky's `prefixUrl`: the first endpoint, as an app would configure them). fetch has none.
   */
  create(base: string | undefined, options: HttpRetryOptions): Client;
}

const ABSOLUTE = /^[a-z][a-z\d+\-.]*:\/\//i;

const fetchAdapter: Adapter = {
  name: 'fetch',
  create(_base, options) {
    const events: RetrylineEvent[] = [];
    const client = retryFetch(fetch, { ...options, onEvent: (event) => events.push(event) });
    return {
      events,
      async send(method, target, init = {}) {
        const response = await client(target, { method, ...init });
        return { status: response.status, body: await response.text() };
      },
    };
  },
};

const axiosAdapter: Adapter = {
  name: 'axios',
  create(base, options) {
    const events: RetrylineEvent[] = [];
    const instance = axios.create({
      ...(base === undefined ? {} : { baseURL: base }),
      responseType: 'text',
      transitional: { silentJSONParsing: true },
    });
    attachRetry(instance, { ...options, onEvent: (event) => events.push(event) });
    return {
      events,
      async send(method, target, { body, headers, signal } = {}) {
        try {
          const response = await instance.request<string>({
            method,
            url: target,
            ...(body === undefined ? {} : { data: body }),
            ...(headers ? { headers } : {}),
            ...(signal ? { signal } : {}),
          });
          return { status: response.status, body: String(response.data) };
        } catch (error) {
          if (error instanceof AxiosError && error.response) {
            return { status: error.response.status, body: String(error.response.data ?? '') };
          }
          throw error;
        }
      },
    };
  },
};

const kyAdapter: Adapter = {
  name: 'ky',
  create(base, options) {
    const events: RetrylineEvent[] = [];
    const api = ky
      .create(base === undefined ? {} : { prefixUrl: base })
      .extend(retryline({ ...options, onEvent: (event) => events.push(event) }));
    // The same client without its prefix, for absolute URLs (ky prefixes every string input).
    const bare = api.extend({ prefixUrl: '' });
    return {
      events,
      async send(method, target, { body, headers, signal } = {}) {
        const absolute = ABSOLUTE.test(target);
        try {
          // ky wants a path without its leading slash under prefixUrl.
          const response = await (absolute ? bare : api)(absolute ? target : target.replace(/^\/+/, ''), {
            method,
            ...(body === undefined ? {} : { body }),
            ...(headers ? { headers } : {}),
            ...(signal ? { signal } : {}),
          });
          return { status: response.status, body: await response.text() };
        } catch (error) {
          if (error instanceof HTTPError) {
            return { status: error.response.status, body: await error.response.text() };
          }
          throw error;
        }
      },
    };
  },
};

export const ADAPTERS: readonly Adapter[] = [fetchAdapter, axiosAdapter, kyAdapter];

/**
 * What an event says of the endpoint an attempt went to, if any (`attempt-start`/`attempt-end`),
 * without a trailing slash, as the test's own base URLs are written.
 */
export function endpointOf(event: RetrylineEvent): string | undefined {
  return (event as { endpoint?: string }).endpoint?.replace(/\/+$/, '');
}

/** Whether `event` is of the hedge's own attempt pair. */
export function isHedge(event: RetrylineEvent): boolean {
  return (event as { hedge?: true }).hedge === true;
}

/** The attempt-start events of the loop's own attempts (not hedges), in order. */
export function attemptStarts(events: readonly RetrylineEvent[]): RetrylineEvent[] {
  return events.filter((event) => event.type === 'attempt-start' && !isHedge(event));
}

/** How many attempts (hedges included) went to each endpoint; `''` counts those with none. */
export function attemptsPerEndpoint(events: readonly RetrylineEvent[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const event of events) {
    if (event.type !== 'attempt-start') continue;
    const endpoint = endpointOf(event) ?? '';
    counts.set(endpoint, (counts.get(endpoint) ?? 0) + 1);
  }
  return counts;
}

/** Events grouped by request id, each group in order. */
export function byRequest(events: readonly RetrylineEvent[]): Map<string, RetrylineEvent[]> {
  const groups = new Map<string, RetrylineEvent[]>();
  for (const event of events) {
    const group = groups.get(event.requestId);
    if (group) group.push(event);
    else groups.set(event.requestId, [event]);
  }
  return groups;
}
