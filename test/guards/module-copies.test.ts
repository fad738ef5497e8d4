/**
 * Two copies of @retryline/core in one process (an ESM app and a CJS library each load their own,
 * the dual-package hazard). The two copies behave alike, so a store or a guard value made
 * by one works with a client of the other, and keeps its state.
 */
import { createRequire } from 'node:module';
import type * as core from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { beforeAll, describe, expect, it } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

const server = useFaultServer();
let other: typeof core;

beforeAll(async () => {
  // The tests import the sources; this is the built CommonJS copy (`pnpm build`): a second module.
  other = createRequire(import.meta.url)('../../packages/core/dist/index.cjs') as typeof core;
  const self = await import('@retryline/core');
  expect(other.RetrylineError).not.toBe(self.RetrylineError);
});

describe('stores and guard values across two copies of core', () => {
  it('a memoryStore() from the other copy is a store, and holds the client budget', async () => {
    server.script('/down', [{ status: 503 }]);
    const store = other.memoryStore();
    const client = retryFetch(fetch, { store, retries: 1, backoff: { strategy: 'constant', base: 1 } });
    expect((await client(`${server.url}/down`)).status).toBe(503);
    expect(store.size().budgets).toBe(1);
  });

  it('a circuitBreaker() from the other copy is one breaker for the clients it is given to', async () => {
    server.script('/down', [{ status: 503 }]);
    const breaker = other.circuitBreaker({ consecutiveFailures: 1, openMs: 60_000 });
    const first = retryFetch(fetch, { retries: 0, breaker });
    const second = retryFetch(fetch, { retries: 0, breaker });
    expect((await first(`${server.url}/down`)).status).toBe(503);
    expect(breaker.state(server.url).state).toBe('open');
    const { error } = await settle(second(`${server.url}/down`));
    expect((error as Error).name).toBe('CircuitOpenError');
    expect(server.requests('/down')).toHaveLength(1);
  });
});
