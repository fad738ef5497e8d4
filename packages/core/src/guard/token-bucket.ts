/**
 * The rate limiter's token bucket: `capacity` is the burst, `refillPerSecond`
 * the sustained rate. Refill is lazy — computed from the elapsed time at each call, no timer — and
 * every operation is (state, config, input, now) → { …result, state }, so the memory store and a
 * Redis/Lua store share this code and tests pass time in.
 */

import { finiteNumber, invalid, own } from '../policy/normalize';

/** Token-bucket options. Both are required: there is no rate that suits every origin. */
export interface TokenBucketOptions {
  /**
   * The most tokens the bucket holds: the burst allowed after a quiet spell.
   * @example
   * ```ts
   * normalizeBucket({ capacity: 50, refillPerSecond: 100 });
   * ```
   */
  readonly capacity: number;
  /**
   * Tokens added per second, up to `capacity`: the sustained rate.
   * @example
   * ```ts
   * normalizeBucket({ capacity: 1, refillPerSecond: 0.5 }); // one call every 2 s
   * ```
   */
  readonly refillPerSecond: number;
}

/** Token-bucket options, validated. */
export interface TokenBucketConfig {
  readonly capacity: number;
  readonly refillPerSecond: number;
}

/** A bucket's state: plain JSON, the same after `JSON.parse(JSON.stringify(state))`. */
export interface BucketState {
  /** Tokens as of `last`, in [0, capacity]; fractional between refills. */
  readonly tokens: number;
  /** When `tokens` was last brought up to date (ms). */
  readonly last: number;
}

export type BucketTake =
  | { readonly allowed: true; readonly state: BucketState }
  | {
      readonly allowed: false;
      readonly state: BucketState;
      /** The earliest time the same take succeeds, if nothing else takes first. */
      readonly retryAt: number;
    };

/** One bucket per key (an origin, a tenant): plain JSON like the buckets it holds. */
export type BucketMap = Readonly<Record<string, BucketState>>;

export type KeyedTake =
  | { readonly allowed: true; readonly state: BucketMap }
  | { readonly allowed: false; readonly state: BucketMap; readonly retryAt: number };

// Sums of elapsed × rate drift by a few ulps (0.1 token per ms at 100/s is not exact in binary),
// so a bucket that holds exactly one token in decimal can hold 0.9999999999999998 in floating
// point. A billionth of a token of slack makes the whole token count as the whole token it is.
const EPSILON = 1e-9;

/** Validates options once, at the boundary; `name` prefixes the option paths. */
export function normalizeBucket(input: TokenBucketOptions, name = 'limiter'): TokenBucketConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalid(name, 'an object with capacity and refillPerSecond', input);
  }
  const capacity = own(input, 'capacity');
  const refillPerSecond = own(input, 'refillPerSecond');
  // A capacity below one token would refuse every single-token take forever.
  if (typeof capacity !== 'number' || !Number.isFinite(capacity) || capacity < 1) {
    throw invalid(`${name}.capacity`, 'a finite number ≥ 1', capacity);
  }
  // Zero would make the wait for an empty bucket infinite.
  if (typeof refillPerSecond !== 'number' || !Number.isFinite(refillPerSecond) || refillPerSecond <= 0) {
    throw invalid(`${name}.refillPerSecond`, 'a finite number > 0', refillPerSecond);
  }
  return { capacity, refillPerSecond };
}

/** A bucket first seen at `now`: full, since nothing has been taken from it. */
export function bucketInit(config: TokenBucketConfig, now: number): BucketState {
  return { tokens: config.capacity, last: now };
}

/**
 * Takes `n` tokens if the bucket holds them after refilling, else takes nothing and says when it
 * will. `n` above `capacity` could never succeed, so it is a validation error rather than a wait
 * of Infinity.
 */
export function bucketTake(
  state: BucketState,
  config: TokenBucketConfig,
  n: number,
  now: number,
): BucketTake {
  checkTake(config, n);
  const refilled = refill(state, config, now);
  if (refilled.tokens + EPSILON >= n) {
    return { allowed: true, state: { tokens: Math.max(0, refilled.tokens - n), last: refilled.last } };
  }
  return { allowed: false, state: refilled, retryAt: refilled.last + wait(refilled, config, n) };
}

/** Milliseconds from `now` until the bucket holds `n` tokens (0 if it does); always finite. */
export function bucketTimeUntil(
  state: BucketState,
  config: TokenBucketConfig,
  n: number,
  now: number,
): number {
  checkTake(config, n);
  const refilled = refill(state, config, now);
  // `last` is ahead of `now` only when the clock went back; the refill resumes from `last`.
  return refilled.last - now + wait(refilled, config, n);
}

/**
 * {@link bucketTake} on `key`'s bucket, a full one if the key is new. Returns a new map (an O(keys)
 * copy): a store that keeps one state per key calls `bucketTake` on that key's state instead.
 */
export function keyedTake(
  map: BucketMap,
  config: TokenBucketConfig,
  key: string,
  n: number,
  now: number,
): KeyedTake {
  // Own properties only: a key named `__proto__` or `constructor` is a key like any other.
  const current = Object.hasOwn(map, key) ? map[key] : undefined;
  const result = bucketTake(current ?? bucketInit(config, now), config, n, now);
  // A computed key defines an own property, even `__proto__`, where assignment would not.
  const state: BucketMap = { ...map, [key]: result.state };
  return result.allowed ? { allowed: true, state } : { allowed: false, state, retryAt: result.retryAt };
}

/**
 * Whether dropping the bucket loses nothing: untouched for `idleMs` and full again, so a fresh
 * bucket created on the key's next call is the same bucket.
 */
export function isIdle(state: BucketState, config: TokenBucketConfig, now: number, idleMs: number): boolean {
  return now - state.last >= idleMs && refill(state, config, now).tokens >= config.capacity;
}

/** Drops the idle buckets ({@link isIdle}); keys in use, or still refilling, are kept. */
export function evictIdle(
  map: BucketMap,
  config: TokenBucketConfig,
  now: number,
  idleMs: number,
): { readonly evicted: number; readonly state: BucketMap } {
  finiteNumber('idleMs', idleMs, 0);
  const kept = Object.entries(map).filter(([, bucket]) => !isIdle(bucket, config, now, idleMs));
  // fromEntries defines own properties, so a `__proto__` key survives as a key.
  return { evicted: Object.keys(map).length - kept.length, state: Object.fromEntries(kept) };
}

function checkTake(config: TokenBucketConfig, n: number): void {
  finiteNumber('n', n, 0, 0, config.capacity);
}

/** Brings `tokens` up to `now`, capped at capacity however long the bucket sat idle. */
function refill(state: BucketState, config: TokenBucketConfig, now: number): BucketState {
  const elapsed = now - state.last;
  // A clock that went back adds nothing and does not move `last` back, or the same tokens would
  // be refilled twice once it caught up.
  if (!(elapsed > 0)) return state;
  const tokens = Math.min(config.capacity, state.tokens + (elapsed * config.refillPerSecond) / 1000);
  return { tokens, last: now };
}

function wait(refilled: BucketState, config: TokenBucketConfig, n: number): number {
  const missing = n - refilled.tokens;
  return missing <= EPSILON ? 0 : (missing * 1000) / config.refillPerSecond;
}
