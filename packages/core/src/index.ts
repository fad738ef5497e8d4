export type { GuardWaitReason, Health, LoopResult, Refusal, ScheduledDelay } from './engine/attempt-loop';
export {
  AttemptTimeoutError,
  BodyNotReplayableError,
  BulkheadRejectedError,
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
export { DEVTOOLS_HOOK, type DevtoolsHook, subscribe } from './events/emitter';
export {
  type EventLogger,
  type EventLogLine,
  eventLogger,
  eventLogLine,
  type LogEventsOptions,
  logEvents,
} from './events/log-events';
export {
  type EventRecorder,
  type Recording,
  type RecordingEntry,
  type RecordOptions,
  recordEvents,
} from './events/recorder';
export type {
  AttemptEndEvent,
  AttemptOutcome,
  AttemptPhase,
  AttemptStartEvent,
  BreakerStateEvent,
  BudgetEvent,
  ErrorSummary,
  GuardWaitEvent,
  RequestEndEvent,
  RequestOutcome,
  RequestStartEvent,
  RetrylineEvent,
  RetrylineEventListener,
  RetryScheduledEvent,
} from './events/types';
export {
  BREAKER_DEFAULTS,
  type BreakerAdmission,
  type BreakerConfig,
  type BreakerOptions,
  type BreakerOutcome,
  type BreakerRecord,
  type BreakerSnapshot,
  type BreakerState,
  type BreakerStateName,
  type BreakerTransition,
  breakerAdmit,
  breakerRecord,
  breakerSnapshot,
  type CircuitBreaker,
  type CircuitBreakerOptions,
  circuitBreaker,
  initialBreakerState,
  normalizeBreaker,
} from './guard/breaker';
export {
  type Bulkhead,
  type BulkheadAcquire,
  type BulkheadConfig,
  type BulkheadOptions,
  type BulkheadState,
  type BulkheadValueOptions,
  bulkhead,
  bulkheadAcquire,
  bulkheadInit,
  bulkheadIsEmpty,
  bulkheadRelease,
  normalizeBulkhead,
} from './guard/bulkhead';
export type { GuardKeyFunction, GuardRequest, GuardValue, GuardValueOptions } from './guard/guard';
export type { GuardOptions } from './guard/guards';
export { localStore } from './guard/local-store';
export { type Pacing, type PacingOptions, pacing } from './guard/pacing';
export {
  type LimiterOptions,
  type RateLimiter,
  type RateLimiterOptions,
  rateLimiter,
} from './guard/rate-limiter';
export {
  BUDGET_BUCKETS,
  BUDGET_DEFAULTS,
  type BudgetDecision,
  type BudgetRecord,
  type BudgetState,
  budgetInit,
  budgetRecordRequest,
  budgetSnapshot,
  budgetTryRetry,
  normalizeBudget,
  type RetryBudget,
  type RetryBudgetConfig,
  type RetryBudgetOptions,
  type RetryBudgetValueOptions,
  retryBudget,
} from './guard/retry-budget';
export {
  type GuardStore,
  type MemoryStore,
  type MemoryStoreSize,
  memoryStore,
  type Store,
  type StoreAnswer,
} from './guard/store';
export {
  type BucketState,
  type BucketTake,
  bucketInit,
  bucketTake,
  bucketTimeUntil,
  isIdle,
  normalizeBucket,
  type TokenBucketConfig,
  type TokenBucketOptions,
} from './guard/token-bucket';
export {
  type AttemptHeadersContext,
  type AttemptHeadersHook,
  addAttemptHeaders,
} from './http/attempt-headers';
export {
  classifyTransportError,
  type HttpOutcome,
  IDEMPOTENT_METHODS,
  isRetryableByDefault,
  RETRYABLE_STATUSES,
  type RetryRules,
  type TransportFailure,
} from './http/classify';
export { encodeFormData } from './http/form-data';
export { type HeadersLike, headerValue } from './http/headers';
export { parseHttpDate } from './http/http-date';
export {
  formatIdempotencyKey,
  type IdempotencyKeyFormat,
  type IdempotencyKeyOption,
  type KeyedRequest,
} from './http/idempotency-key';
export { quotaSpentUntil } from './http/quota';
export {
  type HeaderSource,
  MASK,
  REDACTED,
  redactHeaders,
  redactUrl,
  SENSITIVE_HEADERS,
} from './http/redact';
export {
  type HttpAttempt,
  type HttpExchange,
  type HttpRetryEvent,
  type HttpRetryOptions,
  type PreparedHttpOptions,
  prepareHttpOptions,
  type ResolvedHttpOptions,
  requestRetryOptions,
  resolveHttpOptions,
  runHttpRequest,
} from './http/request-engine';
export { MAX_HINT_DELAY, parseRetryHint, type RetryHint, type RetryHintSource } from './http/retry-hint';
export { keepRetryInfo, type RetryInfo, retryInfoOf, type StoppedBy } from './http/retry-info';
export type { DelayHint, DelayReason } from './policy/decide';
export { type Decision, decide, initialState, type RetryState, type StopReason } from './policy/decide';
export { computeDelay, type DelayComputation } from './policy/delay';
export {
  DEFAULTS,
  describe as describeValue,
  invalid,
  MAX_DELAY_LIMIT,
  mergeOptions,
  normalizePolicy,
} from './policy/normalize';
export type {
  BackoffConfig,
  BackoffContext,
  BackoffFunction,
  BackoffStrategy,
  JitterConfig,
  JitterType,
  OnMaxDelay,
  OnRetryAfterTooLong,
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
  type RetryEvent,
  type RetryIfContext,
  type RetryOperation,
  type RetryOptions,
  type RetryResult,
  retry,
} from './retry';
export { type Clock, systemClock } from './time/clock';
export { type Random, seededRandom, systemRandom } from './time/random';
export { type VirtualClock, virtualClock } from './time/virtual-clock';
