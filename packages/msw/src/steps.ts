import type { Clock } from '@retryline/core';
import { systemClock } from '@retryline/core/adapter';
import { HttpResponse, type HttpResponseResolver } from 'msw';
import { expectClock, expectFunction, expectInteger, expectNumber, expectOptions, invalid } from './validate';

/** What msw passes to an `http.*` resolver: the request, its id, the path params and cookies. */
export type StepInfo = Parameters<HttpResponseResolver>[0];

/**
 * One answer to one attempt: any msw resolver that returns a response, such as `status(503)`,
 * `networkError()` or `() => HttpResponse.json({ id: 1 })`. Scripts pick one step per attempt.
 */
export type Step = (info: StepInfo) => Response | Promise<Response>;

/** What {@link status} answers with besides the status code. */
export interface StatusInit {
  /**
   * The response body as text. Give `body` or `json`, not both.
   * @default '' (no body)
   * @example
   * ```ts
   * status(503, { body: 'down for maintenance' });
   * ```
   */
  body?: string;
  /**
   * A body serialised as JSON, with `Content-Type: application/json`.
   * @default undefined (no JSON body)
   * @example
   * ```ts
   * status(422, { json: { error: 'invalid sku' } });
   * ```
   */
  json?: unknown;
  /**
   * Response headers.
   * @default {}
   * @example
   * ```ts
   * status(503, { headers: { 'retry-after': '1' } });
   * ```
   */
  headers?: Record<string, string>;
  /**
   * The reason phrase.
   * @default '' (none)
   * @example
   * ```ts
   * status(503, { statusText: 'Service Unavailable' });
   * ```
   */
  statusText?: string;
}

// Fetch's Response refuses a body with these statuses (Fetch standard: "null body status").
const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * A step answering `code`, with an optional body, JSON, headers and reason phrase. Every attempt
 * gets a fresh `Response`, so one step can answer any number of attempts.
 *
 * @example
 * ```ts
 * http.get('https://api.example/orders', status(503));
 * ```
 */
export function status(code: number, init?: StatusInit): Step {
  // Fetch's Response constructor takes statuses 200 to 599 only.
  expectInteger('status', code, 200);
  if (code > 599) throw invalid('status', 'an HTTP status code in [200, 599]', code);
  const options = expectOptions('status init', init);
  const { body, json, headers, statusText } = options as StatusInit;
  if (body !== undefined && typeof body !== 'string') throw invalid('body', 'a string', body);
  if (body !== undefined && json !== undefined) {
    throw new TypeError('[Retryline msw] Expected either body or json, got both');
  }
  if (NULL_BODY_STATUSES.has(code) && (body || json !== undefined)) {
    throw new TypeError(`[Retryline msw] Expected no body for status ${code} (a null body status), got one`);
  }
  const headerRecord = expectOptions('headers', headers);
  for (const [name, value] of Object.entries(headerRecord)) {
    if (typeof value !== 'string') throw invalid(`headers['${name}']`, 'a string', value);
  }
  if (statusText !== undefined && typeof statusText !== 'string') {
    throw invalid('statusText', 'a string', statusText);
  }
  const responseInit = {
    status: code,
    headers: headerRecord as Record<string, string>,
    ...(statusText === undefined ? {} : { statusText }),
  };
  if (json !== undefined) {
    const text = JSON.stringify(json);
    if (text === undefined) throw invalid('json', 'a JSON-serialisable value', json);
    return () => HttpResponse.json(json, responseInit);
  }
  const text = NULL_BODY_STATUSES.has(code) || !body ? null : body;
  return () => new HttpResponse(text, responseInit);
}

/**
 * A step that fails at the network level (`HttpResponse.error()`): the client sees a transport
 * failure, as when a connection is refused or reset, and gets no response at all.
 *
 * @example
 * ```ts
 * http.get('https://api.example/orders', sequence([networkError(), status(200)]));
 * ```
 */
export function networkError(): Step {
  return () => HttpResponse.error();
}

/** Options of {@link slow}. */
export interface SlowOptions {
  /**
   * The clock the wait runs on. Pass `virtualClock()` and advance it to release the answer.
   * @default systemClock
   * @example
   * ```ts
   * const clock = virtualClock();
   * slow(5_000, status(200), { clock });
   * ```
   */
  clock?: Clock;
}

/**
 * A step that waits `ms` milliseconds on the clock, then answers with `step`: what a client's
 * per-attempt `timeout` is for. If the client gives up first (the request's signal aborts), the
 * wait ends at once and the attempt is answered with a network error nobody reads.
 *
 * @example
 * ```ts
 * http.get('https://api.example/orders', sequence([slow(2_000, status(200)), status(200)]));
 * ```
 */
export function slow(ms: number, step: Step, options?: SlowOptions): Step {
  expectNumber('ms', ms, 0);
  expectFunction<Step>('step', step);
  const clock = expectClock<Clock>('clock', expectOptions('options', options).clock, systemClock);
  return async (info) => {
    try {
      await clock.sleep(ms, info.request.signal);
    } catch {
      // The client aborted the attempt: leave no timer behind and answer what it can no longer see.
      return HttpResponse.error();
    }
    return step(info);
  };
}
