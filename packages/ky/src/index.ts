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
export { getRetryInfo, type KyRetryInfo } from './retry-info';
export { type KyRequestRetryOptions, type KyRetryOptions, retryline } from './retryline';
