/**
 * Randomness, injected. Jitter draws from a `Random`; this module is the only place in core
 * that calls `Math.random`. Tests and simulations pass {@link seededRandom} instead.
 */

/** Returns a number in [0, 1), like `Math.random`. */
export type Random = () => number;

/** The default source: `Math.random`. */
export const systemRandom: Random = () => Math.random();

/**
 * A small, fast, seedable generator (SplitMix32 mixing over a Weyl sequence) for reproducible
 * schedules, tests and simulations. Not for cryptography. The same seed always yields the same
 * sequence; strings are hashed to a 32-bit seed.
 *
 * @example
 * ```ts
 * const random = seededRandom(7);
 * backoffSchedule({ jitter: 'full' }, { retries: 5, random });
 * ```
 */
export function seededRandom(seed: number | string): Random {
  let state = typeof seed === 'string' ? hashString(seed) : seed >>> 0;
  return () => {
    state = (state + 0x9e3779b9) | 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    z ^= z >>> 16;
    return (z >>> 0) / 4_294_967_296;
  };
}

// FNV-1a, 32-bit: enough to turn a label into a seed.
function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
