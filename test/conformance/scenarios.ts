import {
  bulkhead,
  circuitBreaker,
  type HttpRetryOptions,
  memoryStore,
  type RetrylineEvent,
  rateLimiter,
  retryBudget,
} from '@retryline/core';
import { expect } from 'vitest';
import { type AttemptRecord, httpDate, type Step } from '../support/fault-server';
import type { Driver, Outcome, RetryInfoView } from './drivers';

// One table of scenarios, run through fetch, axios and ky with the same expectations: attempts,
// waits, what the server received, the outcome, and what the adapter's getRetryInfo() says of it
// (why no retry followed: stoppedBy, and retryAt for too long a hint). conformance.test.ts runs it against the real
// fault server (every row); msw.test.ts runs the rows a mocked server can play through
// @retryline/msw, as a user's own tests would. A difference between adapters is a bug, or a
// documented convention of that client (mapped in drivers.ts).

/** What a row's checks read of a request the server saw: the fault server's and msw's records both fit. */
export type SeenRequest = Pick<AttemptRecord, 'method' | 'headers' | 'bodyText' | 'receivedAt'>;

export const base: HttpRetryOptions = {
  retries: 2,
  backoff: { strategy: 'constant', base: 20 },
  jitter: 'none',
};

/** A retry budget that refuses every retry: the first failure stops with `stoppedBy: 'budget'`. */
export const spentBudget = (): HttpRetryOptions => ({ budget: retryBudget({ ratio: 0, minPerSecond: 0 }) });

export interface Context {
  readonly outcome: Outcome;
  readonly events: RetrylineEvent[];
  /** What the adapter's getRetryInfo() says of the result the caller got. */
  readonly info: RetryInfoView | undefined;
  /** Whether the client's promise resolved or rejected, and which its convention for an HTTP error is. */
  readonly settled: 'resolved' | 'rejected';
  readonly httpErrors: Driver['httpErrors'];
  readonly requests: readonly SeenRequest[];
  readonly elapsed: number;
  /** Epoch ms the scenario's steps were made at (for date hints). */
  readonly madeAt: number;
}

export interface Scenario {
  readonly name: string;
  readonly method?: string;
  readonly steps?: (now: number) => Step[];
  readonly refused?: boolean;
  readonly body?: string;
  readonly headers?: Record<string, string>;
  /**
   * The client's options; a function for options holding guard values, so that each run has guards
   * of its own (a guard value is one guard, wherever it is given).
   */
  readonly options?: HttpRetryOptions | (() => HttpRetryOptions);
  readonly perCall?: HttpRetryOptions | false;
  /** Abort this long after the first retry is scheduled. */
  readonly abortInWait?: number;
  /** The outcome, as far as given. */
  readonly outcome: Partial<Record<string, unknown>> & { kind: Outcome['kind'] };
  /** What getRetryInfo() says of the result, as far as given (stoppedBy, outcome, attempts …). */
  readonly info?: RetryInfoView;
  /** Attempts made (attempt-start events), and received by the server unless `served` says otherwise. */
  readonly attempts: number;
  readonly served?: number;
  /** The least time between the first and second request the server received. */
  readonly minGap?: (ctx: Context) => number;
  readonly check?: (ctx: Context) => void;
  /** A row about server hints: the hint-blind adapter must fail it. */
  readonly hint?: boolean;
}

const s = (status: number, headers?: Record<string, string>, body?: string): Step => ({
  status,
  ...(headers ? { headers } : {}),
  ...(body === undefined ? {} : { body }),
});
const ok: Step = { status: 200, body: 'ok' };
const attemptEnds = (events: RetrylineEvent[]) =>
  events.flatMap((event) =>
    event.type === 'attempt-end'
      ? [{ outcome: event.outcome, status: event.status, phase: event.phase }]
      : [],
  );

export const scenarios: Scenario[] = [
  {
    name: 'GET 503, 503, 200 → 200 after 3 attempts',
    steps: () => [s(503), s(503), ok],
    outcome: { kind: 'response', status: 200, body: 'ok' },
    attempts: 3,
  },
  {
    name: 'GET 500, 200 → 200',
    steps: () => [s(500), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
  },
  {
    name: 'GET 502 throughout → the last 502 after 3 attempts',
    steps: () => [s(502)],
    outcome: { kind: 'response', status: 502 },
    info: { attempts: 3, outcome: 'exhausted', stoppedBy: 'exhausted' },
    attempts: 3,
  },
  {
    name: 'GET 504, 200 → 200',
    steps: () => [s(504), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
  },
  {
    name: 'GET 408, 200 → 200',
    steps: () => [s(408), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
  },
  {
    name: 'GET 429 without a hint, 200 → 200',
    steps: () => [s(429), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
  },
  {
    name: 'GET 404 → 404 at once',
    steps: () => [s(404), ok],
    outcome: { kind: 'response', status: 404 },
    info: { attempts: 1, outcome: 'not-retryable', stoppedBy: 'not-retryable' },
    attempts: 1,
  },
  {
    name: 'GET 400 → 400 at once',
    steps: () => [s(400), ok],
    outcome: { kind: 'response', status: 400 },
    attempts: 1,
    // A failed response handed back without a retry is no success, in the event either.
    check: ({ events }) =>
      expect(attemptEnds(events)).toEqual([{ outcome: 'error', status: 400, phase: 'response' }]),
  },
  {
    name: 'GET 501 → 501 at once (not transient)',
    steps: () => [s(501), ok],
    outcome: { kind: 'response', status: 501 },
    attempts: 1,
  },
  {
    name: 'POST 503 → 503, never sent twice',
    method: 'POST',
    body: 'b',
    steps: () => [s(503), ok],
    outcome: { kind: 'response', status: 503 },
    attempts: 1,
    check: ({ events }) =>
      expect(attemptEnds(events)).toEqual([{ outcome: 'error', status: 503, phase: 'response' }]),
  },
  {
    name: 'PATCH 503 → 503, never sent twice',
    method: 'PATCH',
    body: 'b',
    steps: () => [s(503), ok],
    outcome: { kind: 'response', status: 503 },
    attempts: 1,
  },
  {
    name: 'PUT 503, 200 → 200 (idempotent)',
    method: 'PUT',
    body: 'b',
    steps: () => [s(503), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
  },
  {
    name: 'DELETE 503, 200 → 200 (idempotent)',
    method: 'DELETE',
    steps: () => [s(503), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
  },
  {
    name: 'POST with idempotencyKey, 503, 201 → 201 with one key on both attempts',
    method: 'POST',
    body: '{"sku":1}',
    options: { idempotencyKey: true },
    steps: () => [s(503), { status: 201, body: 'created' }],
    outcome: { kind: 'response', status: 201, body: 'created' },
    attempts: 2,
    check: ({ requests }) => {
      expect(requests[0]?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
      expect(requests[1]?.headers['idempotency-key']).toBe(requests[0]?.headers['idempotency-key']);
      expect(requests.map((r) => r.bodyText)).toEqual(['{"sku":1}', '{"sku":1}']);
    },
  },
  {
    name: 'POST with the caller’s own Idempotency-Key, 503, 201 → retried with that key',
    method: 'POST',
    body: 'b',
    headers: { 'Idempotency-Key': 'caller-key' },
    steps: () => [s(503), s(201)],
    outcome: { kind: 'response', status: 201 },
    attempts: 2,
    check: ({ requests }) =>
      expect(requests.map((r) => r.headers['idempotency-key'])).toEqual(['caller-key', 'caller-key']),
  },
  {
    name: '429 with Retry-After: 1 → waits at least 1 s',
    hint: true,
    steps: () => [s(429, { 'Retry-After': '1' }), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
    minGap: () => 1000,
  },
  {
    name: '503 with an HTTP-date Retry-After → waits until that date',
    hint: true,
    steps: (now) => [s(503, { 'Retry-After': httpDate(Math.ceil((now + 1500) / 1000) * 1000) }), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
    check: ({ requests, madeAt }) =>
      expect(requests[1]?.receivedAt ?? 0).toBeGreaterThanOrEqual(
        Math.ceil((madeAt + 1500) / 1000) * 1000 - 2,
      ),
  },
  {
    name: '429 with RateLimit "default";r=0;t=1 → waits at least 1 s',
    hint: true,
    steps: () => [s(429, { RateLimit: '"default";r=0;t=1' }), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
    minGap: () => 1000,
  },
  {
    name: '429 with RateLimit-Reset: 1 → waits at least 1 s',
    hint: true,
    steps: () => [s(429, { 'RateLimit-Reset': '1' }), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
    minGap: () => 1000,
  },
  {
    name: '429 with X-RateLimit-Reset as epoch seconds → waits until then',
    hint: true,
    steps: (now) => [s(429, { 'X-RateLimit-Reset': String(Math.ceil(now / 1000) + 2) }), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
    check: ({ requests, madeAt }) =>
      expect(requests[1]?.receivedAt ?? 0).toBeGreaterThanOrEqual((Math.ceil(madeAt / 1000) + 2) * 1000 - 2),
  },
  {
    name: 'Retry-After: 3600 → the 503 as the client gives it, one attempt, retryAt in its retry info',
    hint: true,
    steps: () => [s(503, { 'Retry-After': '3600' }, 'later'), ok],
    outcome: { kind: 'response', status: 503, body: 'later' },
    info: { attempts: 1, outcome: 'retry-after-too-long', stoppedBy: 'retry-after-too-long' },
    attempts: 1,
    check: ({ info, madeAt, events }) => {
      expect(info?.retryAt ?? 0).toBeGreaterThanOrEqual(madeAt + 3_600_000);
      expect(info?.retryAt ?? 0).toBeLessThanOrEqual(Date.now() + 3_600_000);
      // The status that made the request stop is reported however it stopped, with the reason.
      expect(events.at(-1)).toMatchObject({
        type: 'request-end',
        outcome: 'retry-after-too-long',
        status: 503,
        error: { name: 'RetryAfterTooLongError' },
      });
    },
  },
  {
    name: 'Retry-After: 3600 with onRetryAfterTooLong clamp and maxRetryAfter 300 → waits 300 ms',
    hint: true,
    options: { maxRetryAfter: 300, onRetryAfterTooLong: 'clamp' },
    steps: () => [s(503, { 'Retry-After': '3600' }), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
    minGap: () => 300,
  },
  {
    name: '413 with Retry-After: 1 → retried after the hint; 413 without one is final',
    hint: true,
    steps: () => [s(413, { 'Retry-After': '1' }), s(413), ok],
    outcome: { kind: 'response', status: 413 },
    attempts: 2,
    minGap: () => 1000,
  },
  {
    name: 'guard: a spent retry budget stops a 503 after one attempt → that 503, stoppedBy budget',
    steps: () => [s(503), ok],
    options: spentBudget,
    outcome: { kind: 'response', status: 503 },
    info: { attempts: 1, outcome: 'budget-exhausted', stoppedBy: 'budget' },
    attempts: 1,
    check: ({ events }) =>
      expect(events.at(-1)).toMatchObject({
        type: 'request-end',
        outcome: 'budget-exhausted',
        status: 503,
        error: { name: 'RetryBudgetExhaustedError' },
      }),
  },
  {
    name: 'guard: a per-call budget: false overrides the client’s spent budget',
    steps: () => [s(503), ok],
    options: spentBudget,
    perCall: { budget: false },
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
  },
  {
    name: 'guard: a breaker opened by the first 503 refuses the retry, nothing sent: the 503 handed back, stoppedBy breaker',
    steps: () => [s(503), ok],
    options: () => ({ breaker: circuitBreaker({ consecutiveFailures: 1, openMs: 60_000 }) }),
    outcome: { kind: 'response', status: 503 },
    info: { attempts: 1, outcome: 'breaker-open', stoppedBy: 'breaker' },
    attempts: 1,
    check: ({ events, madeAt, info }) => {
      expect(events.filter((e) => e.type === 'breaker-state')).toMatchObject([
        { from: 'closed', to: 'open' },
      ]);
      // The attempt that opened it ends first.
      expect(events.map((e) => e.type).slice(0, 4)).toEqual([
        'request-start',
        'attempt-start',
        'attempt-end',
        'breaker-state',
      ]);
      expect(events.at(-1)).toMatchObject({ type: 'request-end', outcome: 'breaker-open', status: 503 });
      const refused = events.at(-1) as { error?: { name: string } };
      expect(refused.error?.name).toBe('CircuitOpenError');
      // When the breaker lets a trial through: openMs after it opened.
      expect(info?.retryAt ?? 0).toBeGreaterThanOrEqual(madeAt + 60_000);
    },
  },
  {
    name: "guard: a limiter in 'reject' mode with one token refuses the retry: the 503 handed back, stoppedBy limiter",
    steps: () => [s(503), ok],
    options: () => ({ limiter: rateLimiter({ capacity: 1, refillPerSecond: 0.01, mode: 'reject' }) }),
    outcome: { kind: 'response', status: 503 },
    info: { attempts: 1, outcome: 'rate-limited', stoppedBy: 'limiter' },
    attempts: 1,
    check: ({ events }) =>
      expect(events.at(-1)).toMatchObject({
        type: 'request-end',
        outcome: 'rate-limited',
        status: 503,
        error: { name: 'RateLimitedError' },
      }),
  },
  {
    name: "guard: a limiter in 'wait' mode holds the retry until a token is back (5/s → ≥ 200 ms)",
    steps: () => [s(503), ok],
    options: () => ({ limiter: rateLimiter({ capacity: 1, refillPerSecond: 5 }) }),
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
    // Timed where the limiter is, in the client: the server's arrival times also carry each
    // client's send latency (axios's first connection is slower than its second).
    check: ({ events }) => {
      expect(events.some((e) => e.type === 'guard-wait' && e.guard === 'limiter')).toBe(true);
      const [first, second] = events.filter((e) => e.type === 'attempt-start');
      expect((second?.t ?? 0) - (first?.t ?? 0)).toBeGreaterThanOrEqual(195);
    },
  },
  {
    name: 'guard: a bulkhead of one place lets a request and its retries through, one attempt at a time',
    steps: () => [s(503), s(503), ok],
    options: () => ({ bulkhead: bulkhead({ maxConcurrent: 1 }) }),
    outcome: { kind: 'response', status: 200 },
    attempts: 3,
  },
  // What stops the retries never changes the shape of the result: each row stops a
  // failed response a different way, and the caller gets that response as the client gives it, the
  // reason in getRetryInfo().
  {
    name: 'stop: retries run out on a 503 → the last 503 with its body, stoppedBy exhausted',
    steps: () => [s(503, undefined, 'down 1'), s(503, undefined, 'down 2'), s(503, undefined, 'down 3'), ok],
    outcome: { kind: 'response', status: 503, body: 'down 3' },
    info: { attempts: 3, totalDelay: 40, outcome: 'exhausted', stoppedBy: 'exhausted' },
    attempts: 3,
    check: ({ info, events }) => {
      expect(info?.retryAt).toBeUndefined();
      expect(events.at(-1)).toMatchObject({ type: 'request-end', outcome: 'exhausted', status: 503 });
    },
  },
  {
    name: 'stop: a spent budget on a 503 → that 503 with its body readable, stoppedBy budget',
    steps: () => [s(503, undefined, 'overloaded'), ok],
    options: spentBudget,
    outcome: { kind: 'response', status: 503, body: 'overloaded' },
    info: { attempts: 1, totalDelay: 0, outcome: 'budget-exhausted', stoppedBy: 'budget' },
    attempts: 1,
    check: ({ info }) => expect(info?.retryAt).toBeUndefined(),
  },
  {
    name: 'stop: a 429 with Retry-After: 3600 → that 429, stoppedBy retry-after-too-long, retryAt in an hour',
    hint: true,
    steps: () => [s(429, { 'Retry-After': '3600' }, 'slow down'), ok],
    outcome: { kind: 'response', status: 429, body: 'slow down' },
    info: { attempts: 1, totalDelay: 0, outcome: 'retry-after-too-long', stoppedBy: 'retry-after-too-long' },
    attempts: 1,
    check: ({ info, madeAt, elapsed }) => {
      expect(info?.retryAt ?? 0).toBeGreaterThanOrEqual(madeAt + 3_600_000);
      expect(info?.retryAt ?? 0).toBeLessThanOrEqual(Date.now() + 3_600_000);
      expect(elapsed).toBeLessThan(1000); // stopped at once, no wait begun
    },
  },
  {
    name: 'stop: a deadline with no room for the next wait after a 503 → that 503, stoppedBy deadline',
    // A 5 s backoff cannot fit in a 1 s deadline: the wait is not started.
    options: { deadline: 1000, backoff: { strategy: 'constant', base: 5000 } },
    steps: () => [s(503, undefined, 'busy'), ok],
    outcome: { kind: 'response', status: 503, body: 'busy' },
    info: { attempts: 1, totalDelay: 0, outcome: 'deadline', stoppedBy: 'deadline' },
    attempts: 1,
    check: ({ info, events, elapsed }) => {
      expect(info?.retryAt).toBeUndefined();
      expect(elapsed).toBeLessThan(1000);
      expect(events.at(-1)).toMatchObject({
        type: 'request-end',
        outcome: 'deadline',
        status: 503,
        error: { name: 'DeadlineExceededError' },
      });
    },
  },
  {
    name: 'GET to a refused port → retried, then a network error',
    refused: true,
    outcome: { kind: 'network-error' },
    attempts: 3,
    served: 0,
  },
  {
    // Unkeyed, it is sent once through fetch and ky, which cannot say which hop a refusal came from
    // (test/hostile/redirects.test.ts); keyed, every adapter retries it.
    name: 'keyed POST to a refused port → retried, then a network error',
    method: 'POST',
    body: 'b',
    options: { idempotencyKey: true },
    refused: true,
    outcome: { kind: 'network-error' },
    attempts: 3,
    served: 0,
  },
  {
    name: 'GET reset before headers, 200 → 200',
    steps: () => [{ fault: 'reset-before-headers' }, ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
  },
  {
    name: 'GET closed before headers, 200 → 200',
    steps: () => [{ fault: 'close-before-headers' }, ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
  },
  {
    name: 'POST reset mid-body → a network error, not retried',
    method: 'POST',
    body: 'x'.repeat(256 * 1024),
    steps: () => [{ fault: 'reset-mid-request-body' }, ok],
    outcome: { kind: 'network-error' },
    attempts: 1,
  },
  {
    name: 'stalled headers with timeout 150 → retried, then the client’s timeout error',
    options: { timeout: 150, retries: 1 },
    steps: () => [{ fault: 'stall-headers' }],
    outcome: { kind: 'timeout' },
    attempts: 2,
  },
  {
    name: 'stalled headers with timeout 150 and deadline 400 → DeadlineExceededError',
    options: { timeout: 150, retries: 10, deadline: 400 },
    steps: () => [{ fault: 'stall-headers' }],
    outcome: { kind: 'retryline-error', name: 'DeadlineExceededError' },
    attempts: 3,
    check: ({ elapsed }) => expect(elapsed).toBeGreaterThanOrEqual(390),
  },
  {
    name: 'abort during a wait → rejects at once with the abort; nothing more is sent',
    options: { backoff: { strategy: 'constant', base: 10_000 } },
    abortInWait: 30,
    steps: () => [s(503), ok],
    outcome: { kind: 'aborted' },
    // fetch and ky reject with the reason, which ended this request alone; axios with a CanceledError.
    info: { attempts: 1, outcome: 'aborted', stoppedBy: 'aborted' },
    attempts: 1,
    check: ({ elapsed, events }) => {
      expect(elapsed).toBeLessThan(2000);
      // The part of the wait that passed before the abort counts.
      const end = events.at(-1) as { type: string; totalDelay: number };
      expect(end).toMatchObject({ type: 'request-end', outcome: 'aborted', status: 503 });
      expect(end.totalDelay).toBeGreaterThanOrEqual(25);
      expect(end.totalDelay).toBeLessThan(10_000);
    },
  },
  {
    name: 'per-request override retries 3: 503 ×3, 200 → 200 after 4 attempts',
    perCall: { retries: 3 },
    steps: () => [s(503), s(503), s(503), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 4,
  },
  {
    name: 'per-request retry: false → 503 at once',
    perCall: false,
    steps: () => [s(503), ok],
    outcome: { kind: 'response', status: 503 },
    attempts: 1,
  },
  {
    name: 'client retries: 0 → 503 at once',
    options: { retries: 0 },
    steps: () => [s(503), ok],
    outcome: { kind: 'response', status: 503 },
    attempts: 1,
  },
  {
    name: 'retryOn statuses [418] → a 418 is retried, a 503 is not',
    options: { retryOn: { statuses: [418] } },
    steps: () => [s(418), s(503), ok],
    outcome: { kind: 'response', status: 503 },
    attempts: 2,
  },
  {
    name: 'correlation headers when asked: one request id, attempt n of max',
    options: { requestIdHeader: 'X-Request-Id', attemptHeader: 'Retry-Attempt' },
    steps: () => [s(503), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
    check: ({ requests }) => {
      expect(requests[1]?.headers['x-request-id']).toBe(requests[0]?.headers['x-request-id']);
      expect(requests.map((r) => r.headers['retry-attempt'])).toEqual([
        'attempt=1; max=3',
        'attempt=2; max=3',
      ]);
    },
  },
  {
    name: 'no header is added by default',
    steps: () => [s(503), ok],
    outcome: { kind: 'response', status: 200 },
    attempts: 2,
    check: ({ requests }) => {
      for (const name of Object.keys(requests[0]?.headers ?? {})) {
        expect(name).not.toMatch(/idempotency|request-id|attempt|deadline|retry/);
      }
      expect(Object.keys(requests[1]?.headers ?? {}).sort()).toEqual(
        Object.keys(requests[0]?.headers ?? {}).sort(),
      );
    },
  },
];

/** Sends one row's request through `driver` to `url`; `requests` reads what the server saw. */
export async function runScenario(
  driver: Driver,
  scenario: Scenario,
  target: {
    readonly url: string;
    readonly requests: () => readonly SeenRequest[] | Promise<readonly SeenRequest[]>;
  },
  madeAt: number,
): Promise<Context> {
  const controller = scenario.abortInWait === undefined ? undefined : new AbortController();
  const options: HttpRetryOptions = {
    ...base,
    // Each row has its own guard state: one row's 429 must not pace the next, nor its retries spend its budget.
    store: memoryStore(),
    ...(typeof scenario.options === 'function' ? scenario.options() : scenario.options),
    ...(controller
      ? {
          onRetry: () =>
            void setTimeout(() => controller.abort(new Error('user aborted')), scenario.abortInWait),
        }
      : {}),
  };
  const started = Date.now();
  const { outcome, events, info, settled } = await driver.send({
    method: scenario.method ?? 'GET',
    url: target.url,
    options,
    ...(scenario.body === undefined ? {} : { body: scenario.body }),
    ...(scenario.headers ? { headers: scenario.headers } : {}),
    ...(scenario.perCall === undefined ? {} : { perCall: scenario.perCall }),
    ...(controller ? { signal: controller.signal } : {}),
  });
  const elapsed = Date.now() - started;
  if (controller) await new Promise((resolve) => setTimeout(resolve, 50)); // would a stray attempt follow?
  return {
    outcome,
    events,
    info,
    settled,
    httpErrors: driver.httpErrors,
    requests: await target.requests(),
    elapsed,
    madeAt,
  };
}

export function verify(scenario: Scenario, ctx: Context): void {
  expect(ctx.outcome).toMatchObject(scenario.outcome);
  if (scenario.info) expect(ctx.info).toMatchObject(scenario.info);
  // A success has nothing that stopped it; a failed response handed back always says why.
  if (ctx.outcome.kind === 'response' && ctx.outcome.status < 300) {
    expect(ctx.info).toMatchObject({ outcome: 'success' });
    expect(ctx.info?.stoppedBy).toBeUndefined();
  }
  if (ctx.outcome.kind === 'response' && ctx.outcome.status >= 400) {
    expect(ctx.info?.stoppedBy).toBeDefined();
    // The shape the client gives without retries, whatever stopped them.
    expect(ctx.settled).toBe(ctx.httpErrors === 'resolve' ? 'resolved' : 'rejected');
  }
  expect(ctx.events.filter((event) => event.type === 'attempt-start')).toHaveLength(scenario.attempts);
  expect(ctx.requests).toHaveLength(scenario.served ?? scenario.attempts);
  if (scenario.minGap) {
    const [first, second] = ctx.requests;
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(scenario.minGap(ctx));
  }
  scenario.check?.(ctx);
}
