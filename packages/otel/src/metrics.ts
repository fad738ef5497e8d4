/**
 * Retryline's metric instruments: what requests, attempts, retries and give-ups there were per
 * origin, how long requests waited between attempts and for guards, and the last known state of
 * each circuit breaker and retry budget. Names follow the OpenTelemetry naming guidelines
 * (dot-separated namespaces, no unit in the name, counts in `{annotation}` units).
 */

import type { Attributes, Meter, ObservableCallback, ObservableGauge } from '@opentelemetry/api';
import type { BreakerStateEvent } from '@retryline/core/instrument';

/**
 * The `retryline.breaker.state` gauge's value for each breaker state, so a dashboard can plot how
 * open a breaker is over time, and alert on 2.
 *
 * @example
 * ```ts
 * const isOpen = (value: number) => value === BREAKER_STATE_VALUES.open; // 2
 * ```
 */
export const BREAKER_STATE_VALUES: Readonly<Record<BreakerStateEvent['to'], number>> = {
  closed: 0,
  'half-open': 1,
  open: 2,
};

// Waits run from a few milliseconds of backoff to a minute of Retry-After (maxRetryAfter's default).
const WAIT_BUCKETS_MS = [0, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000];

/** The instruments one `instrument()` call records with, and how to stop observing. */
export interface RetrylineMetrics {
  /** One per logical request, at `request-start`. */
  requestStarted(attributes: Attributes): void;
  /** One per attempt sent, at `attempt-start`. */
  attemptStarted(attributes: Attributes): void;
  /** One per scheduled retry, at `retry-scheduled`, with its delay as a wait. */
  retryScheduled(attributes: Attributes, delayMs: number): void;
  /** A wait for a guard (limiter, bulkhead, pacing), at `guard-wait`. */
  guardWaited(attributes: Attributes, waitedMs: number): void;
  /** One per request that ended without success, at `request-end`. */
  gaveUp(attributes: Attributes): void;
  /** The breaker of `key` is now in `state`. */
  breakerChanged(key: string, state: BreakerStateEvent['to']): void;
  /** The budget of `key` allows `remaining` more retries in its window. */
  budgetConsulted(key: string, remaining: number): void;
  /** Stops the gauges' callbacks and forgets every key. */
  close(): void;
}

/** Creates Retryline's instruments on `meter`. */
export function createMetrics(meter: Meter): RetrylineMetrics {
  const requests = meter.createCounter('retryline.requests', {
    description: 'Logical HTTP requests started through Retryline (all attempts of one count once).',
    unit: '{request}',
  });
  const attempts = meter.createCounter('retryline.attempts', {
    description: 'Attempts sent by Retryline, the first try included.',
    unit: '{attempt}',
  });
  const retries = meter.createCounter('retryline.retries', {
    description: 'Retries Retryline scheduled, by the reason that set their delay.',
    unit: '{retry}',
  });
  const giveUps = meter.createCounter('retryline.give_ups', {
    description: 'Logical requests that ended without success, by outcome.',
    unit: '{request}',
  });
  const waits = meter.createHistogram('retryline.wait.duration', {
    description: 'Time requests waited before an attempt: retry delays and guard waits.',
    unit: 'ms',
    advice: { explicitBucketBoundaries: WAIT_BUCKETS_MS },
  });
  const breakerGauge = meter.createObservableGauge('retryline.breaker.state', {
    description: 'Last known circuit-breaker state per guard key: 0 closed, 1 half-open, 2 open.',
    unit: '{state}',
  });
  const budgetGauge = meter.createObservableGauge('retryline.budget.remaining', {
    description: 'Retries the retry budget still allowed per guard key, as last consulted.',
    unit: '{retry}',
  });

  // Guard state is only learnt from events, so a key shows once its guard has first reported.
  const breakers = new Map<string, number>();
  const budgets = new Map<string, number>();
  const observeMap =
    (values: Map<string, number>): ObservableCallback =>
    (result) => {
      for (const [key, value] of values) result.observe(value, { 'retryline.guard.key': key });
    };
  const observed: [ObservableGauge, ObservableCallback][] = [
    [breakerGauge, observeMap(breakers)],
    [budgetGauge, observeMap(budgets)],
  ];
  for (const [gauge, callback] of observed) gauge.addCallback(callback);

  return {
    requestStarted: (attributes) => requests.add(1, attributes),
    attemptStarted: (attributes) => attempts.add(1, attributes),
    retryScheduled(attributes, delayMs) {
      retries.add(1, attributes);
      waits.record(delayMs, attributes);
    },
    guardWaited: (attributes, waitedMs) => waits.record(waitedMs, attributes),
    gaveUp: (attributes) => giveUps.add(1, attributes),
    breakerChanged: (key, state) => breakers.set(key, BREAKER_STATE_VALUES[state]),
    budgetConsulted: (key, remaining) => budgets.set(key, remaining),
    close() {
      for (const [gauge, callback] of observed) gauge.removeCallback(callback);
      breakers.clear();
      budgets.clear();
    },
  };
}
