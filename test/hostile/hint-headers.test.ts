import {
  type HttpRetryOptions,
  pacing,
  type RetrylineEvent,
  seededRandom,
  virtualClock,
} from '@retryline/core';
import { localStore } from '@retryline/core/store';
import { describe, expect, it } from 'vitest';
import { type Driver, drivers, type Outcome } from '../conformance/drivers';
import { onClock } from '../support/on-clock';
import { useFaultServer } from '../support/use-fault-server';

/**
 * A hostile (or broken) server answers with every hint header it can, each with an absurd value:
 * zero, negative, a billion seconds, 10^30, epoch timestamps long past and far ahead, 10 KB of
 * text, non-ASCII bytes. Whatever it sends, through every adapter, no server value may hold
 * anything longer than `maxRetryAfter`: not a retry's wait, not a pacing pause the store is told,
 * not the wait of a later request to the same origin — and that later request is sent, never
 * refused for years.
 *
 * Waits run on a virtual clock: every duration asserted is exact, and no real time is spent on it.
 */
const server = useFaultServer();

const MAX = 2_000;
const T0 = Date.UTC(2026, 0, 1);
const T0_SECONDS = T0 / 1000;
const YEAR_SECONDS = 365 * 86_400;

// UTF-8 bytes sent as they are: a header value is bytes, which fetch and node read as Latin-1.
const rawUtf8 = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

const VALUES: ReadonlyArray<readonly [string, string]> = [
  ['zero', '0'],
  ['negative', '-1'],
  ['a billion', '1000000000'],
  ['10^30', `1${'0'.repeat(30)}`],
  ['1e30 written with an exponent', '1e30'],
  ['NaN', 'NaN'],
  ['epoch seconds a day past', String(T0_SECONDS - 86_400)],
  ['epoch seconds a century ahead', String(T0_SECONDS + 100 * YEAR_SECONDS)],
  ['epoch milliseconds a century ahead', String(T0 + 100 * YEAR_SECONDS * 1000)],
  ['an HTTP-date in 1970', 'Thu, 01 Jan 1970 00:00:00 GMT'],
  ['an HTTP-date in 9999', 'Fri, 31 Dec 9999 23:59:59 GMT'],
  ['10 KB of digits', '9'.repeat(10_240)],
  ['10 KB of text', 'x'.repeat(10_240)],
  ['non-ASCII digits and symbols', rawUtf8('١٢٠ ⏳ ５')],
];

// Each hint header, with the companion that makes a reset mean "none left".
const FIELDS: ReadonlyArray<readonly [string, (value: string) => Record<string, string>]> = [
  ['Retry-After', (value) => ({ 'Retry-After': value })],
  ['RateLimit', (value) => ({ RateLimit: `"default";r=0;t=${value}` })],
  ['RateLimit-Reset', (value) => ({ 'RateLimit-Remaining': '0', 'RateLimit-Reset': value })],
  ['X-RateLimit-Reset', (value) => ({ 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': value })],
];

const STATUSES = [200, 429, 503] as const;

/** Every wait a request's events report, named for the message of a failing assertion. */
function waitsOf(events: readonly RetrylineEvent[]): Array<readonly [string, number]> {
  const waits: Array<readonly [string, number]> = [];
  for (const event of events) {
    if (event.type === 'retry-scheduled') waits.push([`retry (${event.reason})`, event.delay]);
    if (event.type === 'guard-wait') waits.push([`${event.guard} wait`, event.waited]);
  }
  const start = events.find((event) => event.type === 'request-start')?.t;
  const firstSend = events.find((event) => event.type === 'attempt-start')?.t;
  if (start !== undefined && firstSend !== undefined) waits.push(['until the first send', firstSend - start]);
  return waits;
}

/** An assertion's message, one line without colours: the case's label and what failed. */
const firstLine = (error: unknown) =>
  String((error as Error)?.message ?? error)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape starts ANSI colour codes.
    .replace(/\u001b\[\d+m/g, '')
    .split('\n')[0];

/** One hostile response, then a later request to the same origin; what went wrong, if anything. */
async function runCase(driver: Driver, { field, headers, status, label, index }: Case): Promise<void> {
  const clock = virtualClock(T0);
  const store = localStore();
  // What the store is told: with a shared store, what Redis would be told.
  const told: number[] = [];
  const pacingSet = store.pacingSet;
  store.pacingSet = (key, until, now) => {
    told.push(until - now);
    return pacingSet(key, until, now);
  };
  const options: HttpRetryOptions = {
    clock,
    random: seededRandom(index),
    store,
    pacing: pacing(),
    maxRetryAfter: MAX,
    retries: 2,
    backoff: { strategy: 'constant', base: 5 },
    jitter: 'none',
  };
  const path = `/hint/${driver.name}/${field}/${index}`;
  server.script(path, [{ status, headers, body: 'hint' }]);
  server.script(`${path}/later`, [{ status: 200, body: 'ok' }]);

  const hinted = await onClock(clock, driver.send({ method: 'GET', url: `${server.url}${path}`, options }));
  // Sent and handed back as the client gives it, or stopped at once because the hint is too long.
  expect(hinted.outcome, label).toSatisfy(
    (outcome: Outcome) =>
      (outcome.kind === 'response' && outcome.status === status) ||
      (outcome.kind === 'retryline-error' && outcome.name === 'RetryAfterTooLongError'),
  );
  for (const [wait, ms] of waitsOf(hinted.events)) {
    expect(Number.isFinite(ms) && ms >= 0 && ms <= MAX, `${label}: ${wait} of ${ms} ms`).toBe(true);
  }
  for (const pause of told) {
    expect(pause <= MAX, `${label}: a pause of ${pause} ms told to the store`).toBe(true);
  }

  // A later request to the origin: held no longer than maxRetryAfter, then sent.
  const startedAt = clock.now();
  const later = await onClock(
    clock,
    driver.send({ method: 'GET', url: `${server.url}${path}/later`, options }),
  );
  expect(later.outcome, `${label}: the next request`).toMatchObject({ kind: 'response', status: 200 });
  for (const [wait, ms] of waitsOf(later.events)) {
    expect(ms >= 0 && ms <= MAX, `${label}: the next request's ${wait} of ${ms} ms`).toBe(true);
  }
  expect(clock.now() - startedAt, `${label}: the next request's whole time`).toBeLessThanOrEqual(MAX);
  expect(server.requests(`${path}/later`), label).toHaveLength(1);
}

interface Case {
  readonly field: string;
  readonly headers: Record<string, string>;
  readonly status: number;
  readonly label: string;
  readonly index: number;
}

describe.each(drivers)('hostile hint headers through $name', (driver) => {
  it.each(FIELDS)(
    '%s: nothing waits or pauses the origin longer than maxRetryAfter',
    async (field, headersFor) => {
      const cases: Case[] = VALUES.flatMap(([what, value], v) =>
        STATUSES.map((status, s) => ({
          field,
          headers: headersFor(value),
          status,
          label: `${status} ${field}: ${what}`,
          index: v * STATUSES.length + s,
        })),
      );
      // Side by side, each with its own clock, store and paths; every case runs to its end before
      // the test does, so none is still sending when the next test starts.
      const settled = await Promise.allSettled(cases.map((each) => runCase(driver, each)));
      const failures = settled.flatMap((result) =>
        result.status === 'rejected' ? [firstLine(result.reason)] : [],
      );
      expect(failures).toEqual([]);
    },
  );
});
