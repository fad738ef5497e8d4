import type { HttpOutcome } from '../http/classify';
import { type HeadersLike, headerValue } from '../http/headers';
import type { HttpRetryOptions } from '../http/request-engine';
import { parseRetryHint } from '../http/retry-hint';
import { decimalValue, noneLeft } from './decimal';

// Every rule below quotes where GitHub documents what a client does when rate limited:
// https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit

/**
 * The least a secondary rate limit without `retry-after` or a spent quota is waited out:
 * "Otherwise, wait for at least one minute before retrying".
 */
const SECONDARY_WAIT = 60_000;

type Response = { readonly status: number; readonly headers: HeadersLike };

/**
 * Whether a 403 or 429 is one of GitHub's rate limits, as far as its headers say: "If you exceed
 * your primary rate limit, you will receive a 403 or 429 response, and the x-ratelimit-remaining
 * header will be 0"; a secondary limit is "a 403 or 429 response and an error message", with
 * `retry-after` when GitHub gives one. The error message is in the body, which belongs to the
 * caller and is not read: a 429 is always a rate limit, a 403 only with `retry-after` or a spent
 * quota (most 403s are a missing permission).
 */
function rateLimited({ status, headers }: Response): boolean {
  if (status === 429) return true;
  return (
    status === 403 &&
    (headerValue(headers, 'retry-after') !== undefined ||
      noneLeft(headerValue(headers, 'x-ratelimit-remaining')))
  );
}

/**
 * How long GitHub asks a rate-limited request to wait, in GitHub's own order:
 * 1. "If the retry-after response header is present, you should not retry your request until after
 *    that many seconds has elapsed."
 * 2. "If the x-ratelimit-remaining header is 0, you should not retry your request until after the
 *    time, in UTC epoch seconds, specified by the x-ratelimit-reset header."
 * 3. "Otherwise, wait for at least one minute before retrying."
 */
function githubHint(response: Response, now: number): number | undefined {
  if (!rateLimited(response)) return undefined;
  const { headers } = response;
  const retryAfter = headerValue(headers, 'retry-after');
  // RFC 9110's Retry-After (seconds, or a date), read as every client reads it.
  const asked = retryAfter === undefined ? undefined : parseRetryHint({ 'retry-after': retryAfter }, now);
  if (asked) return asked.delay;
  if (noneLeft(headerValue(headers, 'x-ratelimit-remaining'))) {
    const reset = decimalValue(headerValue(headers, 'x-ratelimit-reset'));
    // A reset already past asks for no wait; the engine clamps an absurd one to a very long wait.
    if (reset !== undefined) return Math.max(0, reset * 1000 - now);
  }
  return SECONDARY_WAIT;
}

/** GitHub's verdict: a rate limit is retried after its wait, whatever the method; the rest as usual. */
function githubRetryOn(outcome: HttpOutcome): boolean {
  if (
    outcome.phase === 'response' &&
    outcome.status !== undefined &&
    outcome.headers !== undefined &&
    rateLimited({ status: outcome.status, headers: outcome.headers })
  ) {
    // A rate limiter refused the request before GitHub acted on it: sending it again after the wait
    // is what GitHub asks for ("you should not retry your request until after …"), POSTs included.
    return true;
  }
  return outcome.retryable;
}

/**
 * Retries GitHub's REST API the way GitHub documents it
 * (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit,
 * https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#handle-rate-limit-errors-appropriately).
 *
 * - **Primary rate limit**: a 403 or 429 with `x-ratelimit-remaining: 0` waits until
 *   `x-ratelimit-reset` (UTC epoch seconds), then retries.
 * - **Secondary rate limit**: a 429, or a 403 with `retry-after`, waits `retry-after` seconds; with
 *   neither `retry-after` nor a spent quota, at least one minute.
 * - **Rate limits are retried whatever the method**: the limiter refused the request, so nothing was
 *   done. Everything else (5xx, network errors) is retried by Retryline's defaults.
 * - **A specific number of retries**: 2, then the error ("throw an error after a specific number of
 *   retries").
 *
 * What it cannot do: tell a secondary limit from a permission error on a 403 that carries neither
 * `retry-after` nor `x-ratelimit-remaining: 0` (GitHub says which in the body, which is the
 * caller's and is not read), so such a 403 is not retried; and wait "an exponentially increasing
 * amount of time" for repeated secondary limits: the `hint` option sees one response, not how many
 * came before, so each repeated secondary limit waits the minute again. A primary reset further
 * away than `maxRetryAfter` (60 s by default) is not waited out: the request stops with
 * `stoppedBy: 'retry-after-too-long'` and `retryAt` set to the reset. Raise `maxRetryAfter` to wait
 * it out: `{ ...presets.github(), maxRetryAfter: 3_600_000 }`.
 *
 * @example
 * ```ts
 * const github = retryFetch(fetch, presets.github());
 * ```
 */
export function githubPreset(): HttpRetryOptions {
  return {
    retries: 2,
    retryOn: githubRetryOn,
    hint: githubHint,
  };
}
