import type { VirtualClock } from '@retryline/core';
import { observe } from './observe';

/**
 * Waits for `work` while letting the virtual clock's waits pass as soon as they are due: each
 * round fires every pending sleep, then gives the sockets a turn, until `work` settles.
 */
export async function onClock<T>(clock: VirtualClock, work: Promise<T>): Promise<T> {
  const watched = observe(work);
  while (!watched.state.settled) {
    await clock.runAll();
    if (!watched.state.settled) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return work;
}

/** Resolves once the clock holds `count` sleeps (by default one): requests are waiting on it. */
export async function untilWaiting(clock: VirtualClock, count = 1): Promise<void> {
  while (clock.pending() < count) await new Promise((resolve) => setTimeout(resolve, 1));
}
