/**
 * Adaptive client-side throttling (SRE book, "Handling Overload"): each test states one behaviour
 * of `adaptiveThrottle()` through a real client against a loopback server, with a seeded random.
 * What is refused locally must never reach the server; the refusal probability must follow
 * max(0, (requests − k × accepts) / (requests + 1)).
 */
import { attachRetry } from '@retryline/axios';
import {
  adaptiveThrottle,
  isRetrylineError,
  memoryStore,
  type Random,
  retry,
  seededRandom,
  virtualClock,
} from '@retryline/core';
import { localStore } from '@retryline/core/store';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios, { type AxiosError } from 'axios';
import ky from 'ky';
import { describe, expect, it } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

const server = useFaultServer();
const once = { retries: 0, random: seededRandom(7) } as const;

/** Sends `n` GETs to `path` one after another; what each gave. */
async function sendMany(client: typeof fetch, path: string, n: number) {
  const results: Array<{ status?: number; error?: unknown }> = [];
  for (let i = 0; i < n; i++) {
    const { value, error } = await settle(client(`${server.url}${path}`));
    results.push(value ? { status: value.status } : { error });
  }
  return results;
}

describe('adaptiveThrottle: refuses nothing while the server accepts', () => {
  it('200s and 4xx are accepts: 60 requests, all sent, rejection 0', async () => {
    server.script('/ok', [{ status: 200 }]);
    server.script('/missing', [{ status: 404 }]);
    const throttle = adaptiveThrottle();
    const client = retryFetch(fetch, { ...once, throttle });
    const results = [...(await sendMany(client, '/ok', 30)), ...(await sendMany(client, '/missing', 30))];
    expect(results.every((r) => r.status !== undefined)).toBe(true);
    expect(server.requests('/ok')).toHaveLength(30);
    expect(server.requests('/missing')).toHaveLength(30);
    expect(throttle.state(server.url)).toEqual({ requests: 60, accepts: 60, rejection: 0 });
  });

  it('a fresh throttle refuses none of many requests sent at once to a healthy server (attempts in flight count for nothing yet)', async () => {
    server.script('/slow-ok', [{ status: 200, delayMs: 30 }]);
    const throttle = adaptiveThrottle();
    const client = retryFetch(fetch, { ...once, throttle });
    const results = await Promise.all(
      Array.from({ length: 50 }, () => settle(client(`${server.url}/slow-ok`))),
    );
    expect(results.filter((r) => r.error)).toEqual([]);
    expect(server.requests('/slow-ok')).toHaveLength(50);
    expect(throttle.state(server.url)).toEqual({ requests: 50, accepts: 50, rejection: 0 });
  });

  it('a client without one never refuses (opt-in): 40 failures, all 40 sent', async () => {
    server.script('/down', [{ status: 503 }]);
    await sendMany(retryFetch(fetch, once), '/down', 40);
    expect(server.requests('/down')).toHaveLength(40);
  });
});

describe('adaptiveThrottle: once the server rejects, the client sheds load itself', () => {
  it('an origin answering 503: each refusal carries the SRE probability, and refused attempts never reach the server', async () => {
    server.script('/down', [{ status: 503 }]);
    const throttle = adaptiveThrottle({ k: 2 });
    const client = retryFetch(fetch, { ...once, throttle });
    const results = await sendMany(client, '/down', 200);
    const refused = results.flatMap((r, index) => (r.error ? [{ index, error: r.error }] : []));
    const sent = results.filter((r) => r.status === 503);
    // Every request is either refused locally or reached the server — never both, never neither.
    expect(sent.length + refused.length).toBe(200);
    expect(server.requests('/down')).toHaveLength(sent.length);
    // The first attempt has no history (probability 0); the expected number sent is H(200) ≈ 5.9.
    expect(results[0]?.status).toBe(503);
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(sent.length).toBeLessThanOrEqual(15);
    for (const { index, error } of refused) {
      expect(isRetrylineError(error, 'ThrottledError')).toBe(true);
      // Before request `index`, `index` requests were counted and none accepted.
      expect((error as { rejection: number }).rejection).toBeCloseTo(index / (index + 1), 12);
      expect((error as { attempts: number }).attempts).toBe(0);
    }
    expect(throttle.state(server.url)).toEqual({ requests: 200, accepts: 0, rejection: 200 / 201 });
  });

  it('k sets how much more than the accepted a client may send: 3 accepts back 6 requests at k = 2', async () => {
    server.script('/mixed', [{ status: 200 }, { status: 200 }, { status: 200 }, { status: 503 }]);
    const throttle = adaptiveThrottle({ k: 2 });
    const client = retryFetch(fetch, { ...once, throttle });
    await sendMany(client, '/mixed', 6);
    // 6 requests, 3 accepted: 6 − 2 × 3 = 0, so nothing is refused yet.
    expect(server.requests('/mixed')).toHaveLength(6);
    expect(throttle.state(server.url)).toEqual({ requests: 6, accepts: 3, rejection: 0 });
    await sendMany(client, '/mixed', 1);
    expect(throttle.state(server.url).rejection).toBeCloseTo((7 - 6) / 8, 12);
  });

  it('the counts are kept over windowMs: once the failures leave the window, nothing is refused', async () => {
    server.script('/down', [{ status: 503 }]);
    const clock = virtualClock(Date.parse('2026-01-01T00:00:00Z'));
    const throttle = adaptiveThrottle({ windowMs: 10_000 });
    const client = retryFetch(fetch, { ...once, clock, throttle });
    await sendMany(client, '/down', 50);
    expect(throttle.state(server.url, clock.now()).rejection).toBeGreaterThan(0.9);
    await clock.advance(10_000);
    expect(throttle.state(server.url, clock.now())).toEqual({ requests: 0, accepts: 0, rejection: 0 });
    const before = server.requests('/down').length;
    await sendMany(client, '/down', 1);
    expect(server.requests('/down')).toHaveLength(before + 1);
  });

  it('a refused retry hands back the last response, stoppedBy "throttle"', async () => {
    server.script('/down', [{ status: 503, body: 'busy' }]);
    const throttle = adaptiveThrottle();
    // The random decides only the throttle (no jitter): the first attempt is admitted, the retry refused.
    const draws = [0.999, 0];
    const random: Random = () => draws.shift() ?? 0;
    const warm = retryFetch(fetch, { ...once, throttle });
    await sendMany(warm, '/down', 1); // history: 1 request, 0 accepts
    const client = retryFetch(fetch, { retries: 3, jitter: 'none', backoff: { base: 0 }, random, throttle });
    const sentBefore = server.requests('/down').length;
    const response = await client(`${server.url}/down`);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('busy');
    expect(server.requests('/down')).toHaveLength(sentBefore + 1);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 1, stoppedBy: 'throttle' });
  });

  it('a request aborted mid-attempt is not counted as a rejection', async () => {
    server.script('/slow', [{ fault: 'stall-headers' }]);
    const throttle = adaptiveThrottle();
    const client = retryFetch(fetch, { ...once, throttle });
    const controller = new AbortController();
    const pending = settle(client(`${server.url}/slow`, { signal: controller.signal }));
    while (server.requests('/slow').length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    expect((await pending).error).toBeDefined();
    expect(throttle.state(server.url)).toMatchObject({ requests: 0, accepts: 0 });
  });
});

describe('adaptiveThrottle: through every client, with its conventions', () => {
  /** A throttle with history at `path`: 1 request, 0 accepts; a random that refuses next. */
  const primed = async (path: string) => {
    const throttle = adaptiveThrottle();
    await sendMany(retryFetch(fetch, { ...once, throttle }), path, 1);
    return { throttle, options: { retries: 0, random: () => 0, throttle } as const };
  };

  it('axios: a refused request rejects with an AxiosError, code ERR_THROTTLED, the ThrottledError its cause', async () => {
    server.script('/down', [{ status: 503 }]);
    const { options } = await primed('/down');
    const instance = axios.create({ baseURL: server.url });
    attachRetry(instance, options);
    const { error } = await settle(instance.get('/down'));
    expect(axios.isAxiosError(error)).toBe(true);
    expect((error as AxiosError).code).toBe('ERR_THROTTLED');
    expect(isRetrylineError((error as AxiosError).cause, 'ThrottledError')).toBe(true);
    expect(server.requests('/down')).toHaveLength(1);
  });

  it('ky: a refused request throws the ThrottledError, nothing sent', async () => {
    server.script('/down', [{ status: 503 }]);
    const { options } = await primed('/down');
    const api = ky.create(retryline(options));
    const { error } = await settle(api.get(`${server.url}/down`));
    expect(isRetrylineError(error, 'ThrottledError')).toBe(true);
    expect(server.requests('/down')).toHaveLength(1);
  });

  it('retry(): keyed by guardKey, a refused call never runs the operation', async () => {
    const throttle = adaptiveThrottle();
    let runs = 0;
    const failing = () => {
      runs += 1;
      return Promise.reject(Object.assign(new Error('down'), { code: 'ECONNRESET' }));
    };
    await settle(retry(failing, { retries: 0, throttle, guardKey: 'db' }));
    const { error } = await settle(retry(failing, { retries: 0, throttle, guardKey: 'db', random: () => 0 }));
    expect(isRetrylineError(error, 'ThrottledError')).toBe(true);
    expect(runs).toBe(1);
    expect(throttle.state('db')).toEqual({ requests: 2, accepts: 0, rejection: 2 / 3 });
  });
});

describe('adaptiveThrottle: options and state', () => {
  it('bad options fail before anything is sent, naming the option', () => {
    expect(() => adaptiveThrottle({ k: 0.5 })).toThrow(
      'Expected throttle.k to be a finite number ≥ 1, got 0.5',
    );
    expect(() => adaptiveThrottle({ windowMs: -1 })).toThrow(/throttle\.windowMs/);
    expect(() => retryFetch(fetch, { throttle: { k: 2 } as never })).toThrow(/adaptiveThrottle\(\)/);
  });

  it('keeps its counts in memory even for a client whose store is shared, and shares them between clients', async () => {
    server.script('/down', [{ status: 503 }]);
    const throttle = adaptiveThrottle();
    await sendMany(retryFetch(fetch, { ...once, throttle, store: localStore() }), '/down', 2);
    await sendMany(retryFetch(fetch, { ...once, throttle, store: memoryStore() }), '/down', 1);
    expect(throttle.state(server.url).requests).toBe(3);
  });

  it('a memory store given to the throttle holds its keys (and counts them in size())', async () => {
    server.script('/ok', [{ status: 200 }]);
    const store = memoryStore();
    const throttle = adaptiveThrottle({ store });
    await sendMany(retryFetch(fetch, { ...once, throttle }), '/ok', 2);
    expect(store.size().throttles).toBe(1);
  });
});

describe('adaptiveThrottle: state that stays honest (an adversarial review)', () => {
  const fail = () => Promise.reject(Object.assign(new Error('down'), { code: 'ECONNRESET' }));
  const ok = () => Promise.resolve('ok');
  /** `operation`, counting its runs in `runs.count`. */
  const counted =
    <T>(runs: { count: number }, operation: () => Promise<T>) =>
    () => {
      runs.count += 1;
      return operation();
    };

  it('forgets idle keys: 600 origins used once and left for two minutes are swept', async () => {
    const store = memoryStore();
    const clock = virtualClock(Date.parse('2026-01-01T00:00:00Z'));
    const throttle = adaptiveThrottle({ store });
    for (let i = 0; i < 600; i++)
      await retry(ok, { retries: 0, throttle, guardKey: `https://o${i}.example`, clock });
    expect(store.size().throttles).toBe(600);
    await clock.advance(121_000);
    for (let i = 0; i < 600; i++)
      await retry(ok, { retries: 0, throttle, guardKey: 'https://kept.example', clock });
    expect(store.size().throttles).toBeLessThanOrEqual(1);
  });

  it('attempts hung longer than the window do not hide the failures that follow', async () => {
    const clock = virtualClock(Date.parse('2026-01-01T00:00:00Z'));
    const throttle = adaptiveThrottle({ windowMs: 10_000 });
    const options = { retries: 0, throttle, guardKey: 'db', clock, random: seededRandom(3) } as const;
    const stop = new AbortController();
    const hung = Array.from({ length: 30 }, () =>
      settle(
        retry(
          ({ signal }) =>
            new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
          { ...options, signal: stop.signal },
        ),
      ),
    );
    await clock.advance(11_000);
    const runs = { count: 0 };
    for (let i = 0; i < 40; i++) await settle(retry(counted(runs, fail), options));
    // With nothing in flight, about H(40) ≈ 4.3 of 40 run; far fewer than 40 either way.
    expect(runs.count).toBeLessThanOrEqual(12);
    stop.abort();
    await Promise.all(hung);
  });

  it('a wall clock stepped back starts the counts afresh instead of keeping them until it catches up', async () => {
    const T = Date.parse('2026-01-01T00:00:00Z');
    let now = T + 3_600_000;
    const clock = { now: () => now, sleep: () => Promise.resolve() };
    const throttle = adaptiveThrottle({ windowMs: 10_000 });
    const options = { retries: 0, throttle, guardKey: 'api', clock, random: seededRandom(5) } as const;
    await retry(ok, options); // counted an hour ahead
    now = T; // the clock steps back
    for (let i = 0; i < 100; i++) await settle(retry(fail, options));
    now = T + 120_000; // twelve windows later
    expect(throttle.state('api', now)).toEqual({ requests: 0, accepts: 0, rejection: 0 });
    const runs = { count: 0 };
    for (let i = 0; i < 50; i++) await retry(counted(runs, ok), options);
    expect(runs.count).toBe(50);
  });

  it('a 4xx the caller retries with retryOn is an accept (the server did the work), as for the breaker', async () => {
    server.script('/conflict', [{ status: 409 }]);
    const throttle = adaptiveThrottle();
    const client = retryFetch(fetch, {
      retries: 2,
      jitter: 'none',
      backoff: { base: 0 },
      random: seededRandom(7),
      retryOn: ({ status }) => status === 409,
      throttle,
    });
    for (let i = 0; i < 10; i++) await client(`${server.url}/conflict`);
    expect(server.requests('/conflict')).toHaveLength(30);
    expect(throttle.state(server.url)).toEqual({ requests: 30, accepts: 30, rejection: 0 });
  });
});
