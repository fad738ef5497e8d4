import type { Clock } from '@retryline/core';

/**
 * A discrete-event clock for simulations: time moves only inside {@link SimClock.run}, jumping from
 * one due event to the next. Core's `virtualClock` is made for tests of a handful of sleeps (it scans
 * its sleepers and waits a `setTimeout(0)` per step); a storm holds tens of thousands of them, so
 * here they sit in a binary heap ordered by (time, sequence) — O(log n) to add, fire or cancel — and
 * a step settles with `setImmediate`, which runs once every pending promise continuation has run.
 */
export interface SimClock extends Clock {
  /**
   * Calls `callback` synchronously when time reaches `now() + delayMs`, in the same (time, sequence)
   * order as sleeps. Returns a function that cancels it. For models (a simulated server) that need
   * no promise per event.
   */
  schedule(delayMs: number, callback: () => void): () => void;
  /**
   * Fires everything due up to `untilMs`, instant by instant: all events due at one instant fire in
   * order, then the promise continuations they woke run (and schedule more), then time moves on.
   * Ends with the clock at `untilMs` (never moved back; at the last event for `Infinity`); later
   * events stay pending.
   */
  run(untilMs: number): Promise<void>;
  /** How many sleeps and scheduled callbacks are waiting. */
  pending(): number;
}

interface Entry {
  readonly at: number;
  readonly seq: number;
  readonly fire: () => void;
  /** Position in the heap; -1 once fired or cancelled. */
  index: number;
}

// Lets every continuation woken so far run: setImmediate's callback comes after the microtask queue
// has drained, including the microtasks those continuations queue in turn.
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Creates a {@link SimClock} starting at `start` milliseconds.
 *
 * @example
 * ```ts
 * const clock = simClock();
 * const done = clock.sleep(1_000).then(() => clock.now()); // resolves with 1000
 * await clock.run(5_000);
 * ```
 */
export function simClock(start = 0): SimClock {
  let now = start;
  let seq = 0;
  const heap: Entry[] = [];

  const before = (a: Entry, b: Entry) => a.at < b.at || (a.at === b.at && a.seq < b.seq);
  const place = (entry: Entry, index: number) => {
    heap[index] = entry;
    entry.index = index;
  };
  const siftUp = (entry: Entry, from: number) => {
    let index = from;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = heap[parentIndex] as Entry;
      if (!before(entry, parent)) break;
      place(parent, index);
      index = parentIndex;
    }
    place(entry, index);
  };
  const siftDown = (entry: Entry, from: number) => {
    let index = from;
    const size = heap.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const right = left + 1;
      let child = heap[left] as Entry;
      let childIndex = left;
      if (right < size && before(heap[right] as Entry, child)) {
        child = heap[right] as Entry;
        childIndex = right;
      }
      if (!before(child, entry)) break;
      place(child, index);
      index = childIndex;
    }
    place(entry, index);
  };
  const push = (entry: Entry) => {
    heap.push(entry);
    siftUp(entry, heap.length - 1);
  };
  const remove = (entry: Entry) => {
    const index = entry.index;
    if (index < 0) return;
    entry.index = -1;
    const last = heap.pop() as Entry;
    if (last === entry) return;
    // The last entry fills the hole, then moves whichever way restores the order.
    if (index > 0 && before(last, heap[(index - 1) >> 1] as Entry)) siftUp(last, index);
    else siftDown(last, index);
  };
  const add = (delayMs: number, fire: () => void): Entry => {
    // NaN or a negative delay means "now", as with setTimeout.
    const entry: Entry = { at: now + Math.max(delayMs || 0, 0), seq: seq++, fire, index: -1 };
    push(entry);
    return entry;
  };

  return {
    now: () => now,
    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        const onAbort = () => {
          remove(entry);
          reject(signal?.reason);
        };
        const entry = add(ms, () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        });
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    schedule(delayMs, callback) {
      const entry = add(delayMs, callback);
      return () => remove(entry);
    },
    async run(untilMs) {
      await settle();
      for (;;) {
        const first = heap[0];
        if (first === undefined || first.at > untilMs) break;
        now = first.at;
        // Everything due at this instant fires before any continuation runs, including entries
        // that these synchronous callbacks add for the same instant.
        for (let due = heap[0]; due !== undefined && due.at <= now; due = heap[0]) {
          remove(due);
          due.fire();
        }
        await settle();
      }
      if (untilMs > now && Number.isFinite(untilMs)) now = untilMs;
      await settle();
    },
    pending: () => heap.length,
  };
}
