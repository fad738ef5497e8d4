/**
 * Time, injected. Core decides with `clock.now()` and waits with `clock.sleep()`; this module
 * (with the virtual clock) is the only place that touches `Date.now` and `setTimeout`, so policy
 * tests run on a fixed clock without fake timers.
 */

/** A source of time and waiting. Every duration is in milliseconds. */
export interface Clock {
  /** Milliseconds since the epoch (or any fixed origin: only differences matter). */
  now(): number;
  /**
   * Resolves after `ms` milliseconds. If `signal` aborts first, rejects at once with
   * `signal.reason` and leaves no timer behind.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

// Timers fire at once for delays above 2^31 − 1 ms (about 24.8 days); longer waits are chained.
const MAX_TIMER_DELAY = 2_147_483_647;

/** The real clock: `Date.now` and `setTimeout`. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep(ms, signal) {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      let remaining = ms;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason);
      };
      const arm = () => {
        const step = Math.min(remaining, MAX_TIMER_DELAY);
        remaining -= step;
        timer = setTimeout(() => {
          if (remaining > 0) return arm();
          signal?.removeEventListener('abort', onAbort);
          resolve();
        }, step);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      arm();
    });
  },
};

// What a cancelled timer's controller is aborted with: a plain value, since `abort()` without a
// reason builds a DOMException, stack and all.
const CANCELLED = 'cancelled';

/**
 * Runs `fire` after `ms` unless the returned function is called first (`unref`: without holding a
 * Node process open for it). On the real clock this is
 * a plain timer: a sleep cancelled through an AbortController costs a controller and an abort
 * event, some 20 µs a request in Node, where clearTimeout costs nothing. Any other clock (a
 * virtual one in tests, a caller's own) is asked through its `sleep`, as before.
 */
export function startTimer(clock: Clock, ms: number, fire: () => void, unref = false): () => void {
  if (clock === systemClock && ms <= MAX_TIMER_DELAY) {
    const timer = setTimeout(fire, ms);
    // A timer that only bounds what the caller may still do (read a body) must not keep Node alive.
    if (unref) (timer as { unref?: () => void }).unref?.();
    return () => clearTimeout(timer);
  }
  const cancel = new AbortController();
  clock.sleep(ms, cancel.signal).then(fire, () => {});
  return () => cancel.abort(CANCELLED);
}
