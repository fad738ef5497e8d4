import { isRetrylineError, RetrylineError } from '@retryline/core';
import type { StoreOperation } from './events';

/**
 * The Redis store could not answer a guard operation (Redis unreachable, silent for `timeoutMs`, or
 * the connection down) and the store was made with `failOpen: false`, so the request fails rather
 * than go out without the fleet's shared guards (`failOpen: true` answers from local memory
 * instead). `cause` holds what went wrong underneath (Redis's silence, ioredis's error).
 */
export class StoreUnavailableError extends RetrylineError {
  override name = 'StoreUnavailableError';
  /** The store operation that could not run. */
  readonly operation: StoreOperation;
  /** The guard key it was for (by default an origin). */
  readonly key: string;

  constructor(message: string, details: { operation: StoreOperation; key: string; cause?: unknown }) {
    super(message, 'cause' in details ? { cause: details.cause } : {});
    this.operation = details.operation;
    this.key = details.key;
  }
}

/** Whether `error` is a {@link StoreUnavailableError}, from this copy of the package or another. */
export function isStoreUnavailableError(error: unknown): error is StoreUnavailableError {
  return isRetrylineError(error) && error.name === 'StoreUnavailableError';
}
