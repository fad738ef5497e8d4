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
export { type AxiosRetryOptions, attachRetry, getRetryInfo } from './attach-retry';
