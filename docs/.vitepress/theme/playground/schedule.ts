// A policy's schedule as the playground draws it, computed by Retryline's own core: one sampled run
// (`backoffSchedule` with a seeded random), each retry's jitter range around it (`computeDelay` with
// the lowest and the highest draw, from the sampled run's previous delay), and the range of the
// cumulative wait (the whole schedule with every draw lowest, then every draw highest).
import {
  backoffSchedule,
  computeDelay,
  type PolicyOptions,
  type Schedule,
  seededRandom,
} from '@retryline/core';
import { normalizePolicy } from '@retryline/core/adapter';

export interface ScheduleRowView {
  readonly retry: number;
  /** The sampled delay before this retry. */
  readonly delay: number;
  /** The shortest and longest delay this retry's jitter can draw, given the sampled run so far. */
  readonly min: number;
  readonly max: number;
  /** The sampled waits so far, this one included. */
  readonly cumulative: number;
  /** The cumulative wait when every draw is the lowest / the highest (absent past where that run stops). */
  readonly cumulativeMin?: number;
  readonly cumulativeMax?: number;
}

export interface ScheduleView {
  readonly rows: readonly ScheduleRowView[];
  readonly totalDelay: number;
  readonly meanDelay: number;
  /** Why the sampled run stopped before `retries`, as `backoffSchedule` says. */
  readonly stop?: Schedule['stop'];
}

// The extremes of a uniform draw: `random()` is taken as a fraction, and 1 gives the top of each range.
const LOWEST = () => 0;
const HIGHEST = () => 1;

/** Computes the view; throws core's `InvalidOptionsError` for options it refuses. */
export function scheduleView(options: PolicyOptions, seed: number): ScheduleView {
  const sample = backoffSchedule(options, { random: seededRandom(seed) });
  const lowest = backoffSchedule(options, { random: LOWEST }).rows;
  const highest = backoffSchedule(options, { random: HIGHEST }).rows;
  const policy = normalizePolicy(options);
  let previous = policy.backoff.base;
  const rows = sample.rows.map((row, index): ScheduleRowView => {
    const min = computeDelay(policy, row.retry, previous, LOWEST).delay;
    const max = computeDelay(policy, row.retry, previous, HIGHEST).delay;
    previous = row.delay;
    const low = lowest[index]?.cumulative;
    const high = highest[index]?.cumulative;
    return {
      retry: row.retry,
      delay: row.delay,
      min,
      max,
      cumulative: row.cumulative,
      ...(low === undefined ? {} : { cumulativeMin: low }),
      ...(high === undefined ? {} : { cumulativeMax: high }),
    };
  });
  return {
    rows,
    totalDelay: sample.totalDelay,
    meanDelay: sample.meanDelay,
    ...(sample.stop ? { stop: sample.stop } : {}),
  };
}
