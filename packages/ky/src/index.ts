export {
  BodyNotReplayableError,
  DeadlineExceededError,
  type HttpRetryInfo,
  InvalidOptionsError,
  isRetrylineError,
  RetriesExhaustedError,
  RetryAfterTooLongError,
  RetrylineError,
} from '@retryline/core';
export { getRetryInfo, type KyRetryInfo } from './retry-info';
export { type KyRequestRetryOptions, type KyRetryOptions, retryline } from './retryline';
