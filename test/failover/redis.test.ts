import { randomUUID } from 'node:crypto';
import type { HttpRetryOptions } from '@retryline/core';
import { failover } from '@retryline/core/failover';
import { redisStore } from '@retryline/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRedisServer } from '../redis/redis-server';
import { useFaultServer } from '../support/use-fault-server';
import { ADAPTERS, attemptsPerEndpoint, type Client } from './clients';

/**
 * Endpoint breakers in a redisStore, on a real redis-server: two clients of different adapters,
 * each with a store of its own over one Redis (as two processes of a fleet would have), share them.
 */

const redis = useRedisServer();
const c = useFaultServer();
let connection: Redis;

beforeAll(() => {
  connection = new Redis(redis.port, '127.0.0.1');
});
afterAll(async () => {
  await connection.quit();
});

const PATH = '/items/1';

async function getsFromC(client: Client, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    expect(await client.send('GET', PATH)).toEqual({ status: 200, body: 'C' });
  }
}

describe('endpoint breakers in a redisStore', () => {
  it('once one client has opened A’s breaker, another client on the same Redis sends A nothing', async () => {
    const A = await c.refusedUrl();
    c.script(PATH, [{ status: 200, body: 'C' }]);
    const prefix = `failover:${randomUUID()}`;
    const options: HttpRetryOptions = {
      retries: 10,
      backoff: 1,
      jitter: 'none',
      budget: false,
      endpoints: failover([A, c.url], {
        balance: 'round-robin',
        breaker: { consecutiveFailures: 2, openMs: 600_000 },
      }),
    };
    const [fetchAdapter, axiosAdapter, kyAdapter] = ADAPTERS;
    if (!fetchAdapter || !axiosAdapter || !kyAdapter) throw new Error('three adapters expected');
    const first = fetchAdapter.create(A, { ...options, store: redisStore(connection, { prefix }) });
    const second = axiosAdapter.create(A, { ...options, store: redisStore(connection, { prefix }) });
    const apart = kyAdapter.create(A, {
      ...options,
      store: redisStore(connection, { prefix: `${prefix}:apart` }),
    });
    const toA = (client: Client) => attemptsPerEndpoint(client.events).get(A) ?? 0;

    await getsFromC(first, 10);
    expect(toA(first)).toBe(2);
    await getsFromC(second, 10);
    expect(toA(second)).toBe(0);
    // Under another prefix, nothing is shared: that client meets A itself.
    await getsFromC(apart, 10);
    expect(toA(apart)).toBe(2);
  });
});
