import { readFileSync } from 'node:fs';
import axios, { type AxiosInstance } from 'axios';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AttemptRecord, type FaultServer, startFaultServer } from '../support/fault-server';
import { createApiClient as withCompat } from './migration-after';
import { createApiClient as withAxiosRetry } from './migration-before';

// Migrating is one import: the same axios-retry example, once on axios-retry and once with its import
// switched to @retryline/axios/compat, passes the same assertions against a real server.

let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(async () => {
  await server.close();
});

type ClientFactory = (baseURL: string, log?: string[]) => AxiosInstance;

const gap = (earlier: AttemptRecord | undefined, later: AttemptRecord | undefined) =>
  (later?.receivedAt ?? Number.NaN) - (earlier?.receivedAt ?? Number.NaN);

async function runScenario(createApiClient: ClientFactory): Promise<void> {
  server.clear();
  const log: string[] = [];
  const api = createApiClient(server.url, log);

  // A GET through two 503s: retried with exponentialDelay (2^n · 100 ms, plus up to 20 %).
  server.script('/items', [
    { status: 503 },
    { status: 503 },
    { status: 200, headers: { 'content-type': 'application/json' }, body: '["a","b"]' },
  ]);
  const items = await api.get('/items');
  expect(items.status).toBe(200);
  expect(items.data).toEqual(['a', 'b']);
  const [first, second, third] = server.requests('/items');
  expect(server.requests('/items')).toHaveLength(3);
  expect(gap(first, second)).toBeGreaterThanOrEqual(200);
  expect(gap(second, third)).toBeGreaterThanOrEqual(400);

  // A POST through a 503: not idempotent, so not retried; the caller gets axios's error.
  server.script('/orders', [{ status: 503 }, { status: 201 }]);
  const refused = await api.post('/orders', { sku: 'A-1' }).catch((error: unknown) => error);
  expect(axios.isAxiosError(refused)).toBe(true);
  expect(axios.isAxiosError(refused) && refused.response?.status).toBe(503);
  expect(server.requests('/orders')).toHaveLength(1);

  // A 429 with Retry-After: the retry waits at least the second the server asked for.
  server.script('/limited', [
    { status: 429, headers: { 'Retry-After': '1' } },
    { status: 200, body: 'ok' },
  ]);
  const limited = await api.get('/limited');
  expect(limited.data).toBe('ok');
  const [asked, after] = server.requests('/limited');
  expect(gap(asked, after)).toBeGreaterThanOrEqual(1000);

  // A GET that stays down: three attempts, then the last 503, with the retry count on its config.
  server.script('/down', [{ status: 503, body: 'down' }]);
  const down = await api.get('/down').catch((error: unknown) => error);
  expect(axios.isAxiosError(down) && down.response?.status).toBe(503);
  expect(axios.isAxiosError(down) && down.config?.['axios-retry']?.retryCount).toBe(2);
  expect(server.requests('/down')).toHaveLength(3);

  expect(log).toEqual([
    'get /items: retry 1 after 503',
    'get /items: retry 2 after 503',
    'get /limited: retry 1 after 429',
    'get /down: retry 1 after 503',
    'get /down: retry 2 after 503',
  ]);
}

describe('migrating from axios-retry', () => {
  it('the example before and after migrating differs in the axiosRetry import only', () => {
    const lines = (name: string) => readFileSync(new URL(name, import.meta.url), 'utf8').split('\n');
    const before = lines('./migration-before.ts');
    const after = lines('./migration-after.ts');
    expect(after).toHaveLength(before.length);
    const changed = before.flatMap((line, index) => (line === after[index] ? [] : [[line, after[index]]]));
    expect(changed).toEqual([
      ["import axiosRetry from 'axios-retry';", "import axiosRetry from '@retryline/axios/compat';"],
    ]);
  });

  it('runs the scenario on axios-retry', async () => {
    await runScenario(withAxiosRetry);
  });

  it('runs the same scenario on @retryline/axios/compat', async () => {
    await runScenario(withCompat);
  });
});
