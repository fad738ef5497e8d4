import type { Clock } from '../time/clock';
import type { Random } from '../time/random';

/** The four named backoff strategies: constant, linear, polynomial and exponential. */
export type BackoffStrategy = 'constant' | 'linear' | 'polynomial' | 'exponential';

/** What a custom backoff function is told about the retry it computes a delay for. */
export interface BackoffContext {
  /** The retry number n (1 for the first retry). The attempt that follows is n + 1. */
  readonly retry: number;
  /** The delay chosen before the previous retry (the base for the first). */
  readonly previousDelay: number;
  /** What ended the failed attempt: a thrown error, or `undefined` when it returned `RETRY`. */
  readonly error: unknown;
}

/** A custom backoff: the delay in milliseconds before retry `n`. Must return a finite number ≥ 0. */
export type BackoffFunction = (retry: number, context: BackoffContext) => number;

/**
 * A backoff strategy with its parameters. n = the retry number (1, 2, 3 …).
 *
 * | strategy | delay before retry n |
 * |---|---|
 * | `constant` | base |
 * | `linear` | base + step·n |
 * | `polynomial` | base · n^exponent |
 * | `exponential` | base · factor^n |
 */
export interface BackoffConfig {
  /** @default 'exponential' */
  strategy?: BackoffStrategy;
  /** Base delay in milliseconds. @default 100 */
  base?: number;
  /** Linear increment per retry in milliseconds. @default base */
  step?: number;
  /** Exponential growth factor, ≥ 1. @default 2 */
  factor?: number;
  /** Polynomial exponent, ≥ 0. @default 2 */
  exponent?: number;
}

/** The six jitters. `d` is the backoff after the `maxDelay` cap; U(a, b) is uniform. */
export type JitterType = 'none' | 'constant' | 'equal' | 'full' | 'decorrelated' | 'proportional';

/** A jitter with its parameter. */
export interface JitterConfig {
  /**
   * - `none`: d
   * - `constant`: d + U(0, spread)
   * - `equal`: d/2 + U(0, d/2)
   * - `full`: U(0, d)
   * - `decorrelated`: min(maxDelay, U(base, 3·previous)), previous starting at base
   * - `proportional`: d · U(1 − ratio, 1 + ratio)
   */
  type: JitterType;
  /** `constant` jitter's spread in milliseconds. @default 1000 */
  spread?: number;
  /** `proportional` jitter's ratio, between 0 and 1. @default 0.2 */
  ratio?: number;
}

/** When the computed backoff passes `maxDelay`: keep retrying at the cap, or stop. */
export type OnMaxDelay = 'clamp' | 'give-up';

/** When a server asks for a wait longer than `maxRetryAfter`: stop with an error, or wait the maximum. */
export type OnRetryAfterTooLong = 'fail' | 'clamp';

/**
 * The policy options shared by `retry()` and every adapter: how many times to retry, how long to
 * wait and how long the whole request may take. All durations are milliseconds.
 */
export interface PolicyOptions {
  /**
   * Retries after the first attempt: `retries: 2` means up to 3 attempts. `Infinity` retries
   * until success, abort or `deadline` (pair it with a deadline).
   * @default 2
   * @example
   * ```ts
   * retry(op, { retries: Infinity, deadline: 30_000 });
   * ```
   */
  retries?: number;
  /**
   * Shorthand: `false` fails fast (no retry), `true` takes the defaults, a number sets `retries`.
   * @example
   * ```ts
   * retry(op, { retry: false });
   * ```
   */
  retry?: boolean | number;
  /**
   * The backoff: a strategy name, a strategy with parameters, a fixed delay in milliseconds
   * (constant), or a function `(n, context) => ms`. A function gets no jitter unless `jitter`
   * is given too; `maxDelay` still caps it.
   * @default { strategy: 'exponential', base: 100, factor: 2 }
   * @example
   * ```ts
   * retry(op, { backoff: { strategy: 'linear', base: 1000, step: 500 } });
   * ```
   */
  backoff?: BackoffStrategy | BackoffConfig | BackoffFunction | number;
  /**
   * Cap on the backoff, applied before jitter. Finite, at most 2^31 − 1.
   * @default 20_000
   */
  maxDelay?: number;
  /**
   * What happens once the computed backoff passes `maxDelay`: `'clamp'` keeps retrying at the
   * cap, `'give-up'` stops with `RetriesExhaustedError` (`reason: 'max-delay'`).
   * @default 'clamp'
   */
  onMaxDelay?: OnMaxDelay;
  /**
   * Spreads delays so clients that failed together do not retry together.
   * @default 'full' (`'none'` when `backoff` is a function)
   * @example
   * ```ts
   * retry(op, { jitter: { type: 'proportional', ratio: 0.1 } });
   * ```
   */
  jitter?: JitterType | JitterConfig;
  /**
   * Bound on the whole request in milliseconds, waits included. A wait that would end at or past
   * it is not started: the request stops with `DeadlineExceededError` at once.
   * @default undefined (no deadline)
   */
  deadline?: number;
  /**
   * Bound on each attempt in milliseconds. A slow attempt is abandoned (its signal aborts with
   * `AttemptTimeoutError`) and counts as a retryable failure.
   * @default undefined (no per-attempt timeout)
   */
  timeout?: number;
  /**
   * The longest server-given wait (Retry-After and rate-limit headers) honoured, in milliseconds.
   * A longer one stops at once with `RetryAfterTooLongError`, whose `retryAt` says when to come back.
   * @default 60_000
   */
  maxRetryAfter?: number;
  /**
   * What a server-given wait above `maxRetryAfter` (or past the deadline) does: `'fail'` stops
   * with `RetryAfterTooLongError`; `'clamp'` waits `maxRetryAfter` instead (never past the deadline).
   * @default 'fail'
   */
  onRetryAfterTooLong?: OnRetryAfterTooLong;
  /** Source of time and waiting. Tests pass `virtualClock()`. @default systemClock */
  clock?: Clock;
  /** Source of randomness for jitter. Tests pass `seededRandom(seed)`. @default Math.random */
  random?: Random;
}

/** A backoff after normalisation. */
export type ResolvedBackoff =
  | {
      readonly strategy: BackoffStrategy;
      readonly base: number;
      readonly step: number;
      readonly factor: number;
      readonly exponent: number;
    }
  | { readonly strategy: 'custom'; readonly base: number; readonly fn: BackoffFunction };

/** A jitter after normalisation. */
export interface ResolvedJitter {
  readonly type: JitterType;
  readonly spread: number;
  readonly ratio: number;
}

/** Policy options with every default filled in and every value validated. */
export interface ResolvedPolicy {
  readonly retries: number;
  readonly backoff: ResolvedBackoff;
  readonly maxDelay: number;
  readonly onMaxDelay: OnMaxDelay;
  readonly jitter: ResolvedJitter;
  readonly deadline: number | undefined;
  readonly timeout: number | undefined;
  readonly maxRetryAfter: number;
  readonly onRetryAfterTooLong: OnRetryAfterTooLong;
  readonly clock: Clock;
  readonly random: Random;
}
