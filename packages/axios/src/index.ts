export {
  BodyNotReplayableError,
  BulkheadRejectedError,
  CircuitOpenError,
  DeadlineExceededError,
  type HttpRetryInfo,
  InvalidOptionsError,
  isRetrylineError,
  type MemoryStore,
  memoryStore,
  RateLimitedError,
  RetriesExhaustedError,
  RetryAfterTooLongError,
  RetryBudgetExhaustedError,
  RetrylineError,
  type Store,
} from '@retryline/core';
export { type AxiosRetryOptions, attachRetry, getRetryInfo } from './attach-retry';
