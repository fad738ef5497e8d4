import { attachRetry, getRetryInfo as axiosRetryInfo } from '@retryline/axios';
import { type HttpRetryOptions, isRetrylineError, memoryStore, pacing, retryBudget } from '@retryline/core';
import { getRetryInfo as fetchRetryInfo, retryFetch } from '@retryline/fetch';
import { getRetryInfo as kyRetryInfo, retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';
import { describe, expect, it } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';

// With nobody listening, no timeout or deadline and only the budget and pacing, the engine makes a
// request's first attempt before setting up its attempt loop, and hands anything but a plain
// success to the loop. These requests run that way (no onEvent, no subscriber), through each
// client, so the hand-over is checked end to end: nothing sent twice, counted twice, or skipped.
const server = useFaultServer();

interface Silent {
  readonly name: string;
  /** One GET through a client made with `options` and no listener; a thrown error is returned. */
  send(
    url: string,
    options: HttpRetryOptions,
    signal?: AbortSignal,
  ): Promise<{
    status?: number | undefined;
    error?: unknown;
    attempts?: number | undefined;
    requestId?: string | undefined;
    /** Why no retry followed the last attempt, from getRetryInfo(). */
    stoppedBy?: string | undefined;
  }>;
}

const clients: Silent[] = [
  {
    name: 'fetch',
    async send(url, options, signal) {
      try {
        const response = await retryFetch(fetch, options)(url, signal ? { signal } : {});
        const info = fetchRetryInfo(response);
        await response.text();
        return {
          status: response.status,
          attempts: info?.attempts,
          requestId: info?.requestId,
          stoppedBy: info?.stoppedBy,
        };
      } catch (error) {
        return { error };
      }
    },
  },
  {
    name: 'axios',
    async send(url, options, signal) {
      const instance = axios.create();
      attachRetry(instance, options);
      try {
        const response = await instance.get(url, signal ? { signal } : {});
        const info = axiosRetryInfo(response);
        return { status: response.status, attempts: info?.attempts, requestId: info?.requestId };
      } catch (error) {
        // axios rejects a final 503 with an AxiosError that holds the response.
        if (axios.isAxiosError(error) && error.response) {
          const info = axiosRetryInfo(error);
          return { status: error.response.status, attempts: info?.attempts, stoppedBy: info?.stoppedBy };
        }
        // A refusal is an AxiosError whose cause is Retryline's error: compared as that error.
        if (axios.isAxiosError(error) && isRetrylineError(error.cause)) return { error: error.cause };
        return { error };
      }
    },
  },
  {
    name: 'ky',
    async send(url, options, signal) {
      try {
        const response = await ky.create({ ...retryline(options), throwHttpErrors: false }).get(url, {
          ...(signal ? { signal } : {}),
        });
        const info = kyRetryInfo(response);
        await response.text();
        return {
          status: response.status,
          attempts: info?.attempts,
          requestId: info?.requestId,
          stoppedBy: info?.stoppedBy,
        };
      } catch (error) {
        return { error };
      }
    },
  },
];

const fast: HttpRetryOptions = { backoff: { strategy: 'constant', base: 5 }, jitter: 'none' };
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe.each(clients)('the first attempt, with nobody listening, through $name', (client) => {
  it('returns a success after one send, with its retry info and a request id', async () => {
    server.script('/ok', [{ status: 200, body: 'ok' }]);
    const result = await client.send(`${server.url}/ok`, { ...fast, store: memoryStore() });
    expect(result).toMatchObject({ status: 200, attempts: 1 });
    expect(result.requestId).toMatch(UUID_V4);
    expect(server.requests('/ok')).toHaveLength(1);
  });

  it('hands a 503 to the loop, which retries it without sending the first attempt again', async () => {
    server.script('/flaky', [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    const result = await client.send(`${server.url}/flaky`, { ...fast, store: memoryStore() });
    expect(result).toMatchObject({ status: 200, attempts: 3 });
    expect(server.requests('/flaky')).toHaveLength(3);
  });

  it('hands a connection reset to the loop, which retries it', async () => {
    server.script('/reset', [{ fault: 'reset-before-headers' }, { status: 200, body: 'ok' }]);
    const result = await client.send(`${server.url}/reset`, { ...fast, store: memoryStore() });
    expect(result).toMatchObject({ status: 200, attempts: 2 });
    expect(server.requests('/reset')).toHaveLength(2);
  });

  it('counts each request once in the budget: 10 failing requests earn at most 5 retries', async () => {
    server.script('/down', [{ status: 503 }]);
    const options = {
      ...fast,
      retries: 5,
      store: memoryStore(),
      budget: retryBudget({ ratio: 0.5, minPerSecond: 0 }),
    };
    const refused: (string | undefined)[] = [];
    for (let i = 0; i < 10; i++) {
      // A refused retry hands back the last 503 as the client gives it; why it stopped
      // is in getRetryInfo().
      const { status, error, stoppedBy } = await client.send(`${server.url}/down`, options);
      expect(error).toBeUndefined();
      expect(status).toBe(503);
      refused.push(stoppedBy);
    }
    // Counted twice, 10 requests would earn 10 retries.
    const sent = server.requests('/down').length;
    expect(sent).toBeGreaterThanOrEqual(10);
    expect(sent).toBeLessThanOrEqual(15);
    expect(refused).toContain('budget');
    // Every request stopped for a reason getRetryInfo() names: its retries ran out or the budget refused.
    for (const why of refused) expect(['budget', 'exhausted']).toContain(why);
  });

  it('a success that says the quota is spent paces the next request to the origin and first path segment', async () => {
    server.script('/api/spent', [{ status: 200, body: 'ok', headers: { RateLimit: '"default";r=0;t=30' } }]);
    server.script('/api/next', [{ status: 200, body: 'ok' }]);
    const store = memoryStore();
    const paced = pacing();
    expect(await client.send(`${server.url}/api/spent`, { ...fast, store, pacing: paced })).toMatchObject({
      status: 200,
    });
    // The quota is back in 30 s, more than this request may wait: refused at once, unsent.
    const next = await client.send(`${server.url}/api/next`, {
      ...fast,
      store,
      pacing: paced,
      maxRetryAfter: 1000,
    });
    expect(isRetrylineError(next.error, 'RateLimitedError')).toBe(true);
    expect(server.requests('/api/next')).toHaveLength(0);
  });

  it('an abort during the first attempt ends the request at once with the reason', async () => {
    server.script('/slow', [{ status: 200, body: 'late', delayMs: 2000 }]);
    const controller = new AbortController();
    const reason = new Error('user left');
    setTimeout(() => controller.abort(reason), 50);
    const started = Date.now();
    const result = await client.send(
      `${server.url}/slow`,
      { ...fast, store: memoryStore() },
      controller.signal,
    );
    expect(Date.now() - started).toBeLessThan(1500);
    expect(result.status).toBeUndefined();
    expect(result.error).toBeDefined();
    expect(server.requests('/slow')).toHaveLength(1);
  });
});
