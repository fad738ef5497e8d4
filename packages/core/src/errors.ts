/**
 * Retryline's error tree. Every error carries how many attempts were made and how long was
 * spent waiting between them, keeps its `cause`, and can be recognised across realms (iframes,
 * duplicated package copies) with {@link isRetrylineError}, which does not rely on `instanceof`.
 */

const BRAND = Symbol.for('retryline.error');

/** What every Retryline error can say about the request it ended. */
export interface RetrylineErrorDetails {
  /** The error that ended the last attempt, when there was one. */
  cause?: unknown;
  /** Attempts made (the first try is attempt 1). @default 0 */
  attempts?: number;
  /** Milliseconds spent waiting between attempts. @default 0 */
  totalDelay?: number;
}

/** The base class of every error Retryline throws. */
export class RetrylineError extends Error {
  override name = 'RetrylineError';
  /** Attempts made before this error was raised. */
  readonly attempts: number;
  /** Milliseconds spent waiting between attempts. */
  readonly totalDelay: number;

  constructor(message: string, details: RetrylineErrorDetails = {}) {
    super(message, 'cause' in details ? { cause: details.cause } : undefined);
    this.attempts = details.attempts ?? 0;
    this.totalDelay = details.totalDelay ?? 0;
    Object.defineProperty(this, BRAND, { value: true });
  }
}

import type { ExhaustionReason } from './engine/outcome';

export type { ExhaustionReason };

/** Every allowed attempt failed (or the next delay passed `maxDelay` with `onMaxDelay: 'give-up'`). */
export class RetriesExhaustedError extends RetrylineError {
  override name = 'RetriesExhaustedError';
  /**
   * `'retries'` when the attempt limit was reached, `'max-delay'` when the next delay passed the cap,
   * `'origin-failing'` when the origin kept failing for as long as the recovery gate parks a retry.
   */
  readonly reason: ExhaustionReason;

  constructor(message: string, details: RetrylineErrorDetails & { reason?: ExhaustionReason } = {}) {
    super(message, details);
    this.reason = details.reason ?? 'retries';
  }
}

/** The whole request ran out of its `deadline`, or the next wait would have ended past it. */
export class DeadlineExceededError extends RetrylineError {
  override name = 'DeadlineExceededError';
  /** The deadline in milliseconds, as configured. */
  readonly deadline: number;

  constructor(message: string, details: RetrylineErrorDetails & { deadline: number }) {
    super(message, details);
    this.deadline = details.deadline;
  }
}

/** One attempt ran longer than `timeout`. Retryable: the attempt's outcome is unknown. */
export class AttemptTimeoutError extends RetrylineError {
  override name = 'AttemptTimeoutError';
  /** The per-attempt timeout in milliseconds. */
  readonly timeout: number;

  constructor(message: string, details: RetrylineErrorDetails & { timeout: number }) {
    super(message, details);
    this.timeout = details.timeout;
  }
}

/** An error that says when the work may be tried again: schedule it for `retryAt`. */
export abstract class RetryLaterError extends RetrylineError {
  /** Epoch milliseconds from which a new attempt may go through. */
  readonly retryAt: number;

  constructor(message: string, details: RetrylineErrorDetails & { retryAt: number }) {
    super(message, details);
    this.retryAt = details.retryAt;
  }
}

/** The circuit breaker is open: nothing was sent. `retryAt` says when a trial call is allowed. */
export class CircuitOpenError extends RetryLaterError {
  override name = 'CircuitOpenError';
}

/** The retry budget for this key is spent; the failed attempt is not retried. */
export class RetryBudgetExhaustedError extends RetrylineError {
  override name = 'RetryBudgetExhaustedError';
}

/** A client-side rate limiter in `'reject'` mode refused the attempt; `retryAt` is when a token is free. */
export class RateLimitedError extends RetryLaterError {
  override name = 'RateLimitedError';
}

/**
 * The bulkhead for this key is full: every place is taken and its queue too. Nothing was sent.
 * The request may be tried again once load drops.
 */
export class BulkheadRejectedError extends RetrylineError {
  override name = 'BulkheadRejectedError';
}

/**
 * The adaptive throttle refused the attempt before it was sent: the server has lately rejected
 * more than it accepted, and the client sheds part of its own load (see `adaptiveThrottle()`).
 */
export class ThrottledError extends RetrylineError {
  override name = 'ThrottledError';
  /** The probability with which the throttle was refusing attempts to this key, 0 to 1. */
  readonly rejection: number;

  constructor(message: string, details: RetrylineErrorDetails & { rejection: number }) {
    super(message, details);
    this.rejection = details.rejection;
  }
}

/**
 * The server asked for a wait longer than `maxRetryAfter` or than the remaining deadline;
 * `retryAt` is when it asked us to come back.
 */
export class RetryAfterTooLongError extends RetryLaterError {
  override name = 'RetryAfterTooLongError';
  /** The request's deadline in milliseconds, when it (not `maxRetryAfter`) left no room for the wait. */
  readonly deadline: number | undefined;

  constructor(
    message: string,
    details: RetrylineErrorDetails & { retryAt: number; deadline?: number | undefined },
  ) {
    super(message, details);
    this.deadline = details.deadline;
  }
}

/** The request body is a one-shot stream and cannot be sent a second time. */
export class BodyNotReplayableError extends RetrylineError {
  override name = 'BodyNotReplayableError';
}

/** Options failed validation. The message says which option, what was expected and what was given. */
export class InvalidOptionsError extends RetrylineError {
  override name = 'InvalidOptionsError';
  /** The option at fault, as a path: `retries`, `backoff.factor`, `jitter.ratio` … */
  readonly option: string | undefined;

  constructor(message: string, details: RetrylineErrorDetails & { option?: string } = {}) {
    super(message, details);
    this.option = details.option;
  }
}

/** Names of the Retryline error classes, for {@link isRetrylineError}'s second argument. */
export type RetrylineErrorName =
  | 'RetrylineError'
  | 'RetriesExhaustedError'
  | 'DeadlineExceededError'
  | 'AttemptTimeoutError'
  | 'CircuitOpenError'
  | 'RetryBudgetExhaustedError'
  | 'RateLimitedError'
  | 'BulkheadRejectedError'
  | 'ThrottledError'
  | 'RetryAfterTooLongError'
  | 'BodyNotReplayableError'
  | 'InvalidOptionsError';

interface ErrorsByName {
  RetrylineError: RetrylineError;
  RetriesExhaustedError: RetriesExhaustedError;
  DeadlineExceededError: DeadlineExceededError;
  AttemptTimeoutError: AttemptTimeoutError;
  CircuitOpenError: CircuitOpenError;
  RetryBudgetExhaustedError: RetryBudgetExhaustedError;
  RateLimitedError: RateLimitedError;
  BulkheadRejectedError: BulkheadRejectedError;
  ThrottledError: ThrottledError;
  RetryAfterTooLongError: RetryAfterTooLongError;
  BodyNotReplayableError: BodyNotReplayableError;
  InvalidOptionsError: InvalidOptionsError;
}

/**
 * Whether `value` is a Retryline error — optionally of one class — even when it comes from
 * another realm or another copy of this package, where `instanceof` fails.
 *
 * @example
 * ```ts
 * try { await retry(op) } catch (error) {
 *   if (isRetrylineError(error, 'DeadlineExceededError')) console.warn('gave up at the deadline');
 * }
 * ```
 */
export function isRetrylineError<N extends RetrylineErrorName = 'RetrylineError'>(
  value: unknown,
  name?: N,
): value is ErrorsByName[N] {
  if (typeof value !== 'object' || value === null) return false;
  if ((value as Record<PropertyKey, unknown>)[BRAND] !== true) return false;
  return name === undefined || name === 'RetrylineError' || (value as Error).name === name;
}
