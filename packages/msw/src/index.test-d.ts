import { type HttpRetryOptions, virtualClock } from '@retryline/core';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { expect, expectTypeOf } from 'vitest';
import {
  type AttemptRecord,
  failTimes,
  flaky,
  type HandlersRecorder,
  networkError,
  outage,
  type Recorder,
  rateLimited,
  recordAttempts,
  type Script,
  sequence,
  slow,
  status,
} from './index';
import './vitest';

// Type-checked by `pnpm typecheck`, never run: nothing here sends a request. The JSDoc examples
// of the public API are repeated here so that they cannot go stale.
const url = 'https://api.example/orders';
const clock = virtualClock();

export function scriptsAreMswResolvers() {
  const handlers = [
    http.get(url, status(503)),
    http.get(url, networkError()),
    http.get(url, sequence([status(503), networkError(), status(200)])),
    http.get(url, sequence([rateLimited({ retryAfter: 1 }), status(200)])),
    http.get(url, sequence([slow(2_000, status(200)), status(200)])),
    http.post(url, failTimes(2)),
    http.all(url, outage({ for: 1_000 })),
    http.get(url, flaky({ rate: 0.3, seed: 7 })),
    // A step is any msw resolver that returns a response.
    http.get(url, sequence([status(503), ({ request }) => HttpResponse.json({ url: request.url })])),
  ];
  const server = setupServer(...handlers);
  expectTypeOf(failTimes(1)).toEqualTypeOf<Script>();
  expectTypeOf(failTimes(1).attempts('abc')).toEqualTypeOf<number>();

  status(503, { body: 'down for maintenance' });
  status(422, { json: { error: 'invalid sku' } });
  status(503, { headers: { 'retry-after': '1' } });
  status(503, { statusText: 'Service Unavailable' });
  rateLimited({ retryAfter: 2 });
  rateLimited({ retryAfter: 2, as: 'ratelimit' });
  rateLimited({ retryAfter: 30, status: 503 });
  rateLimited({ retryAfter: 2, as: 'date', clock: virtualClock(Date.UTC(2026, 0, 1)) });
  rateLimited({ retryAfter: 2, as: 'ratelimit', policy: { quota: 100, window: 60 } });
  slow(5_000, status(200), { clock });
  sequence([status(503), status(200)], { exhausted: 'error' });
  failTimes(2, status(503), status(200), { scope: { header: 'x-request-id' } });
  failTimes(2, status(503), status(200), { scope: (request) => new URL(request.url).pathname });
  outage({ for: 2_000 });
  outage({ for: 2_000, failure: networkError() });
  outage({ for: 2_000, success: status(200, { json: { ok: true } }) });
  outage({ for: 2_000, clock: virtualClock() });
  outage({ for: 2_000, from: Date.UTC(2026, 0, 1) });
  flaky({ rate: 0.3, seed: 42 });
  flaky({ rate: 0.5, seed: 'checkout' });
  flaky({ rate: 0.2, seed: 1, failure: networkError() });
  flaky({ rate: 0.2, seed: 1, success: status(200, { json: [] }) });

  // @ts-expect-error a step is a resolver, not a status code
  sequence([503, 200]);
  // @ts-expect-error flaky needs a seed
  flaky({ rate: 0.5 });
  // @ts-expect-error 'header' is not a scope; { header } is
  failTimes(1, status(503), status(200), { scope: 'header' });
  // @ts-expect-error 'minutes' is not a form
  rateLimited({ retryAfter: 1, as: 'minutes' });
  return server;
}

export function recorders(server: ReturnType<typeof setupServer>) {
  const recorder = recordAttempts(server);
  expectTypeOf(recorder).toEqualTypeOf<Recorder>();
  expectTypeOf(recorder.attempts).toEqualTypeOf<readonly AttemptRecord[]>();
  expectTypeOf(recorder.for('POST /orders')).toEqualTypeOf<Recorder>();
  recordAttempts(server, { clock: virtualClock() });

  const withHandlers = recordAttempts([http.get(url, failTimes(2))]);
  expectTypeOf(withHandlers).toMatchTypeOf<HandlersRecorder<unknown>>();
  setupServer(...withHandlers.handlers);

  // @ts-expect-error a recorder needs a server, a worker or handlers
  recordAttempts({});
}

export function matchers(recorder: Recorder) {
  expect(recorder.for('/orders')).toHaveBeenAttempted(3);
  expect(recorder.for('POST /orders')).toHaveRetriedWithSameIdempotencyKey();
  expect(recorder.for('POST /orders')).toHaveRetriedWithSameIdempotencyKey('x-idempotency-key');
  expect(recorder.for('/orders')).toHaveWaitedAtLeast(1_000);
  expect(recorder).not.toHaveBeenAttempted(1);
  expect({ recorder }).toEqual({ recorder: expect.toHaveBeenAttempted(3) });
  // @ts-expect-error the count is a number
  expect(recorder).toHaveBeenAttempted('3');
}

export const options: HttpRetryOptions = { requestIdHeader: 'x-request-id' };
