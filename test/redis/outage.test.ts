import { randomUUID } from 'node:crypto';
import { retryFetch } from '@retryline/fetch';
import { type RedisStoreEvent, redisStore } from '@retryline/redis';
import { Redis } from 'ioredis';
import { afterEach, expect, it, vi } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';
import { useRedisServer } from './redis-server';

const redis = useRedisServer();
const http = useFaultServer();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const clients: Redis[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

it('redis-server killed mid-run: requests go on, one event per outage per store, no crash; after a restart the fleet shares state again', async () => {
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  const logged = vi.spyOn(console, 'error');
  try {
    http.script('/ok', [{ status: 200, body: 'ok' }]);
    http.script('/down', [{ status: 503 }]);
    const prefix = `outage:${randomUUID()}`;
    // Two processes' worth: each its own ioredis connection (default reconnect strategy) and store.
    const events = { a: [] as RedisStoreEvent[], b: [] as RedisStoreEvent[] };
    const store = (name: 'a' | 'b') => {
      const client = new Redis(redis.port, '127.0.0.1');
      clients.push(client);
      return redisStore(client, { prefix, onEvent: (event) => events[name].push(event) });
    };
    const guards = {
      retries: 2,
      backoff: { strategy: 'constant', base: 1 },
      jitter: 'none',
      breaker: { consecutiveFailures: 3, openMs: 60_000 },
      budget: true,
      limiter: { capacity: 1000, refillPerSecond: 1000 },
      bulkhead: { maxConcurrent: 20, maxQueue: 20 },
    } as const;
    const a = retryFetch(fetch, { ...guards, store: store('a') });
    const b = retryFetch(fetch, { ...guards, store: store('b') });

    let phase: 'up' | 'down' | 'restarted' = 'up';
    const sent = { up: 0, down: 0, restarted: 0 };
    const failures: unknown[] = [];
    let slowest = 0;
    let running = true;
    const traffic = async (client: typeof a) => {
      while (running) {
        const started = performance.now();
        const at = phase;
        try {
          const response = await client(`${http.url}/ok`);
          if (response.status !== 200) failures.push(response.status);
        } catch (error) {
          failures.push(error);
        }
        sent[at]++;
        slowest = Math.max(slowest, performance.now() - started);
        await sleep(5);
      }
    };
    const loops = [traffic(a), traffic(b), traffic(a), traffic(b)];

    await sleep(300);
    await redis.kill(); // SIGKILL, as a crash: no goodbye to the clients
    phase = 'down';
    await sleep(800);
    await redis.start(); // same port, empty (no persistence)
    phase = 'restarted';
    const recovered = () =>
      [events.a, events.b].every((list) => list.some((event) => event.type === 'store-recovered'));
    const until = Date.now() + 10_000;
    while (!recovered() && Date.now() < until) await sleep(20);
    await sleep(200);
    running = false;
    await Promise.all(loops);

    expect(failures).toEqual([]);
    expect(sent.down).toBeGreaterThan(20); // the requests went on while Redis was gone
    expect(sent.restarted).toBeGreaterThan(0);
    // The slowest request waited out one store timeout (250 ms) at the start of the outage.
    expect(slowest).toBeLessThan(1500);
    for (const list of [events.a, events.b]) {
      expect(list.map((event) => event.type)).toEqual(['store-unavailable', 'store-recovered']);
    }

    // Shared state resumes: a breaker opened through one store is open for the other.
    expect((await a(`${http.url}/down`)).status).toBe(503); // three attempts, the third failure opens it
    expect(http.requests('/down')).toHaveLength(3);
    await expect(b(`${http.url}/ok`)).rejects.toMatchObject({ name: 'CircuitOpenError' });
    expect(http.requests('/down')).toHaveLength(3);

    await sleep(300); // a late rejection would surface by now
    expect(rejections).toEqual([]);
    expect(logged).not.toHaveBeenCalled(); // ioredis printed no unhandled 'error' event
    console.info(
      `[outage] requests while up ${sent.up}, while down ${sent.down}, after restart ${sent.restarted}; slowest ${Math.round(slowest)} ms; downtime ${events.a
        .map((event) => (event.type === 'store-recovered' ? event.downtime : undefined))
        .filter(Boolean)
        .join(', ')} ms`,
    );
  } finally {
    process.off('unhandledRejection', onRejection);
  }
}, 30_000);
