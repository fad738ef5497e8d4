import {
  DeadlineExceededError,
  InvalidOptionsError,
  isRetrylineError,
  type RetrylineEvent,
} from '@retryline/core';
import { getRetryInfo, type KyRetryOptions, retryline } from '@retryline/ky';
import ky, { HTTPError, isTimeoutError, TimeoutError } from 'ky';
import { describe, expect, it, vi } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

// ky with retryline() against a real loopback server that fails the ways networks fail. Delays are
// short and unjittered so the timing assertions are exact lower bounds, never wall-clock budgets.
const server = useFaultServer();
const fast: KyRetryOptions = { retries: 2, backoff: { strategy: 'constant', base: 20 }, jitter: 'none' };

/** A fetch that counts its calls: the attempts actually sent, where the server cannot count them. */
function countingFetch() {
  const calls: string[] = [];
  const counted: typeof fetch = (input, init) => {
    calls.push(input instanceof Request ? input.url : String(input));
    return fetch(input, init);
  };
  return { calls, fetch: counted };
}

describe('ky with retryline() against the fault server', () => {
  it('GET 503, 503, 200 → 3 attempts and the 200', async () => {
    server.script('/a', [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    const api = ky.create(retryline(fast));
    const response = await api.get(`${server.url}/a`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
    expect(server.requests('/a')).toHaveLength(3);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 3, totalDelay: 40, outcome: 'success' });
  });

  it("runs ky's hooks once per request: beforeRequest's header goes out on every attempt", async () => {
    server.script('/h', [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    let tokens = 0;
    const seen: number[] = [];
    const api = ky.create(retryline(fast)).extend({
      hooks: {
        beforeRequest: [(request) => request.headers.set('authorization', `Bearer t${++tokens}`)],
        afterResponse: [(_request, _options, response) => void seen.push(response.status)],
      },
    });
    expect((await api.get(`${server.url}/h`)).status).toBe(200);
    expect(server.requests('/h').map((r) => r.headers.authorization)).toEqual(Array(3).fill('Bearer t1'));
    expect(seen).toEqual([200]);
  });

  describe('sends exactly the attempts Retryline decided, never an extra ky retry', () => {
    it('503 every time with retries: 2 → exactly 3 requests, then HTTPError 503', async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      server.script('/down', [{ status: 503, body: 'down' }]);
      const { error } = await settle(ky.create(retryline(fast)).get(`${server.url}/down`));
      expect(error).toBeInstanceOf(HTTPError);
      expect((error as HTTPError).response.status).toBe(503);
      expect(await (error as HTTPError).response.text()).toBe('down');
      expect(getRetryInfo(error)).toMatchObject({ attempts: 3, totalDelay: 40, outcome: 'exhausted' });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(server.requests('/down')).toHaveLength(3);
      expect(warn).not.toHaveBeenCalled(); // ky's retry is off from the start: nothing to warn about
    });

    it('after .extend({ retry: 5 }) still exactly 3 requests, and a one-time warning', async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      server.script('/down', [{ status: 503 }]);
      const api = ky.create(retryline(fast)).extend({ retry: 5 });
      const first = await settle(api.get(`${server.url}/down`));
      expect(first.error).toBeInstanceOf(HTTPError);
      expect((first.error as HTTPError).response.status).toBe(503);
      expect(server.requests('/down')).toHaveLength(3);
      expect(warn).toHaveBeenCalledOnce();
      expect(warn.mock.calls[0]?.[0]).toMatch(
        /^\[Retryline\] ky's own retry is switched off .* Retryline already retries/,
      );
      // Once per client, however many requests it makes.
      await settle(api.get(`${server.url}/down`));
      expect(server.requests('/down')).toHaveLength(6);
      expect(warn).toHaveBeenCalledOnce();
    });

    it('a request that re-enables ky’s retry is warned about when ky would retry, and sends no more', async () => {
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
      server.script('/ok', [{ status: 200 }]);
      server.script('/down', [{ status: 503 }]);
      const api = ky.create(retryline(fast));
      // Nothing failed, so ky never got to retry: nothing stacked, nothing to warn about.
      await api.get(`${server.url}/ok`, { retry: 3 });
      expect(warn).not.toHaveBeenCalled();
      const failed = await settle(api.get(`${server.url}/down`, { retry: 3 }));
      expect((failed.error as HTTPError).response.status).toBe(503);
      expect(server.requests('/down')).toHaveLength(3); // Retryline's 1 + 2 retries, none of ky's
      expect(warn).toHaveBeenCalledOnce();
    });

    it('a network error ky would retry itself is not retried by ky either', async () => {
      vi.spyOn(console, 'warn').mockImplementation(() => {});
      const counter = countingFetch();
      const refused = await server.refusedUrl();
      const { error } = await settle(
        ky
          .create(retryline({ ...fast, fetch: counter.fetch }))
          .extend({ retry: { limit: 5, delay: () => 0 } })
          .get(`${refused}/x`),
      );
      expect(error).toBeInstanceOf(TypeError);
      expect(counter.calls).toHaveLength(3);
    });

    it('a per-request ky retry and a forced ky.retry() from afterResponse send nothing extra either', async () => {
      vi.spyOn(console, 'warn').mockImplementation(() => {});
      server.script('/down', [{ status: 503 }]);
      const api = ky.create(retryline(fast));
      const { error } = await settle(api.get(`${server.url}/down`, { retry: { limit: 4, delay: () => 0 } }));
      expect((error as HTTPError).response.status).toBe(503);
      expect(server.requests('/down')).toHaveLength(3);

      server.script('/ok', [{ status: 200, body: 'ok' }]);
      const forcing = api.extend({ retry: 3, hooks: { afterResponse: [() => ky.retry({ delay: 0 })] } });
      const forced = await settle(forcing.get(`${server.url}/ok`));
      expect(forced.error).toMatchObject({ name: 'ForceRetryError' });
      expect(server.requests('/ok')).toHaveLength(1);
    });

    it('retries: 0 → exactly 1 request', async () => {
      server.script('/down', [{ status: 503 }]);
      const { error } = await settle(ky.create(retryline({ ...fast, retries: 0 })).get(`${server.url}/down`));
      expect((error as HTTPError).response.status).toBe(503);
      expect(server.requests('/down')).toHaveLength(1);
    });
  });

  it('POST 503 → one attempt and HTTPError: a POST without a key is never resent', async () => {
    server.script('/orders', [{ status: 503 }, { status: 201 }]);
    const { error } = await settle(
      ky.create(retryline(fast)).post(`${server.url}/orders`, { json: { sku: 1 } }),
    );
    expect(error).toBeInstanceOf(HTTPError);
    expect((error as HTTPError).response.status).toBe(503);
    expect(server.requests('/orders')).toHaveLength(1);
  });

  it('POST with idempotencyKey: true, 503 then 201 → 2 attempts, same key, same body', async () => {
    server.script('/orders', [{ status: 503 }, { status: 201, body: '{"id":7}' }]);
    const api = ky.create(retryline({ ...fast, idempotencyKey: true }));
    const created = await api.post(`${server.url}/orders`, { json: { sku: 1 } }).json();
    expect(created).toEqual({ id: 7 });
    const [first, second] = server.requests('/orders');
    expect(first?.headers['idempotency-key']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
    expect([first?.bodyText, second?.bodyText]).toEqual(['{"sku":1}', '{"sku":1}']);
    expect(second?.headers['content-type']).toBe('application/json');
  });

  it('429 with Retry-After: 1 → the second attempt comes at least 1000 ms after the first', async () => {
    server.script('/limited', [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200 }]);
    const response = await ky.create(retryline(fast)).get(`${server.url}/limited`);
    expect(response.status).toBe(200);
    const [first, second] = server.requests('/limited');
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(getRetryInfo(response)?.delays[0]?.reason).toBe('retry-after');
  });

  it('Retry-After: 3600 → one attempt, ky’s own HTTPError for the 503, retryAt in its retry info', async () => {
    server.script('/later', [{ status: 503, headers: { 'Retry-After': '3600' }, body: 'come back later' }]);
    const events: RetrylineEvent[] = [];
    const before = Date.now();
    const { error } = await settle(
      ky.create(retryline({ ...fast, onEvent: (event) => events.push(event) })).get(`${server.url}/later`),
    );
    expect(error).toBeInstanceOf(HTTPError);
    const { response } = error as HTTPError;
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('3600');
    expect(await response.text()).toBe('come back later');
    const info = getRetryInfo(error);
    expect(info).toMatchObject({
      attempts: 1,
      totalDelay: 0,
      outcome: 'retry-after-too-long',
      stoppedBy: 'retry-after-too-long',
    });
    expect(info?.retryAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(info?.retryAt).toBeLessThan(Date.now() + 3_600_000 + 1000);
    const end = events.at(-1) as { type: string; error?: { name: string; message: string } };
    expect(end).toMatchObject({ type: 'request-end', outcome: 'retry-after-too-long', status: 503 });
    expect(end.error?.name).toBe('RetryAfterTooLongError');
    expect(server.requests('/later')).toHaveLength(1);
  });

  it('per request: retryline: false fails fast; retryline: { retries: 3 } overrides the client', async () => {
    const api = ky.create(retryline(fast));
    server.script('/once', [{ status: 503 }, { status: 200 }]);
    const { error } = await settle(api.get(`${server.url}/once`, { retryline: false }));
    expect((error as HTTPError).response.status).toBe(503);
    expect(server.requests('/once')).toHaveLength(1);

    server.script('/once', [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200 }]);
    const response = await api.get(`${server.url}/once`, { retryline: { retries: 3 } });
    expect(response.status).toBe(200);
    expect(server.requests('/once')).toHaveLength(1 + 4);
  });

  it('per-client defaults set through ky: .extend({ retryline }) applies to every request', async () => {
    server.script('/once', [{ status: 503 }, { status: 200 }]);
    const api = ky.create(retryline(fast)).extend({ retryline: false });
    const { error } = await settle(api.get(`${server.url}/once`));
    expect((error as HTTPError).response.status).toBe(503);
    expect(server.requests('/once')).toHaveLength(1);
  });

  it('stalled headers with timeout: 200, retries: 1 → ky’s TimeoutError after 2 requests', async () => {
    server.script('/stall', [{ fault: 'stall-headers' }]);
    const started = Date.now();
    const { error } = await settle(
      ky.create(retryline({ ...fast, retries: 1, timeout: 200 })).get(`${server.url}/stall`),
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect(isTimeoutError(error)).toBe(true);
    const timeout = error as TimeoutError;
    expect(timeout.request.url).toBe(`${server.url}/stall`);
    expect(timeout.message).toBe(`Request timed out: GET ${server.url}/stall`);
    expect(isRetrylineError(timeout.cause, 'RetriesExhaustedError')).toBe(true);
    expect(isRetrylineError((timeout.cause as Error).cause, 'AttemptTimeoutError')).toBe(true);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 2, outcome: 'exhausted' });
    expect(server.requests('/stall')).toHaveLength(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
  });

  it('a POST whose only attempt timed out → ky’s TimeoutError too, and no second request', async () => {
    server.script('/orders', [{ fault: 'stall-headers' }]);
    const { error } = await settle(
      ky.create(retryline({ ...fast, timeout: 200 })).post(`${server.url}/orders`, { json: { sku: 1 } }),
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect(isRetrylineError((error as Error).cause, 'AttemptTimeoutError')).toBe(true);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, outcome: 'not-retryable' });
    expect(server.requests('/orders')).toHaveLength(1);
  });

  it('stalled headers under a deadline → DeadlineExceededError as it is, not a TimeoutError', async () => {
    server.script('/stall', [{ fault: 'stall-headers' }]);
    const { error } = await settle(
      ky.create(retryline({ ...fast, retries: 10, timeout: 200, deadline: 500 })).get(`${server.url}/stall`),
    );
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(getRetryInfo(error)?.outcome).toBe('deadline');
    expect(server.requests('/stall').length).toBeGreaterThanOrEqual(2);
  });

  it('switches ky’s own timeout off: it would bound every attempt and wait together', async () => {
    // Three attempts 150 ms apart outlast the 200 ms ky timeout of the base client.
    server.script('/slow', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const api = ky
      .create({ timeout: 200 })
      .extend(retryline({ ...fast, backoff: { strategy: 'constant', base: 150 } }));
    const response = await api.get(`${server.url}/slow`);
    expect(response.status).toBe(200);
    expect(server.requests('/slow')).toHaveLength(3);
  });

  it('refused port → fetch’s own TypeError after 3 attempts, with the retry info', async () => {
    const refused = await server.refusedUrl();
    const counter = countingFetch();
    const { error } = await settle(
      ky.create(retryline({ ...fast, fetch: counter.fetch })).get(`${refused}/x`),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(isRetrylineError(error)).toBe(false);
    expect((error as Error).message).toBe('fetch failed');
    expect(((error as Error).cause as { code?: string }).code).toBe('ECONNREFUSED');
    expect(getRetryInfo(error)?.attempts).toBe(3);
    expect(getRetryInfo(error)?.delays.map((d) => d.delay)).toEqual([20, 20]);
    expect(counter.calls).toHaveLength(3);
  });

  it('POST reset mid-body → fetch’s error, not retried: the server may have acted on it', async () => {
    server.script('/upload', [{ fault: 'reset-mid-request-body', afterBytes: 1 }, { status: 200 }]);
    const { error } = await settle(
      ky.create(retryline(fast)).post(`${server.url}/upload`, { body: 'x'.repeat(256 * 1024) }),
    );
    expect(error).toBeInstanceOf(TypeError);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, outcome: 'not-retryable' });
    expect(server.requests('/upload')).toHaveLength(1);
  });

  it('abort through ky’s signal during a wait → rejects at once with the reason; no further request', async () => {
    server.script('/slow', [{ status: 503 }]);
    const controller = new AbortController();
    const reason = new Error('user left the page');
    let abortedAt = 0;
    const api = ky.create(
      retryline({
        ...fast,
        backoff: { strategy: 'constant', base: 10_000 },
        onRetry: () => {
          setTimeout(() => {
            abortedAt = Date.now();
            controller.abort(reason);
          }, 20);
        },
      }),
    );
    const { error } = await settle(api.get(`${server.url}/slow`, { signal: controller.signal }));
    expect(error).toBe(reason);
    // The only request this reason ended: it answers for it (a second would make it ambiguous).
    expect(getRetryInfo(reason)).toMatchObject({ attempts: 1, outcome: 'aborted', stoppedBy: 'aborted' });
    expect(abortedAt).toBeGreaterThan(0);
    expect(Date.now() - abortedAt).toBeLessThan(500); // the wait was 10 s
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.requests('/slow')).toHaveLength(1);
  });

  it("emits one request's events with client: 'ky'; a request's onEvent replaces the client's", async () => {
    server.script('/events', [{ status: 503 }, { status: 200 }]);
    const clientEvents: RetrylineEvent[] = [];
    const requestEvents: RetrylineEvent[] = [];
    const api = ky.create(retryline({ ...fast, onEvent: (e) => clientEvents.push(e) }));
    await api.get(`${server.url}/events?token=abc`);
    expect(clientEvents.map((e) => e.type)).toEqual([
      'request-start',
      'attempt-start',
      'attempt-end',
      'budget',
      'retry-scheduled',
      'attempt-start',
      'attempt-end',
      'request-end',
    ]);
    expect(clientEvents[0]).toMatchObject({
      type: 'request-start',
      client: 'ky',
      method: 'GET',
      url: `${server.url}/events?token=***`,
    });
    expect(new Set(clientEvents.map((e) => e.requestId)).size).toBe(1);

    server.script('/events', [{ status: 200 }]);
    await api.get(`${server.url}/events`, { retryline: { onEvent: (e) => requestEvents.push(e) } });
    expect(requestEvents[0]).toMatchObject({ type: 'request-start', client: 'ky' });
    expect(requestEvents.at(-1)).toMatchObject({ type: 'request-end', outcome: 'success', attempts: 1 });
    expect(clientEvents).toHaveLength(8);
  });

  it('looks up globalThis.fetch on every attempt, so a mock installed after the client is used', async () => {
    server.script('/late', [{ status: 503 }, { status: 200 }]);
    const api = ky.create(retryline(fast));
    const original = globalThis.fetch;
    const seen: string[] = [];
    vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(input instanceof Request ? input.url : String(input));
      return original(input, init);
    });
    try {
      expect((await api.get(`${server.url}/late`)).status).toBe(200);
    } finally {
      vi.unstubAllGlobals();
    }
    expect(seen).toEqual([`${server.url}/late`, `${server.url}/late`]);
  });

  it('rejects invalid options where they are given: at retryline(), and per request', async () => {
    expect(() => retryline({ retries: -1 })).toThrow(
      'Expected retries to be a non-negative integer or Infinity, got -1',
    );
    expect(() => retryline({ fetch: 'fetch' as never })).toThrow(InvalidOptionsError);
    server.script('/x', [{ status: 200 }]);
    const api = ky.create(retryline(fast));
    const { error } = await settle(api.get(`${server.url}/x`, { retryline: 3 as never }));
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as Error).message).toBe('Expected retryline to be an object or false, got 3');
    expect(server.requests('/x')).toHaveLength(0);
  });
});
