import type { Health } from '../engine/outcome';
import { invalid, own } from '../policy/normalize';
import type { BreakerAdmission, BreakerConfig, BreakerOutcome, BreakerRecord } from './breaker';
import type { BulkheadAcquire, BulkheadConfig } from './bulkhead';
import type { GateVerdict, RecoveryGateConfig } from './recovery-gate';
import type { BudgetDecision, BudgetRecord, RetryBudgetConfig } from './retry-budget';
import type { TokenBucketConfig } from './token-bucket';

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
 * - The rules are the pure functions of `breaker.ts`, `retry-budget.ts`, `token-bucket.ts`,
 *   `bulkhead.ts` and `recovery-gate.ts`; their states are plain JSON, so a store can keep them as
 *   strings.
 * - Idle state should disappear by itself (expiry, sweeping): a key seen once must not stay forever.
 * - Errors reject the operation's promise; Retryline then fails the request with that error. A
 *   shared store that cannot reach its backend should rather answer from a local memory store
 *   (guards degrade to per-process, never off), as `redisStore` does.
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
   * The recovery gate: a retry to `key` asks to go (`gateAdmit`); keeps the state it leaves (a
   * `probe` verdict takes the key's one probe place until `now + leaseMs`). A key with no state
   * answers `go` and needs none kept.
   *
   * Optional, with {@link Store.gateRecord} (a store has both or neither): a store without them
   * keeps each key's gate state in the memory of the process that asks, so the processes sharing
   * it do not share an origin's health (what stores written before the gate do). The parked
   * retries themselves always wait in their own process.
   */
  gateAdmit?(key: string, config: RecoveryGateConfig, now: number, leaseMs: number): StoreAnswer<GateVerdict>;
  /**
   * An attempt to `key` ended (`probe`: the attempt the key's probe place was given to; `probeWait`:
   * how long a failed probe puts off the next): applies `gateRecord` and keeps the state. A
   * success deletes the key's state (a fresh one says the same), answering whether the key was
   * held; on a key with no state it is a no-op answering `recovered: false`. `failures` is the
   * key's failed attempts in a row once the outcome is counted (0 after a success): the
   * `retry-parked` event reports it.
   */
  gateRecord?(
    key: string,
    config: RecoveryGateConfig,
    health: Health,
    probe: boolean,
    probeWait: number,
    now: number,
  ): StoreAnswer<{ readonly recovered: boolean; readonly failures: number }>;
  /**
   * How often (ms) a queued bulkhead waiter asks again. A store that holders in other processes
   * share sets it, since their releases wake nobody here; the memory store has none.
   */
  readonly pollMs?: number;
}

// State untouched this long is swept, when dropping it loses nothing a fresh state would not say.
export const IDLE_MS = 60_000;
// The sweep runs once every this many operations: amortised O(1), no timer.
const SWEEP_EVERY = 1000;

/** How many keys a memory store holds per guard: for leak checks and dashboards. */
export interface MemoryStoreSize {
  readonly breakers: number;
  readonly budgets: number;
  readonly limiters: number;
  readonly bulkheads: number;
  readonly pacing: number;
  readonly gates: number;
  readonly throttles: number;
}

/**
 * Guard state in this process's memory: what a client keeps its guards in unless given another
 * store. It holds state only for the guards a client uses, each guard bringing its own rules, so a
 * bundle carries only the guards it imports. Pass one `memoryStore()` to several clients to share
 * their guards' state in one process; a shared store (`redisStore`) shares it across a fleet.
 */
export interface MemoryStore {
  /** How many keys the store holds per guard. */
  size(): MemoryStoreSize;
}

/** Where a guard keeps its state: a shared {@link Store}, or a {@link memoryStore}. */
export type GuardStore = Store | MemoryStore;

/** One key's state in a memory table. */
export interface Slot<S, C> {
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

/** Whether a key's slot has been idle long enough to drop (nothing lost that a fresh state would not say). */
export type IdleRule<S, C> = (slot: Slot<S, C>, now: number) => boolean;

/** A memory store's tables, one per guard, each made by the guard that uses it. */
export interface Memory {
  /** The table of guard `name`, made on first use; `idle` says which of its keys a sweep drops. */
  table<S, C>(name: keyof MemoryStoreSize, idle: IdleRule<S, C>): Map<string, Slot<S, C>>;
  /** Counts one operation: every {@link SWEEP_EVERY}th sweeps every table. */
  tick(now: number): void;
}

// Where a memory store keeps its tables: a property of its own (not enumerable, so a copy of the
// store is no memory store), read faster than a WeakMap entry. A registered symbol, so that a
// memory store made by one copy of this package (ESM, CJS) works with a client of another.
const MEMORY = Symbol.for('retryline.memory');
// Marks a memory store a client made for itself, as opposed to one its caller gave it.
const CLIENT_OWNED = Symbol.for('retryline.clientOwned');

/** A {@link memoryStore}'s tables, `undefined` for any other store. */
export const memoryOf = (store: unknown): Memory | undefined =>
  typeof store === 'object' && store !== null && Object.hasOwn(store, MEMORY)
    ? (store as Record<symbol, Memory>)[MEMORY]
    : undefined;

/**
 * A memory store. Idle keys are swept every {@link SWEEP_EVERY} operations by each guard's own
 * rule (a full token bucket untouched for a minute, a budget untouched for a minute and its whole
 * window, a breaker untouched for a minute and its openMs, expired pacing, a bulkhead nobody holds).
 *
 * @example
 * ```ts
 * const store = memoryStore();
 * const api = retryFetch(fetch, { store }); // these two clients share one retry budget per origin
 * const admin = retryFetch(fetch, { store });
 * ```
 */
export function memoryStore(): MemoryStore {
  const tables = new Map<
    string,
    { map: Map<string, Slot<unknown, unknown>>; idle: IdleRule<unknown, unknown> }
  >();
  let operations = 0;
  const memory: Memory = {
    table<S, C>(name: keyof MemoryStoreSize, idle: IdleRule<S, C>) {
      let table = tables.get(name);
      if (!table) {
        table = { map: new Map(), idle: idle as IdleRule<unknown, unknown> };
        tables.set(name, table);
      }
      return table.map as Map<string, Slot<S, C>>;
    },
    tick(now) {
      if (++operations % SWEEP_EVERY !== 0) return;
      for (const { map, idle } of tables.values()) {
        for (const [key, slot] of map) if (idle(slot, now)) map.delete(key);
      }
    },
  };
  const count = (name: keyof MemoryStoreSize) => tables.get(name)?.map.size ?? 0;
  const store: MemoryStore = {
    size: () => ({
      breakers: count('breakers'),
      budgets: count('budgets'),
      limiters: count('limiters'),
      bulkheads: count('bulkheads'),
      pacing: count('pacing'),
      gates: count('gates'),
      throttles: count('throttles'),
    }),
  };
  Object.defineProperty(store, MEMORY, { value: memory });
  // Not a plain object: option mergers that deep-copy plain objects (axios's mergeConfig) keep it.
  Object.defineProperty(store, Symbol.toStringTag, { value: 'MemoryStore' });
  return store;
}

/** `value` when it is a store (a memory store, or an object with the Store operations); else refused. */
export function expectStore(name: string, value: unknown): GuardStore {
  if (
    typeof value !== 'object' ||
    value === null ||
    (!memoryOf(value) && typeof (value as { breakerAdmit?: unknown }).breakerAdmit !== 'function')
  ) {
    throw invalid(name, 'a store (memoryStore() or a shared store)', value);
  }
  return value as GuardStore;
}

/** Keeps `state` as the key's state: the slot updated in place (no allocation, no second hash). */
export function keep<S, C>(
  map: Map<string, Slot<S, C>>,
  key: string,
  slot: Slot<S, C> | undefined,
  state: S,
  config: C,
  now: number,
  handedOut: boolean,
): void {
  if (slot) {
    slot.state = state;
    slot.config = config;
    slot.last = now;
    slot.handedOut = handedOut;
  } else map.set(key, { state, config, last: now, handedOut });
}

/** One operation on one key of a memory table: the pure rule applied to its state (or a fresh one), kept. */
export function step<S, C, R extends { readonly state: S }>(
  memory: Memory,
  map: Map<string, Slot<S, C>>,
  key: string,
  config: C,
  now: number,
  fresh: () => S,
  rule: (state: S) => R,
): R {
  memory.tick(now);
  const slot = map.get(key);
  const result = rule(slot ? slot.state : fresh());
  keep(map, key, slot, result.state, config, now, true);
  return result;
}

/**
 * Options with the store their client owns: the caller's, or a memory store of the client's own
 * (state belongs to the client that made it; nothing is shared through a hidden
 * process-wide default). Clients call this once, at creation, so that a request's own options
 * (`init.retry`, axios's `config.retry`) override policy, never state.
 */
export function withOwnStore<T extends { store?: GuardStore }>(options: T): T {
  return options.store === undefined ? { ...options, store: clientStore() } : options;
}

/** A memory store a client (or a bare call) makes for itself. */
export function clientStore(): MemoryStore {
  const store = memoryStore();
  Object.defineProperty(store, CLIENT_OWNED, { value: true });
  return store;
}

/** Whether `store` is a memory store a client made for itself rather than one its caller gave it. */
export const isClientOwned = (store: GuardStore | undefined): boolean =>
  store !== undefined && Object.hasOwn(store, CLIENT_OWNED);

/**
 * A request's own options change policy, never whose state it counts in: a `store` of
 * its own is refused. (Guard values are fine: each is one guard, wherever it is given.)
 */
export function refuseStore(overrides: object): void {
  const store = own(overrides as { store?: unknown }, 'store');
  if (store !== undefined) {
    throw invalid(
      'store',
      "given when the client is made: a request's own options cannot move its guard state",
      store,
    );
  }
}
