import type { HttpOutcome } from '../http/classify';
import { headerValue, trimOws } from '../http/headers';
import type { HttpRetryOptions } from '../http/request-engine';
import { expectObject, invalid, own } from '../policy/normalize';

/** What `presets.stripe()` takes. */
export interface StripePresetOptions {
  /**
   * Sends an `Idempotency-Key` (a UUID, the same on every attempt) with every POST, as Stripe's own
   * libraries do, so that a POST is retried safely after a network error or a 5xx. `false` sends
   * none: a POST is then retried only when nothing reached Stripe, or when Stripe says so
   * (`Stripe-Should-Retry: true`).
   * @default true
   * @example
   * ```ts
   * retryFetch(fetch, presets.stripe({ idempotency: false }));
   * ```
   */
  readonly idempotency?: boolean;
}

// https://docs.stripe.com/error-low-level#should-retry — "Stripe-Should-Retry set to true indicates
// that a client should retry the request"; "set to false means that a client should not retry the
// request because it won't have an additional effect"; "not set … Clients should fall back to other
// properties of the response (like the status code)".
function shouldRetryHeader(outcome: HttpOutcome): boolean | undefined {
  const value = headerValue(outcome.headers, 'stripe-should-retry');
  if (value === undefined) return undefined;
  const text = trimOws(value);
  return text === 'true' ? true : text === 'false' ? false : undefined;
}

/** Stripe's verdict on a failed attempt: its own header first, then its status table. */
function stripeRetryOn(outcome: HttpOutcome): boolean {
  // https://docs.stripe.com/error-low-level#network-errors — a request the network cut "should"
  // be retried "with the same idempotency keys and the same parameters": so whatever may have
  // reached Stripe is retried only when idempotent (GET, DELETE, or keyed), and whatever provably
  // did not, always (Retryline's own verdict says exactly that).
  if (outcome.phase !== 'response') return outcome.retryable;
  const told = shouldRetryHeader(outcome);
  if (told !== undefined) return told;
  const status = outcome.status ?? 0;
  // https://docs.stripe.com/error-low-level#idempotency — "The Stripe API guarantees the
  // idempotency of GET and DELETE requests"; a POST is idempotent with an idempotency key.
  if (!outcome.idempotent) return false;
  // https://docs.stripe.com/error-low-level#status-codes — 409: "The request conflicts with another
  // request (perhaps due to using the same idempotent key)"; stripe-node retries it
  // (https://github.com/stripe/stripe-node/blob/master/src/RequestSender.ts, `_shouldRetry`).
  // 429: "We recommend an exponential backoff of your requests" (and https://docs.stripe.com/rate-limits).
  // 500, 502, 503, 504 (stripe-node: every status ≥ 500): "Something went wrong on Stripe's end".
  return status === 409 || status === 429 || status >= 500;
}

/**
 * Retries Stripe's API the way Stripe documents it and its libraries do it.
 *
 * - **`Stripe-Should-Retry` overrides everything**: `true` retries (even an unkeyed POST), `false`
 *   stops, absent falls back to the status. https://docs.stripe.com/error-low-level#should-retry
 * - **Idempotency keys on POST**: an `Idempotency-Key` with every POST, the same on each attempt,
 *   unless `idempotency: false`. https://docs.stripe.com/error-low-level#idempotency
 * - **GET and DELETE are idempotent**: retried without a key.
 *   https://docs.stripe.com/error-low-level#idempotency
 * - **409 Conflict** is retried when the request is idempotent (stripe-node's `_shouldRetry`
 *   retries every 409; its POSTs always carry a key).
 *   https://github.com/stripe/stripe-node/blob/master/src/RequestSender.ts
 * - **429** is retried with exponential backoff and randomness, as Stripe recommends.
 *   https://docs.stripe.com/rate-limits, https://docs.stripe.com/error-low-level#status-codes
 * - **5xx** (every status ≥ 500, as stripe-node) is retried when idempotent.
 *   https://docs.stripe.com/error-low-level#server-errors
 * - **Network errors** are retried with the same key: always when the request provably never left
 *   (refused, no route), otherwise when it is idempotent.
 *   https://docs.stripe.com/error-low-level#network-errors
 * - **Backoff**: 0.5 s, 1 s, 2 s … capped at 5 s, each drawn from [d/2, d] (equal jitter): stripe-node's
 *   `_getSleepTimeInMS` with its `INITIAL_NETWORK_RETRY_DELAY_SEC` 0.5 and
 *   `MAX_NETWORK_RETRY_DELAY_SEC` 5. https://github.com/stripe/stripe-node/blob/master/src/RequestSender.ts
 * - **2 retries**, stripe-node's `maxNetworkRetries` default.
 *
 * Where the sources disagree: stripe-node retries a 429 only when `Stripe-Should-Retry: true`
 * comes with it (a lock timeout); Stripe's rate-limit guide says to retry 429s with backoff, and
 * this preset does. stripe-node never sleeps less than 0.5 s; here the first wait is drawn from
 * [0.25 s, 0.5 s]. A `Retry-After` header, if Stripe sends one, is honoured as by every client.
 *
 * @example
 * ```ts
 * const stripe = retryFetch(fetch, presets.stripe());
 * const api = retryFetch(fetch, { ...presets.stripe(), retries: 5 });
 * ```
 */
export function stripePreset(options?: StripePresetOptions): HttpRetryOptions {
  const given = expectObject('presets.stripe() options', options);
  const idempotency = own(given, 'idempotency') ?? true;
  if (typeof idempotency !== 'boolean')
    throw invalid('presets.stripe({ idempotency })', 'a boolean', idempotency);
  return {
    retries: 2,
    // base · 2^n for retry n: 0.5 s, 1 s, 2 s, 4 s, then the 5 s cap; equal jitter draws from [d/2, d].
    backoff: { strategy: 'exponential', base: 250, factor: 2 },
    maxDelay: 5_000,
    jitter: 'equal',
    retryOn: stripeRetryOn,
    ...(idempotency ? { idempotencyKey: { header: 'Idempotency-Key' } } : {}),
    // The header this preset decides by, shown in events (its value is no secret).
    exposeHeaders: ['Stripe-Should-Retry'],
  };
}
