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
export {
  type FetchRetryOptions,
  getRetryInfo,
  type RetryFetch,
  type RetryRequestInit,
  retryFetch,
} from './retry-fetch';
