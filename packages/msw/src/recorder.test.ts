import { virtualClock } from '@retryline/core';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Recorder, recordAttempts } from './recorder';
import { isRecorder } from './recorder-brand';
import { status } from './steps';

const origin = 'https://api.example';
const server = setupServer(http.all(`${origin}/*`, status(200)));
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const send = (path: string, init?: RequestInit) => globalThis.fetch(`${origin}${path}`, init);

describe('recordAttempts(server)', () => {
  it('records method, URL, lower-case headers, body and the clock’s time of each request', async () => {
    const clock = virtualClock(1_000);
    const recorder = recordAttempts(server, { clock });
    await send('/orders?page=2');
    await clock.advance(250);
    await send('/orders', {
      method: 'POST',
      headers: { 'Idempotency-Key': 'abc', 'Content-Type': 'application/json' },
      body: '{"sku":1}',
    });
    await recorder.flush();
    recorder.dispose();
    expect(recorder.attempts).toEqual([
      {
        method: 'GET',
        url: `${origin}/orders?page=2`,
        headers: expect.any(Object),
        body: undefined,
        time: 1_000,
      },
      {
        method: 'POST',
        url: `${origin}/orders`,
        headers: expect.objectContaining({ 'idempotency-key': 'abc', 'content-type': 'application/json' }),
        body: '{"sku":1}',
        time: 1_250,
      },
    ]);
  });

  it('leaves the body for the handler to read', async () => {
    const recorder = recordAttempts(server);
    server.use(http.post(`${origin}/echo`, async ({ request }) => HttpResponse.text(await request.text())));
    const response = await send('/echo', { method: 'POST', body: 'hello' });
    expect(await response.text()).toBe('hello');
    await recorder.flush();
    expect(recorder.attempts[0]?.body).toBe('hello');
    recorder.dispose();
  });

  it('stops recording on dispose() and forgets on clear()', async () => {
    const recorder = recordAttempts(server);
    await send('/a');
    recorder.clear();
    expect(recorder.attempts).toEqual([]);
    await send('/b');
    recorder.dispose();
    await send('/c');
    expect(recorder.attempts.map((attempt) => attempt.url)).toEqual([`${origin}/b`]);
  });

  it('rejects a source that is neither a server nor handlers', () => {
    expect(() => recordAttempts({} as never)).toThrow(
      new TypeError(
        '[Retryline msw] Expected source to be an msw server or worker (with events.on) or an array of handlers, got an object',
      ),
    );
  });
});

describe('recorder.for()', () => {
  let recorder: Recorder;
  beforeAll(() => {
    recorder = recordAttempts(server);
  });
  afterEach(() => recorder.clear());
  afterAll(() => recorder.dispose());

  const urls = (view: Recorder) => view.attempts.map((a) => `${a.method} ${a.url}`);

  it('filters by full URL, path, method and path, RegExp or predicate', async () => {
    await send('/orders?page=1');
    await send('/orders', { method: 'POST' });
    await send('/users/7');
    expect(urls(recorder.for(`${origin}/orders`))).toEqual([
      `GET ${origin}/orders?page=1`,
      `POST ${origin}/orders`,
    ]);
    expect(urls(recorder.for('/orders?page=1'))).toEqual([`GET ${origin}/orders?page=1`]);
    expect(urls(recorder.for('POST /orders'))).toEqual([`POST ${origin}/orders`]);
    expect(urls(recorder.for(/\/users\/\d+$/g))).toEqual([`GET ${origin}/users/7`]);
    expect(urls(recorder.for(/\/users\/\d+$/g))).toEqual([`GET ${origin}/users/7`]);
    expect(urls(recorder.for((a) => a.method === 'POST'))).toEqual([`POST ${origin}/orders`]);
    expect(urls(recorder.for('/orders').for('GET /orders'))).toEqual([`GET ${origin}/orders?page=1`]);
  });

  it('reads a path as a URL path, so it matches what the full-URL form matches', async () => {
    await send('/café?q=a b');
    await send('/cafe');
    const expected = [`GET ${origin}/caf%C3%A9?q=a%20b`];
    expect(urls(recorder.for(`${origin}/café?q=a b`))).toEqual(expected);
    expect(urls(recorder.for('/café?q=a b'))).toEqual(expected);
    expect(urls(recorder.for('GET /café'))).toEqual(expected);
    expect(urls(recorder.for('/caf%C3%A9'))).toEqual(expected);
  });

  it('is live, and clear() on a view forgets only what it shows', async () => {
    const orders = recorder.for('/orders');
    expect(isRecorder(orders)).toBe(true);
    await send('/orders');
    await send('/users/1');
    await send('/orders');
    expect(orders.attempts).toHaveLength(2);
    orders.clear();
    expect(orders.attempts).toHaveLength(0);
    expect(urls(recorder)).toEqual([`GET ${origin}/users/1`]);
  });

  it('rejects a filter it cannot read', () => {
    expect(() => recorder.for('')).toThrow(
      "Expected filter to be a URL, a path, a RegExp or a predicate, got ''",
    );
    expect(() => recorder.for('orders')).toThrow("got 'orders'");
  });
});

describe('recordAttempts(handlers)', () => {
  it('records every request and falls through to the handlers given', async () => {
    const recorder = recordAttempts([http.get(`${origin}/x`, () => HttpResponse.text('from x'))]);
    const local = setupServer(...recorder.handlers);
    server.close();
    local.listen({ onUnhandledRequest: 'error' });
    try {
      expect(await (await send('/x')).text()).toBe('from x');
      expect(recorder.attempts.map((a) => a.url)).toEqual([`${origin}/x`]);
      recorder.dispose();
      await send('/x');
      expect(recorder.attempts).toHaveLength(1);
    } finally {
      local.close();
      server.listen({ onUnhandledRequest: 'error' });
    }
  });
});
