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
export {
  type FetchRetryOptions,
  getRetryInfo,
  type RetryFetch,
  type RetryRequestInit,
  retryFetch,
} from './retry-fetch';
