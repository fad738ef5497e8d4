// The front door: what an application author calls, and the types of what it passes and gets back.
// Adapter authors import `@retryline/core/adapter`, store authors `@retryline/core/store`,
// instrumentation `@retryline/core/instrument` (see the README); everything else is not exported.
// test/core-exports.test.ts lists every name, so a new export is a decision.
export {
  AttemptTimeoutError,
  BodyNotReplayableError,
  BulkheadRejectedError,
  CircuitOpenError,
  DeadlineExceededError,
  InvalidOptionsError,
  isRetrylineError,
  RateLimitedError,
  RetriesExhaustedError,
  RetryAfterTooLongError,
  RetryBudgetExhaustedError,
  RetryLaterError,
  RetrylineError,
  ThrottledError,
} from './errors';
export { subscribe } from './events/emitter';
export { type EventLogger, eventLogger, logEvents } from './events/log-events';
export { type Recording, recordEvents } from './events/recorder';
export type { RetrylineEvent, RetrylineEventListener } from './events/types';
export {
  type AdaptiveThrottle,
  type AdaptiveThrottleOptions,
  adaptiveThrottle,
} from './guard/adaptive-throttle';
export { type CircuitBreaker, type CircuitBreakerOptions, circuitBreaker } from './guard/breaker';
export { type Bulkhead, type BulkheadValueOptions, bulkhead } from './guard/bulkhead';
export { type Pacing, type PacingOptions, pacing } from './guard/pacing';
export { type RateLimiter, type RateLimiterOptions, rateLimiter } from './guard/rate-limiter';
export { type RecoveryGate, type RecoveryGateValueOptions, recoveryGate } from './guard/recovery-gate';
export { type RetryBudget, type RetryBudgetValueOptions, retryBudget } from './guard/retry-budget';
export { type MemoryStore, memoryStore, type Store } from './guard/store';
export type { HttpOutcome } from './http/classify';
export type { HttpRetryOptions } from './http/request-engine';
export { parseRetryHint, type RetryHint } from './http/retry-hint';
export type { RetryInfo, StoppedBy } from './http/retry-info';
export { computeDelay } from './policy/delay';
export type { BackoffStrategy, JitterType, PolicyOptions } from './policy/options';
export { backoffSchedule, type Schedule, type ScheduleOptions } from './policy/schedule';
export { type AttemptContext, type BoundRetry, createRetry, RETRY, type RetryOptions, retry } from './retry';
export type { Clock } from './time/clock';
export { type Random, seededRandom } from './time/random';
export { type VirtualClock, virtualClock } from './time/virtual-clock';
