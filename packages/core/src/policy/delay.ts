import type { Random } from '../time/random';
import { backoffDelay } from './backoff';
import { applyJitter } from './jitter';
import type { ResolvedPolicy } from './options';

/** How one delay was computed: the numbers the devtools panel and the CLI show. */
export interface DelayComputation {
  /** The retry number n this delay precedes. */
  readonly retry: number;
  /** The wait in milliseconds. Finite and ≥ 0. */
  readonly delay: number;
  /** The backoff before the cap (for decorrelated jitter: U(base, 3·previous) before the cap). */
  readonly raw: number;
  /** The backoff after the `maxDelay` cap, before jitter. */
  readonly capped: number;
  /** Whether the computed delay passed `maxDelay` (what `onMaxDelay: 'give-up'` stops on). */
  readonly overCap: boolean;
}

/**
 * The delay before retry `n`: backoff, then the `maxDelay` cap, then jitter, in that order.
 * `previousDelay` is the delay chosen before the previous retry (`base` for the first).
 */
export function computeDelay(
  policy: ResolvedPolicy,
  n: number,
  previousDelay: number,
  random: Random,
  error?: unknown,
): DelayComputation {
  const { backoff, maxDelay, jitter } = policy;
  const strategyDelay = backoffDelay(backoff, n, { retry: n, previousDelay, error });
  const capped = Math.min(strategyDelay, maxDelay);
  if (jitter.type === 'decorrelated') {
    const raw = applyJitter(jitter, { capped, base: backoff.base, previousDelay, random });
    return {
      retry: n,
      delay: Math.min(raw, maxDelay),
      raw,
      capped: Math.min(raw, maxDelay),
      overCap: raw > maxDelay,
    };
  }
  const delay = applyJitter(jitter, { capped, base: backoff.base, previousDelay, random });
  return { retry: n, delay, raw: strategyDelay, capped, overCap: strategyDelay > maxDelay };
}
