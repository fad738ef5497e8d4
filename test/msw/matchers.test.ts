import { memoryStore, type VirtualClock, virtualClock } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { failTimes, type Recorder, recordAttempts, status } from '@retryline/msw';
import '@retryline/msw/vitest';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

// The matchers of @retryline/msw/vitest: each passes when right, and when wrong says what it
// expected, what it got and which attempts it saw — with and without `.not`.

const ORIGIN = 'https://api.example';
const server = setupServer(http.all(`${ORIGIN}/*`, status(200)));
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterAll(() => server.close());

let clock: VirtualClock;
let recorder: Recorder;
beforeEach(() => {
  // Attempt times come from a virtual clock, so every "+N ms" in a message is exact.
  clock = virtualClock();
  recorder = recordAttempts(server, { clock });
});
afterEach(() => {
  recorder.dispose();
  server.resetHandlers();
});

/** One request at the clock's current time, then the clock moves on by `after` ms. */
async function attempt(
  path: string,
  init: { method?: string; key?: string; header?: string } = {},
  after = 0,
) {
  const headers: Record<string, string> = {};
  if (init.key !== undefined) headers[init.header ?? 'Idempotency-Key'] = init.key;
  await globalThis.fetch(`${ORIGIN}${path}`, { method: init.method ?? 'GET', headers });
  await clock.advance(after);
}

describe('toHaveBeenAttempted(n)', () => {
  it('passes on exactly n attempts, on the recorder and on a for() view', async () => {
    await attempt('/x');
    await attempt('/y');
    await attempt('/x');
    expect(recorder).toHaveBeenAttempted(3);
    expect(recorder.for('/x')).toHaveBeenAttempted(2);
    expect(recorder.for('/z')).toHaveBeenAttempted(0);
    expect(recorder).not.toHaveBeenAttempted(2);
    expect({ recorder }).toEqual({ recorder: expect.toHaveBeenAttempted(3) });
  });

  it('counts the retries a real client makes', async () => {
    server.use(http.get(`${ORIGIN}/orders`, failTimes(2)));
    const client = retryFetch(globalThis.fetch, {
      backoff: { strategy: 'constant', base: 5 },
      jitter: 'none',
      store: memoryStore(),
    });
    expect((await client(`${ORIGIN}/orders`)).status).toBe(200);
    expect(recorder.for('GET /orders')).toHaveBeenAttempted(3);
  });

  it('lists the attempts it saw when the count is wrong', async () => {
    await attempt('/x', { key: 'abc' }, 250);
    await attempt('/x', { key: 'abc' });
    expect(() => expect(recorder).toHaveBeenAttempted(3)).toThrow(
      [
        'Expected 3 attempts, got 2:',
        '  1. GET https://api.example/x at +0 ms (idempotency-key: abc)',
        '  2. GET https://api.example/x at +250 ms (idempotency-key: abc)',
      ].join('\n'),
    );
  });

  it('says so when nothing was recorded, and fails .not on a match', async () => {
    expect(() => expect(recorder).toHaveBeenAttempted(1)).toThrow(
      'Expected 1 attempt, got 0:\n  (no attempts recorded)',
    );
    await attempt('/x');
    expect(() => expect(recorder).not.toHaveBeenAttempted(1)).toThrow(
      'Expected other than 1 attempt, got 1:\n  1. GET https://api.example/x at +0 ms',
    );
  });

  it('refuses what is not a recorder, and a count that is not one', () => {
    expect(() => expect([1, 2]).toHaveBeenAttempted(2)).toThrow(
      '[Retryline msw] toHaveBeenAttempted() expects a Recorder from recordAttempts() (or its for() view), got an array',
    );
    expect(() => expect(recorder).toHaveBeenAttempted(-1)).toThrow(
      '[Retryline msw] Expected times to be a whole number ≥ 0, got -1',
    );
  });
});

describe('toHaveRetriedWithSameIdempotencyKey(header?)', () => {
  it('passes when every attempt carries one key, in the default or a named header', async () => {
    await attempt('/orders', { method: 'POST', key: 'k-1' });
    await attempt('/orders', { method: 'POST', key: 'k-1' });
    await attempt('/pay', { method: 'POST', key: 'p-1', header: 'X-Idempotency-Key' });
    await attempt('/pay', { method: 'POST', key: 'p-1', header: 'X-Idempotency-Key' });
    expect(recorder.for('POST /orders')).toHaveRetriedWithSameIdempotencyKey();
    expect(recorder.for('/pay')).toHaveRetriedWithSameIdempotencyKey('X-Idempotency-Key');
    expect(recorder.for('/pay')).not.toHaveRetriedWithSameIdempotencyKey();
  });

  it('passes for a real client retrying a POST with idempotencyKey: true', async () => {
    server.use(http.post(`${ORIGIN}/orders`, failTimes(1)));
    const client = retryFetch(globalThis.fetch, {
      backoff: 5,
      jitter: 'none',
      store: memoryStore(),
      idempotencyKey: true,
    });
    expect((await client(`${ORIGIN}/orders`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect(recorder.for('POST /orders')).toHaveRetriedWithSameIdempotencyKey();
  });

  it('fails on a single attempt: there was no retry', async () => {
    await attempt('/orders', { method: 'POST', key: 'k-1' });
    expect(() => expect(recorder).toHaveRetriedWithSameIdempotencyKey()).toThrow(
      [
        'Expected a retry carrying the same idempotency-key, but got only 1 attempt:',
        '  1. POST https://api.example/orders at +0 ms (idempotency-key: k-1)',
      ].join('\n'),
    );
  });

  it('fails when an attempt has no key, naming it', async () => {
    await attempt('/orders', { method: 'POST', key: 'k-1' }, 10);
    await attempt('/orders', { method: 'POST' });
    expect(() => expect(recorder).toHaveRetriedWithSameIdempotencyKey()).toThrow(
      [
        'Expected every attempt to carry the same idempotency-key, but attempt 2 had none:',
        '  1. POST https://api.example/orders at +0 ms (idempotency-key: k-1)',
        '  2. POST https://api.example/orders at +10 ms',
      ].join('\n'),
    );
  });

  it('fails when the key changed between attempts, listing the keys', async () => {
    await attempt('/orders', { method: 'POST', key: 'k-1' }, 10);
    await attempt('/orders', { method: 'POST', key: 'k-2' });
    expect(() => expect(recorder).toHaveRetriedWithSameIdempotencyKey()).toThrow(
      "Expected every attempt to carry the same idempotency-key, but got 2 different keys ('k-1', 'k-2'):\n" +
        '  1. POST https://api.example/orders at +0 ms (idempotency-key: k-1)\n' +
        '  2. POST https://api.example/orders at +10 ms (idempotency-key: k-2)',
    );
    expect(recorder).not.toHaveRetriedWithSameIdempotencyKey();
  });

  it('fails .not when the attempts do share one key', async () => {
    await attempt('/orders', { method: 'POST', key: 'k-1' });
    await attempt('/orders', { method: 'POST', key: 'k-1' });
    expect(() => expect(recorder).not.toHaveRetriedWithSameIdempotencyKey()).toThrow(
      "Expected the attempts not to share one idempotency-key, but all 2 carried 'k-1':",
    );
  });
});

describe('toHaveWaitedAtLeast(ms)', () => {
  it('passes when every gap between attempts is at least ms', async () => {
    await attempt('/x', {}, 250);
    await attempt('/x', {}, 500);
    await attempt('/x');
    expect(recorder).toHaveWaitedAtLeast(250);
    expect(recorder).not.toHaveWaitedAtLeast(251);
  });

  it('names the attempt that came too soon', async () => {
    await attempt('/x', {}, 500);
    await attempt('/x', {}, 250);
    await attempt('/x');
    expect(() => expect(recorder).toHaveWaitedAtLeast(300)).toThrow(
      [
        'Expected waits of at least 300 ms between attempts, but attempt 3 came 250 ms after attempt 2:',
        '  1. GET https://api.example/x at +0 ms',
        '  2. GET https://api.example/x at +500 ms',
        '  3. GET https://api.example/x at +750 ms',
      ].join('\n'),
    );
  });

  it('fails with fewer than two attempts: there is no wait to measure', async () => {
    await attempt('/x');
    expect(() => expect(recorder).toHaveWaitedAtLeast(0)).toThrow(
      'Expected waits of at least 0 ms between attempts, but got only 1 attempt (no wait to measure):',
    );
  });

  it('fails .not when no gap was shorter, giving the shortest', async () => {
    await attempt('/x', {}, 400);
    await attempt('/x', {}, 300);
    await attempt('/x');
    expect(() => expect(recorder).not.toHaveWaitedAtLeast(100)).toThrow(
      'Expected some wait between attempts to be shorter than 100 ms, but the shortest was 300 ms:\n' +
        '  1. GET https://api.example/x at +0 ms',
    );
  });
});
