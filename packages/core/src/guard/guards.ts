/**
 * The guards of DESIGN §7 as the attempt loop sees them: options resolved once, then hooks run
 * around each attempt in the order of DESIGN §7 — pacing and rate limiter, bulkhead, breaker before
 * the send; the breaker told the attempt's health after it; the budget asked before a retry. Both
 * `retry()` and the HTTP engine use this module, so a guard behaves the same for any operation.
 */

import type { GuardWaitReason, Health, LoopAttempt, Refusal } from '../engine/attempt-loop';
import {
  BulkheadRejectedError,
  CircuitOpenError,
  RateLimitedError,
  RetryBudgetExhaustedError,
  type RetrylineErrorDetails,
} from '../errors';
import type { Emit } from '../events/emitter';
import { randomUuid } from '../events/request-id';
import { invalid, own } from '../policy/normalize';
import type { ResolvedPolicy } from '../policy/options';
import {
  type BreakerAdmission,
  type BreakerConfig,
  type BreakerOptions,
  type BreakerRecord,
  normalizeBreaker,
} from './breaker';
import { type BulkheadConfig, type BulkheadOptions, normalizeBulkhead } from './bulkhead';
import {
  BUDGET_DEFAULTS,
  normalizeBudget,
  type RetryBudgetConfig,
  type RetryBudgetOptions,
} from './retry-budget';
import { memoryFastPath, memoryStore, type Store } from './store';
import { normalizeBucket, type TokenBucketConfig, type TokenBucketOptions } from './token-bucket';

/** Rate-limiter options: a token bucket, and what to do without a token. */
export interface LimiterOptions extends TokenBucketOptions {
  /** `'wait'` for a token (never past the deadline) or `'reject'` with `RateLimitedError`. @default 'wait' */
  readonly mode?: 'wait' | 'reject';
}

/** The guard options every entry point takes (DESIGN §7). */
export interface GuardOptions {
  /**
   * A circuit breaker per guard key (by default per origin): once the key keeps failing, calls
   * fail fast with `CircuitOpenError` (no send) until a trial call succeeds. `true` takes the defaults.
   * @default off
   * @example
   * ```ts
   * retryFetch(fetch, { breaker: { consecutiveFailures: 5, openMs: 10_000 } });
   * ```
   */
  breaker?: boolean | BreakerOptions;
  /**
   * A retry budget per guard key: retries stay within `ratio` of requests (plus a floor of
   * `minPerSecond`), so a failing dependency is not hit by a retry storm; a spent budget stops with
   * `RetryBudgetExhaustedError`. The first attempt is never refused.
   * @default HTTP clients: on (ratio 0.1, windowMs 10 000, minPerSecond 10); `retry()`: off
   * @example
   * ```ts
   * retryFetch(fetch, { budget: { ratio: 0.2 } });
   * ```
   */
  budget?: boolean | RetryBudgetOptions;
  /**
   * A client-side token bucket per guard key: `capacity` is the burst, `refillPerSecond` the rate.
   * Nothing is sent without a token.
   * @default off
   * @example
   * ```ts
   * retryFetch(fetch, { limiter: { capacity: 50, refillPerSecond: 100 } });
   * ```
   */
  limiter?: LimiterOptions;
  /**
   * At most `maxConcurrent` attempts in flight per guard key and `maxQueue` waiting (first come,
   * first served, never past the deadline); beyond that, `BulkheadRejectedError` with nothing sent.
   * @default off
   * @example
   * ```ts
   * retryFetch(fetch, { bulkhead: { maxConcurrent: 10, maxQueue: 50 } });
   * ```
   */
  bulkhead?: BulkheadOptions;
  /**
   * Where guard state lives; clients that share a store share their breakers, budgets, limiters,
   * bulkheads and pacing. Pass the same store to share; a `redisStore` shares across a fleet.
   * @default a memory store of the client's own: no two clients share state unless given one store
   */
  store?: Store;
}

/** Guard options, validated. */
export interface ResolvedGuards {
  readonly breaker: BreakerConfig | undefined;
  readonly budget: RetryBudgetConfig | undefined;
  readonly limiter: { readonly bucket: TokenBucketConfig; readonly mode: 'wait' | 'reject' } | undefined;
  readonly bulkhead: BulkheadConfig | undefined;
  readonly store: Store;
  /** Whether a spent server quota holds back later requests (HTTP only). */
  readonly pacing: boolean;
}

/** `fallback` only for an option that is absent: unlike `??`, `null` stays, to be refused. */
const orDefault = <T, F>(value: T | undefined, fallback: F): T | F =>
  value === undefined ? fallback : value;

/**
 * Validates guard options once; `defaults` says what an absent `budget` and `pacing` mean. Only
 * `undefined` is absent: `null` is a mistake like any other value of the wrong type, never a
 * silent default (as `breaker: null` has always been).
 */
export function resolveGuards(
  options: GuardOptions & { pacing?: boolean },
  defaults: { budget: boolean; pacing: boolean },
): ResolvedGuards {
  const breaker = own(options, 'breaker');
  const budget = orDefault(own(options, 'budget'), defaults.budget);
  const given = own(options, 'store');
  // A client passes its own (withOwnStore); a bare call without one guards only itself.
  const store = given === undefined ? memoryStore() : given;
  if (typeof store !== 'object' || store === null || typeof store.breakerAdmit !== 'function') {
    throw invalid('store', 'a Store (memoryStore() or a shared store)', store);
  }
  const limiter = own(options, 'limiter');
  if (limiter !== undefined && (typeof limiter !== 'object' || limiter === null)) {
    throw invalid('limiter', 'an object with capacity and refillPerSecond', limiter);
  }
  const mode = limiter ? orDefault(own(limiter, 'mode'), 'wait') : 'wait';
  if (mode !== 'wait' && mode !== 'reject') throw invalid('limiter.mode', "one of 'wait', 'reject'", mode);
  const bulkhead = own(options, 'bulkhead');
  const pacing = orDefault(own(options, 'pacing'), defaults.pacing);
  if (typeof pacing !== 'boolean') throw invalid('pacing', 'a boolean', pacing);
  return {
    breaker: breaker === undefined || breaker === false ? undefined : normalizeBreaker(breaker),
    budget: budget === false ? undefined : budget === true ? { ...BUDGET_DEFAULTS } : normalizeBudget(budget),
    limiter: limiter ? { bucket: normalizeBucket(limiter), mode } : undefined,
    bulkhead: bulkhead === undefined ? undefined : normalizeBulkhead(bulkhead),
    store,
    pacing,
  };
}

/** Whether the server's quota, spent `until`, is still spent at `now`. */
const paused = (until: number | undefined, now: number): until is number =>
  until !== undefined && until > now;

/**
 * Admits a request's first attempt at once when nothing can make it wait or refuse it: no breaker,
 * limiter or bulkhead, a store that answers at once, and the origin's quota not spent. The budget
 * then counts the request, and the answer is `true`. `false`, with nothing counted, leaves the
 * admission to {@link guardHooks}.
 */
export function admitFirstAtOnce(guards: ResolvedGuards, key: string, now: number): boolean {
  const { store, budget } = guards;
  if (guards.breaker || guards.limiter || guards.bulkhead) return false;
  if (!budget && !guards.pacing) return true;
  const fast = memoryFastPath(store);
  if (fast === undefined) return false;
  if (guards.pacing && paused(fast.pacingGet(key, now), now)) return false;
  if (budget) fast.countRequest(key, budget, now);
  return true;
}

/** Whether any guard needs a key and store calls. */
export function anyGuard(guards: ResolvedGuards): boolean {
  return Boolean(guards.breaker || guards.budget || guards.limiter || guards.bulkhead || guards.pacing);
}

/** What a guard's refusal says of the request it stopped before `attempt` was sent. */
const unsent = (attempt: LoopAttempt) => ({
  attempts: attempt.attempt - 1,
  totalDelay: attempt.totalDelay,
  cause: attempt.previousError,
});

/** What the hooks need to know about the request they guard. */
export interface GuardContext {
  readonly key: string;
  readonly policy: ResolvedPolicy;
  readonly emit: Emit;
  /** Names the request in messages: `GET https://api.example/x`, `Operation`. */
  readonly label: string;
}

/** The attempt-loop hooks of a guarded request, plus `pace` for what a response says of the quota. */
export interface GuardHooks {
  /** A promise only when a guard waits or the store answers through one. */
  admit(attempt: LoopAttempt): Refusal | undefined | Promise<Refusal | undefined>;
  /** `undefined` when there was nothing to release. */
  release(): Promise<void> | undefined;
  /** `undefined` when no guard counts outcomes (no breaker). */
  record(health: Health): Promise<void> | undefined;
  /**
   * The admitted attempt ends with no outcome to count (an abort, a judge that threw): frees its
   * half-open trial place, if it holds one. `undefined` when there is nothing to free.
   */
  abandon(): Promise<void> | undefined;
  allowRetry(failed: {
    readonly details: RetrylineErrorDetails;
    readonly summary: string;
  }): Promise<Refusal | undefined>;
  /** The server said the quota is spent until `until`: later requests to the key wait for it. */
  pace(until: number): Promise<void>;
  /** What the guards held the last admitted attempt for, once: the loop counts it as a wait. */
  takeWaits(): readonly { readonly guard: GuardWaitReason; readonly ms: number }[] | undefined;
}

// Bulkhead waiters of this realm, per store and key: a release wakes them to ask again. `gen`
// counts releases, so a release between a 'queued' answer and the wait is not missed; `users`
// counts the attempts in the middle of entering, so the entry is dropped only when nobody needs it.
interface Waiters {
  gen: number;
  users: number;
  readonly wake: Set<() => void>;
}
const waitersByStore = new WeakMap<Store, Map<string, Waiters>>();

function joinWaiters(store: Store, key: string): Waiters {
  let byKey = waitersByStore.get(store);
  if (!byKey) {
    byKey = new Map();
    waitersByStore.set(store, byKey);
  }
  let waiters = byKey.get(key);
  if (!waiters) {
    waiters = { gen: 0, users: 0, wake: new Set() };
    byKey.set(key, waiters);
  }
  waiters.users++;
  return waiters;
}

function leaveWaiters(store: Store, key: string, waiters: Waiters): void {
  if (--waiters.users === 0) waitersByStore.get(store)?.delete(key);
}

function notify(store: Store, key: string): void {
  const waiters = waitersByStore.get(store)?.get(key);
  if (!waiters) return;
  waiters.gen++;
  for (const wake of [...waiters.wake]) wake();
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The hooks that run a request's guards in the attempt loop. */
export function guardHooks(guards: ResolvedGuards, context: GuardContext): GuardHooks {
  const { breaker, budget, limiter, bulkhead, store } = guards;
  const { key, policy, emit, label } = context;
  const { clock } = policy;
  let holder: string | undefined;
  // Whether the admitted attempt is one of the breaker's half-open trials.
  let trial = false;

  /** Reports a wait a guard made the attempt sit out (a store that merely took time to answer is none). */
  let waits: Array<{ guard: GuardWaitReason; ms: number }> | undefined;
  const waited = (attempt: number, guard: GuardWaitReason, since: number) => {
    const ms = clock.now() - since;
    if (ms <= 0) return;
    emit({ type: 'guard-wait', attempt, guard, key, waited: ms });
    waits ??= [];
    waits.push({ guard, ms });
  };

  /** Waits until the server's spent quota is back, if it fits the deadline and maxRetryAfter. */
  async function awaitPacing(attempt: LoopAttempt): Promise<Refusal | undefined> {
    const now = clock.now();
    const until = await store.pacingGet(key, now);
    if (!paused(until, now)) return undefined;
    const wait = until - now;
    // Longer than this request may wait (a store shared with a client that allows longer): refused
    // at once, as a hint that long stops retrying, never held.
    if (wait > policy.maxRetryAfter || wait >= attempt.remaining) {
      return {
        outcome: 'rate-limited',
        error: new RateLimitedError(
          `${label} was not sent: the server said the quota for ${key} is spent until ${iso(until)}`,
          { retryAt: until, ...unsent(attempt) },
        ),
      };
    }
    // A spread so the clients held back do not all return at the same instant; it never stretches
    // the pause past maxRetryAfter.
    const spread = policy.random() * Math.min(wait / 10, 1000);
    await clock.sleep(Math.min(wait + spread, policy.maxRetryAfter, attempt.remaining), attempt.signal);
    waited(attempt.attempt, 'pacing', now);
    return undefined;
  }

  async function takeToken(
    attempt: LoopAttempt,
    bucket: TokenBucketConfig,
    mode: 'wait' | 'reject',
    deadlineAt: number,
  ) {
    const since = clock.now();
    let slept = false;
    for (;;) {
      const at = clock.now();
      const take = await store.limiterTake(key, bucket, 1, at);
      if (take.allowed) break;
      const retryAt = take.retryAt ?? at;
      // Against the deadline as it stands now: a token lost to another caller after a wait
      // moves the next one later, perhaps past it.
      if (mode === 'reject' || retryAt >= deadlineAt) {
        return {
          outcome: 'rate-limited' as const,
          error: new RateLimitedError(
            `${label} was not sent: the rate limiter for ${key} has no token until ${iso(retryAt)}`,
            { retryAt, ...unsent(attempt) },
          ),
        };
      }
      await clock.sleep(retryAt - at, attempt.signal);
      slept = true;
    }
    if (slept) waited(attempt.attempt, 'limiter', since);
    return undefined;
  }

  async function enter(attempt: LoopAttempt, config: BulkheadConfig): Promise<Refusal | undefined> {
    const waiters = joinWaiters(store, key);
    try {
      return await queueFor(attempt, config, waiters);
    } finally {
      leaveWaiters(store, key, waiters);
    }
  }

  async function queueFor(
    attempt: LoopAttempt,
    config: BulkheadConfig,
    waiters: Waiters,
  ): Promise<Refusal | undefined> {
    const id = randomUuid();
    const since = clock.now();
    let queued = false;
    for (;;) {
      const gen = waiters.gen;
      const result = await store.bulkheadAcquire(key, config, id, clock.now());
      if (result === 'acquired') {
        holder = id;
        if (queued) waited(attempt.attempt, 'bulkhead', since);
        return undefined;
      }
      if (result === 'rejected') {
        return {
          outcome: 'bulkhead-rejected',
          error: new BulkheadRejectedError(
            `${label} was not sent: the bulkhead for ${key} is full (${config.maxConcurrent} in flight, ${config.maxQueue} waiting)`,
            unsent(attempt),
          ),
        };
      }
      queued = true;
      if (waiters.gen !== gen) continue; // a place was freed while we asked
      try {
        await wakeOrPoll(waiters, attempt.signal);
      } catch (error) {
        // Gave up waiting (abort, deadline): leave the queue so the next in line moves up.
        await store.bulkheadRelease(key, id, clock.now());
        notify(store, key);
        throw error;
      }
    }
  }

  /** Resolves on a local release, or after the store's poll interval; rejects when `signal` aborts. */
  function wakeOrPoll(waiters: Waiters, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const poll = new AbortController();
      const done = () => {
        waiters.wake.delete(done);
        signal?.removeEventListener('abort', onAbort);
        poll.abort();
        resolve();
      };
      const onAbort = () => {
        waiters.wake.delete(done);
        poll.abort();
        reject(signal?.reason);
      };
      waiters.wake.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
      if (store.pollMs !== undefined) clock.sleep(store.pollMs, poll.signal).then(done, () => {});
    });
  }

  /**
   * Every guard in order, waiting where one says wait (pacing, limiter, bulkhead). `deadlineAt`:
   * the attempt's `remaining` was measured as admission began.
   */
  async function admitWithWaits(
    attempt: LoopAttempt,
    deadlineAt = clock.now() + attempt.remaining,
  ): Promise<Refusal | undefined> {
    if (guards.pacing) {
      const refused = await awaitPacing(attempt);
      if (refused) return refused;
    }
    if (limiter) {
      const refused = await takeToken(attempt, limiter.bucket, limiter.mode, deadlineAt);
      if (refused) return refused;
    }
    if (bulkhead) {
      const refused = await enter(attempt, bulkhead);
      if (refused) return refused;
    }
    return budgetAndBreaker(attempt);
  }

  /** The budget counts a first attempt, then the breaker admits or refuses; at once when the store answers at once. */
  function budgetAndBreaker(
    attempt: LoopAttempt,
    now = clock.now(),
  ): Refusal | undefined | Promise<Refusal | undefined> {
    const counted = attempt.attempt === 1 && budget ? store.budgetRequest(key, budget, now) : undefined;
    if (!breaker) return counted instanceof Promise ? counted.then(() => undefined) : undefined;
    const admit = () => {
      const admission = store.breakerAdmit(key, breaker, now);
      return admission instanceof Promise
        ? admission.then((answer) => breakerSays(attempt, answer))
        : breakerSays(attempt, admission);
    };
    return counted instanceof Promise ? counted.then(admit) : admit();
  }

  /** The breaker's answer as the loop takes it: nothing when allowed, else a refusal (place freed). */
  function breakerSays(
    attempt: LoopAttempt,
    admission: BreakerAdmission,
  ): Refusal | undefined | Promise<Refusal | undefined> {
    if (admission.allowed && admission.transition) {
      emit({ type: 'breaker-state', key, ...admission.transition });
    }
    if (admission.allowed) {
      trial = admission.state.state === 'half-open';
      return undefined;
    }
    const refusal: Refusal = {
      outcome: 'breaker-open',
      error: new CircuitOpenError(
        `${label} was not sent: the circuit breaker for ${key} is open until ${iso(admission.retryAt)}`,
        { retryAt: admission.retryAt, ...unsent(attempt) },
      ),
    };
    const released = release();
    return released ? released.then(() => refusal) : refusal;
  }

  /** Counts how the admitted attempt ended with the breaker; the attempt holds no trial after. */
  function record(health: Health): Promise<void> | undefined {
    if (!breaker) return undefined;
    trial = false;
    const report = (recorded: BreakerRecord) => {
      if (recorded.transition) emit({ type: 'breaker-state', key, ...recorded.transition });
    };
    const recorded = store.breakerRecord(key, breaker, health, clock.now());
    if (recorded instanceof Promise) return recorded.then(report);
    report(recorded);
    return undefined;
  }

  /** Frees the attempt's bulkhead place; `undefined` (nothing to wait for) when it held none. */
  function release(): Promise<void> | undefined {
    if (holder === undefined) return undefined;
    const id = holder;
    holder = undefined;
    return store.bulkheadRelease(key, id, clock.now()).then(() => notify(store, key));
  }

  return {
    release,
    takeWaits() {
      const taken = waits;
      waits = undefined;
      return taken;
    },
    admit(attempt) {
      // DESIGN §7 order: pacing and limiter, bulkhead, then breaker. Nothing is sent without a pass.
      // Without a limiter or bulkhead, and with a store that answers at once (the memory store),
      // admission takes no turn of the event loop: the happy path's most frequent cost.
      if (limiter || bulkhead) return admitWithWaits(attempt);
      if (!guards.pacing) return budgetAndBreaker(attempt);
      const now = clock.now();
      const until = store.pacingGet(key, now);
      if (until instanceof Promise) {
        return until.then((at) =>
          paused(at, now) ? admitWithWaits(attempt, now + attempt.remaining) : budgetAndBreaker(attempt),
        );
      }
      return paused(until, now) ? admitWithWaits(attempt) : budgetAndBreaker(attempt, now);
    },
    record,
    abandon() {
      if (!trial) return undefined;
      return record('ignored');
    },
    async allowRetry({ details, summary }) {
      if (!budget) return undefined;
      const decision = await store.budgetRetry(key, budget, clock.now());
      emit({ type: 'budget', key, remaining: decision.remaining, allowed: decision.allowed });
      if (decision.allowed) return undefined;
      return {
        outcome: 'budget-exhausted',
        error: new RetryBudgetExhaustedError(
          `${label} was not retried: the retry budget for ${key} is spent (retries are kept within ${budget.ratio * 100}% of requests): ${summary}`,
          details,
        ),
      };
    },
    async pace(until) {
      const now = clock.now();
      // Capped before the store sees it, so no store (memory or shared) keeps a pause longer than
      // maxRetryAfter: one hostile or buggy header must not hold an origin for years. A retry that
      // waited a hint clamped to maxRetryAfter is not held back again by the rest of it either.
      await store.pacingSet(key, Math.min(until, now + policy.maxRetryAfter), now);
    },
  };
}
