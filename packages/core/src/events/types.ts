/**
 * One event vocabulary for devtools, logs, metrics and traces. Every event is a plain
 * JSON object with a protocol version, a type, the request it belongs to and a clock time.
 */

import type { BreakerStateName } from '../guard/breaker';
import { redactText } from '../http/redact';
import type { DelayReason } from '../policy/decide';
import type { BackoffStrategy, JitterType } from '../policy/options';

/** Fields every event has. */
export interface EventBase {
  /** Protocol version. */
  readonly v: 1;
  /** One id per logical request, the same on every attempt. */
  readonly requestId: string;
  /** Clock time of the event, epoch milliseconds. */
  readonly t: number;
}

/** What an event says about an error: never the error object itself. */
export interface ErrorSummary {
  readonly name: string;
  readonly message: string;
  readonly code?: string;
}

import type { RequestOutcome } from '../engine/outcome';

export type { RequestOutcome };

/**
 * How one attempt ended: `success`; `retry`, a response the policy may retry (a 503); `error`, a
 * transport failure, or a response that failed and is not retried (a 400, a POST's 503);
 * `timeout`, the per-attempt timeout; `aborted`.
 */
export type AttemptOutcome = 'success' | 'retry' | 'error' | 'timeout' | 'aborted';

export interface RequestStartEvent extends EventBase {
  readonly type: 'request-start';
  /** Which client made the request: `'retry'` for `retry()`, later `'fetch'`, `'axios'`, `'ky'`. */
  readonly client: string;
  /** The operation's label, when one was given. */
  readonly operation?: string;
  /** HTTP requests: the method. */
  readonly method?: string;
  /** HTTP requests: the URL, with query values masked and credentials removed. */
  readonly url?: string;
}

/** Where a failed HTTP attempt failed: before sending, somewhere unknown, or with a response. */
export type AttemptPhase = 'not-sent' | 'unknown' | 'response';

export interface AttemptStartEvent extends EventBase {
  readonly type: 'attempt-start';
  readonly attempt: number;
  /** HTTP requests: the request headers sent, sensitive values redacted. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * HTTP requests: the attempt is answered by a fault the Retryline DevTools panel injected (a
   * status, a network error, a delay before it is sent), not by the server alone.
   */
  readonly injected?: true;
  /** HTTP requests with `endpoints`: the base URL the attempt was sent to, redacted. */
  readonly endpoint?: string;
  /**
   * HTTP requests with `hedge`: this is the hedge of attempt `attempt` (a second copy sent while it
   * was late), in flight beside it; its `attempt-end` has `hedge: true` too.
   */
  readonly hedge?: true;
}

export interface AttemptEndEvent extends EventBase {
  readonly type: 'attempt-end';
  readonly attempt: number;
  readonly outcome: AttemptOutcome;
  /** Milliseconds from attempt-start to attempt-end. */
  readonly duration: number;
  readonly error?: ErrorSummary;
  /** HTTP requests: where the attempt ended. */
  readonly phase?: AttemptPhase;
  /** HTTP requests: the response status, when one came back. */
  readonly status?: number;
  /** HTTP requests: the response headers, sensitive values redacted. */
  readonly headers?: Readonly<Record<string, string>>;
  /** HTTP requests: the attempt was answered by an injected fault (see `AttemptStartEvent.injected`). */
  readonly injected?: true;
  /** HTTP requests with `endpoints`: the base URL that answered, redacted. */
  readonly endpoint?: string;
  /** The end of a hedge (see `AttemptStartEvent.hedge`): `outcome: 'aborted'` when the attempt answered first. */
  readonly hedge?: true;
  /** The hedge answered first: its answer is the attempt's, and the attempt's own send was cancelled. */
  readonly answeredBy?: 'hedge';
}

export interface RetryScheduledEvent extends EventBase {
  readonly type: 'retry-scheduled';
  /** The attempt that will follow the wait. */
  readonly attempt: number;
  /** The retry number n (attempt − 1). */
  readonly retry: number;
  /** The wait in milliseconds, announced before it starts. */
  readonly delay: number;
  /** `'backoff'`, or the server hint that set the wait. */
  readonly reason: DelayReason;
  readonly strategy: BackoffStrategy | 'custom';
  readonly jitter: JitterType;
  /** The backoff before the cap. */
  readonly raw: number;
  /** The backoff after the cap, before jitter. */
  readonly capped: number;
  /** The server's hint: the header it came from and the wait it asked for. */
  readonly hint?: { readonly source: string; readonly delay: number };
}

export interface RequestEndEvent extends EventBase {
  readonly type: 'request-end';
  readonly outcome: RequestOutcome;
  readonly attempts: number;
  /** Milliseconds spent waiting between attempts. */
  readonly totalDelay: number;
  /** Milliseconds from request-start to request-end. */
  readonly duration: number;
  readonly error?: ErrorSummary;
  /** HTTP requests: the final response status, when the request ended with one. */
  readonly status?: number;
}

/** A circuit breaker changed state. */
export interface BreakerStateEvent extends EventBase {
  readonly type: 'breaker-state';
  /** The guard key (by default the origin). */
  readonly key: string;
  readonly from: BreakerStateName;
  readonly to: BreakerStateName;
  /**
   * When it opened (`to: 'open'`): the clock time, epoch milliseconds, from which it lets its
   * first trial through (`openMs` after it opened), as `CircuitOpenError.retryAt` says.
   */
  readonly retryAt?: number;
}

/** A retry budget was consulted for a retry. */
export interface BudgetEvent extends EventBase {
  readonly type: 'budget';
  readonly key: string;
  /** Retries still allowed in the window after this one. */
  readonly remaining: number;
  readonly allowed: boolean;
}

/**
 * An attempt waited for a guard before it was sent: for a token of the rate limiter, a place in
 * the bulkhead, or the end of a quota the server said was spent (`pacing`). Emitted when the wait
 * ends, just before `attempt-start`; it began `waited` ms earlier.
 */
export interface GuardWaitEvent extends EventBase {
  readonly type: 'guard-wait';
  readonly attempt: number;
  readonly guard: 'limiter' | 'bulkhead' | 'pacing' | 'parked';
  readonly key: string;
  readonly waited: number;
}

/**
 * A retry was parked by the recovery gate instead of being sent: its key (by default the origin)
 * has failed `failures` times in a row, so retries wait for a probe to succeed.
 */
export interface RetryParkedEvent extends EventBase {
  readonly type: 'retry-parked';
  readonly attempt: number;
  readonly key: string;
  /** The key's failed attempts in a row when the retry was parked. */
  readonly failures: number;
}

/**
 * A parked retry goes ahead, `waited` ms after it was parked: `probe`, as the key's one probe;
 * `released`, by a success to the key (after a short spread); `max-wait`, its `maxDelay` was up;
 * `deadline`, its deadline came first (it is not sent).
 */
export interface RetryReleasedEvent extends EventBase {
  readonly type: 'retry-released';
  readonly attempt: number;
  readonly key: string;
  readonly reason: 'probe' | 'released' | 'max-wait' | 'deadline';
  readonly waited: number;
}

export type RetrylineEvent =
  | BreakerStateEvent
  | RetryParkedEvent
  | RetryReleasedEvent
  | BudgetEvent
  | GuardWaitEvent
  | RequestStartEvent
  | AttemptStartEvent
  | AttemptEndEvent
  | RetryScheduledEvent
  | RequestEndEvent;

/**
 * Receives events. It is called synchronously; an exception it throws, or a rejection of a promise
 * it returns, is ignored.
 */
export type RetrylineEventListener = (event: RetrylineEvent) => void;

/**
 * The longest error message an event carries, in UTF-16 code units; a longer one is cut and ends
 * with `…`. An error may quote a whole response body (`throw new Error(await res.text())`): the
 * devtools extension keeps 2,048 characters of a string and drops an event over 16 KB
 * (extension/src/shared/schema.ts, protocol.ts), and a trace or a log line has no use for more.
 */
export const MAX_MESSAGE_LENGTH = 2048;

/** Turns anything thrown into an {@link ErrorSummary}. */
export function summarizeError(error: unknown): ErrorSummary {
  try {
    if (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error)) {
      const e = error as { name?: unknown; message?: unknown; code?: unknown };
      // Redacted as the event's URL is: messages quote URLs, query strings and credentials
      // included. Redacted whole, then cut: a cut URL could keep a password whose `@` fell past it.
      const summary = {
        name: typeof e.name === 'string' ? e.name : 'Error',
        message: cut(redactText(text(e.message))),
      };
      return typeof e.code === 'string' ? { ...summary, code: e.code } : summary;
    }
    return { name: typeof error, message: cut(redactText(text(error))) };
  } catch {
    // A throwing getter or proxy in what was thrown must not turn the report of one failure into
    // another.
    return { name: typeof error, message: '' };
  }
}

function cut(message: string): string {
  if (message.length <= MAX_MESSAGE_LENGTH) return message;
  let end = MAX_MESSAGE_LENGTH - 1;
  // Never half a surrogate pair: a lone surrogate is no character.
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${message.slice(0, end)}…`;
}

/** `String(value)`, for any value: an object without a working toString is named by its tag. */
function text(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
