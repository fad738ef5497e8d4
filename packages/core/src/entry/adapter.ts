// `@retryline/core/adapter`: for code that builds on the engine rather than calling it — the HTTP
// adapters (fetch, axios, ky), the axios-retry translation, the CLI, and an adapter for another
// client. The request engine and its exchange contract, the retrying fetch the fetch-based
// adapters share, how a failure is classified, retry info kept with what a request ended with, and
// the helpers every package validates options with.
// An application imports `@retryline/core` (or its adapter) instead.

export type { RetrylineErrorName } from '../errors';
export {
  classifyTransportError,
  IDEMPOTENT_METHODS,
  isRetryableByDefault,
  RETRYABLE_STATUSES,
} from '../http/classify';
export type { FaultAnswer } from '../http/fault';
export { retryingFetch } from '../http/fetch-exchange';
export { encodeFormData } from '../http/form-data';
export { type HeadersLike, headerValue } from '../http/headers';
export { quotaSpentUntil } from '../http/quota';
export type { HeaderSource } from '../http/redact';
export {
  type HttpAttempt,
  type HttpExchange,
  type PreparedHttpOptions,
  prepareHttpOptions,
  type ResolvedHttpOptions,
  requestRetryOptions,
  resolveHttpOptions,
  runHttpRequest,
} from '../http/request-engine';
export { keepRetryInfo, retryInfoOf } from '../http/retry-info';
export { decide, initialState } from '../policy/decide';
export {
  DEFAULTS,
  describe as describeValue,
  invalid,
  MAX_DELAY_LIMIT,
  mergeOptions,
  normalizePolicy,
} from '../policy/normalize';
export type { BackoffConfig, JitterConfig, OnMaxDelay, ResolvedPolicy } from '../policy/options';
export { systemClock } from '../time/clock';
export { systemRandom } from '../time/random';
