// `@retryline/core/store`: for a store that keeps guard state somewhere shared (the Redis store,
// test/guards/store-contract.ts). The Store contract's types, the pure rules every store applies
// (breaker, retry budget, token bucket, bulkhead: state in, state out), how each guard's options
// become its config, and the memory store as a `Store` to compare against. An application passes a
// store (`Store`, `memoryStore()`, from `@retryline/core`) and needs none of this.
export {
  BREAKER_DEFAULTS,
  type BreakerAdmission,
  type BreakerConfig,
  type BreakerOutcome,
  type BreakerRecord,
  type BreakerState,
  type BreakerStateName,
  type BreakerTransition,
  breakerAdmit,
  breakerRecord,
  initialBreakerState,
  normalizeBreaker,
} from '../guard/breaker';
export {
  type BulkheadAcquire,
  type BulkheadConfig,
  type BulkheadState,
  bulkheadAcquire,
  bulkheadInit,
  bulkheadRelease,
  normalizeBulkhead,
} from '../guard/bulkhead';
export { localStore } from '../guard/local-store';
export {
  GATE_DEFAULTS,
  type GateState,
  type GateVerdict,
  gateAdmit,
  gateInit,
  gateRecord,
  normalizeGate,
  type RecoveryGateConfig,
} from '../guard/recovery-gate';
export {
  BUDGET_BUCKETS,
  BUDGET_DEFAULTS,
  type BudgetDecision,
  type BudgetRecord,
  type BudgetState,
  budgetInit,
  budgetRecordRequest,
  budgetTryRetry,
  normalizeBudget,
  type RetryBudgetConfig,
} from '../guard/retry-budget';
export type { GuardStore, StoreAnswer } from '../guard/store';
export {
  type BucketState,
  bucketInit,
  bucketTake,
  normalizeBucket,
  type TokenBucketConfig,
} from '../guard/token-bucket';
