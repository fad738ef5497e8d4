/**
 * Test fixtures: a small timeline of what core emits, shared by the model's and the panel's tests.
 * Not part of any bundle (nothing but tests imports it).
 */

import type { RetrylineEvent } from '@retryline/core';
import type { RequestOutcome } from '@retryline/core/instrument';
import type { EventEntry, TimelineEntry } from '../shared/protocol';

export const ORIGIN = 'https://shop.example';
export const API = 'https://api.example';

type Without<T, K extends keyof never> = T extends unknown ? Omit<T, K> : never;

/** An event entry with `v` and `requestId` filled in. */
export function ev(requestId: string, event: Without<RetrylineEvent, 'v' | 'requestId'>): EventEntry {
  return { type: 'event', event: { v: 1, requestId, ...event } as RetrylineEvent, origin: ORIGIN };
}

/**
 * `r1`: GET /orders, held 100 ms by the limiter, 503 with Retry-After: 2, a connection reset,
 * a 412 ms backoff, then 200. `r2`: a POST the open breaker refused. `r3`: a 404 from another
 * origin, after a navigation.
 */
export function scenario(): TimelineEntry[] {
  return [
    ev('r1', { type: 'request-start', t: 1000, client: 'fetch', method: 'GET', url: `${API}/orders?page=*` }),
    ev('r1', { type: 'guard-wait', t: 1099, attempt: 1, guard: 'limiter', key: API, waited: 100 }),
    ev('r1', {
      type: 'attempt-start',
      t: 1100,
      attempt: 1,
      headers: { accept: 'application/json', authorization: '[redacted]' },
    }),
    ev('r1', {
      type: 'attempt-end',
      t: 1150,
      attempt: 1,
      outcome: 'retry',
      duration: 50,
      phase: 'response',
      status: 503,
      headers: { 'retry-after': '2', 'set-cookie': '[redacted]' },
    }),
    ev('r1', { type: 'budget', t: 1150, key: API, remaining: 9, allowed: true }),
    ev('r1', {
      type: 'retry-scheduled',
      t: 1150,
      attempt: 2,
      retry: 1,
      delay: 2000,
      reason: 'retry-after',
      strategy: 'exponential',
      jitter: 'full',
      raw: 100,
      capped: 100,
      hint: { source: 'retry-after', delay: 2000 },
    }),
    ev('r1', { type: 'attempt-start', t: 3150, attempt: 2 }),
    ev('r1', {
      type: 'attempt-end',
      t: 3180,
      attempt: 2,
      outcome: 'error',
      duration: 30,
      phase: 'unknown',
      error: { name: 'TypeError', message: 'fetch failed', code: 'ECONNRESET' },
    }),
    ev('r1', { type: 'budget', t: 3180, key: API, remaining: 8, allowed: true }),
    ev('r1', {
      type: 'retry-scheduled',
      t: 3180,
      attempt: 3,
      retry: 2,
      delay: 412,
      reason: 'backoff',
      strategy: 'exponential',
      jitter: 'full',
      raw: 800,
      capped: 800,
    }),
    ev('r1', { type: 'attempt-start', t: 3592, attempt: 3 }),
    ev('r1', {
      type: 'attempt-end',
      t: 3640,
      attempt: 3,
      outcome: 'success',
      duration: 48,
      phase: 'response',
      status: 200,
    }),
    ev('r1', {
      type: 'request-end',
      t: 3640,
      outcome: 'success',
      attempts: 3,
      totalDelay: 2412,
      duration: 2640,
      status: 200,
    }),
    ev('r2', { type: 'breaker-state', t: 3700, key: API, from: 'closed', to: 'open' }),
    ev('r2', { type: 'request-start', t: 3700, client: 'axios', method: 'POST', url: `${API}/pay` }),
    ev('r2', {
      type: 'request-end',
      t: 3701,
      outcome: 'breaker-open',
      attempts: 0,
      totalDelay: 0,
      duration: 1,
      error: { name: 'CircuitOpenError', message: 'The circuit for https://api.example is open' },
    }),
    { type: 'navigation', url: `${ORIGIN}/checkout`, t: 3800 },
    ev('r3', {
      type: 'request-start',
      t: 3900,
      client: 'ky',
      method: 'GET',
      url: 'https://cdn.example/missing.js',
    }),
    ev('r3', { type: 'attempt-start', t: 3900, attempt: 1 }),
    ev('r3', {
      type: 'attempt-end',
      t: 3920,
      attempt: 1,
      outcome: 'success',
      duration: 20,
      phase: 'response',
      status: 404,
    }),
    ev('r3', {
      type: 'request-end',
      t: 3920,
      outcome: 'not-retryable',
      attempts: 1,
      totalDelay: 0,
      duration: 20,
      status: 404,
    }),
    ev('r2', { type: 'breaker-state', t: 8700, key: API, from: 'open', to: 'half-open' }),
  ];
}

/** The origin of a cross-origin frame (an ad, a widget) in the page of {@link ORIGIN}. */
export const FRAME_ORIGIN = 'https://widget.example';

/**
 * The page's request `shared` fails (a 503, then exhausted) while its breaker for the API opens;
 * then a cross-origin frame that knows the id (a caller-chosen `requestId`, or one it was sent
 * through `requestIdHeader`) sends a success under it, and a breaker of its own closing. What the
 * frame sends must stay the frame's: the page's row stays failed, its lane open.
 */
export function crossFrameScenario(): TimelineEntry[] {
  const fromFrame = (entry: EventEntry): EventEntry => ({ ...entry, origin: FRAME_ORIGIN });
  return [
    ev('shared', { type: 'request-start', t: 1000, client: 'fetch', method: 'POST', url: `${API}/pay` }),
    ev('shared', { type: 'attempt-start', t: 1000, attempt: 1 }),
    ev('shared', {
      type: 'attempt-end',
      t: 1050,
      attempt: 1,
      outcome: 'error',
      duration: 50,
      phase: 'response',
      status: 503,
    }),
    ev('shared', { type: 'breaker-state', t: 1050, key: API, from: 'closed', to: 'open' }),
    ev('shared', {
      type: 'request-end',
      t: 1050,
      outcome: 'exhausted',
      attempts: 1,
      totalDelay: 0,
      duration: 50,
      status: 503,
    }),
    fromFrame(
      ev('shared', {
        type: 'attempt-end',
        t: 1100,
        attempt: 1,
        outcome: 'success',
        duration: 10,
        phase: 'response',
        status: 200,
      }),
    ),
    fromFrame(
      ev('shared', {
        type: 'request-end',
        t: 1100,
        outcome: 'success',
        attempts: 1,
        totalDelay: 0,
        duration: 10,
        status: 200,
      }),
    ),
    fromFrame(ev('shared', { type: 'breaker-state', t: 1100, key: API, from: 'open', to: 'closed' })),
  ];
}

/** `count` finished requests, each with two attempts (503 then 200) and a backoff between. */
export function manyRequests(count: number): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  for (let i = 0; i < count; i++) {
    const id = `req-${i}`;
    const t = 1_000_000 + i * 10;
    entries.push(
      ev(id, {
        type: 'request-start',
        t,
        client: i % 2 ? 'fetch' : 'axios',
        method: 'GET',
        url: `${API}/items/${i}`,
      }),
      ev(id, { type: 'attempt-start', t, attempt: 1 }),
      ev(id, { type: 'attempt-end', t: t + 2, attempt: 1, outcome: 'retry', duration: 2, status: 503 }),
      ev(id, {
        type: 'retry-scheduled',
        t: t + 2,
        attempt: 2,
        retry: 1,
        delay: 3,
        reason: 'backoff',
        strategy: 'exponential',
        jitter: 'full',
        raw: 100,
        capped: 100,
      }),
      ev(id, { type: 'attempt-start', t: t + 5, attempt: 2 }),
      ev(id, { type: 'attempt-end', t: t + 7, attempt: 2, outcome: 'success', duration: 2, status: 200 }),
      ev(id, {
        type: 'request-end',
        t: t + 7,
        outcome: 'success',
        attempts: 2,
        totalDelay: 3,
        duration: 7,
        status: 200,
      }),
    );
  }
  return entries;
}

/**
 * The events of one ordinary request as core sends them from a page: a GET with the headers a
 * browser app sends and a server returns, answered 200 at once. About 1.8 KB of JSON as worker
 * entries. `n` makes its id and URL unique.
 */
export function ordinaryRequest(n: number, t = 1_733_220_000_000 + n * 25): RetrylineEvent[] {
  const requestId = `7d1c2a9e-4b3f-4e2a-9c1d-${String(n).padStart(12, '0')}`;
  const base = { v: 1 as const, requestId };
  return [
    {
      ...base,
      type: 'request-start',
      t,
      client: 'fetch',
      method: 'GET',
      url: `https://api.shop.example/v2/catalog/items/${n}?locale=***&currency=***&fields=***&session=***`,
    },
    {
      ...base,
      type: 'attempt-start',
      t: t + 0.4,
      attempt: 1,
      headers: {
        accept: 'application/json, text/plain, */*',
        'accept-language': 'en-US,en;q=0.9',
        authorization: '[redacted]',
        'content-type': 'application/json',
        'x-client-version': 'web/4.18.2',
        traceparent: `00-4bf92f3577b34da6a3ce929d${String(n).padStart(6, '0')}-00f067aa0ba902b7-01`,
        'x-request-id': requestId,
        'idempotency-key': `b6e2f0c4-8d1a-4e5f-a3b7-${String(n).padStart(12, '0')}`,
      },
    },
    {
      ...base,
      type: 'attempt-end',
      t: t + 87.3,
      attempt: 1,
      outcome: 'success',
      duration: 86.9,
      phase: 'response',
      status: 200,
      headers: {
        'cache-control': 'private, max-age=0, no-cache',
        'content-type': 'application/json; charset=utf-8',
        'content-length': '2291',
        date: 'Tue, 03 Dec 2024 10:15:30 GMT',
        etag: `W/"5f3a-1b2c3d4e${String(n).padStart(6, '0')}"`,
        server: 'envoy',
        'set-cookie': '[redacted]',
        'strict-transport-security': 'max-age=63072000; includeSubDomains; preload',
        vary: 'Accept-Encoding, Origin',
        'x-envoy-upstream-service-time': '81',
        'x-cache': 'MISS',
        'x-request-id': requestId,
        'ratelimit-policy': '100;w=60',
        ratelimit: '"default";r=97;t=58',
      },
    },
    {
      ...base,
      type: 'request-end',
      t: t + 87.5,
      outcome: 'success',
      attempts: 1,
      totalDelay: 0,
      duration: 87.5,
      status: 200,
    },
  ];
}

/**
 * The recovery gate holding the API while it fails. `g1`, `g2` and `g3` each get a 503; their
 * retries are parked (3 at once). `g1`'s goes first as the probe and gets a 503 (its next retry is
 * parked again); `g2`'s is the next probe and gets a 200: the API recovered, and `g3`'s and `g1`'s
 * retries are released and succeed. Later `g4`'s retry is parked alone until its `maxParkMs`, and
 * the request stops with its 503 (a second span of the lane).
 */
export function gateScenario(): TimelineEntry[] {
  const failed = (id: string, t: number, attempt: number) => [
    ev(id, { type: 'attempt-start', t, attempt }),
    ev(id, { type: 'attempt-end', t: t + 20, attempt, outcome: 'retry', duration: 20, status: 503 }),
    ev(id, {
      type: 'retry-scheduled',
      t: t + 20,
      attempt: attempt + 1,
      retry: attempt,
      delay: 100,
      reason: 'backoff',
      strategy: 'constant',
      jitter: 'none',
      raw: 100,
      capped: 100,
    }),
  ];
  const succeeded = (id: string, t: number, attempt: number) => [
    ev(id, { type: 'attempt-start', t, attempt }),
    ev(id, { type: 'attempt-end', t: t + 20, attempt, outcome: 'success', duration: 20, status: 200 }),
    ev(id, {
      type: 'request-end',
      t: t + 20,
      outcome: 'success',
      attempts: attempt,
      totalDelay: 0,
      duration: 0,
    }),
  ];
  const start = (id: string, t: number) =>
    ev(id, { type: 'request-start', t, client: 'fetch', method: 'GET', url: `${API}/stock/${id}` });
  const parked = (id: string, t: number, attempt: number) =>
    ev(id, { type: 'retry-parked', t, attempt, key: API, failures: 3 });
  const released = (
    id: string,
    t: number,
    attempt: number,
    reason: 'probe' | 'released' | 'max-wait',
    waited: number,
  ) => ev(id, { type: 'retry-released', t, attempt, key: API, reason, waited });
  return [
    start('g1', 1000),
    start('g2', 1002),
    start('g3', 1004),
    ...failed('g1', 1000, 1),
    ...failed('g2', 1002, 1),
    ...failed('g3', 1004, 1),
    parked('g1', 1120, 2),
    parked('g2', 1122, 2),
    parked('g3', 1124, 2),
    released('g1', 1400, 2, 'probe', 280),
    ...failed('g1', 1400, 2),
    parked('g1', 1520, 3),
    released('g2', 1700, 2, 'probe', 578),
    ...succeeded('g2', 1700, 2),
    released('g3', 1730, 2, 'released', 606),
    ...succeeded('g3', 1730, 2),
    released('g1', 1760, 3, 'released', 240),
    ...succeeded('g1', 1760, 3),
    start('g4', 3000),
    ...failed('g4', 3000, 1),
    parked('g4', 3120, 2),
    released('g4', 8120, 2, 'max-wait', 5000),
    ev('g4', {
      type: 'request-end',
      t: 8120,
      outcome: 'origin-failing',
      attempts: 1,
      totalDelay: 5000,
      duration: 5120,
      status: 503,
    }),
  ];
}

/** The loopback origins of {@link flakySession}: an app's API and its search service. */
export const LOOPBACK_API = 'http://127.0.0.1:46123';
export const LOOPBACK_SEARCH = 'http://127.0.0.1:46187';

/**
 * A page's session against a flaky loopback server, as a developer sees it with the panel docked:
 * `count` requests (30 by default) over about 12 s, across two origins. Some succeed at once;
 * some get 503s and back off; some get a 429 with Retry-After; some reset their connection; the
 * API's breaker opens, half-opens and closes; pacing (the app has no limiter) holds requests while
 * the server said its quota was spent, and refuses one whose wait would be too long (`quota-spent`).
 * The retry budget of the API falls from 100 as retries are taken.
 */
export function flakySession(count = 30): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  let budget = 100;
  const spend = (t: number) => {
    budget -= 1;
    entries.push(ev('budget', { type: 'budget', t, key: LOOPBACK_API, remaining: budget, allowed: true }));
  };
  for (let i = 0; i < count; i++) {
    const id = `s${i}`;
    const t = 1_733_220_000_000 + i * 400;
    const origin = i % 5 === 4 ? LOOPBACK_SEARCH : LOOPBACK_API;
    const path =
      i % 5 === 4
        ? `/search?q=*&page=${i}`
        : `/api/v1/${['orders', 'cart', 'stock', 'users'][i % 4]}/${1000 + i}`;
    entries.push(
      ev(id, {
        type: 'request-start',
        t,
        client: i % 3 ? 'fetch' : 'ky',
        method: i % 7 === 3 ? 'POST' : 'GET',
        url: `${origin}${path}`,
      }),
    );
    entries.push(...sessionRequest(id, t, i % 6, spend));
  }
  const t0 = 1_733_220_000_000;
  entries.push(
    ev('breaker', { type: 'breaker-state', t: t0 + 2_500, key: LOOPBACK_API, from: 'closed', to: 'open' }),
    ev('breaker', { type: 'breaker-state', t: t0 + 5_500, key: LOOPBACK_API, from: 'open', to: 'half-open' }),
    ev('breaker', {
      type: 'breaker-state',
      t: t0 + 6_200,
      key: LOOPBACK_API,
      from: 'half-open',
      to: 'closed',
    }),
  );
  return entries.sort((a, b) => entryTime(a) - entryTime(b));
}

function entryTime(entry: TimelineEntry): number {
  return entry.type === 'navigation' ? entry.t : entry.event.t;
}

/** One request of {@link flakySession} after its start, by kind (0–5). */
function sessionRequest(id: string, t: number, kind: number, spend: (t: number) => void): TimelineEntry[] {
  const attempt = (n: number, at: number, ms: number, end: { status?: number; code?: string }) => [
    ev(id, { type: 'attempt-start', t: at, attempt: n }),
    ev(id, {
      type: 'attempt-end',
      t: at + ms,
      attempt: n,
      outcome: end.status === 200 ? 'success' : end.code ? 'error' : 'retry',
      duration: ms,
      ...(end.status === undefined ? {} : { status: end.status, phase: 'response' as const }),
      ...(end.code === undefined
        ? {}
        : {
            phase: 'unknown' as const,
            error: { name: 'TypeError', message: 'fetch failed', code: end.code },
          }),
    }),
  ];
  const wait = (n: number, at: number, delay: number, reason: 'backoff' | 'retry-after') => {
    spend(at);
    return ev(id, {
      type: 'retry-scheduled',
      t: at,
      attempt: n,
      retry: n - 1,
      delay,
      reason,
      strategy: 'exponential',
      jitter: 'full',
      raw: delay,
      capped: delay,
      ...(reason === 'retry-after' ? { hint: { source: 'retry-after', delay } } : {}),
    });
  };
  const end = (at: number, outcome: RequestOutcome, attempts: number, status?: number) =>
    ev(id, {
      type: 'request-end',
      t: at,
      outcome,
      attempts,
      totalDelay: 0,
      duration: at - t,
      ...(status === undefined ? {} : { status }),
    });
  switch (kind) {
    case 1: // 503, backoff, 503, backoff, 200
      return [
        ...attempt(1, t, 40, { status: 503 }),
        wait(2, t + 40, 180, 'backoff'),
        ...attempt(2, t + 220, 40, { status: 503 }),
        wait(3, t + 260, 420, 'backoff'),
        ...attempt(3, t + 680, 35, { status: 200 }),
        end(t + 715, 'success', 3, 200),
      ];
    case 2: // 429 with Retry-After: 1, then 200
      return [
        ...attempt(1, t, 30, { status: 429 }),
        wait(2, t + 30, 1000, 'retry-after'),
        ...attempt(2, t + 1030, 30, { status: 200 }),
        end(t + 1060, 'success', 2, 200),
      ];
    case 3: // a reset, a backoff, then 200
      return [
        ...attempt(1, t, 25, { code: 'ECONNRESET' }),
        wait(2, t + 25, 250, 'backoff'),
        ...attempt(2, t + 275, 40, { status: 200 }),
        end(t + 315, 'success', 2, 200),
      ];
    case 4: // held by pacing, then 200; every other one refused by pacing outright
      return Number(id.slice(1)) % 12 === 4
        ? [
            ev(id, {
              type: 'guard-wait',
              t: t + 300,
              attempt: 1,
              guard: 'pacing',
              key: LOOPBACK_API,
              waited: 300,
            }),
            ...attempt(1, t + 300, 30, { status: 200 }),
            end(t + 330, 'success', 1, 200),
          ]
        : [end(t + 1, 'quota-spent', 0)];
    case 5: // resets until the retries run out
      return [
        ...attempt(1, t, 20, { code: 'ECONNRESET' }),
        wait(2, t + 20, 120, 'backoff'),
        ...attempt(2, t + 140, 20, { code: 'ECONNRESET' }),
        end(t + 160, 'exhausted', 2),
      ];
    default:
      return [...attempt(1, t, 45, { status: 200 }), end(t + 45, 'success', 1, 200)];
  }
}

/**
 * Faults injected from the panel. `f1`: GET /api/orders, its attempt 1 answered with an injected
 * 503 (both events marked), attempt 2 with an injected network error (only its `attempt-end`
 * marked, as a recording that lost the start would have it), after a backoff; attempt 3 reached
 * the server and got a 200. `f2`: GET /api/orders/7, sent as usual, answered 200.
 */
export function injectedScenario(): TimelineEntry[] {
  const url = `${API}/api/orders`;
  return [
    ev('f1', { type: 'request-start', t: 5000, client: 'fetch', method: 'GET', url }),
    ev('f1', { type: 'attempt-start', t: 5000, attempt: 1, injected: true }),
    ev('f1', {
      type: 'attempt-end',
      t: 5001,
      attempt: 1,
      outcome: 'retry',
      duration: 1,
      phase: 'response',
      status: 503,
      injected: true,
    }),
    ev('f1', {
      type: 'retry-scheduled',
      t: 5001,
      attempt: 2,
      retry: 1,
      delay: 100,
      reason: 'backoff',
      strategy: 'exponential',
      jitter: 'none',
      raw: 100,
      capped: 100,
    }),
    ev('f1', {
      type: 'attempt-end',
      t: 5102,
      attempt: 2,
      outcome: 'retry',
      duration: 1,
      phase: 'not-sent',
      error: { name: 'TypeError', message: 'Failed to fetch' },
      injected: true,
    }),
    ev('f1', {
      type: 'retry-scheduled',
      t: 5102,
      attempt: 3,
      retry: 2,
      delay: 200,
      reason: 'backoff',
      strategy: 'exponential',
      jitter: 'none',
      raw: 200,
      capped: 200,
    }),
    ev('f1', { type: 'attempt-start', t: 5302, attempt: 3 }),
    ev('f1', {
      type: 'attempt-end',
      t: 5340,
      attempt: 3,
      outcome: 'success',
      duration: 38,
      phase: 'response',
      status: 200,
    }),
    ev('f1', {
      type: 'request-end',
      t: 5340,
      outcome: 'success',
      attempts: 3,
      totalDelay: 300,
      duration: 340,
      status: 200,
    }),
    ev('f2', { type: 'request-start', t: 5400, client: 'fetch', method: 'GET', url: `${url}/7` }),
    ev('f2', { type: 'attempt-start', t: 5400, attempt: 1 }),
    ev('f2', {
      type: 'attempt-end',
      t: 5420,
      attempt: 1,
      outcome: 'success',
      duration: 20,
      phase: 'response',
      status: 200,
    }),
    ev('f2', {
      type: 'request-end',
      t: 5420,
      outcome: 'success',
      attempts: 1,
      totalDelay: 0,
      duration: 20,
      status: 200,
    }),
  ];
}

/** The endpoints of {@link hedgeScenario}'s client. */
export const EU = 'https://eu.api.example';
export const US = 'https://us.api.example';

/**
 * A client with two endpoints that hedges late attempts, as core emits it. `h1`: attempt 1 to EU
 * gets a 503; after a backoff, attempt 2 goes to US and is late, so its hedge goes to EU, answers
 * 200 first and is taken: the loop's end of attempt 2 says so (`answeredBy`, and the endpoint that
 * answered, EU). `h2`: attempt 1 to US is hedged to EU, but answers first; the hedge is cancelled,
 * its end coming after the request's. `h3`: a request of another client, with no endpoints.
 */
export function hedgeScenario(): TimelineEntry[] {
  const url = `${API}/api/items`;
  return [
    ev('h1', { type: 'request-start', t: 6000, client: 'fetch', method: 'GET', url }),
    ev('h1', { type: 'attempt-start', t: 6000, attempt: 1, endpoint: EU }),
    ev('h1', {
      type: 'attempt-end',
      t: 6040,
      attempt: 1,
      outcome: 'retry',
      duration: 40,
      phase: 'response',
      status: 503,
      endpoint: EU,
    }),
    ev('h1', {
      type: 'retry-scheduled',
      t: 6040,
      attempt: 2,
      retry: 1,
      delay: 100,
      reason: 'backoff',
      strategy: 'exponential',
      jitter: 'none',
      raw: 100,
      capped: 100,
    }),
    ev('h1', { type: 'attempt-start', t: 6140, attempt: 2, endpoint: US }),
    ev('h1', { type: 'attempt-start', t: 6190, attempt: 2, endpoint: EU, hedge: true }),
    ev('h1', {
      type: 'attempt-end',
      t: 6230,
      attempt: 2,
      outcome: 'success',
      duration: 40,
      phase: 'response',
      status: 200,
      endpoint: EU,
      hedge: true,
    }),
    ev('h1', {
      type: 'attempt-end',
      t: 6230,
      attempt: 2,
      outcome: 'success',
      duration: 90,
      phase: 'response',
      status: 200,
      endpoint: EU,
      answeredBy: 'hedge',
    }),
    ev('h1', {
      type: 'request-end',
      t: 6230,
      outcome: 'success',
      attempts: 2,
      totalDelay: 100,
      duration: 230,
      status: 200,
    }),
    ev('h2', { type: 'request-start', t: 6300, client: 'fetch', method: 'GET', url: `${url}/7` }),
    ev('h2', { type: 'attempt-start', t: 6300, attempt: 1, endpoint: US }),
    ev('h2', { type: 'attempt-start', t: 6350, attempt: 1, endpoint: EU, hedge: true }),
    ev('h2', {
      type: 'attempt-end',
      t: 6370,
      attempt: 1,
      outcome: 'success',
      duration: 70,
      phase: 'response',
      status: 200,
      endpoint: US,
    }),
    ev('h2', {
      type: 'request-end',
      t: 6370,
      outcome: 'success',
      attempts: 1,
      totalDelay: 0,
      duration: 70,
      status: 200,
    }),
    ev('h2', {
      type: 'attempt-end',
      t: 6372,
      attempt: 1,
      outcome: 'aborted',
      duration: 22,
      endpoint: EU,
      hedge: true,
    }),
    ev('h3', { type: 'request-start', t: 6400, client: 'ky', method: 'GET', url: `${API}/api/health` }),
    ev('h3', { type: 'attempt-start', t: 6400, attempt: 1 }),
    ev('h3', {
      type: 'attempt-end',
      t: 6410,
      attempt: 1,
      outcome: 'success',
      duration: 10,
      phase: 'response',
      status: 200,
    }),
    ev('h3', {
      type: 'request-end',
      t: 6410,
      outcome: 'success',
      attempts: 1,
      totalDelay: 0,
      duration: 10,
      status: 200,
    }),
  ];
}
