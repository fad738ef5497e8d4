import type { ScheduledDelay } from '../engine/attempt-loop';
import type { StoppedBy } from '../engine/outcome';
import type { RequestOutcome } from '../events/types';

export type { StoppedBy };

/**
 * How one request went: what every adapter's `getRetryInfo()` returns, whatever the request ended
 * with (the response, the client's error, a Retryline error, the caller's abort). Every field an
 * own property, as `console.log`, spreading and `JSON.stringify` expect.
 *
 * @example
 * ```ts
 * const info = getRetryInfo(response);
 * if (info?.stoppedBy === 'retry-after-too-long') console.warn(`come back at ${new Date(info.retryAt ?? 0)}`);
 * ```
 */
export interface RetryInfo {
  /** The request's id: the one its events carry (and `requestIdHeader` sends). */
  readonly requestId: string;
  /** Attempts sent: 0 for a request refused or aborted before its first. */
  readonly attempts: number;
  /** Milliseconds waited between attempts; a wait an abort cut short counts what passed. */
  readonly totalDelay: number;
  /** Each wait as it was scheduled: the retry it came before, how long, and why. */
  readonly delays: readonly ScheduledDelay[];
  /** How the request ended: `success`, or why it did not (the `outcome` of its `request-end` event). */
  readonly outcome: RequestOutcome;
  /**
   * Why no retry followed the last attempt, when it failed: the response is handed back as the
   * client gives it, whatever stopped the retries. Absent after a success.
   */
  readonly stoppedBy?: StoppedBy;
  /** When the server said to come back (epoch ms), for a request stopped by too long a hint or a guard. */
  readonly retryAt?: number;
}

// A response's info is kept on it under a symbol of this module's own, which nothing else can read
// or forge: a property costs a loopback request well under a microsecond, a WeakMap entry several.
// Errors keep theirs apart (errors get logged, and the property would show), and so does an object
// that takes no new property (a frozen test double). `null`: more than one request ended with it.
const RETRY_INFO = Symbol('retryline.retryInfo');
const apart = new WeakMap<object, RetryInfo | null>();

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;

/**
 * Keeps `info` with what one request ended with (its response, or an error made for it alone), for
 * {@link retryInfoOf}; nothing for `undefined` info or a value that is no object. Adapters call it
 * for what they hand the caller in place of what the engine gave them (axios's `CanceledError`,
 * ky's `TimeoutError`): `keepRetryInfo(thrown, retryInfoOf(error))`.
 */
export function keepRetryInfo(result: unknown, info: RetryInfo | undefined): void {
  if (info === undefined || !isObject(result)) return;
  if (result instanceof Error) {
    apart.set(result, info);
    return;
  }
  try {
    (result as Record<symbol, unknown>)[RETRY_INFO] = info;
  } catch {
    apart.set(result, info);
  }
}

/**
 * Keeps `info` with the caller's abort reason a request rejected with. One reason may end many
 * requests (one controller for a page): it answers for the first that ends with it, and for none
 * once a second has.
 */
export function keepSharedRetryInfo(reason: unknown, info: RetryInfo): void {
  if (isObject(reason)) apart.set(reason, apart.has(reason) ? null : info);
}

/**
 * How the request that ended with `value` went: the info kept with its response, with an error it
 * rejected with, or with the caller's abort reason when exactly one request ended with that reason.
 * `undefined` for anything else. What every adapter's `getRetryInfo()` answers with.
 */
export function retryInfoOf(value: unknown): RetryInfo | undefined {
  if (!isObject(value)) return undefined;
  const info = ((value as Record<symbol, unknown>)[RETRY_INFO] as RetryInfo | undefined) ?? apart.get(value);
  if (!info) return undefined;
  // Its id is drawn on first read (a UUID costs microseconds); read here, it is an own property.
  void info.requestId;
  return info;
}
