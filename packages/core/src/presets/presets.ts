import { awsPreset } from './aws';
import { githubPreset } from './github';
import { googleCloudPreset } from './google-cloud';
import { openaiPreset } from './openai';
import { stripePreset } from './stripe';

/**
 * Options for the APIs people call most, each a plain `HttpRetryOptions` that follows the
 * provider's own documentation (cited rule by rule on each function). Spread one to override a
 * field: `{ ...presets.stripe(), retries: 5 }`.
 *
 * @example
 * ```ts
 * const github = retryFetch(fetch, presets.github());
 * const stripe = retryFetch(fetch, { ...presets.stripe(), retries: 5 });
 * ```
 */
export const presets = {
  /** Stripe: `Stripe-Should-Retry`, idempotency keys on POST, 409, 429, 5xx. See {@link stripePreset}. */
  stripe: stripePreset,
  /** GitHub's REST API: primary and secondary rate limits. See {@link githubPreset}. */
  github: githubPreset,
  /** AWS JSON-protocol APIs, as the SDKs' standard retry mode. See {@link awsPreset}. */
  aws: awsPreset,
  /** Google Cloud APIs: 408, 429, 5xx with truncated exponential backoff. See {@link googleCloudPreset}. */
  googleCloud: googleCloudPreset,
  /** OpenAI-style APIs: `x-should-retry`, `retry-after-ms`, reset durations. See {@link openaiPreset}. */
  openai: openaiPreset,
} as const;
