import type { HttpOutcome } from '../http/classify';
import type { HttpRetryOptions } from '../http/request-engine';

/**
 * Google Cloud's verdict (https://cloud.google.com/storage/docs/retry-strategy): "HTTP 408, 429,
 * and 5xx response codes" and "Socket timeouts and TCP disconnects" are transient; "retrying
 * requests that are not idempotent can lead to race conditions and other conflicts", so only an
 * idempotent request is retried after anything that may have reached Google.
 */
function googleCloudRetryOn(outcome: HttpOutcome): boolean {
  if (outcome.phase !== 'response') return outcome.retryable;
  const status = outcome.status ?? 0;
  return outcome.idempotent && (status === 408 || status === 429 || (status >= 500 && status <= 599));
}

/**
 * Retries Google Cloud APIs with Google's truncated exponential backoff.
 *
 * - **408, 429 and every 5xx**, and socket timeouts and TCP disconnects, are retried; a request that
 *   is not idempotent only when it provably never reached Google.
 *   https://cloud.google.com/storage/docs/retry-strategy
 * - **Truncated exponential backoff with jitter**: "wait 1 + random-fraction seconds", then 2 +, 4 +
 *   … (2^n seconds plus up to 1 s drawn at random), "up to a maximum backoff time", after which
 *   retries continue at the maximum. https://cloud.google.com/iam/docs/retry-strategy
 * - **Initial delay 1 s, multiplier 2, maximum backoff 64 s, deadline 600 s, 3 retries**: the
 *   defaults of Google's Node.js client (`RETRY_DELAY_MULTIPLIER_DEFAULT`, `MAX_RETRY_DELAY_DEFAULT`,
 *   `TOTAL_TIMEOUT_DEFAULT`, `MAX_RETRY_DEFAULT`),
 *   https://github.com/googleapis/nodejs-storage/blob/main/src/storage.ts; the Cloud Storage docs
 *   call the maximum "typically 32 or 64 seconds".
 *
 * The deadline bounds the whole request, waits included: a wait that would end past it is not
 * started. Google truncates the wait with its random part (`min(2^n + random, maximum)`); here the
 * random second is added after the 64 s cap, so a wait at the cap lasts 64 to 65 s. A `Retry-After`
 * header, if Google sends one, is honoured as by every client.
 *
 * @example
 * ```ts
 * const storage = retryFetch(fetch, presets.googleCloud());
 * ```
 */
export function googleCloudPreset(): HttpRetryOptions {
  return {
    retries: 3,
    // base · 2^n for retry n: 1 s, 2 s, 4 s … capped at 64 s; then U(0, 1 s) on top.
    backoff: { strategy: 'exponential', base: 500, factor: 2 },
    maxDelay: 64_000,
    jitter: { type: 'constant', spread: 1_000 },
    deadline: 600_000,
    retryOn: googleCloudRetryOn,
  };
}
