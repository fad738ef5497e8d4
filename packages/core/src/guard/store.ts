import {
  type BreakerAdmission,
  type BreakerConfig,
  type BreakerOutcome,
  type BreakerRecord,
  type BreakerState,
  breakerAdmit,
  breakerRecord,
  initialBreakerState,
} from './breaker';
import {
  type BudgetDecision,
  type BudgetRecord,
  type BudgetState,
  budgetInit,
  budgetRecordRequest,
  budgetTryRetry,
  type RetryBudgetConfig,
} from './retry-budget';
import { type BucketState, bucketInit, bucketTake, isIdle, type TokenBucketConfig } from './token-bucket';

/**
 * Where guard state lives. Every operation is atomic on its own and async, so a shared store (Redis
 * with one Lua script per operation) can implement the same contract as the in-memory default. Keys
 * are opaque strings (by default, per origin); `now` is the caller's clock (a shared store may use
 * its own, so that hosts with skewed clocks agree).
 */
export interface Store {
  breakerAdmit(key: string, config: BreakerConfig, now: number): Promise<BreakerAdmission>;
  breakerRecord(
    key: string,
    config: BreakerConfig,
    outcome: BreakerOutcome,
    now: number,
  ): Promise<BreakerRecord>;
  budgetRequest(key: string, config: RetryBudgetConfig, now: number): Promise<BudgetRecord>;
  budgetRetry(key: string, config: RetryBudgetConfig, now: number): Promise<BudgetDecision>;
  /** Takes `n` tokens from the key's bucket, or says when they will be there. */
  limiterTake(
    key: string,
    config: TokenBucketConfig,
    n: number,
    now: number,
  ): Promise<{ readonly allowed: boolean; readonly retryAt?: number }>;
}

// Keys whose bucket is full again and untouched this long carry no information and are dropped.
const IDLE_MS = 60_000;
const SWEEP_EVERY = 1000;

/**
 * The embedded default: guard state in this process's memory. Clients that share one
 * `memoryStore()` share one breaker and one budget per key.
 */
export function memoryStore(): Store {
  const breakers = new Map<string, BreakerState>();
  const budgets = new Map<string, BudgetState>();
  const buckets = new Map<string, BucketState>();
  let takes = 0;
  return {
    async breakerAdmit(key, config, now) {
      const result = breakerAdmit(breakers.get(key) ?? initialBreakerState(), config, now);
      breakers.set(key, result.state);
      return result;
    },
    async breakerRecord(key, config, outcome, now) {
      const result = breakerRecord(breakers.get(key) ?? initialBreakerState(), config, outcome, now);
      breakers.set(key, result.state);
      return result;
    },
    async budgetRequest(key, config, now) {
      const result = budgetRecordRequest(budgets.get(key) ?? budgetInit(), config, now);
      budgets.set(key, result.state);
      return result;
    },
    async budgetRetry(key, config, now) {
      const result = budgetTryRetry(budgets.get(key) ?? budgetInit(), config, now);
      budgets.set(key, result.state);
      return result;
    },
    async limiterTake(key, config, n, now) {
      if (++takes % SWEEP_EVERY === 0) {
        for (const [other, state] of buckets) if (isIdle(state, config, now, IDLE_MS)) buckets.delete(other);
      }
      const result = bucketTake(buckets.get(key) ?? bucketInit(config, now), config, n, now);
      buckets.set(key, result.state);
      return result.allowed
        ? { allowed: true }
        : { allowed: false, ...(result.retryAt === undefined ? {} : { retryAt: result.retryAt }) };
    },
  };
}

/** The store used when a client names none: one per realm, so clients share guard state by default. */
export const defaultStore: Store = memoryStore();
