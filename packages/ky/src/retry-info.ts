import type { RetryInfo } from '@retryline/core';
import { retryInfoOf } from '@retryline/core/adapter';
import { HTTPError } from 'ky';

/**
 * How a ky request went: attempts, total delay, each wait and why, how it ended (`outcome`) and why
 * no retry followed (`stoppedBy`). Give it what the request ended with:
 *
 * - its `Response`, or the `HTTPError` ky threw for the last one (whatever stopped the retries);
 * - the error Retryline's ky adapter threw (`TimeoutError`, fetch's `TypeError`, a Retryline error);
 * - the caller's abort reason it threw (`outcome: 'aborted'`). One reason may end many requests
 *   (one controller for a page): it answers only while exactly one request has ended with it, and
 *   `undefined` once a second has, since it cannot say which one is meant.
 *
 * `undefined` for anything that did not come through `retryline()`.
 *
 * @example
 * ```ts
 * try {
 *   await api.get('orders').json();
 * } catch (error) {
 *   console.warn(`gave up after ${getRetryInfo(error)?.attempts} attempts`, error);
 * }
 * ```
 */
export function getRetryInfo(responseOrError: unknown): RetryInfo | undefined {
  const info = retryInfoOf(responseOrError);
  if (info !== undefined || typeof responseOrError !== 'object' || responseOrError === null) return info;
  // ky builds its HTTPError around the very Response the retrying fetch resolved with. (ky's own
  // `isHTTPError` guard is newer than the oldest ky this package supports.)
  const isHttpError =
    responseOrError instanceof HTTPError || (responseOrError as { name?: unknown }).name === 'HTTPError';
  return isHttpError ? retryInfoOf((responseOrError as { response?: unknown }).response) : undefined;
}
