import type { Clock } from './clock';

/**
 * A clock whose time moves only when told to. Sleeps resolve in due order as time is advanced,
 * and the promise continuations they wake run before the clock moves on, so a whole retry
 * sequence plays out in virtual time: no real waiting, no fake timers.
 */
export interface VirtualClock extends Clock {
  /** Moves time forward by `ms`, firing every sleep that falls due on the way, in order. */
  advance(ms: number): Promise<void>;
  /** Advances to each pending sleep in turn until none is left (at most `maxSteps` of them). */
  runAll(maxSteps?: number): Promise<void>;
  /** How many sleeps are waiting. Zero after a finished or aborted retry: nothing leaks. */
  pending(): number;
}

interface Sleeper {
  at: number;
  seq: number;
  wake: () => void;
}

/**
 * Creates a {@link VirtualClock} starting at `start` (epoch milliseconds).
 *
 * @example
 * ```ts
 * const clock = virtualClock();
 * const result = retry(op, { clock, random: seededRandom(1) });
 * await clock.runAll();
 * await result;
 * ```
 */
export function virtualClock(start = 0): VirtualClock {
  let now = start;
  let seq = 0;
  const sleepers: Sleeper[] = [];

  const remove = (sleeper: Sleeper) => {
    const index = sleepers.indexOf(sleeper);
    if (index !== -1) sleepers.splice(index, 1);
  };
  const next = (): Sleeper | undefined => {
    let first: Sleeper | undefined;
    for (const s of sleepers)
      if (!first || s.at < first.at || (s.at === first.at && s.seq < first.seq)) first = s;
    return first;
  };
  // Lets every continuation woken so far run (and schedule its own sleeps) before time moves.
  const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

  const clock: VirtualClock = {
    now: () => now,
    sleep(ms, signal) {
      return new Promise<void>((resolve, reject) => {
        if (signal?.aborted) {
          reject(signal.reason);
          return;
        }
        const onAbort = () => {
          remove(sleeper);
          reject(signal?.reason);
        };
        const sleeper: Sleeper = {
          at: now + Math.max(0, ms),
          seq: seq++,
          wake: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
        };
        sleepers.push(sleeper);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
    async advance(ms) {
      await settle();
      const target = now + ms;
      for (let due = next(); due && due.at <= target; due = next()) {
        now = due.at;
        remove(due);
        due.wake();
        await settle();
      }
      now = target;
      await settle();
    },
    async runAll(maxSteps = 100_000) {
      await settle();
      for (let step = 0; ; step++) {
        const due = next();
        if (!due) return;
        if (step >= maxSteps)
          throw new Error(`virtualClock.runAll: still ${sleepers.length} sleeps after ${maxSteps} steps`);
        now = due.at;
        remove(due);
        due.wake();
        await settle();
      }
    },
    pending: () => sleepers.length,
  };
  return clock;
}
