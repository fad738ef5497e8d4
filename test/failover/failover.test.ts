import { attachRetry } from '@retryline/axios';
import {
  CircuitOpenError,
  type Clock,
  type HttpRetryOptions,
  InvalidOptionsError,
  memoryStore,
  type RetrylineEvent,
  recoveryGate,
  virtualClock,
} from '@retryline/core';
import { systemClock } from '@retryline/core/adapter';
import { failover, hedging } from '@retryline/core/failover';
import axios from 'axios';
import { describe, expect, it } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';
import {
  ADAPTERS,
  type Adapter,
  attemptStarts,
  attemptsPerEndpoint,
  byRequest,
  type Client,
  endpointOf,
} from './clients';
import { answer, type Handler, useServices } from './loopback';

/**
 * Endpoint failover end to end, through every adapter, over real loopback sockets: A refuses
 * connections (a port nothing listens on), B answers 503, C answers 200. Counts, never timings:
 * what each server received and what the events say each attempt was sent to.
 */

const b = useFaultServer();
const c = useFaultServer();
const start = useServices();

// Retries enough to get past A and B before their breakers open; waits of 1 ms; no budget, so
// that what stops a request is never the 10 % retry ratio over 1,000 requests.
const fast: HttpRetryOptions = { retries: 10, backoff: 1, jitter: 'none', budget: false };
const PATH = '/items/1';
const T0 = Date.UTC(2026, 0, 1);

/** Runs `task` `count` times, at most `concurrency` at once; the results in order. */
async function pool<T>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<T>,
): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

/** Sends `count` GETs one after another, each of which must be answered 200 by C. */
async function getsFromC(client: Client, count: number): Promise<void> {
  for (let index = 0; index < count; index++) {
    expect(await client.send('GET', PATH)).toEqual({ status: 200, body: 'C' });
  }
}

/** The Retryline error a client rejected with: axios wraps a refusal in an AxiosError, its `cause`. */
function refusal(error: unknown): unknown {
  return axios.isAxiosError(error) && error.cause !== undefined ? error.cause : error;
}

/** Resolves once `done()` holds, looking every 5 ms (real sockets: no clock to drive). */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 5) {
    if (waited > 10_000) throw new Error('until: still false after 10 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const toEndpoint = (client: Client, endpoint: string) =>
  attemptsPerEndpoint(client.events).get(endpoint) ?? 0;

/** The attempt-end events (hedges aside) of attempts sent to `endpoint`, with their index in `events`. */
function endsAt(events: readonly RetrylineEvent[], endpoint: string): number[] {
  return events.flatMap((event, index) =>
    event.type === 'attempt-end' && endpointOf(event) === endpoint ? [index] : [],
  );
}

describe.each(ADAPTERS)('$name with endpoints [A refused, B 503, C 200]', (adapter: Adapter) => {
  it('answers 1,000 GETs from C, and sends A and B nothing new once their breakers have opened', async () => {
    const REQUESTS = 1_000;
    const CONCURRENCY = 10;
    const FAILURES = 3;
    const A = await b.refusedUrl();
    b.script(PATH, [{ status: 503, body: 'B' }]);
    c.script(PATH, [{ status: 200, body: 'C' }]);
    const endpoints = [A, b.url, c.url];
    const client = adapter.create(A, {
      ...fast,
      // Open for the whole run: no half-open probe muddies the counts.
      endpoints: failover(endpoints, { breaker: { consecutiveFailures: FAILURES, openMs: 600_000 } }),
      // No retry parked by the recovery gate: one it held is sent where it was picked before the
      // wait (see the test of the gate below), which this count would see at random.
      gate: false,
    });

    const answers = await pool(REQUESTS, CONCURRENCY, () => client.send('GET', PATH));

    expect(answers.filter((each) => each.status === 200 && each.body === 'C')).toHaveLength(REQUESTS);
    expect(c.requests(PATH)).toHaveLength(REQUESTS);
    const counts = attemptsPerEndpoint(client.events);
    // Every attempt names its endpoint, and only the three given.
    expect([...counts.keys()].sort()).toEqual([...endpoints].filter((each) => counts.has(each)).sort());
    expect(counts.get(c.url)).toBe(REQUESTS);
    expect(b.requests(PATH)).toHaveLength(counts.get(b.url) ?? 0);
    for (const failing of [A, b.url]) {
      const ends = endsAt(client.events, failing);
      // Its breaker opened: FAILURES failures in a row, plus at most the attempts already on their
      // way (one per request in flight) when the last of them ended.
      expect(ends.length).toBeGreaterThanOrEqual(FAILURES);
      expect(ends.length).toBeLessThan(FAILURES + CONCURRENCY);
      const opened = ends[FAILURES - 1] ?? Number.NaN;
      const startedAfter = client.events
        .slice(opened + 1)
        .filter((event) => event.type === 'attempt-start' && endpointOf(event) === failing);
      expect(startedAfter).toEqual([]);
    }
  });

  it('names the endpoint of every attempt, and sends each retry to another endpoint than the one that failed', async () => {
    const A = await b.refusedUrl();
    b.script(PATH, [{ status: 503, body: 'B' }]);
    c.script(PATH, [{ status: 200, body: 'C' }]);
    const endpoints = [A, b.url, c.url];
    // A breaker that never opens: every request may meet A and B, so there are retries to look at.
    const client = adapter.create(A, {
      ...fast,
      endpoints: failover(endpoints, { breaker: { consecutiveFailures: 1_000_000, failureRate: 1 } }),
    });

    await pool(50, 5, () => client.send('GET', PATH));

    let retries = 0;
    for (const [, events] of byRequest(client.events)) {
      const attempts = events.filter(
        (event) => event.type === 'attempt-start' || event.type === 'attempt-end',
      );
      for (const event of attempts) expect(endpoints).toContain(endpointOf(event));
      const starts = attemptStarts(events);
      for (let index = 1; index < starts.length; index++) {
        retries++;
        const before = starts[index - 1] as RetrylineEvent;
        expect(endpointOf(starts[index] as RetrylineEvent)).not.toBe(endpointOf(before));
      }
      // Each attempt's end names the endpoint its start did.
      const ends = attempts.filter((event) => event.type === 'attempt-end');
      expect(ends.map(endpointOf)).toEqual(starts.map(endpointOf));
    }
    // A and B failed some first attempts: there were retries to check.
    expect(retries).toBeGreaterThan(0);
  });

  it('sends A nothing while its breaker is open, then exactly one probe once openMs has passed', async () => {
    const A = await b.refusedUrl();
    c.script(PATH, [{ status: 200, body: 'C' }]);
    // The breaker's time is virtual (moved by the test); the 1 ms backoffs wait in real time, as the
    // requests go over real sockets.
    const time = virtualClock(T0);
    const clock: Clock = { now: time.now, sleep: systemClock.sleep };
    const client = adapter.create(A, {
      ...fast,
      clock,
      endpoints: failover([A, c.url], {
        balance: 'round-robin',
        breaker: { consecutiveFailures: 2, openMs: 1_000 },
      }),
    });
    const toA = () => toEndpoint(client, A);

    await getsFromC(client, 10);
    expect(toA()).toBe(2);
    // Its breaker-state event says from when it lets the probe through.
    const openedAt = client.events.find((event) => event.type === 'breaker-state' && event.to === 'open');
    expect(openedAt).toMatchObject({ from: 'closed', retryAt: T0 + 1_000 });
    await time.advance(999);
    await getsFromC(client, 10);
    expect(toA()).toBe(2);
    await time.advance(1);
    await getsFromC(client, 10);
    expect(toA()).toBe(3);
    // The probe failed: open again, for another openMs.
    await getsFromC(client, 10);
    expect(toA()).toBe(3);
    await time.advance(1_000);
    await getsFromC(client, 10);
    expect(toA()).toBe(4);
  });

  it('sends no retry the recovery gate held to an endpoint whose breaker opened while it waited', async () => {
    b.script(PATH, [{ status: 503, body: 'B' }]);
    const client = adapter.create(b.url, {
      ...fast,
      retries: 3,
      gate: recoveryGate({ holdAfter: 1, probeMs: 1_000 }),
      endpoints: failover([b.url], { breaker: { consecutiveFailures: 3, openMs: 600_000 } }),
    });
    const opened = () =>
      client.events.findIndex((event) => event.type === 'breaker-state' && event.to === 'open');

    // B fails it, and the gate parks a retry while B's breaker is still closed.
    const held = settle(client.send('GET', PATH));
    await until(() => client.events.some((event) => event.type === 'retry-parked'));
    // First attempts (never parked) fail at B until its breaker opens.
    while (opened() === -1) await settle(client.send('GET', PATH));
    const sent = b.requests(PATH).length;
    await held;

    const startsAfter = client.events
      .slice(opened() + 1)
      .filter((event) => event.type === 'attempt-start' && endpointOf(event) === b.url);
    expect(startsAfter).toEqual([]);
    expect(b.requests(PATH)).toHaveLength(sent);
  });

  it.each(['answers 503', 'processes it, then drops the connection'])(
    'processes a keyed POST once when the endpoint it first reaches %s: the retry goes to the other with the same key',
    async (firstAnswer) => {
      // Two instances of one idempotent API: one key store, one order count.
      const keys = new Map<string, { status: number; body: string }>();
      let orders = 0;
      let failedOn: string | undefined;
      const api =
        (name: string): Handler =>
        (req, res) => {
          const key = req.headers['idempotency-key'];
          if (typeof key !== 'string' || key === '') return answer(res, 400, 'no key');
          const stored = keys.get(key);
          if (stored) return answer(res, stored.status, stored.body);
          if (failedOn === undefined && firstAnswer === 'answers 503') {
            failedOn = name;
            return answer(res, 503, 'busy');
          }
          orders++;
          keys.set(key, { status: 201, body: `order ${orders}` });
          if (failedOn === undefined) {
            failedOn = name;
            req.socket.destroy();
            return;
          }
          answer(res, 201, `order ${orders}`);
        };
      const x = await start(api('x'));
      const y = await start(api('y'));
      const client = adapter.create(x.url, {
        ...fast,
        endpoints: failover([x.url, y.url]),
        idempotencyKey: { header: 'Idempotency-Key' },
        requestIdHeader: 'X-Request-Id',
      });

      const result = await client.send('POST', '/orders', {
        body: '{"sku":1}',
        headers: { 'content-type': 'application/json' },
      });

      expect(result).toEqual({ status: 201, body: 'order 1' });
      expect(orders).toBe(1);
      // One attempt on each instance, both with the whole body and the one key.
      expect(x.received).toHaveLength(1);
      expect(y.received).toHaveLength(1);
      const posts = [...x.received, ...y.received];
      expect(posts.every((post) => post.method === 'POST' && post.body === '{"sku":1}')).toBe(true);
      const sent = new Set(posts.map((post) => post.headers['idempotency-key']));
      expect(sent.size).toBe(1);
      expect([...sent][0]).toMatch(/.{8,}/);
      const ids = new Set(posts.map((post) => post.headers['x-request-id']));
      expect(ids.size).toBe(1);
      expect([...ids][0]).toMatch(/.{8,}/);
      // The first attempt went to the instance that failed, the retry to the other.
      const starts = attemptStarts(client.events);
      expect(starts.map(endpointOf)).toEqual(failedOn === 'x' ? [x.url, y.url] : [y.url, x.url]);
    },
  );

  it('leaves an absolute URL to another origin alone: sent there, retried there, no endpoint in its events', async () => {
    const A = await b.refusedUrl();
    b.script(PATH, [{ status: 503, body: 'B' }]);
    c.script(PATH, [{ status: 200, body: 'C' }]);
    let seen = 0;
    const other = await start((_req, res) =>
      seen++ === 0 ? answer(res, 503, 'busy') : answer(res, 200, 'other'),
    );
    const client = adapter.create(A, { ...fast, endpoints: failover([A, b.url, c.url]) });

    const result = await client.send('GET', `${other.url}${PATH}`);

    expect(result).toEqual({ status: 200, body: 'other' });
    expect(other.received.map((each) => each.url)).toEqual([PATH, PATH]);
    expect(b.log).toHaveLength(0);
    expect(c.log).toHaveLength(0);
    const attempts = client.events.filter(
      (event) => event.type === 'attempt-start' || event.type === 'attempt-end',
    );
    expect(attempts).toHaveLength(4);
    expect(attempts.map(endpointOf)).toEqual([undefined, undefined, undefined, undefined]);
    // While a path of the same client goes to an endpoint.
    expect(await client.send('GET', PATH)).toEqual({ status: 200, body: 'C' });
    expect(endpointOf(attemptStarts(client.events).at(-1) as RetrylineEvent)).toBe(c.url);
  });

  it('refuses an attempt with CircuitOpenError, sending nothing, while every endpoint is ejected', async () => {
    const A = await b.refusedUrl();
    b.script(PATH, [{ status: 503, body: 'B' }]);
    const client = adapter.create(A, {
      ...fast,
      endpoints: failover([A, b.url], { breaker: { consecutiveFailures: 1, openMs: 600_000 } }),
    });

    // Both fail once (a retry goes to the other), which opens both breakers.
    const first = await settle(client.send('GET', PATH));
    const sent = b.log.length;
    const second = await settle(client.send('GET', PATH));

    expect(first.value ?? refusal(first.error)).toBeDefined();
    expect(refusal(second.error)).toBeInstanceOf(CircuitOpenError);
    expect((refusal(second.error) as CircuitOpenError).retryAt).toBeGreaterThan(0);
    expect(b.log).toHaveLength(sent);
    const last = [...byRequest(client.events).values()].at(-1) ?? [];
    expect(last.filter((event) => event.type === 'attempt-start')).toEqual([]);
    expect(last.find((event) => event.type === 'request-end')).toMatchObject({ outcome: 'breaker-open' });
  });

  it.each<[string, HttpRetryOptions]>([
    ['a plain list as endpoints', { endpoints: ['http://127.0.0.1:1'] as never }],
    ['a number as hedge', { hedge: 50 as never }],
    ['a negative number as hedge', { hedge: -1 as never }],
  ])('refuses %s with InvalidOptionsError where the client is made', (_name, options) => {
    expect(() => adapter.create('http://127.0.0.1:1', options)).toThrow(InvalidOptionsError);
  });

  it('shares endpoint breakers through a shared store: once one client opens A’s, the other sends A nothing', async () => {
    const A = await b.refusedUrl();
    c.script(PATH, [{ status: 200, body: 'C' }]);
    const options: HttpRetryOptions = {
      ...fast,
      endpoints: failover([A, c.url], {
        balance: 'round-robin',
        breaker: { consecutiveFailures: 2, openMs: 600_000 },
      }),
    };
    const store = memoryStore();
    const first = adapter.create(A, { ...options, store });
    const second = adapter.create(A, { ...options, store });
    const apart = adapter.create(A, options);

    await getsFromC(first, 10);
    expect(toEndpoint(first, A)).toBe(2);
    await getsFromC(second, 10);
    expect(toEndpoint(second, A)).toBe(0);
    // A client with a store of its own has a breaker of its own, still closed.
    await getsFromC(apart, 10);
    expect(toEndpoint(apart, A)).toBe(2);
  });
});

describe('axios: an attempt moved to another endpoint', () => {
  /** An instance on `baseURL`, with Retryline and the events of its requests. */
  function instanceOn(
    baseURL: string,
    options: HttpRetryOptions,
    config: { allowAbsoluteUrls?: boolean } = {},
  ) {
    const events: RetrylineEvent[] = [];
    const instance = axios.create({ baseURL, responseType: 'text', ...config });
    attachRetry(instance, { ...fast, ...options, onEvent: (event) => events.push(event) });
    return { instance, events };
  }

  it('carries its params once', async () => {
    const A = await b.refusedUrl();
    c.script(PATH, [{ status: 200, body: 'C' }]);
    const { instance, events } = instanceOn(A, {
      endpoints: failover([A, c.url], { balance: 'round-robin' }),
    });

    const response = await instance.get(PATH, { params: { page: 2, q: 'x y' } });

    expect(response.data).toBe('C');
    expect(attemptStarts(events).map(endpointOf)).toEqual([A, c.url]);
    expect(c.requests(PATH).map((each) => each.url)).toEqual([`${PATH}?page=2&q=x+y`]);
  });

  it('carries a param a request interceptor renews for each attempt, once', async () => {
    const A = await b.refusedUrl();
    c.script(PATH, [{ status: 200, body: 'C' }]);
    const { instance, events } = instanceOn(A, {
      endpoints: failover([A, c.url], { balance: 'round-robin' }),
    });
    let signed = 0;
    instance.interceptors.request.use((config) => {
      config.params = { ...config.params, sig: ++signed };
      return config;
    });

    await instance.get(PATH, { params: { page: 2 } });

    // Round robin sends the first attempt to A, refused, and the retry to C, signed again.
    expect(attemptStarts(events).map(endpointOf)).toEqual([A, c.url]);
    expect(signed).toBe(2);
    expect(c.requests(PATH).map((each) => each.url)).toEqual([`${PATH}?page=2&sig=2`]);
  });

  it('goes to the endpoint under allowAbsoluteUrls: false, not onto baseURL', async () => {
    const A = await b.refusedUrl();
    c.script(PATH, [{ status: 200, body: 'C' }]);
    const { instance, events } = instanceOn(
      A,
      { endpoints: failover([A, c.url], { balance: 'round-robin' }) },
      { allowAbsoluteUrls: false },
    );

    const response = await instance.get(PATH);

    expect(response.data).toBe('C');
    expect(c.requests(PATH)).toHaveLength(1);
    expect(attemptStarts(events).map(endpointOf)).toEqual([A, c.url]);
  });
});

describe('failover() and hedging() refuse bad input with InvalidOptionsError, before any client is made', () => {
  it.each<[string, () => unknown]>([
    ['no endpoints', () => failover([])],
    ['an endpoint that is not a URL', () => failover(['not a url'])],
    ['a weight of 0', () => failover([{ url: 'http://127.0.0.1:1', weight: 0 }])],
    ['a negative weight', () => failover([{ url: 'http://127.0.0.1:1', weight: -1 }])],
    ['an unknown balance', () => failover(['http://127.0.0.1:1'], { balance: 'x' as never })],
    ['a negative hedge delay', () => hedging(-1)],
    ['a negative hedge delay in an object', () => hedging({ delay: -1 })],
  ])('%s', (_name, make) => {
    expect(make).toThrow(InvalidOptionsError);
  });
});
