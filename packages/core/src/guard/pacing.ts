/**
 * Server-informed pacing, opt-in: once a response says the quota is spent (a 429 with
 * a hint, `RateLimit: r=0`, `X-RateLimit-Remaining: 0` with a reset), later attempts with the same
 * key (by default origin and first path segment) wait for the reset instead of collecting another
 * 429. Every pause is capped by the request's `maxRetryAfter` before any store sees it, and a
 * pacing wait is reported like any other wait (reason `pacing`).
 */

import type { LoopAttempt, Refusal } from '../engine/attempt-loop';
import { RateLimitedError } from '../errors';
import type { HeadersLike } from '../http/headers';
import { quotaSpentUntil } from '../http/quota';
import { parseSpentQuota, type RetryHint } from '../http/retry-hint';
import { MAX_DELAY_LIMIT } from '../policy/normalize';
import { systemClock } from '../time/clock';
import {
  type BoundGuard,
  checkObject,
  type GuardValue,
  type GuardValueOptions,
  guardHome,
  guardValue,
  iso,
  unsent,
} from './guard';
import { type GuardStore, memoryOf, type Slot, type Store, type StoreAnswer } from './store';

/** `pacing()`'s options: the key and where the pauses live. */
export interface PacingOptions extends GuardValueOptions {}

/** Pacing: give it to one client or several; they share its pauses. */
export interface Pacing extends GuardValue<'pacing'> {
  /**
   * Until when requests keyed `key` (`https://api.example/v1`) wait, if the server's quota is
   * still spent at `now`. Throws for pacing whose state is in a shared store.
   */
  state(key: string, now?: number): { readonly until: number | undefined };
}

/** Pacing bound to a client, as the engine asks it what a response says of the quota. */
export interface BoundPacing extends BoundGuard {
  /** Until when a response says the quota is spent, if it does (a success reads only the quota's headers). */
  spentUntil(
    status: number,
    failed: boolean,
    headers: HeadersLike,
    hint: RetryHint | undefined,
    now: number,
  ): number | undefined;
}

const idle = (slot: Slot<number, undefined>, now: number) => slot.state <= now;

/** The pacing operations of `store`: its own, or a memory store's table of pauses. */
export function pacingOps(store: GuardStore): Pick<Store, 'pacingGet' | 'pacingSet'> {
  const memory = memoryOf(store);
  if (!memory) return store as Store;
  const table = memory?.table('pacing', idle);
  return {
    async pacingSet(key, until, now) {
      memory.tick(now);
      // Negated so that a NaN pauses nothing. The bound is the longest maxRetryAfter there is: a
      // caller that skipped the guards' cap (or passed Infinity) cannot pause a key for longer.
      if (!(until > now)) return;
      const state = Math.max(table.get(key)?.state ?? 0, Math.min(until, now + MAX_DELAY_LIMIT));
      table.set(key, { state, config: undefined, last: now, handedOut: true });
    },
    pacingGet(key, now) {
      // Most of the time no key is paused: no lookup at all.
      if (table.size === 0) return undefined;
      const until = table.get(key)?.state;
      if (until === undefined) return undefined;
      if (until > now) return until;
      table.delete(key);
      return undefined;
    },
  };
}

/** Whether the server's quota, spent `until`, is still spent at `now`. */
const paused = (until: number | undefined, now: number): until is number =>
  until !== undefined && until > now;

/**
 * Server-informed pacing, for HTTP clients: after a response says the quota is spent, later
 * requests with the same key wait for the reset (never longer than their `maxRetryAfter`; a pause
 * beyond it or their deadline refuses them with `RateLimitedError`, nothing sent). Without pacing,
 * a hint delays only the request that received it.
 *
 * @example
 * ```ts
 * const api = retryFetch(fetch, { pacing: pacing() });
 * ```
 */
export function pacing(options: PacingOptions = {}): Pacing {
  checkObject('pacing', options, 'an object of pacing options');
  const home = guardHome('pacing', options);
  return guardValue<'pacing', Pacing>(
    {
      kind: 'pacing',
      state(key, now = systemClock.now()) {
        const until = home.table('pacing', idle)?.get(key)?.state;
        return { until: paused(until, now) ? until : undefined };
      },
    },
    (binding): BoundPacing => {
      const ops = pacingOps(home.forClient(binding));
      return {
        kind: 'pacing',
        keyOf: home.keyFor(binding, true),
        spentUntil: (status, failed, headers, hint, now) =>
          failed ? quotaSpentUntil(status, headers, hint) : parseSpentQuota(headers, now)?.retryAt,
        session({ key, policy, label, waited }) {
          const { clock } = policy;
          /** Waits until the quota is back, if it fits the deadline and maxRetryAfter. */
          const wait = async (
            attempt: LoopAttempt,
            until: number,
            now: number,
            deadlineAt: number,
          ): Promise<Refusal | undefined> => {
            const pause = until - now;
            // Longer than this request may wait (a store shared with a client that allows
            // longer): refused at once, as a hint that long stops retrying, never held.
            if (pause > policy.maxRetryAfter || now + pause >= deadlineAt) {
              return {
                outcome: 'quota-spent',
                error: new RateLimitedError(
                  `${label} was not sent: the server said the quota for ${key} is spent until ${iso(until)}`,
                  { retryAt: until, ...unsent(attempt) },
                ),
              };
            }
            // A spread so the clients held back do not all return at the same instant; it never
            // stretches the pause past maxRetryAfter or the deadline.
            const spread = policy.random() * Math.min(pause / 10, 1000);
            try {
              await clock.sleep(
                Math.min(pause + spread, policy.maxRetryAfter, deadlineAt - now),
                attempt.signal,
              );
            } finally {
              // Cut short by an abort or not, what it waited is a wait.
              waited(attempt.attempt, 'pacing', now);
            }
            return undefined;
          };
          return {
            admit(attempt, deadlineAt) {
              const now = clock.now();
              const until: StoreAnswer<number | undefined> = ops.pacingGet(key, now);
              if (until instanceof Promise) {
                return until.then((at) => (paused(at, now) ? wait(attempt, at, now, deadlineAt) : undefined));
              }
              return paused(until, now) ? wait(attempt, until, now, deadlineAt) : undefined;
            },
            async pace(until) {
              const now = clock.now();
              // Capped before the store sees it, so no store (memory or shared) keeps a pause
              // longer than maxRetryAfter: one hostile or buggy header must not hold an origin
              // for years. A retry that waited a hint clamped to maxRetryAfter is not held back
              // again by the rest of it either.
              await ops.pacingSet(key, Math.min(until, now + policy.maxRetryAfter), now);
            },
          };
        },
      };
    },
  );
}
