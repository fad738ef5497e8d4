/**
 * The rate limiter as a guard value: a token bucket per key (token-bucket.ts has the
 * rules), and what an attempt does without a token: wait for one (never past the deadline) or be
 * refused with `RateLimitedError`, nothing sent.
 */

import { RateLimitedError } from '../errors';
import { invalid, own } from '../policy/normalize';
import { systemClock } from '../time/clock';
import { type GuardValue, type GuardValueOptions, guardHome, guardValue, iso, unsent } from './guard';
import { type GuardStore, IDLE_MS, memoryOf, type Slot, type Store, step } from './store';
import {
  type BucketState,
  bucketInit,
  bucketTake,
  isIdle,
  normalizeBucket,
  type TokenBucketConfig,
  type TokenBucketOptions,
} from './token-bucket';

/** Rate-limiter options: a token bucket, and what to do without a token. */
export interface LimiterOptions extends TokenBucketOptions {
  /** `'wait'` for a token (never past the deadline) or `'reject'` with `RateLimitedError`. @default 'wait' */
  readonly mode?: 'wait' | 'reject';
}

/** `rateLimiter()`'s options: the bucket, the mode, and where the state lives. */
export interface RateLimiterOptions extends LimiterOptions, GuardValueOptions {}

/** A rate limiter: give it to one client or several; they share its buckets. */
export interface RateLimiter extends GuardValue<'limiter'> {
  readonly config: TokenBucketConfig;
  readonly mode: 'wait' | 'reject';
  /**
   * The tokens `key`'s bucket holds at `now` (refilled as of then). Throws for a limiter whose
   * state is in a shared store.
   */
  state(key: string, now?: number): { readonly tokens: number; readonly capacity: number };
}

const idle = (slot: Slot<BucketState, TokenBucketConfig>, now: number) =>
  isIdle(slot.state, slot.config, now, IDLE_MS);

/** The limiter operation of `store`: its own, or the token bucket's rules on a memory store's table. */
export function limiterOps(store: GuardStore): Pick<Store, 'limiterTake'> {
  const memory = memoryOf(store);
  if (!memory) return store as Store;
  const table = memory?.table('limiters', idle);
  return {
    async limiterTake(key, config, n, now) {
      const result = step(
        memory,
        table,
        key,
        config,
        now,
        () => bucketInit(config, now),
        (state) => bucketTake(state, config, n, now),
      );
      return result.allowed
        ? { allowed: true }
        : { allowed: false, ...(result.retryAt === undefined ? {} : { retryAt: result.retryAt }) };
    },
  };
}

/**
 * A client-side rate limiter per key (by default per origin): a token bucket of `capacity` (the
 * burst) refilled at `refillPerSecond`. Nothing is sent without a token; without one an attempt
 * waits (`mode: 'wait'`, never past the deadline; the wait is reported with reason `limiter`) or is
 * refused with `RateLimitedError` (`mode: 'reject'`).
 *
 * @example
 * ```ts
 * const limiter = rateLimiter({ capacity: 50, refillPerSecond: 100 });
 * const api = retryFetch(fetch, { limiter });
 * ```
 */
export function rateLimiter(options: RateLimiterOptions): RateLimiter {
  const config = Object.freeze(normalizeBucket(options, 'limiter'));
  // Only an absent mode is the default: `null` is a mistake like any other value.
  const given = own(options, 'mode');
  const mode = given === undefined ? 'wait' : given;
  if (mode !== 'wait' && mode !== 'reject') throw invalid('limiter.mode', "one of 'wait', 'reject'", mode);
  const home = guardHome('limiter', options);
  return guardValue<'limiter', RateLimiter>(
    {
      kind: 'limiter',
      config,
      mode,
      state(key, now = systemClock.now()) {
        const slot = home.table('limiters', idle)?.get(key);
        // Taking nothing refills the bucket as of `now` and changes nothing else.
        const taken = bucketTake(slot ? slot.state : bucketInit(config, now), config, 0, now);
        return { tokens: taken.state.tokens, capacity: config.capacity };
      },
    },
    (binding) => {
      const ops = limiterOps(home.forClient(binding));
      return {
        kind: 'limiter',
        keyOf: home.keyFor(binding),
        session: ({ key, policy, label, waited }) => ({
          async admit(attempt, deadlineAt) {
            const { clock } = policy;
            const since = clock.now();
            let slept = false;
            for (;;) {
              const at = clock.now();
              const take = await ops.limiterTake(key, config, 1, at);
              if (take.allowed) break;
              const retryAt = take.retryAt ?? at;
              // Against the deadline as it stands now: a token lost to another caller after a
              // wait moves the next one later, perhaps past it.
              if (mode === 'reject' || retryAt >= deadlineAt) {
                return {
                  outcome: 'rate-limited',
                  error: new RateLimitedError(
                    `${label} was not sent: the rate limiter for ${key} has no token until ${iso(retryAt)}`,
                    { retryAt, ...unsent(attempt) },
                  ),
                };
              }
              try {
                await clock.sleep(retryAt - at, attempt.signal);
              } catch (error) {
                // Cut short (an abort, the deadline): what it did wait is still a wait.
                waited(attempt.attempt, 'limiter', since);
                throw error;
              }
              slept = true;
            }
            if (slept) waited(attempt.attempt, 'limiter', since);
            return undefined;
          },
        }),
      };
    },
  );
}
