import { retryBudget } from '../guard/retry-budget';
import type { HttpOutcome } from '../http/classify';
import { type HeadersLike, headerValue, trimOws } from '../http/headers';
import type { HttpRetryOptions } from '../http/request-engine';

// The error codes the SDKs' standard mode retries, as the services name them. Throttling: boto3's
// list (https://boto3.amazonaws.com/v1/documentation/api/latest/guide/retries.html#standard-retry-mode),
// the same as the JavaScript SDK's `THROTTLING_ERROR_CODES`
// (https://github.com/smithy-lang/smithy-typescript/blob/main/packages/service-error-classification/src/constants.ts).
const THROTTLING_CODES: ReadonlySet<string> = /* @__PURE__ */ new Set([
  'Throttling',
  'ThrottlingException',
  'ThrottledException',
  'RequestThrottledException',
  'TooManyRequestsException',
  'ProvisionedThroughputExceededException',
  'TransactionInProgressException',
  'RequestLimitExceeded',
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'RequestThrottled',
  'SlowDown',
  'PriorRequestNotComplete',
  'EC2ThrottledException',
]);

// Transient: boto3's "Transient errors/exceptions" that a service names (the rest are client-side
// connection errors, retried below as transport failures).
const TRANSIENT_CODES: ReadonlySet<string> = /* @__PURE__ */ new Set([
  'RequestTimeout',
  'RequestTimeoutException',
  'PriorRequestNotComplete',
]);

// "Retry attempts on nondescriptive, transient error codes. Specifically, these HTTP status codes:
// 500, 502, 503, 504" (boto3, standard mode).
const TRANSIENT_STATUSES: ReadonlySet<number> = /* @__PURE__ */ new Set([500, 502, 503, 504]);

/**
 * The error code a JSON-protocol response names in `X-Amzn-ErrorType`, sanitized as Smithy says:
 * the part before the first `:` (a URL may follow it), then after the `#` (a namespace may lead it).
 * https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html#operation-error-serialization
 */
function amznErrorType(headers: HeadersLike | undefined): string | undefined {
  const value = headerValue(headers, 'x-amzn-errortype');
  if (value === undefined) return undefined;
  let code = trimOws(value);
  const colon = code.indexOf(':');
  if (colon !== -1) code = code.slice(0, colon);
  const hash = code.indexOf('#');
  if (hash !== -1) code = code.slice(hash + 1);
  return code === '' ? undefined : code;
}

/** The standard mode's verdict: connection errors, throttling and transient errors, any operation. */
function awsRetryOn(outcome: HttpOutcome): boolean {
  // Connection errors and timeouts are retried (boto3: ConnectionError, HTTPClientError; the
  // JavaScript SDK: ECONNRESET, EPIPE, ETIMEDOUT …) whatever the operation: an AWS JSON call is
  // always a POST, and the SDKs retry it.
  if (outcome.phase !== 'response') return true;
  const code = amznErrorType(outcome.headers);
  if (code !== undefined && (THROTTLING_CODES.has(code) || TRANSIENT_CODES.has(code))) return true;
  const status = outcome.status ?? 0;
  // The JavaScript SDK counts a 429 as throttling whatever its code (`isThrottlingError`).
  return status === 429 || TRANSIENT_STATUSES.has(status);
}

// The retry quota, as a share of requests. The SDKs start with 500 tokens, take 5 per retry (10
// after a timeout) and give 1 back for each request that succeeds at once
// (https://github.com/boto/botocore/blob/develop/botocore/retries/standard.py, `RetryQuotaChecker`;
// https://github.com/boto/botocore/blob/develop/botocore/retries/quota.py): in the long run, one
// retry per five requests (ratio 0.2), with a burst of 500 / 5 = 100 retries on top, here given
// as 100 a minute.
const QUOTA_RATIO = 1 / 5;
const QUOTA_BURST = 500 / 5;
const QUOTA_WINDOW_MS = 60_000;

/**
 * Retries AWS's JSON-protocol APIs (DynamoDB, Lambda, Kinesis, SQS's JSON protocol …) the way the
 * SDKs' **standard** retry mode does (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html,
 * https://boto3.amazonaws.com/v1/documentation/api/latest/guide/retries.html#standard-retry-mode).
 *
 * - **Throttling errors** are retried: `Throttling`, `ThrottlingException`, `ThrottledException`,
 *   `RequestThrottledException`, `TooManyRequestsException`, `ProvisionedThroughputExceededException`,
 *   `TransactionInProgressException`, `RequestLimitExceeded`, `BandwidthLimitExceeded`,
 *   `LimitExceededException`, `RequestThrottled`, `SlowDown`, `PriorRequestNotComplete`,
 *   `EC2ThrottledException`, and any 429 (the JavaScript SDK's `isThrottlingError`).
 * - **Transient errors** are retried: `RequestTimeout`, `RequestTimeoutException`,
 *   `PriorRequestNotComplete`, statuses 500, 502, 503, 504, and connection errors and timeouts.
 * - **The error code is read from `X-Amzn-ErrorType`** (awsJson1.0, awsJson1.1, restJson1), sanitized
 *   as Smithy specifies (https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html#operation-error-serialization).
 *   The response body belongs to the caller and is not read: a protocol that names the code only in
 *   its body (S3's and EC2's XML, `__type` in a JSON body without the header) is judged by its status
 *   alone (S3's `SlowDown` is a 503, so it is still retried).
 * - **Every operation is retried**, POSTs included, as the SDKs do: an AWS JSON call is always a POST,
 *   and mutating operations take an idempotency token of their own (`ClientToken`) in the body.
 * - **Max attempts 3**: 2 retries.
 * - **Backoff**: `rand(0, 1) × min(2^i, 20)` seconds before the retry that follows attempt i + 1 (full
 *   jitter: up to 1 s, 2 s, 4 s … capped at 20 s), botocore's `ExponentialBackoff`
 *   (https://github.com/boto/botocore/blob/develop/botocore/retries/standard.py).
 * - **Retry quota**, as a retry budget: retries stay within 1/5 of requests (the long-run rate of a
 *   quota that costs 5 tokens a retry and earns 1 a success), plus 100 a minute (the 500-token
 *   bucket's 100 retries). It is not the token bucket: the budget's floor comes back every minute,
 *   where the quota refills only from successes (so in a total outage the SDKs stop after 100
 *   retries, this after 100 a minute); it counts every request, where the quota earns only from
 *   successes that needed no retry; a retry after a timeout costs what any retry costs (the quota:
 *   double); and a retry that succeeds gives nothing back (the quota: its cost). Each call of
 *   `presets.aws()` makes one budget, kept per origin: give the same options to two clients to share
 *   it, as two operations of one SDK client share its quota.
 *
 * Not followed: the JavaScript SDK's smaller backoff bases (100 ms, 500 ms when throttled), and the
 * updated behaviour the SDKs offer behind `AWS_NEW_RETRIES_2026` (a base of 50 ms for transient
 * errors, `x-amz-retry-after`, other quota costs): the backoff here cannot tell a throttling error
 * from a transient one. A `Retry-After` header, if a service sends one, is honoured as by every client.
 *
 * @example
 * ```ts
 * const dynamodb = retryFetch(signedFetch, presets.aws());
 * ```
 */
export function awsPreset(): HttpRetryOptions {
  return {
    retries: 2,
    // base · 2^n for retry n: 1 s, 2 s, 4 s … (= 2^i s for attempt i + 1), capped at 20 s, full jitter.
    backoff: { strategy: 'exponential', base: 500, factor: 2 },
    maxDelay: 20_000,
    jitter: 'full',
    retryOn: awsRetryOn,
    budget: retryBudget({
      ratio: QUOTA_RATIO,
      windowMs: QUOTA_WINDOW_MS,
      minPerSecond: (QUOTA_BURST * 1000) / QUOTA_WINDOW_MS,
    }),
    // The header this preset decides by, shown in events (an error code is no secret).
    exposeHeaders: ['X-Amzn-ErrorType'],
  };
}
