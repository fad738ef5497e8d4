import type { ErrorSummary } from '@retryline/core/instrument';

/**
 * What the Redis store reports about itself. These are not a request's events (no `requestId`):
 * an outage concerns every request that shares the store. Their shape follows core's events
 * (`v`, `type`, `t`) so one log pipeline can take both.
 */

/** A {@link Store} operation, as named in events and errors. */
export type StoreOperation =
  | 'breakerAdmit'
  | 'breakerRecord'
  | 'budgetRequest'
  | 'budgetRetry'
  | 'limiterTake'
  | 'bulkheadAcquire'
  | 'bulkheadRelease'
  | 'bulkheadRenew'
  | 'pacingSet'
  | 'pacingGet'
  | 'gateAdmit'
  | 'gateRecord';

/**
 * Redis stopped answering (the connection is down, or Redis answered nothing at all for
 * `timeoutMs`): emitted once when an outage starts (the first operation that failed), not once per
 * failed operation. A process merely busy with other work does not start one.
 */
export interface StoreUnavailableEvent {
  readonly v: 1;
  readonly type: 'store-unavailable';
  /** Local clock time, epoch ms. */
  readonly t: number;
  readonly store: 'redis';
  /** The store's key prefix: tells stores apart. */
  readonly prefix: string;
  /** The operation that found Redis unavailable. */
  readonly operation: StoreOperation;
  /** Its guard key. */
  readonly key: string;
  /**
   * `true`: until Redis is back, the guards act from this process's memory (a memory store per
   * redisStore: the budget still caps retries, a breaker still opens, per process); `false`:
   * requests fail with `StoreUnavailableError`.
   */
  readonly failOpen: boolean;
  readonly error: ErrorSummary;
}

/** An operation succeeded again after an outage: from now on the guards' state is Redis's again. */
export interface StoreRecoveredEvent {
  readonly v: 1;
  readonly type: 'store-recovered';
  readonly t: number;
  readonly store: 'redis';
  readonly prefix: string;
  /** Milliseconds from the first failed operation to this success. */
  readonly downtime: number;
  /** Operations answered without Redis during the outage (from local memory when failing open). */
  readonly failed: number;
}

export type RedisStoreEvent = StoreUnavailableEvent | StoreRecoveredEvent;

/** Turns anything thrown into an {@link ErrorSummary} (core's shape). */
export function summarize(error: unknown): ErrorSummary {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string'
      ? { name: error.name, message: error.message, code }
      : { name: error.name, message: error.message };
  }
  return { name: typeof error, message: String(error) };
}
