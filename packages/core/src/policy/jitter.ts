import type { Random } from '../time/random';
import { invalid } from './normalize';
import type { JitterType, ResolvedJitter } from './options';

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

type JitterFormula = (d: number, input: JitterInput, jitter: ResolvedJitter) => number;

/**
 * The jitters, one row each, keyed by their type: a type added to `JitterType` does not compile
 * until it has its row here, and the options validator takes its list from this table's keys.
 * Every formula but `decorrelated` works on the capped backoff d; decorrelated (Brooker,
 * "Exponential Backoff And Jitter", https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/)
 * walks from the previous delay instead: U(base, 3·previous), capped by the caller.
 */
const JITTER: Readonly<Record<JitterType, JitterFormula>> = {
  none: (d) => d,
  constant: (d, input, jitter) => d + draw(input.random) * jitter.spread,
  // Rounding can push d/2 + r·d/2 one ulp past d; the formula's bound is d.
  equal: (d, input) => Math.min(d, d / 2 + (draw(input.random) * d) / 2),
  full: (d, input) => draw(input.random) * d,
  decorrelated: (_d, input) => input.base + draw(input.random) * (3 * input.previousDelay - input.base),
  proportional: (d, input, jitter) => d * (1 - jitter.ratio + draw(input.random) * 2 * jitter.ratio),
};

/** Every jitter's name, in the table's order. */
export const JITTER_TYPES = Object.keys(JITTER) as readonly JitterType[];

/** Applies the policy's jitter to the capped backoff. */
export function applyJitter(jitter: ResolvedJitter, input: JitterInput): number {
  return JITTER[jitter.type](input.capped, input, jitter);
}
