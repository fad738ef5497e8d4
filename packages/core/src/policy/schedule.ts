import type { Random } from '../time/random';
import { decide, initialState, type RetryState } from './decide';
import { expectObject, invalid, normalizePolicy, own } from './normalize';
import type { PolicyOptions } from './options';

/** One row of a schedule: the wait before retry n (which is attempt n + 1). */
export interface ScheduleRow {
  readonly retry: number;
  readonly attempt: number;
  /** The wait before this retry, in milliseconds. */
  readonly delay: number;
  /** Waits so far, this one included, in milliseconds. */
  readonly cumulative: number;
}

/** A policy's delays as a table: one row per retry, with the running total and the mean. */
export interface Schedule {
  readonly rows: readonly ScheduleRow[];
  /** Mean of the delays (cumulative / rows), 0 when there is none. */
  readonly meanDelay: number;
  /** Sum of the delays. */
  readonly totalDelay: number;
  /**
   * Set when the policy stops before `retries`: at which retry, why, the delay it would have
   * waited, and the backoff before the cap (`raw`: 128 s where a 64 s cap gave up).
   */
  readonly stop?: {
    readonly retry: number;
    readonly reason: 'max-delay' | 'deadline';
    readonly delay: number;
    readonly raw: number;
  };
}

/** What to preview. */
export interface ScheduleOptions {
  /** Rows to compute; must be finite. @default options.retries */
  retries?: number;
  /** Random source for jitter. @default options.random, else Math.random */
  random?: Random;
}

/**
 * Previews a policy: the delay before each retry, cumulative waits and the mean, assuming each
 * attempt fails at once, so a policy can be seen before it ships. A deadline in `options` ends the
 * table where the next wait would pass it.
 *
 * @example
 * ```ts
 * backoffSchedule({ backoff: { strategy: 'exponential', base: 1000 }, jitter: 'none', maxDelay: 64_000 }, { retries: 10 });
 * // rows 2000, 4000, … 64000, 64000 …; cumulative 382000; meanDelay 38200
 * ```
 */
export function backoffSchedule(options: PolicyOptions = {}, schedule: ScheduleOptions = {}): Schedule {
  const base = normalizePolicy(options);
  const preview = expectObject('schedule', schedule) as ScheduleOptions;
  const retries = own(preview, 'retries') ?? base.retries;
  if (!Number.isInteger(retries) || retries < 0) {
    throw invalid('retries', 'a finite non-negative integer for a schedule', retries);
  }
  const random = own(preview, 'random') ?? base.random;
  if (typeof random !== 'function')
    throw invalid('random', 'a function returning a number in [0, 1)', random);
  const policy = { ...base, retries, random };
  const rows: ScheduleRow[] = [];
  let state: RetryState = { ...initialState(policy, 0), attempts: 1 };
  let stop: Schedule['stop'];
  while (rows.length < retries) {
    const now = state.startedAt + state.totalDelay;
    const decision = decide(policy, state, now);
    if (!decision.retry) {
      if ((decision.reason === 'max-delay' || decision.reason === 'deadline') && decision.computation) {
        const { retry, delay, raw } = decision.computation;
        stop = { retry, reason: decision.reason, delay, raw };
      }
      break;
    }
    state = { ...decision.state, attempts: decision.nextAttempt };
    rows.push({
      retry: decision.computation.retry,
      attempt: decision.nextAttempt,
      delay: decision.delay,
      cumulative: state.totalDelay,
    });
  }
  const totalDelay = state.totalDelay;
  return {
    rows,
    meanDelay: rows.length === 0 ? 0 : totalDelay / rows.length,
    totalDelay,
    ...(stop ? { stop } : {}),
  };
}
