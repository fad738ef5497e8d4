import { isRetrylineError } from '@retryline/core';
import { TimeoutError } from 'ky';

/**
 * Turns what the retrying fetch rejected with into what a ky user expects ky to throw:
 *
 * - retries ended by the per-attempt `timeout` → ky's `TimeoutError` for the request, `cause`: the
 *   Retryline error (so `isTimeoutError(error)` and `instanceof TimeoutError` hold, as with ky's own);
 * - retries ended by a transport failure → fetch's own error (a `TypeError`), as ky throws it;
 * - anything else (deadline, Retry-After too long, a one-shot body, the caller's abort reason) as it is.
 *
 * HTTP failures never get here: the retrying fetch resolves the last response, and ky throws its
 * `HTTPError` for it.
 */
export function toKyError(error: unknown, input: RequestInfo | URL): unknown {
  const timedOut =
    isRetrylineError(error, 'AttemptTimeoutError') ||
    (isRetrylineError(error, 'RetriesExhaustedError') &&
      isRetrylineError(error.cause, 'AttemptTimeoutError'));
  if (timedOut) {
    const timeout = new TimeoutError(input instanceof Request ? input : new Request(input));
    // Non-enumerable, like the `cause` the Error constructor sets.
    Object.defineProperty(timeout, 'cause', {
      value: error,
      writable: true,
      enumerable: false,
      configurable: true,
    });
    return timeout;
  }
  if (isRetrylineError(error, 'RetriesExhaustedError')) {
    const { cause } = error;
    if (typeof cause === 'object' && cause !== null && !isRetrylineError(cause)) return cause;
  }
  return error;
}
