import type { HttpOutcome } from '../http/classify';
import { type HeadersLike, headerValue, trimOws } from '../http/headers';
import type { HttpRetryOptions } from '../http/request-engine';
import { decimalValue, noneLeft } from './decimal';
import { parseGoDuration } from './go-duration';

// The SDK this preset follows: `shouldRetry`, `retryRequest` and `calculateDefaultRetryTimeoutMillis`
// in https://github.com/openai/openai-node/blob/master/src/client.ts, and its README's "Retries"
// (https://github.com/openai/openai-node#retries).

type Response = { readonly status: number; readonly headers: HeadersLike };

/** `x-should-retry: true|false`, "If the server explicitly says whether or not to retry, obey." */
function shouldRetryHeader(headers: HeadersLike | undefined): boolean | undefined {
  const value = headerValue(headers, 'x-should-retry');
  if (value === undefined) return undefined;
  const text = trimOws(value);
  return text === 'true' ? true : text === 'false' ? false : undefined;
}

/**
 * The SDK's verdict: the server's `x-should-retry` first, then 408 ("request timeouts"), 409 ("lock
 * timeouts"), 429 ("rate limits") and every status ≥ 500 ("internal errors"); and every connection
 * error and timeout. Whatever the method: the SDK retries its POSTs.
 */
function openaiRetryOn(outcome: HttpOutcome): boolean {
  if (outcome.phase !== 'response') return true;
  const told = shouldRetryHeader(outcome.headers);
  if (told !== undefined) return told;
  const status = outcome.status ?? 0;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * The wait a rate limit's reset headers give: `x-ratelimit-reset-requests` and
 * `x-ratelimit-reset-tokens`, "The time until the rate limit (based on requests | tokens) resets to
 * its initial state" (https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers),
 * as durations (`1s`, `6m0s`). A reset counts unless its remaining count (`x-ratelimit-remaining-…`)
 * says quota is left; when both count, the longer is waited: every spent limit must have reset.
 */
function resetWait(headers: HeadersLike): number | undefined {
  let wait: number | undefined;
  for (const limit of ['requests', 'tokens']) {
    const reset = headerValue(headers, `x-ratelimit-reset-${limit}`);
    const remaining = headerValue(headers, `x-ratelimit-remaining-${limit}`);
    if (reset === undefined || (remaining !== undefined && !noneLeft(remaining))) continue;
    const ms = parseGoDuration(trimOws(reset));
    if (ms !== undefined) wait = Math.max(wait ?? 0, ms);
  }
  return wait;
}

/**
 * The wait an OpenAI-style response asks for, in the SDK's order: `retry-after-ms` (milliseconds:
 * "not standard, but a good idea"), then `retry-after` in seconds (the SDK reads a fraction too);
 * then, on a 429 that has neither, the reset of the spent rate limit. A `retry-after` that is an
 * HTTP-date is left to the standard reading.
 */
function openaiHint({ status, headers }: Response): number | undefined {
  const ms = decimalValue(headerValue(headers, 'retry-after-ms'));
  if (ms !== undefined) return ms;
  const retryAfter = headerValue(headers, 'retry-after');
  if (retryAfter !== undefined) {
    const seconds = decimalValue(retryAfter);
    return seconds === undefined ? undefined : seconds * 1000;
  }
  return status === 429 ? resetWait(headers) : undefined;
}

// The SDK's backoff before retry n (n = 1 first): min(0.5 · 2^(n−1), 8) seconds × U(0.75, 1]
// ("jitter, take up to at most 25 percent of the retry time"). As a Retryline policy: a backoff of
// 7/8 of that, × U(6/7, 8/7) (proportional jitter, ratio 1/7): 7/8 × 6/7 = 3/4 and 7/8 × 8/7 = 1.
const BASE = 250 * (7 / 8); // 218.75 ms: 7/8 of 0.5 s at n = 1
const MAX_DELAY = 8_000 * (7 / 8); // 7 s: 7/8 of the 8 s cap
const JITTER_RATIO = 1 / 7;

/**
 * Retries OpenAI's API, and APIs that answer as it does, the way OpenAI's official SDKs do
 * (https://github.com/openai/openai-node#retries, https://github.com/openai/openai-node/blob/master/src/client.ts).
 *
 * - **`x-should-retry: true|false`** overrides everything: "If the server explicitly says whether or
 *   not to retry, obey."
 * - **408, 409, 429 and every status ≥ 500**, connection errors and timeouts are retried, **whatever
 *   the method**: the SDKs retry their POSTs.
 * - **`retry-after-ms`** (milliseconds), then **`retry-after`** (seconds, a fraction allowed, or an
 *   HTTP-date) set the wait.
 * - **`x-ratelimit-reset-requests` / `x-ratelimit-reset-tokens`** (`1s`, `6m0s`, `20ms`) set the wait
 *   of a 429 that has neither: the reset of each limit whose `x-ratelimit-remaining-…` says none is
 *   left (the longer of the two). https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers
 * - **Backoff**: 0.5 s, 1 s, 2 s, 4 s, 8 s (the cap), each × U(0.75, 1], as the SDK's
 *   `calculateDefaultRetryTimeoutMillis`.
 * - **2 retries**, the SDKs' `maxRetries` default.
 *
 * The reset headers are OpenAI's documentation, not its SDK's behaviour (the SDK ignores them); a
 * reset is the time until the limit is whole again, so it may be longer than the wait for one more
 * request. Any server wait above `maxRetryAfter` (60 s) stops retrying at once with `retryAt`, where
 * the current SDK would sleep it out. Retrying a POST that may have been processed is what the SDKs
 * do; it may run (and bill) the request twice.
 *
 * @example
 * ```ts
 * const openai = retryFetch(fetch, presets.openai());
 * ```
 */
export function openaiPreset(): HttpRetryOptions {
  return {
    retries: 2,
    backoff: { strategy: 'exponential', base: BASE, factor: 2 },
    maxDelay: MAX_DELAY,
    jitter: { type: 'proportional', ratio: JITTER_RATIO },
    retryOn: openaiRetryOn,
    hint: openaiHint,
    // The headers this preset decides by, shown in events (no secret in them).
    exposeHeaders: ['x-should-retry', 'retry-after-ms'],
  };
}
