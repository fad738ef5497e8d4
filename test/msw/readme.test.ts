import { readFileSync } from 'node:fs';
import { retryFetch } from '@retryline/fetch';
import { failTimes, recordAttempts, status } from '@retryline/msw';
import '@retryline/msw/vitest';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';

// packages/msw/README.md's example, run as written: every line of its TypeScript block is a line of
// this file, so the README cannot show code that does not compile or pass.

const server = setupServer();
const recorder = recordAttempts(server);
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  recorder.clear();
});
afterAll(() => server.close());

it('retries a POST through two 503s with one idempotency key', async () => {
  server.use(http.post('https://api.example/orders', failTimes(2, status(503), status(201))));
  const client = retryFetch({ idempotencyKey: true, backoff: 10, jitter: 'none' });
  const response = await client('https://api.example/orders', { method: 'POST', body: '{"sku":1}' });
  expect(response.status).toBe(201);
  expect(recorder.for('POST /orders')).toHaveBeenAttempted(3);
  expect(recorder.for('POST /orders')).toHaveRetriedWithSameIdempotencyKey();
});

it('packages/msw/README.md shows only code that this file runs', () => {
  const readme = readFileSync(new URL('../../packages/msw/README.md', import.meta.url), 'utf8');
  const self = readFileSync(new URL(import.meta.url), 'utf8').split('\n');
  const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
  expect(blocks).toHaveLength(1);
  const missing = blocks
    .flatMap((block) => block.split('\n'))
    .filter((line) => line.trim() !== '' && !self.includes(line));
  expect(missing).toEqual([]);
});
