import {
  type HttpRetryOptions,
  type RetryInfo,
  type RetrylineEvent,
  seededRandom,
  virtualClock,
} from '@retryline/core';
import type { RetryScheduledEvent } from '@retryline/core/instrument';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { type Driver, type DriverResult, drivers } from '../conformance/drivers';
import { observe } from '../support/observe';

/**
 * How the preset suites run a request: through a real client against the loopback fault server,
 * every wait on a virtual clock that starts at {@link T0}, and every random draw recorded in the
 * order the engine took it (for each retry: its jitter, then the spread of a server hint), so a
 * test computes the exact wait it expects from the draws instead of allowing a range. The client's
 * own recovery gate is off (`gate: false`): it draws from the same source for its probes, and it is
 * Retryline's guard, not the preset's rule.
 */

/** The virtual clock's start: epoch-second resets in the tests are counted from it. */
export const T0 = Date.UTC(2030, 0, 1);
export const T0_SECONDS = T0 / 1000;

/** A fresh virtual clock and a seeded random source that records its draws. */
export function onVirtualTime(seed = 24) {
  const clock = virtualClock(T0);
  const seeded = seededRandom(seed);
  const draws: number[] = [];
  const random = () => {
    const r = seeded();
    draws.push(r);
    return r;
  };
  return { clock, draws, random };
}

export interface Sent {
  readonly status: number;
  /** The `retry-scheduled` events: one per wait, in order. */
  readonly waits: readonly RetryScheduledEvent[];
  /** Every random draw, in the order the engine took them. */
  readonly draws: readonly number[];
  readonly info: RetryInfo | undefined;
  readonly events: readonly RetrylineEvent[];
}

/**
 * Runs `work` on `clock`, moving time forward only by each retry's wait as `onRetry` announces it:
 * never to a timer that is no retry wait (a deadline's), which a test would otherwise fire early.
 */
async function onRetryWaits<T>(
  clock: ReturnType<typeof virtualClock>,
  work: (onRetry: (event: { delay: number }) => void) => Promise<T>,
): Promise<T> {
  const due: number[] = [];
  const promise = work(({ delay }) => {
    due.push(delay);
  });
  const watched = observe(promise);
  while (!watched.state.settled) {
    const delay = due.shift();
    if (delay === undefined) await new Promise((resolve) => setTimeout(resolve, 1));
    else await clock.advance(delay);
  }
  return promise;
}

const scheduled = (events: readonly RetrylineEvent[]) =>
  events.filter((event): event is RetryScheduledEvent => event.type === 'retry-scheduled');

/** Sends one request through `retryFetch` with `options` (a preset), on virtual time. */
export async function sendFetch(
  options: HttpRetryOptions,
  url: string,
  init: RequestInit = {},
): Promise<Sent> {
  const { clock, draws, random } = onVirtualTime();
  const events: RetrylineEvent[] = [];
  const response = await onRetryWaits(clock, (onRetry) =>
    retryFetch(fetch, {
      ...options,
      gate: false,
      clock,
      random,
      onRetry,
      onEvent: (event) => events.push(event),
    })(url, init),
  );
  await response.text();
  return { status: response.status, waits: scheduled(events), draws, info: getRetryInfo(response), events };
}

/** Sends one request through each adapter's driver (fetch, axios, ky) with `options`, on virtual time. */
export async function sendThrough(
  driver: Driver,
  options: HttpRetryOptions,
  request: { method: string; url: string; body?: string },
): Promise<
  DriverResult & { readonly waits: readonly RetryScheduledEvent[]; readonly draws: readonly number[] }
> {
  const { clock, draws, random } = onVirtualTime();
  const result = await onRetryWaits(clock, (onRetry) =>
    driver.send({ ...request, options: { ...options, gate: false, clock, random, onRetry } }),
  );
  return { ...result, waits: scheduled(result.events), draws };
}

export { drivers };

/** The status a driver's outcome ended with, or `undefined` when it ended without a response. */
export function statusOf(result: DriverResult): number | undefined {
  return result.outcome.kind === 'response' ? result.outcome.status : undefined;
}

/** Equal jitter as the engine computes it: d/2 + U(0, d/2), never above d. */
export const equal = (d: number, r: number) => Math.min(d, d / 2 + (r * d) / 2);

/** The spread the engine adds to a server's wait: U(0, min(wait/10, 1 s, maxRetryAfter − wait)). */
export const spread = (wait: number, r: number, maxRetryAfter = 60_000) =>
  wait + Math.min(wait / 10, 1000, maxRetryAfter - wait) * r;
