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

/** Why the loop stops after a retryable failure. */
export type StopReason = 'retries' | 'max-delay' | 'deadline';

/** What to do after a retryable failure. */
export type Decision =
  | {
      readonly retry: true;
      readonly reason: 'backoff';
      /** The wait before the next attempt, in milliseconds. */
      readonly delay: number;
      readonly nextAttempt: number;
      readonly computation: DelayComputation;
      /** The state to carry into the wait. */
      readonly state: RetryState;
    }
  | {
      readonly retry: false;
      readonly reason: StopReason;
      /** The delay that would have been waited, when one was computed. */
      readonly computation?: DelayComputation;
    };

/** The state of a request that has not started an attempt yet. */
export function initialState(policy: ResolvedPolicy, now: number): RetryState {
  return { attempts: 0, startedAt: now, totalDelay: 0, previousDelay: policy.backoff.base };
}

/**
 * Decides, purely, whether a retryable failure is retried and after how long: a function of the
 * policy, the state, the time and the random source (injected through the policy). It does not
 * judge whether the failure is retryable; the caller does.
 */
export function decide(policy: ResolvedPolicy, state: RetryState, now: number, error?: unknown): Decision {
  const retriesDone = Math.max(0, state.attempts - 1);
  if (retriesDone >= policy.retries) return { retry: false, reason: 'retries' };
  const n = retriesDone + 1;
  const computation = computeDelay(policy, n, state.previousDelay, policy.random, error);
  if (computation.overCap && policy.onMaxDelay === 'give-up')
    return { retry: false, reason: 'max-delay', computation };
  // A wait that would end at or past the deadline is not started: the attempt after it would
  // have no time left.
  if (policy.deadline !== undefined && now + computation.delay >= state.startedAt + policy.deadline) {
    return { retry: false, reason: 'deadline', computation };
  }
  return {
    retry: true,
    reason: 'backoff',
    delay: computation.delay,
    nextAttempt: state.attempts + 1,
    computation,
    state: { ...state, totalDelay: state.totalDelay + computation.delay, previousDelay: computation.delay },
  };
}
