import { type HttpRetryOptions, memoryStore, seededRandom, virtualClock } from '@retryline/core';
import {
  failTimes,
  flaky,
  networkError,
  outage,
  type RateLimitForm,
  rateLimited,
  recordAttempts,
  type Script,
  sequence,
  slow,
  status,
} from '@retryline/msw';
import '@retryline/msw/vitest';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Driver, DriverRequest } from '../conformance/drivers';

// Every script of @retryline/msw, through Retryline's fetch, axios and ky adapters, as a user's
// tests would run them: msw intercepts in-process, the recorder sees each attempt.

const server = setupServer();
const recorder = recordAttempts(server);
server.listen({ onUnhandledRequest: 'error' });
// drivers.ts gives its fetch driver the global `fetch` as it is when the module is evaluated: load
// it after listen(), so that this is msw's patched fetch and not the real one (which would go to
// the network). axios and ky look their transport up on every request and need no such care.
const { drivers } = await import('../conformance/drivers');

afterEach(() => {
  server.resetHandlers();
  recorder.clear();
});
afterAll(() => {
  recorder.dispose();
  server.close();
});

const ORIGIN = 'https://api.example';
let paths = 0;
/** A URL of its own for each test, so a late attempt can never land in another test's script. */
const freshUrl = (name: string) => `${ORIGIN}/${name}/${++paths}`;

/** Fast and isolated: 5 ms constant backoff, and a fresh guard store per request. */
const fast = (extra: HttpRetryOptions = {}): HttpRetryOptions => ({
  backoff: { strategy: 'constant', base: 5 },
  jitter: 'none',
  store: memoryStore(),
  ...extra,
});

function send(driver: Driver, request: Omit<DriverRequest, 'options'> & { options?: HttpRetryOptions }) {
  return driver.send({ ...request, options: fast(request.options) });
}

describe.each(drivers)('@retryline/msw scripts through $name', (driver) => {
  it('sequence(): 503, a network error, then 200 → 200 after 3 attempts', async () => {
    const url = freshUrl('sequence');
    server.use(http.get(url, sequence([status(503), networkError(), status(200, { body: 'ok' })])));
    const { outcome } = await send(driver, { method: 'GET', url });
    expect(outcome).toEqual({ kind: 'response', status: 200, body: 'ok' });
    expect(recorder.for(url)).toHaveBeenAttempted(3);
  });

  it("sequence(…, { exhausted: 'error' }) answers a 500 that names the attempt past the end", async () => {
    const url = freshUrl('exhausted');
    server.use(http.get(url, sequence([status(503), status(503)], { exhausted: 'error' })));
    const { outcome } = await send(driver, { method: 'GET', url, options: { retries: 2 } });
    expect(outcome).toEqual({
      kind: 'response',
      status: 500,
      body: '[Retryline msw] sequence exhausted: attempt 3 of a 2-step sequence',
    });
  });

  it('failTimes(2) → 200 on the third attempt; failTimes(3) outlasts retries: 2', async () => {
    const url = freshUrl('fail-times');
    const script = failTimes(2);
    server.use(http.get(url, script));
    expect((await send(driver, { method: 'GET', url, options: { retries: 2 } })).outcome).toMatchObject({
      kind: 'response',
      status: 200,
    });
    expect(script.attempts()).toBe(3);

    const other = freshUrl('fail-times');
    server.use(http.get(other, failTimes(3)));
    expect(
      (await send(driver, { method: 'GET', url: other, options: { retries: 2 } })).outcome,
    ).toMatchObject({ kind: 'response', status: 503 });
    expect(recorder.for(other)).toHaveBeenAttempted(3);
  });

  it('flaky(): the same seed fails the same attempts on every run; another seed does not', async () => {
    const rate = 0.5;
    const run = async (seed: number) => {
      const url = freshUrl('flaky');
      server.use(http.get(url, flaky({ rate, seed })));
      const pattern: string[] = [];
      for (let request = 0; request < 6; request++) {
        const { outcome } = await send(driver, { method: 'GET', url, options: { retries: 3 } });
        const tried = recorder.for(url).attempts.length;
        recorder.clear();
        pattern.push(`${outcome.kind === 'response' ? outcome.status : outcome.kind}×${tried}`);
      }
      return pattern;
    };
    const first = await run(7);
    expect(await run(7)).toEqual(first);
    expect(await run(8)).not.toEqual(first);

    // The pattern is the generator's: fail while seededRandom(7) draws below the rate, 4 tries at most.
    const random = seededRandom(7);
    const expected = Array.from({ length: 6 }, () => {
      for (let attempt = 1; attempt <= 4; attempt++) if (random() >= rate) return `200×${attempt}`;
      return '503×4';
    });
    expect(first).toEqual(expected);
  });

  it('outage(): fails until the virtual clock has passed the outage, whatever the retries', async () => {
    const url = freshUrl('outage');
    const clock = virtualClock(Date.UTC(2026, 0, 1));
    server.use(http.get(url, outage({ for: 60_000, clock })));
    const during = await send(driver, { method: 'GET', url, options: { retries: 2 } });
    expect(during.outcome).toMatchObject({ kind: 'response', status: 503 });
    expect(recorder.for(url)).toHaveBeenAttempted(3);

    await clock.advance(59_999);
    expect((await send(driver, { method: 'GET', url, options: { retries: 0 } })).outcome).toMatchObject({
      status: 503,
    });
    await clock.advance(1);
    expect((await send(driver, { method: 'GET', url, options: { retries: 0 } })).outcome).toMatchObject({
      status: 200,
    });
  });

  it('rateLimited(): the client waits at least the hint in every form (Retry-After 1 s)', async () => {
    const forms: RateLimitForm[] = ['seconds', 'date', 'ratelimit', 'x-ratelimit'];
    // The four forms run side by side (a fresh store each, so no pacing is shared): one second in all.
    const results = await Promise.all(
      forms.map(async (as) => {
        const url = freshUrl(`rate-limited-${as}`);
        server.use(http.get(url, sequence([rateLimited({ retryAfter: 1, as }), status(200)])));
        const { outcome, events } = await send(driver, { method: 'GET', url });
        const scheduled = events.find((event) => event.type === 'retry-scheduled');
        return {
          as,
          url,
          outcome,
          reason: scheduled?.type === 'retry-scheduled' ? scheduled.reason : undefined,
        };
      }),
    );
    for (const { as, url, outcome, reason } of results) {
      expect(outcome, as).toMatchObject({ kind: 'response', status: 200 });
      expect(reason, as).not.toBe('backoff');
      expect(recorder.for(url)).toHaveBeenAttempted(2);
      expect(recorder.for(url)).toHaveWaitedAtLeast(1_000);
    }
  });

  it('networkError(): retried for a GET, not for a POST without an idempotency key', async () => {
    const get = freshUrl('network-error');
    server.use(http.get(get, sequence([networkError(), status(200)])));
    expect((await send(driver, { method: 'GET', url: get })).outcome).toMatchObject({ status: 200 });
    expect(recorder.for(get)).toHaveBeenAttempted(2);

    const post = freshUrl('network-error');
    server.use(http.post(post, sequence([networkError(), status(200)])));
    const { outcome, events } = await send(driver, { method: 'POST', url: post, body: '{"sku":1}' });
    expect(outcome).toEqual({ kind: 'network-error' });
    expect(recorder.for(post)).toHaveBeenAttempted(1);
    // The request may have reached the server: the phase is unknown, so only an idempotent one is retried.
    expect(events.find((event) => event.type === 'attempt-end')).toMatchObject({ phase: 'unknown' });
  });

  it('networkError(): a POST with an idempotency key is retried with the same key', async () => {
    const url = freshUrl('network-error-keyed');
    server.use(http.post(url, sequence([networkError(), status(201)])));
    const { outcome } = await send(driver, {
      method: 'POST',
      url,
      body: '{"sku":1}',
      options: { idempotencyKey: true },
    });
    expect(outcome).toMatchObject({ kind: 'response', status: 201 });
    expect(recorder.for(url)).toHaveRetriedWithSameIdempotencyKey();
    await recorder.flush();
    expect(recorder.for(url).attempts.map((attempt) => attempt.body)).toEqual(['{"sku":1}', '{"sku":1}']);
  });

  it('slow(): an attempt slower than the timeout is abandoned and retried', async () => {
    const url = freshUrl('slow');
    server.use(
      http.get(url, sequence([slow(2_000, status(200, { body: 'late' })), status(200, { body: 'on time' })])),
    );
    const { outcome, events } = await send(driver, { method: 'GET', url, options: { timeout: 100 } });
    expect(outcome).toEqual({ kind: 'response', status: 200, body: 'on time' });
    expect(recorder.for(url)).toHaveBeenAttempted(2);
    const first = events.find((event) => event.type === 'attempt-end');
    expect(first).toMatchObject({ attempt: 1, outcome: 'timeout', error: { name: 'AttemptTimeoutError' } });
  });

  it('scope { header: x-request-id }: two concurrent requests each get their own count', async () => {
    const url = freshUrl('scoped');
    const scoped: Script = failTimes(1, status(503), status(200), { scope: { header: 'x-request-id' } });
    server.use(http.get(url, scoped));
    const options = { requestIdHeader: 'x-request-id' };
    const both = await Promise.all([
      send(driver, { method: 'GET', url, options }),
      send(driver, { method: 'GET', url, options }),
    ]);
    for (const { outcome } of both) expect(outcome).toMatchObject({ status: 200 });
    const ids = [...new Set(recorder.for(url).attempts.map((attempt) => attempt.headers['x-request-id']))];
    expect(ids).toHaveLength(2);
    for (const id of ids) {
      expect(scoped.attempts(id)).toBe(2);
      expect(recorder.for((attempt) => attempt.headers['x-request-id'] === id)).toHaveBeenAttempted(2);
    }

    // One counter for the whole handler instead: the request that arrives first takes the one
    // failure and the other gets its 200 at once, so the two make three attempts between them.
    const shared = freshUrl('unscoped');
    server.use(http.get(shared, failTimes(1)));
    await Promise.all([
      send(driver, { method: 'GET', url: shared }),
      send(driver, { method: 'GET', url: shared }),
    ]);
    expect(recorder.for(shared)).toHaveBeenAttempted(3);
  });
});
