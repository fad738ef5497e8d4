/**
 * The bulkhead of DESIGN §7 (seed 003's separate pools): at most `maxConcurrent` attempts in flight
 * per key, at most `maxQueue` waiting for a place in first-come order, and the rest refused at once.
 * Like the other guards it is a pure state machine over plain JSON — (state, config, holder) →
 * { …result, state } — so the memory store and a shared store run the same rules. A holder is an
 * opaque id for one attempt; the same holder asking again (after a wake-up) keeps its place.
 */

import { invalid, own } from '../policy/normalize';

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

/** Validates options once, at the boundary (CONVENTIONS §3). */
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
