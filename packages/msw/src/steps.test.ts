import { virtualClock } from '@retryline/core';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { rateLimited } from './rate-limited';
import { networkError, slow, status } from './steps';

const url = 'https://api.example/steps';
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

// msw patches globalThis.fetch on listen(): look it up at request time.
const get = () => globalThis.fetch(url);

describe('status()', () => {
  it('answers the status with an empty body by default', async () => {
    server.use(http.get(url, status(503)));
    const response = await get();
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('');
  });

  it('answers a text body, headers and a reason phrase', async () => {
    server.use(
      http.get(
        url,
        status(503, { body: 'down', headers: { 'retry-after': '3' }, statusText: 'Service Unavailable' }),
      ),
    );
    const response = await get();
    expect(response.statusText).toBe('Service Unavailable');
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.text()).toBe('down');
  });

  it('answers JSON with its content type', async () => {
    server.use(http.get(url, status(422, { json: { error: 'invalid sku' } })));
    const response = await get();
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(await response.json()).toEqual({ error: 'invalid sku' });
  });

  it('answers any number of attempts, each with a fresh response', async () => {
    server.use(http.get(url, status(200, { body: 'again' })));
    for (let i = 0; i < 3; i++) expect(await (await get()).text()).toBe('again');
  });

  it('rejects what fetch could not answer, where it is written', () => {
    expect(() => status(99)).toThrow(
      new TypeError('[Retryline msw] Expected status to be a whole number ≥ 200, got 99'),
    );
    expect(() => status(600)).toThrow('Expected status to be an HTTP status code in [200, 599], got 600');
    expect(() => status(204, { body: 'x' })).toThrow('Expected no body for status 204');
    expect(() => status(200, { body: 'x', json: {} })).toThrow('Expected either body or json, got both');
    expect(() => status(200, { headers: { 'retry-after': 1 as never } })).toThrow(
      "Expected headers['retry-after'] to be a string, got 1",
    );
  });
});

describe('networkError()', () => {
  it('makes fetch reject with a TypeError and no response', async () => {
    server.use(http.get(url, networkError()));
    await expect(get()).rejects.toThrow(TypeError);
  });
});

describe('slow()', () => {
  it('answers only once the clock has moved past the delay', async () => {
    const clock = virtualClock();
    server.use(http.get(url, slow(1_000, status(200, { body: 'late' }), { clock })));
    let settled = false;
    const response = get().finally(() => {
      settled = true;
    });
    await vi.waitFor(() => expect(clock.pending()).toBe(1));
    await clock.advance(999);
    expect(settled).toBe(false);
    await clock.advance(1);
    expect(await (await response).text()).toBe('late');
  });

  it('stops waiting when the client aborts', async () => {
    const clock = virtualClock();
    server.use(http.get(url, slow(60_000, status(200), { clock })));
    const controller = new AbortController();
    const response = globalThis.fetch(url, { signal: controller.signal });
    await vi.waitFor(() => expect(clock.pending()).toBe(1));
    controller.abort();
    await expect(response).rejects.toThrow();
    await vi.waitFor(() => expect(clock.pending()).toBe(0));
  });

  it('rejects a negative delay', () => {
    expect(() => slow(-1, status(200))).toThrow('[Retryline msw] Expected ms to be a number ≥ 0, got -1');
    expect(() => slow(10, 200 as never)).toThrow('Expected step to be a function (an msw resolver), got 200');
  });
});

describe('rateLimited()', () => {
  const headersOf = async (step: ReturnType<typeof rateLimited>) => {
    server.use(http.get(url, step));
    const response = await get();
    return { status: response.status, headers: Object.fromEntries(response.headers) };
  };

  it('says Retry-After in seconds by default, with 429', async () => {
    expect(await headersOf(rateLimited({ retryAfter: 2 }))).toEqual({
      status: 429,
      headers: { 'retry-after': '2' },
    });
  });

  it('says Retry-After as the IMF-fixdate of the clock’s now plus the wait', async () => {
    const clock = virtualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const { headers } = await headersOf(rateLimited({ retryAfter: 2, as: 'date', clock }));
    expect(headers['retry-after']).toBe('Thu, 01 Jan 2026 12:00:02 GMT');
  });

  it('rounds the date up to a whole second, so the wait is never shorter than asked', async () => {
    const clock = virtualClock(Date.UTC(2026, 0, 1, 12, 0, 0) + 700);
    const { headers } = await headersOf(rateLimited({ retryAfter: 1, as: 'date', clock }));
    expect(headers['retry-after']).toBe('Thu, 01 Jan 2026 12:00:02 GMT');
  });

  it('says RateLimit (IETF draft) with r=0, and RateLimit-Policy when given a policy', async () => {
    expect((await headersOf(rateLimited({ retryAfter: 5, as: 'ratelimit' }))).headers).toEqual({
      ratelimit: '"default";r=0;t=5',
    });
    const withPolicy = rateLimited({ retryAfter: 5, as: 'ratelimit', policy: { quota: 100, window: 60 } });
    expect((await headersOf(withPolicy)).headers).toEqual({
      ratelimit: '"default";r=0;t=5',
      'ratelimit-policy': '"default";q=100;w=60',
    });
  });

  it('says X-RateLimit-Remaining: 0 and X-RateLimit-Reset in seconds', async () => {
    expect(await headersOf(rateLimited({ retryAfter: 7, as: 'x-ratelimit', status: 503 }))).toEqual({
      status: 503,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '7' },
    });
  });

  it('rejects a wait that no header form can carry, and an unknown form', () => {
    expect(() => rateLimited({ retryAfter: 1.5 })).toThrow(
      new TypeError('[Retryline msw] Expected retryAfter to be a whole number ≥ 0, got 1.5'),
    );
    expect(() => rateLimited({ retryAfter: 1, as: 'minutes' as never })).toThrow(
      "Expected as to be one of 'seconds', 'date', 'ratelimit', 'x-ratelimit', got 'minutes'",
    );
    expect(() => rateLimited(undefined as never)).toThrow(
      'Expected options to be an object with retryAfter, got undefined',
    );
  });
});
