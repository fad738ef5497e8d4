import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { retryBudget } from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { type RedisStoreEvent, redisStore } from '@retryline/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useRedisServer } from './redis-server';

/**
 * A regression test: a healthy Redis was once reported down under a burst. The busy process waited
 * past `timeoutMs` for answers Redis had long sent (its timers ran before it read the socket), so
 * the store failed open at the peak and retries went past the budget's cap, or, with
 * `failOpen: false`, requests failed with StoreUnavailableError. Here the process is made busier
 * still: it blocks for twice `timeoutMs` while the fresh connection connects and again while
 * store commands are in flight.
 */

const redis = useRedisServer();

const REQUESTS = 2000;
// retries ≤ ratio × requests + minPerSecond × windowMs / 1000 = 0.1 × 2000 + 2 × 50 = 300. The
// window outlasts the burst, so the whole burst is one window.
const BUDGET = { ratio: 0.1, windowMs: 50_000, minPerSecond: 2 } as const;
const CAP = 300;
const TIMEOUT_MS = 250;

/** Blocks the event loop, as a process busy with its own work does. */
const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {}
};

// An always-503 server in this process: its request handler is this process's work too.
let server: Server;
let url = '';
let received = 0;
beforeAll(async () => {
  server = createServer((_request, response) => {
    received++;
    // Busy while the other attempts' store operations (budget, breaker) wait for their answers.
    if (received === 1 || received === REQUESTS) busy(2 * TIMEOUT_MS);
    response.writeHead(503, { 'content-type': 'text/plain' }).end('busy');
  });
  server.listen({ port: 0, host: '127.0.0.1', backlog: 4096 });
  await once(server, 'listening');
  const address = server.address();
  if (typeof address !== 'object' || address === null) throw new Error('no address');
  url = `http://127.0.0.1:${address.port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
});

/** One burst through a fresh client and store: how many retries went out, how requests ended. */
async function burst(failOpen: boolean) {
  const client = new Redis(redis.port, '127.0.0.1'); // still connecting when the burst starts
  const events: RedisStoreEvent[] = [];
  try {
    const store = redisStore(client, {
      prefix: `burst:${randomUUID()}`,
      timeoutMs: TIMEOUT_MS,
      failOpen,
      onEvent: (event) => events.push(event),
    });
    const api = retryFetch(fetch, {
      store,
      budget: retryBudget(BUDGET),
      // The budget's cap is the subject: the recovery gate, which would park these retries (the
      // server fails every time), is off.
      gate: false,
      retries: 3,
      backoff: { strategy: 'constant', base: 1 },
      jitter: 'none',
    });
    received = 0;
    const requests = Array.from({ length: REQUESTS }, () =>
      api(url).then(
        // A retry the budget refused hands back the last 503 as fetch gives it; why no
        // retry followed is in getRetryInfo(): 'status 503 stoppedBy budget'.
        async (response) => {
          await response.text();
          const stoppedBy = getRetryInfo(response)?.stoppedBy;
          return `status ${response.status}${stoppedBy === undefined ? '' : ` stoppedBy ${stoppedBy}`}`;
        },
        (error: unknown) => (error instanceof Error ? error.name : String(error)),
      ),
    );
    busy(2 * TIMEOUT_MS); // every request's first store operation is waiting for the connection
    const endings: Record<string, number> = {};
    for (const ending of await Promise.all(requests)) endings[ending] = (endings[ending] ?? 0) + 1;
    return { retries: received - REQUESTS, endings, events: events.map((event) => event.type) };
  } finally {
    client.disconnect();
  }
}

describe(`${REQUESTS} concurrent requests against an always-503 server through a fresh redisStore (timeoutMs ${TIMEOUT_MS})`, () => {
  for (const failOpen of [true, false]) {
    it(`keep retries within the budget's cap of ${CAP}, burst after burst, and never report Redis down (failOpen: ${failOpen})`, async () => {
      const bursts = [];
      for (let i = 0; i < 3; i++) bursts.push(await burst(failOpen));
      console.info(`[burst] failOpen ${failOpen}: ${JSON.stringify(bursts)}`);
      for (const { retries, endings, events } of bursts) {
        expect(events).toEqual([]); // no store-unavailable: Redis answered throughout
        expect(endings.StoreUnavailableError).toBeUndefined();
        expect(retries).toBeLessThanOrEqual(CAP);
        // The budget, not something else, stopped the retries: 3 per request were wanted.
        expect(endings['status 503 stoppedBy budget']).toBeGreaterThan(0);
        // Every request ended with its last 503, stopped by the budget or by running out of retries.
        expect(Object.keys(endings).sort()).toEqual(expect.arrayContaining(['status 503 stoppedBy budget']));
        for (const ending of Object.keys(endings)) {
          expect(['status 503 stoppedBy budget', 'status 503 stoppedBy exhausted']).toContain(ending);
        }
      }
    }, 50_000);
  }
});
