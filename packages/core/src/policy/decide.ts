import { computeDelay, type DelayComputation } from './delay';
import type { ResolvedPolicy } from './options';

/** The retry loop's state: plain data, serialisable with `JSON.stringify`. */
export interface RetryState {
  /** Attempts started so far. */
  readonly attempts: number;
  /** Clock time at which the request started. */
  readonly startedAt: number;
  /** Milliseconds of waits scheduled so far. */
  readonly totalDelay: number;
  /** The last delay chosen (decorrelated jitter walks from it); `base` before the first. */
  readonly previousDelay: number;
}

/** A wait the server asked for (Retry-After or a rate-limit reset), as `parseRetryHint` returns it. */
export interface DelayHint {
  /** Milliseconds from now. */
  readonly delay: number;
  /** The header it came from: `'retry-after'`, or one of the rate-limit headers. */
  readonly source: string;
}

/** Why a wait has the length it has. */
export type DelayReason = 'backoff' | 'retry-after' | 'rate-limit-reset';

import type { StopReason } from '../engine/outcome';

export type { StopReason };

/** What to do after a retryable failure. */
export type Decision =
  | {
      readonly retry: true;
      /** `'backoff'`, or the kind of server hint that set the wait. */
      readonly reason: DelayReason;
      /** The wait before the next attempt, in milliseconds. */
      readonly delay: number;
      readonly nextAttempt: number;
      /** How the backoff was computed (the wait is the larger of it and the hint). */
      readonly computation: DelayComputation;
      /** The server's hint, when there was one. */
      readonly hint?: DelayHint;
      /** The state to carry into the wait. */
      readonly state: RetryState;
    }
  | {
      readonly retry: false;
      readonly reason: StopReason;
      /** The delay that would have been waited, when one was computed. */
      readonly computation?: DelayComputation;
      /** The server's hint, when there was one (for `'retry-after-too-long'`). */
      readonly hint?: DelayHint;
    };

/** The state of a request that has not started an attempt yet. */
export function initialState(policy: ResolvedPolicy, now: number): RetryState {
  return { attempts: 0, startedAt: now, totalDelay: 0, previousDelay: policy.backoff.base };
}

/**
 * Decides, purely, whether a retryable failure is retried and after how long: a function of the
 * policy, the state, the time, the server's hint and the random source (injected through the
 * policy). It does not judge whether the failure is retryable; the caller does.
 *
 * With a hint, the wait is max(hint + U(0, min(hint/10, 1 s)), backoff): never sooner
 * than the server asked, and spread so that clients told the same thing do not return together.
 */
export function decide(
  policy: ResolvedPolicy,
  state: RetryState,
  now: number,
  error?: unknown,
  hint?: DelayHint,
): Decision {
  const retriesDone = Math.max(0, state.attempts - 1);
  if (retriesDone >= policy.retries) return { retry: false, reason: 'retries' };
  const n = retriesDone + 1;
  const computation = computeDelay(policy, n, state.previousDelay, policy.random, error);
  if (computation.overCap && policy.onMaxDelay === 'give-up')
    return { retry: false, reason: 'max-delay', computation };
  const deadlineAt =
    policy.deadline === undefined ? Number.POSITIVE_INFINITY : state.startedAt + policy.deadline;

  let delay = computation.delay;
  let reason: DelayReason = 'backoff';
  if (hint) {
    let asked = hint.delay;
    const tooLong = asked > policy.maxRetryAfter;
    if (tooLong && policy.onRetryAfterTooLong === 'fail') {
      return { retry: false, reason: 'retry-after-too-long', computation, hint };
    }
    if (tooLong) asked = policy.maxRetryAfter;
    // A server that asks us to come back after the deadline cannot be obeyed: say so, with the
    // time it gave, rather than a bare deadline error.
    if (now + asked >= deadlineAt) return { retry: false, reason: 'retry-after-too-long', computation, hint };
    // No server value holds a wait past maxRetryAfter: the spread takes only the room
    // left below it (none for a hint clamped to it).
    const spread = Math.min(asked / 10, 1000, policy.maxRetryAfter - asked) * policy.random();
    if (asked + spread >= delay) {
      delay = asked + spread;
      reason = hint.source === 'retry-after' ? 'retry-after' : 'rate-limit-reset';
    }
  }
  // A wait that would end at or past the deadline is not started: the attempt after it would
  // have no time left.
  if (now + delay >= deadlineAt) return { retry: false, reason: 'deadline', computation };
  return {
    retry: true,
    reason,
    delay,
    nextAttempt: state.attempts + 1,
    computation,
    ...(hint ? { hint } : {}),
    // Field by field: V8 (Node 20) builds `{ ...state, … }` on a slow path.
    state: {
      attempts: state.attempts,
      startedAt: state.startedAt,
      totalDelay: state.totalDelay + delay,
      previousDelay: computation.delay,
    },
  };
}
