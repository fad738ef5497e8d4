import type { HttpErrorRetryInfo } from '@retryline/core';
import { getRetryInfo as getResponseRetryInfo } from '@retryline/fetch';
import { HTTPError } from 'ky';

/**
 * How a request went: attempts, total delay, each wait and why, and how it ended. For a request
 * that threw, `outcome` says why it stopped (`exhausted`, `deadline`, `retry-after-too-long` …).
 */
export type KyRetryInfo = HttpErrorRetryInfo;

const infoByError = new WeakMap<object, KyRetryInfo>();

const isResponse = (value: object): value is Response =>
  typeof Response !== 'undefined' && value instanceof Response;

/**
 * Retry info for what a ky request ended with: its `Response`, the `HTTPError` ky threw for it, or
 * the error Retryline's ky adapter threw (`TimeoutError`, fetch's `TypeError`, a Retryline error).
 * `undefined` for anything that did not come through `retryline()`, and for the caller's own abort
 * reason (one reason may end many requests).
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
export function getRetryInfo(responseOrError: unknown): KyRetryInfo | undefined {
  if (typeof responseOrError !== 'object' || responseOrError === null) return undefined;
  if (isResponse(responseOrError)) return getResponseRetryInfo(responseOrError);
  const info = infoByError.get(responseOrError);
  if (info !== undefined) return info;
  // ky builds its HTTPError around the very Response the retrying fetch resolved with. (ky's own
  // `isHTTPError` guard is newer than the oldest ky this package supports.)
  const isHttpError =
    responseOrError instanceof HTTPError || (responseOrError as { name?: unknown }).name === 'HTTPError';
  const response = isHttpError ? (responseOrError as { response?: unknown }).response : undefined;
  if (typeof response === 'object' && response !== null && isResponse(response)) {
    return getResponseRetryInfo(response);
  }
  return undefined;
}

/** Remembers `info` for an error thrown to the caller. */
export function attachRetryInfo(error: unknown, info: KyRetryInfo | undefined): void {
  if (info !== undefined && typeof error === 'object' && error !== null) infoByError.set(error, info);
}
