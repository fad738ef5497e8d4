/**
 * The bulkhead, a separate pool per key: at most `maxConcurrent` attempts in flight
 * per key, at most `maxQueue` waiting for a place in first-come order, and the rest refused at once.
 * Like the other guards it is a pure state machine over plain JSON — (state, config, holder) →
 * { …result, state } — so the memory store and a shared store run the same rules. A holder is an
 * opaque id for one attempt; the same holder asking again (after a wake-up) keeps its place.
 */

import type { LoopAttempt, Refusal } from '../engine/attempt-loop';
import { BulkheadRejectedError } from '../errors';
import { randomUuid } from '../events/request-id';
import { invalid, own } from '../policy/normalize';
import type { Clock } from '../time/clock';
import { type GuardValue, type GuardValueOptions, guardHome, guardValue, unsent } from './guard';
import { type GuardStore, memoryOf, type Store } from './store';

/** Bulkhead options. */
export interface BulkheadOptions {
  /**
   * The most attempts in flight at once per key.
   * @example
   * ```ts
   * normalizeBulkhead({ maxConcurrent: 10 });
   * ```
   */
  readonly maxConcurrent: number;
  /**
   * How many attempts may wait for a place (first come, first served) before more are refused with
   * `BulkheadRejectedError`. A wait never outlasts the request's deadline.
   * @default 0: refuse at once when every place is taken (like cockatiel and Polly)
   * @example
   * ```ts
   * normalizeBulkhead({ maxConcurrent: 10, maxQueue: 100 });
   * ```
   */
  readonly maxQueue?: number;
}

/** Bulkhead options, validated. */
export interface BulkheadConfig {
  readonly maxConcurrent: number;
  readonly maxQueue: number;
}

/** One key's bulkhead: who holds a place and who waits, oldest first. Plain JSON. */
export interface BulkheadState {
  readonly active: readonly string[];
  readonly queue: readonly string[];
}

/**
 * What an acquire did: `acquired` (the holder has a place), `queued` (it waits in line, at
 * `position` from 0), or `rejected` (every place and every queue slot is taken).
 */
export type BulkheadAcquire =
  | { readonly result: 'acquired'; readonly state: BulkheadState }
  | { readonly result: 'queued'; readonly state: BulkheadState; readonly position: number }
  | { readonly result: 'rejected'; readonly state: BulkheadState };

const isCount = (value: unknown, min: number): value is number =>
  typeof value === 'number' &&
  (Number.isInteger(value) || value === Number.POSITIVE_INFINITY) &&
  value >= min;

/** Validates options once, at the boundary. */
export function normalizeBulkhead(input: BulkheadOptions, name = 'bulkhead'): BulkheadConfig {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalid(name, 'an object with maxConcurrent', input);
  }
  const maxConcurrent = own(input, 'maxConcurrent');
  const maxQueue = own(input, 'maxQueue') ?? 0;
  // Zero places would refuse every call; Infinity would be no bulkhead at all.
  if (!isCount(maxConcurrent, 1) || maxConcurrent === Number.POSITIVE_INFINITY) {
    throw invalid(`${name}.maxConcurrent`, 'a positive integer', maxConcurrent);
  }
  if (!isCount(maxQueue, 0)) {
    throw invalid(`${name}.maxQueue`, 'a non-negative integer or Infinity', maxQueue);
  }
  return { maxConcurrent, maxQueue };
}

/** A key nobody holds or waits for. */
export function bulkheadInit(): BulkheadState {
  return { active: [], queue: [] };
}

/**
 * Gives `holder` a place if one is free and nobody queued before it, else keeps or puts it in the
 * queue, else rejects it. Asking again is safe: a holder with a place keeps it, a queued one keeps
 * its position until the places before it are taken.
 */
export function bulkheadAcquire(
  state: BulkheadState,
  config: BulkheadConfig,
  holder: string,
): BulkheadAcquire {
  if (state.active.includes(holder)) return { result: 'acquired', state };
  const position = state.queue.indexOf(holder);
  const free = config.maxConcurrent - state.active.length;
  // First come, first served: a place goes to the holder only when everyone ahead of it has one.
  const ahead = position === -1 ? state.queue.length : position;
  if (free > ahead) {
    return {
      result: 'acquired',
      state: {
        active: [...state.active, holder],
        queue: position === -1 ? state.queue : state.queue.filter((h) => h !== holder),
      },
    };
  }
  if (position !== -1) return { result: 'queued', state, position };
  if (state.queue.length < config.maxQueue) {
    return {
      result: 'queued',
      state: { active: state.active, queue: [...state.queue, holder] },
      position: state.queue.length,
    };
  }
  return { result: 'rejected', state };
}

/** Frees `holder`'s place, or takes it out of the queue (a waiter that gave up). */
export function bulkheadRelease(state: BulkheadState, holder: string): BulkheadState {
  return {
    active: state.active.filter((h) => h !== holder),
    queue: state.queue.filter((h) => h !== holder),
  };
}

/** Whether a key's state says nothing (no holder, no waiter) and can be dropped. */
export function bulkheadIsEmpty(state: BulkheadState): boolean {
  return state.active.length === 0 && state.queue.length === 0;
}

/** `bulkhead()`'s options: the places, the queue, and where the state lives. */
export interface BulkheadValueOptions extends BulkheadOptions, GuardValueOptions {}

/** A bulkhead: give it to one client or several; they share its places. */
export interface Bulkhead extends GuardValue<'bulkhead'> {
  readonly config: BulkheadConfig;
  /** How many attempts hold a place for `key`, and how many wait. Throws for a shared store's. */
  state(key: string): { readonly active: number; readonly queued: number };
}

// A memory table holds one bulkhead per key; its slots are dropped as soon as nobody holds or
// waits (so the sweep never finds one to drop).
const never = () => false;

/** The bulkhead operations of `store`: its own, or this module's rules on a memory store's table. */
export function bulkheadOps(store: GuardStore): Pick<Store, 'bulkheadAcquire' | 'bulkheadRelease'> {
  const memory = memoryOf(store);
  if (!memory) return store as Store;
  const table = memory?.table<BulkheadState, BulkheadConfig>('bulkheads', never);
  const keep = (key: string, state: BulkheadState, config: BulkheadConfig, now: number) => {
    if (bulkheadIsEmpty(state)) table.delete(key);
    else table.set(key, { state, config, last: now, handedOut: true });
  };
  return {
    async bulkheadAcquire(key, config, holder, now) {
      const acquired = bulkheadAcquire(table.get(key)?.state ?? bulkheadInit(), config, holder);
      keep(key, acquired.state, config, now);
      return acquired.result;
    },
    async bulkheadRelease(key, holder, now) {
      const slot = table.get(key);
      if (slot) keep(key, bulkheadRelease(slot.state, holder), slot.config, now);
    },
  };
}

// Bulkhead waiters of this realm, per store and key: a release wakes them to ask again. `gen`
// counts releases, so a release between a 'queued' answer and the wait is not missed; `users`
// counts the attempts in the middle of entering, so the entry is dropped only when nobody needs it.
interface Waiters {
  gen: number;
  users: number;
  readonly wake: Set<() => void>;
}
const waitersByStore = new WeakMap<object, Map<string, Waiters>>();

function joinWaiters(store: object, key: string): Waiters {
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

function leaveWaiters(store: object, key: string, waiters: Waiters): void {
  if (--waiters.users === 0) waitersByStore.get(store)?.delete(key);
}

function notify(store: object, key: string): void {
  const waiters = waitersByStore.get(store)?.get(key);
  if (!waiters) return;
  waiters.gen++;
  for (const wake of [...waiters.wake]) wake();
}

/** Resolves on a local release, or after `pollMs`; rejects when `signal` aborts. */
function wakeOrPoll(
  waiters: Waiters,
  clock: Clock,
  pollMs: number | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
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
    if (pollMs !== undefined) clock.sleep(pollMs, poll.signal).then(done, () => {});
  });
}

/**
 * A bulkhead per key (by default per origin): at most `maxConcurrent` attempts in flight and
 * `maxQueue` waiting (first come, first served, never past the deadline; the wait is reported with
 * reason `bulkhead`); beyond that, `BulkheadRejectedError` with nothing sent.
 *
 * @example
 * ```ts
 * const pool = bulkhead({ maxConcurrent: 10, maxQueue: 50 });
 * const api = retryFetch(fetch, { bulkhead: pool });
 * pool.state('https://api.example'); // { active: 0, queued: 0 }
 * ```
 */
export function bulkhead(options: BulkheadValueOptions): Bulkhead {
  const config = Object.freeze(normalizeBulkhead(options));
  const home = guardHome('bulkhead', options);
  return guardValue<'bulkhead', Bulkhead>(
    {
      kind: 'bulkhead',
      config,
      state(key) {
        const state = home.table<BulkheadState, BulkheadConfig>('bulkheads', never)?.get(key)?.state;
        return { active: state?.active.length ?? 0, queued: state?.queue.length ?? 0 };
      },
    },
    (binding) => {
      const store = home.forClient(binding);
      const ops = bulkheadOps(store);
      const pollMs = (store as Partial<Store>).pollMs;
      return {
        kind: 'bulkhead',
        keyOf: home.keyFor(binding),
        session({ key, policy, label, waited }) {
          const { clock } = policy;
          let holder: string | undefined;
          const queueFor = async (attempt: LoopAttempt, waiters: Waiters): Promise<Refusal | undefined> => {
            const id = randomUuid();
            const since = clock.now();
            let queued = false;
            for (;;) {
              const gen = waiters.gen;
              const result = await ops.bulkheadAcquire(key, config, id, clock.now());
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
                await wakeOrPoll(waiters, clock, pollMs, attempt.signal);
              } catch (error) {
                // Gave up waiting (abort, deadline): what it waited is a wait; and it leaves the
                // queue so the next in line moves up.
                waited(attempt.attempt, 'bulkhead', since);
                await ops.bulkheadRelease(key, id, clock.now());
                notify(store, key);
                throw error;
              }
            }
          };
          return {
            async admit(attempt) {
              const waiters = joinWaiters(store, key);
              try {
                return await queueFor(attempt, waiters);
              } finally {
                leaveWaiters(store, key, waiters);
              }
            },
            release() {
              if (holder === undefined) return undefined;
              const id = holder;
              holder = undefined;
              return ops.bulkheadRelease(key, id, clock.now()).then(() => notify(store, key));
            },
          };
        },
      };
    },
  );
}
