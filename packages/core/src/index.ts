export {
  AttemptTimeoutError,
  BodyNotReplayableError,
  CircuitOpenError,
  DeadlineExceededError,
  type ExhaustionReason,
  InvalidOptionsError,
  isRetrylineError,
  RateLimitedError,
  RetriesExhaustedError,
  RetryAfterTooLongError,
  RetryBudgetExhaustedError,
  RetryLaterError,
  RetrylineError,
  type RetrylineErrorDetails,
  type RetrylineErrorName,
} from './errors';
export type {
  AttemptEndEvent,
  AttemptOutcome,
  AttemptStartEvent,
  ErrorSummary,
  RequestEndEvent,
  RequestOutcome,
  RequestStartEvent,
  RetrylineEvent,
  RetrylineEventListener,
  RetryScheduledEvent,
} from './events/types';
export { type Decision, decide, initialState, type RetryState, type StopReason } from './policy/decide';
export { computeDelay, type DelayComputation } from './policy/delay';
export { DEFAULTS, MAX_DELAY_LIMIT, mergeOptions, normalizePolicy } from './policy/normalize';
export type {
  BackoffConfig,
  BackoffContext,
  BackoffFunction,
  BackoffStrategy,
  JitterConfig,
  JitterType,
  OnMaxDelay,
  PolicyOptions,
  ResolvedBackoff,
  ResolvedJitter,
  ResolvedPolicy,
} from './policy/options';
export { backoffSchedule, type Schedule, type ScheduleOptions, type ScheduleRow } from './policy/schedule';
export {
  type AttemptContext,
  type BoundRetry,
  createRetry,
  RETRY,
  type RetryIfContext,
  type RetryInfo,
  type RetryOperation,
  type RetryOptions,
  type RetryResult,
  retry,
} from './retry';
export { type Clock, systemClock } from './time/clock';
export { type Random, seededRandom, systemRandom } from './time/random';
export { type VirtualClock, virtualClock } from './time/virtual-clock';
