import { memoryStore, retryFetch } from '@retryline/fetch';
import { failTimes, networkError, rateLimited, recordAttempts, sequence, status } from '@retryline/msw';
import '@retryline/msw/vitest';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';

// The client under test, made once as in the app. It calls the global fetch msw patches; its own
// store keeps guard state (budget, pacing) from leaking into other test files.
const api = retryFetch({
  idempotencyKey: true,
  backoff: { strategy: 'constant', base: 10 },
  jitter: 'none',
  store: memoryStore(),
});

const server = setupServer();
const attempts = recordAttempts(server);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  attempts.clear();
});
afterAll(() => server.close());

it('retries a POST through two 503s with one idempotency key', async () => {
  server.use(http.post('https://api.example/orders', failTimes(2, status(503), status(201))));
  const response = await api('https://api.example/orders', { method: 'POST', body: '{"sku":1}' });
  expect(response.status).toBe(201);
  expect(attempts.for('POST /orders')).toHaveBeenAttempted(3);
  expect(attempts.for('POST /orders')).toHaveRetriedWithSameIdempotencyKey();
});

it('waits as long as Retry-After asks', async () => {
  server.use(http.get('https://api.example/quota', sequence([rateLimited({ retryAfter: 1 }), status(200)])));
  const response = await api('https://api.example/quota');
  expect(response.status).toBe(200);
  expect(attempts.for('GET /quota')).toHaveWaitedAtLeast(1000);
});

it('retries a GET after a dropped connection, but not a POST that carries no key', async () => {
  server.use(http.all('https://api.example/ping', failTimes(1, networkError())));
  expect((await api('https://api.example/ping')).status).toBe(200);
  server.use(http.all('https://api.example/ping', failTimes(1, networkError())));
  const once = { idempotencyKey: false };
  const post = api('https://api.example/ping', { method: 'POST', body: 'x', retry: once });
  await expect(post).rejects.toThrow('Failed to fetch');
  expect(attempts.for('POST /ping')).toHaveBeenAttempted(1);
});
