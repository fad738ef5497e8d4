import type { ErrorSummary } from '@retryline/core';

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
  | 'pacingGet';

/**
 * Redis stopped answering: emitted once when an outage starts (the first operation that failed),
 * not once per failed operation.
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
  /** `true`: requests go on unguarded until Redis is back; `false`: they fail. */
  readonly failOpen: boolean;
  readonly error: ErrorSummary;
}

/** An operation succeeded again after an outage. */
export interface StoreRecoveredEvent {
  readonly v: 1;
  readonly type: 'store-recovered';
  readonly t: number;
  readonly store: 'redis';
  readonly prefix: string;
  /** Milliseconds from the first failed operation to this success. */
  readonly downtime: number;
  /** Operations answered without Redis during the outage (allowed when failing open). */
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
