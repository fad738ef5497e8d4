import { randomUUID } from 'node:crypto';
import { bulkhead as bulkheadGuard, circuitBreaker, rateLimiter, retryBudget } from '@retryline/core';
import { normalizeBulkhead } from '@retryline/core/store';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { type RedisStoreEvent, redisStore } from '@retryline/redis';
import { Redis } from 'ioredis';
import { afterEach, expect, it, vi } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';
import { useRedisServer } from './redis-server';

const redis = useRedisServer();
const http = useFaultServer();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const clients: Redis[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.disconnect();
  if (!redis.running) await redis.start(); // a test that failed half-way leaves it down
});

/** A client of its own (as another process would have) on the test's redis-server. */
const connect = () => {
  const client = new Redis(redis.port, '127.0.0.1');
  clients.push(client);
  return client;
};

/** Waits (at most 10 s) until `done()` holds, calling `poke()` in between: a state, not a time. */
async function until(done: () => boolean, poke: () => Promise<unknown> = () => sleep(20)): Promise<void> {
  const giveUp = Date.now() + 10_000;
  while (!done()) {
    if (Date.now() > giveUp) throw new Error('[outage] the state waited for never came');
    await poke();
    await sleep(10);
  }
}

const types = (events: readonly RedisStoreEvent[]) => events.map((event) => event.type);

it('redis-server killed mid-run: the budget and the breaker keep acting from local memory, one event says so, and the store returns to Redis by itself after a restart', async () => {
  http.script('/ok', [{ status: 200, body: 'ok' }]);
  http.script('/fail', [{ status: 503 }]);
  const prefix = `outage:${randomUUID()}`;
  const events: RedisStoreEvent[] = [];
  const strictEvents: RedisStoreEvent[] = [];
  const client = connect();
  const store = redisStore(client, { prefix, probeMs: 100, onEvent: (event) => events.push(event) });
  // failOpen: false on a connection of its own: no request without the shared guards.
  const strictClient = connect();
  const strict = retryFetch(fetch, {
    retries: 0,
    store: redisStore(strictClient, {
      prefix,
      failOpen: false,
      onEvent: (event) => strictEvents.push(event),
    }),
  });
  // Per process: retries ≤ 0.1 × requests + 1 × 50 (the window outlasts the test). Without the
  // recovery gate, which would park these retries (every one fails): the budget is the subject.
  const budgeted = retryFetch(fetch, {
    store,
    gate: false,
    retries: 3,
    backoff: { strategy: 'constant', base: 1 },
    jitter: 'none',
    budget: retryBudget({ ratio: 0.1, windowMs: 50_000, minPerSecond: 1 }),
  });
  const breaker = circuitBreaker({ consecutiveFailures: 5, openMs: 60_000 });
  const guarded = retryFetch(fetch, { store, retries: 0, budget: false, breaker });

  expect((await budgeted(`${http.url}/ok`)).status).toBe(200);
  expect((await strict(`${http.url}/ok`)).status).toBe(200);
  await redis.kill(); // SIGKILL, as a crash: no goodbye to the clients
  await until(() => client.status !== 'ready' && strictClient.status !== 'ready');

  // The budget still caps retries: 200 requests that would each retry 3 times.
  const REQUESTS = 200;
  const LOCAL_CAP = 0.1 * REQUESTS + 50;
  const endings = await Promise.all(
    Array.from({ length: REQUESTS }, () =>
      budgeted(`${http.url}/fail`).then(
        // A refused retry hands back the last 503 as fetch gives it: getRetryInfo()
        // says why no retry followed.
        async (response) => {
          await response.text();
          return `status ${response.status} stoppedBy ${getRetryInfo(response)?.stoppedBy}`;
        },
        (error: unknown) => (error as Error).name,
      ),
    ),
  );
  const retries = http.requests('/fail').length - REQUESTS;
  console.info(
    `[outage] Redis down: ${REQUESTS} failing requests retried ${retries} times (local cap ${LOCAL_CAP})`,
  );
  expect(retries).toBeLessThanOrEqual(LOCAL_CAP);
  expect(retries).toBeGreaterThan(0);
  expect(endings).toContain('status 503 stoppedBy budget');
  for (const ending of endings) {
    expect(['status 503 stoppedBy budget', 'status 503 stoppedBy exhausted']).toContain(ending);
  }

  // The breaker still opens: five failures, then nothing is sent.
  const sentBefore = http.requests('/fail').length;
  for (let i = 0; i < 5; i++) {
    expect((await guarded(`${http.url}/fail`)).status).toBe(503);
  }
  await expect(guarded(`${http.url}/fail`)).rejects.toMatchObject({ name: 'CircuitOpenError' });
  expect(http.requests('/fail').length - sentBefore).toBe(breaker.config.consecutiveFailures);

  // failOpen: false refuses instead.
  await expect(strict(`${http.url}/ok`)).rejects.toMatchObject({ name: 'StoreUnavailableError' });
  expect(types(events)).toEqual(['store-unavailable']);
  expect(events[0]).toMatchObject({ store: 'redis', prefix, failOpen: true });
  expect(types(strictEvents)).toEqual(['store-unavailable']);
  expect(strictEvents[0]).toMatchObject({ failOpen: false });

  await redis.start(); // same port, empty (no persistence)
  await until(
    () => events.length === 2,
    () => budgeted(`${http.url}/ok`),
  );
  expect(types(events)).toEqual(['store-unavailable', 'store-recovered']);
  // Back on Redis: the breaker opened in local memory is not consulted (Redis came back empty).
  expect((await guarded(`${http.url}/ok`)).status).toBe(200);
  await until(() => strictClient.status === 'ready');
  expect((await strict(`${http.url}/ok`)).status).toBe(200);
  expect(types(strictEvents)).toEqual(['store-unavailable', 'store-recovered']);

  // And shared again: a breaker opened through this store is open for another process's.
  for (let i = 0; i < 5; i++) await guarded(`${http.url}/fail`);
  // Another process's own breaker value, its state in its own store on the same Redis.
  const elsewhere = retryFetch(fetch, {
    store: redisStore(connect(), { prefix }),
    retries: 0,
    breaker: circuitBreaker({ consecutiveFailures: 5, openMs: 60_000 }),
  });
  await expect(elsewhere(`${http.url}/ok`)).rejects.toMatchObject({ name: 'CircuitOpenError' });
}, 30_000);

it('bulkhead places and queue slots taken from local memory during an outage are given back there after Redis returns', async () => {
  const events: RedisStoreEvent[] = [];
  const client = connect();
  const store = redisStore(client, {
    prefix: `outage:${randomUUID()}`,
    probeMs: 50,
    onEvent: (event) => events.push(event),
  });
  const bulkhead = normalizeBulkhead({ maxConcurrent: 1, maxQueue: 1 });
  const acquire = (holder: string) => store.bulkheadAcquire('k', bulkhead, holder, Date.now());
  await client.ping();
  await redis.kill();
  await until(() => client.status !== 'ready');
  expect(await acquire('first')).toBe('acquired'); // from local memory
  expect(await acquire('waiting')).toBe('queued');
  await redis.start();
  await until(
    () => events.length === 2,
    () => store.pacingGet('k', Date.now()),
  );
  expect(await acquire('waiting')).toBe('acquired'); // asks again: Redis (empty) has a place
  await store.bulkheadRelease('k', 'first', Date.now()); // Redis is back, the place is still freed locally
  await store.bulkheadRelease('k', 'waiting', Date.now()); // its place is Redis's: freed there
  expect(await acquire('after')).toBe('acquired');
  await store.bulkheadRelease('k', 'after', Date.now());
  await redis.kill();
  await until(() => client.status !== 'ready');
  // The next outage finds the local bulkhead empty: nobody holding, nobody ahead in the queue.
  expect(await acquire('second')).toBe('acquired');
  expect(await acquire('third')).toBe('queued');
  expect(await acquire('fourth')).toBe('rejected');
  expect(types(events)).toEqual(['store-unavailable', 'store-recovered', 'store-unavailable']);
}, 30_000);

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
    // Guard values of each client's own, each keeping its state in its client's store (the two
    // stores share one Redis prefix, as two processes of a fleet would).
    const guards = () =>
      ({
        retries: 2,
        backoff: { strategy: 'constant', base: 1 },
        jitter: 'none',
        breaker: circuitBreaker({ consecutiveFailures: 3, openMs: 60_000 }),
        budget: retryBudget(),
        limiter: rateLimiter({ capacity: 1000, refillPerSecond: 1000 }),
        bulkhead: bulkheadGuard({ maxConcurrent: 20, maxQueue: 20 }),
      }) as const;
    const a = retryFetch(fetch, { ...guards(), store: store('a') });
    const b = retryFetch(fetch, { ...guards(), store: store('b') });

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
