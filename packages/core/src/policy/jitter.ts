import type { Random } from '../time/random';
import { invalid } from './normalize';
import type { ResolvedJitter } from './options';

/** What a jitter may draw on besides the capped backoff. */
export interface JitterInput {
  /** The backoff after the `maxDelay` cap: d in the formulas. */
  readonly capped: number;
  /** The policy's base delay (decorrelated's lower bound). */
  readonly base: number;
  /** The delay chosen before the previous retry, `base` for the first (decorrelated). */
  readonly previousDelay: number;
  readonly random: Random;
}

function draw(random: Random): number {
  const r = random();
  if (typeof r !== 'number' || !(r >= 0 && r <= 1))
    throw invalid('random()', 'a number in [0, 1)', r, 'random');
  return r;
}

/**
 * Applies jitter to the capped backoff. For every type but `decorrelated` the result depends on
 * the capped backoff d; decorrelated (Brooker, "Exponential Backoff And Jitter", AWS 2015) walks
 * from the previous delay instead: U(base, 3·previous), capped by the caller.
 */
export function applyJitter(jitter: ResolvedJitter, input: JitterInput): number {
  const d = input.capped;
  switch (jitter.type) {
    case 'none':
      return d;
    case 'constant':
      return d + draw(input.random) * jitter.spread;
    case 'equal':
      // Rounding can push d/2 + r·d/2 one ulp past d; the formula's bound is d.
      return Math.min(d, d / 2 + (draw(input.random) * d) / 2);
    case 'full':
      return draw(input.random) * d;
    case 'decorrelated': {
      const high = 3 * input.previousDelay;
      return input.base + draw(input.random) * (high - input.base);
    }
    case 'proportional':
      return d * (1 - jitter.ratio + draw(input.random) * 2 * jitter.ratio);
  }
}
