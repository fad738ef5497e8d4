import { MAX_DELAY_LIMIT } from '../policy/normalize';
import {
  type BreakerAdmission,
  type BreakerConfig,
  type BreakerOutcome,
  type BreakerRecord,
  type BreakerState,
  breakerAdmit,
  breakerRecord,
  initialBreakerState,
} from './breaker';
import {
  type BulkheadAcquire,
  type BulkheadConfig,
  type BulkheadState,
  bulkheadAcquire,
  bulkheadInit,
  bulkheadIsEmpty,
  bulkheadRelease,
} from './bulkhead';
import {
  type BudgetDecision,
  type BudgetRecord,
  type BudgetState,
  budgetCountInPlace,
  budgetInit,
  budgetRecordRequest,
  budgetTryRetry,
  type RetryBudgetConfig,
} from './retry-budget';
import { type BucketState, bucketInit, bucketTake, isIdle, type TokenBucketConfig } from './token-bucket';

/**
 * Where guard state lives: implement it to keep Retryline's guards somewhere else (a database, a
 * shared cache). The contract:
 *
 * - Every operation is async and atomic on its own: two callers never see a half-applied change
 *   (the memory store runs each synchronously; a Redis store runs one Lua script per operation).
 * - Keys are opaque strings (by default one per origin); configs come validated and may differ
 *   between callers of one key (each operation applies the config it is given).
 * - `now` is the caller's clock in epoch milliseconds. A shared store may use its own clock instead
 *   (Redis `TIME`) so that hosts with skewed clocks agree; it must then use it for every operation.
 * - The rules are the pure functions of `breaker.ts`, `retry-budget.ts`, `token-bucket.ts` and
 *   `bulkhead.ts`; their states are plain JSON, so a store can keep them as strings.
 * - Idle state should disappear by itself (expiry, sweeping): a key seen once must not stay forever.
 * - Errors reject the operation's promise; Retryline then fails the request with that error. A
 *   shared store that cannot reach its backend should rather answer from a local memory store
 *   (DESIGN §7: guards degrade to per-process, never off), as `redisStore` does.
 *
 * The shared guard test suite (test/guards/store-contract.ts) runs against every implementation.
 */
/**
 * What a store operation answers: a value, or a promise of one. The operations every request makes
 * (breaker admission and record, the budget's request count, the pacing check) may answer
 * synchronously, as the memory store does, which spares each request turns of the event loop; a
 * shared store answers with promises.
 */
export type StoreAnswer<T> = T | Promise<T>;

export interface Store {
  breakerAdmit(key: string, config: BreakerConfig, now: number): StoreAnswer<BreakerAdmission>;
  breakerRecord(
    key: string,
    config: BreakerConfig,
    outcome: BreakerOutcome,
    now: number,
  ): StoreAnswer<BreakerRecord>;
  budgetRequest(key: string, config: RetryBudgetConfig, now: number): StoreAnswer<BudgetRecord>;
  budgetRetry(key: string, config: RetryBudgetConfig, now: number): Promise<BudgetDecision>;
  /** Takes `n` tokens from the key's bucket, or says when they will be there. */
  limiterTake(
    key: string,
    config: TokenBucketConfig,
    n: number,
    now: number,
  ): Promise<{ readonly allowed: boolean; readonly retryAt?: number }>;
  /**
   * Gives `holder` (one attempt's opaque id) a place in the key's bulkhead, queues it, or rejects it
   * (see `bulkheadAcquire`). A queued holder asks again when woken and keeps its place in line.
   */
  bulkheadAcquire(
    key: string,
    config: BulkheadConfig,
    holder: string,
    now: number,
  ): Promise<BulkheadAcquire['result']>;
  /** Frees `holder`'s place or queue slot; releasing an unknown holder does nothing. */
  bulkheadRelease(key: string, holder: string, now: number): Promise<void>;
  /**
   * Server-informed pacing: the server said the key's quota is spent until `until` (a 429 with
   * Retry-After, `RateLimit: r=0`). Keeps the later of the stored and the given time. Guards pass
   * an `until` already capped at `now` + the request's `maxRetryAfter` (so at most
   * `now + MAX_DELAY_LIMIT`), never a server's raw value: a store may size expiries by it.
   */
  pacingSet(key: string, until: number, now: number): Promise<void>;
  /** When the key's quota is back, if it is still spent at `now`. */
  pacingGet(key: string, now: number): StoreAnswer<number | undefined>;
  /**
   * How often (ms) a queued bulkhead waiter asks again. A store that holders in other processes
   * share sets it, since their releases wake nobody here; the memory store has none.
   */
  readonly pollMs?: number;
}

// State untouched this long is swept, when dropping it loses nothing a fresh state would not say.
const IDLE_MS = 60_000;
// The sweep runs once every this many operations: amortised O(1), no timer.
const SWEEP_EVERY = 1000;

/** How many keys a memory store holds per guard: for leak checks and dashboards. */
export interface MemoryStoreSize {
  readonly breakers: number;
  readonly budgets: number;
  readonly limiters: number;
  readonly bulkheads: number;
  readonly pacing: number;
}

/**
 * The memory store: a {@link Store} that can also say how much it holds, and answers the operations
 * every request makes synchronously.
 */
export interface MemoryStore extends Store {
  breakerAdmit(key: string, config: BreakerConfig, now: number): BreakerAdmission;
  breakerRecord(key: string, config: BreakerConfig, outcome: BreakerOutcome, now: number): BreakerRecord;
  budgetRequest(key: string, config: RetryBudgetConfig, now: number): BudgetRecord;
  pacingGet(key: string, now: number): number | undefined;
  size(): MemoryStoreSize;
}

interface Slot<S, C> {
  state: S;
  config: C;
  /** When an operation last touched the key. */
  last: number;
  /**
   * Whether `state` went out in an operation's result. A retry budget's state that did not may be
   * counted into in place; every other state is only ever replaced.
   */
  handedOut: boolean;
}

/** What the request engine's first attempt asks of a memory store: answers at once, nothing handed out. */
export interface MemoryFastPath {
  /** Until when the key's quota is spent, if it is. */
  pacingGet(key: string, now: number): number | undefined;
  /** Counts a first attempt in the key's retry budget, in place when it can. */
  countRequest(key: string, config: RetryBudgetConfig, now: number): void;
}

// Where a memory store keeps its fast path: a property of its own (not enumerable, so a copy of
// the store is no memory store), read per request faster than a WeakMap entry.
const FAST_PATH = Symbol('retryline.memoryFastPath');

/** A {@link memoryStore}'s fast path, `undefined` for any other store. */
export const memoryFastPath = (store: Store): MemoryFastPath | undefined =>
  Object.hasOwn(store, FAST_PATH)
    ? (store as unknown as Record<symbol, MemoryFastPath>)[FAST_PATH]
    : undefined;

/**
 * The embedded default: guard state in this process's memory, each operation synchronous (so
 * atomic); the per-request operations answer at once, the rest through a promise. Clients that share one `memoryStore()` share one breaker, one budget,
 * one limiter and one bulkhead per key. Idle keys are swept every {@link SWEEP_EVERY} operations:
 * a full token bucket untouched for a minute; a budget untouched for a minute and its whole window;
 * a closed breaker untouched for a minute, an open or half-open one untouched for its openMs and a
 * minute (a key quiet that long starts afresh, as a Redis key expires); expired pacing. Bulkheads are dropped as soon as nobody holds or waits.
 */
export function memoryStore(): MemoryStore {
  const breakers = new Map<string, Slot<BreakerState, BreakerConfig>>();
  const budgets = new Map<string, Slot<BudgetState, RetryBudgetConfig>>();
  const buckets = new Map<string, Slot<BucketState, TokenBucketConfig>>();
  const bulkheads = new Map<string, BulkheadState>();
  const paused = new Map<string, number>();
  let operations = 0;

  const sweep = (now: number) => {
    if (++operations % SWEEP_EVERY !== 0) return;
    for (const [key, slot] of buckets) if (isIdle(slot.state, slot.config, now, IDLE_MS)) buckets.delete(key);
    for (const [key, slot] of budgets)
      if (now - slot.last >= Math.max(IDLE_MS, slot.config.windowMs)) budgets.delete(key);
    for (const [key, slot] of breakers) {
      // An open or half-open breaker is kept through its openMs, then forgotten like a closed one.
      const kept = IDLE_MS + (slot.state.state === 'closed' ? 0 : slot.config.openMs);
      if (now - slot.last >= kept) breakers.delete(key);
    }
    for (const [key, until] of paused) if (until <= now) paused.delete(key);
  };
  // One operation on one key: the pure rule applied to the key's state (or a fresh one), kept.
  const step = <S, C, R extends { readonly state: S }>(
    map: Map<string, Slot<S, C>>,
    key: string,
    config: C,
    now: number,
    fresh: () => S,
    rule: (state: S) => R,
  ): R => {
    sweep(now);
    const slot = map.get(key);
    const result = rule(slot ? slot.state : fresh());
    keep(map, key, slot, result.state, config, now, true);
    return result;
  };
  // The key's slot is updated in place: no allocation, no second hash of the key.
  const keep = <S, C>(
    map: Map<string, Slot<S, C>>,
    key: string,
    slot: Slot<S, C> | undefined,
    state: S,
    config: C,
    now: number,
    handedOut: boolean,
  ) => {
    if (slot) {
      slot.state = state;
      slot.config = config;
      slot.last = now;
      slot.handedOut = handedOut;
    } else map.set(key, { state, config, last: now, handedOut });
  };
  // A bulkhead nobody holds or waits for is dropped at once.
  const keepBulkhead = (key: string, state: BulkheadState) => {
    if (bulkheadIsEmpty(state)) bulkheads.delete(key);
    else bulkheads.set(key, state);
  };

  const store: MemoryStore = {
    breakerAdmit(key, config, now) {
      return step(breakers, key, config, now, initialBreakerState, (state) =>
        breakerAdmit(state, config, now),
      );
    },
    breakerRecord(key, config, outcome, now) {
      return step(breakers, key, config, now, initialBreakerState, (state) =>
        breakerRecord(state, config, outcome, now),
      );
    },
    budgetRequest(key, config, now) {
      return step(budgets, key, config, now, budgetInit, (state) => budgetRecordRequest(state, config, now));
    },
    async budgetRetry(key, config, now) {
      return step(budgets, key, config, now, budgetInit, (state) => budgetTryRetry(state, config, now));
    },
    async limiterTake(key, config, n, now) {
      const result = step(
        buckets,
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
    async bulkheadAcquire(key, config, holder) {
      const acquired = bulkheadAcquire(bulkheads.get(key) ?? bulkheadInit(), config, holder);
      keepBulkhead(key, acquired.state);
      return acquired.result;
    },
    async bulkheadRelease(key, holder) {
      const state = bulkheads.get(key);
      if (state) keepBulkhead(key, bulkheadRelease(state, holder));
    },
    async pacingSet(key, until, now) {
      sweep(now);
      // Negated so that a NaN pauses nothing. The bound is the longest maxRetryAfter there is: a
      // caller that skipped the guards' cap (or passed Infinity) cannot pause a key for longer.
      if (!(until > now)) return;
      paused.set(key, Math.max(paused.get(key) ?? 0, Math.min(until, now + MAX_DELAY_LIMIT)));
    },
    pacingGet(key, now) {
      // Most of the time no key is paused: no lookup at all.
      if (paused.size === 0) return undefined;
      const until = paused.get(key);
      if (until === undefined) return undefined;
      if (until > now) return until;
      paused.delete(key);
      return undefined;
    },
    size: () => ({
      breakers: breakers.size,
      budgets: budgets.size,
      limiters: buckets.size,
      bulkheads: bulkheads.size,
      pacing: paused.size,
    }),
  };
  const fastPath: MemoryFastPath = {
    pacingGet: store.pacingGet,
    countRequest(key, config, now) {
      sweep(now);
      const slot = budgets.get(key);
      if (slot && !slot.handedOut && slot.config === config && budgetCountInPlace(slot.state, config, now)) {
        slot.last = now;
        return;
      }
      const { state } = budgetRecordRequest(slot ? slot.state : budgetInit(), config, now);
      // A fresh state, its newest bucket made just now and handed to nobody: the next request to
      // the key in the same bucket counts into it in place.
      keep(budgets, key, slot, state, config, now, false);
    },
  };
  Object.defineProperty(store, FAST_PATH, { value: fastPath });
  return store;
}

/**
 * Options with the store their client owns: the caller's, or a memory store of the client's own
 * (DESIGN §7: state belongs to the client that made it; nothing is shared through a hidden
 * process-wide default). Clients call this once, at creation, so that a request's own options
 * (`init.retry`, axios's `config.retry`) override policy, never state.
 */
export function withOwnStore<T extends { store?: Store }>(options: T): T {
  return options.store === undefined ? { ...options, store: memoryStore() } : options;
}
