import {
  BodyNotReplayableError,
  DeadlineExceededError,
  RetriesExhaustedError,
  type RetrylineEvent,
} from '@retryline/core';
import { type FetchRetryOptions, getRetryInfo, retryFetch } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { httpDate } from '../support/fault-server';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

// retryFetch against a real loopback server that fails the ways networks fail. Delays are short
// and unjittered so the timing assertions are exact lower bounds, never wall-clock budgets.
const server = useFaultServer();
const fast: FetchRetryOptions = { retries: 2, backoff: { strategy: 'constant', base: 20 }, jitter: 'none' };

describe('retryFetch against the fault server', () => {
  it('GET 503, 503, 200 → 3 attempts and the 200', async () => {
    server.script('/a', [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    const response = await retryFetch(fetch, fast)(`${server.url}/a`);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
    expect(server.requests('/a')).toHaveLength(3);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 3, totalDelay: 40, outcome: 'success' });
    expect(getRetryInfo(response)?.delays.map((d) => d.reason)).toEqual(['backoff', 'backoff']);
  });

  it('GET 503 throughout → resolves the last 503 after every attempt, as fetch does', async () => {
    server.script('/always', [{ status: 503, body: 'down' }]);
    const response = await retryFetch(fetch, fast)(`${server.url}/always`);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe('down');
    expect(server.requests('/always')).toHaveLength(3);
    expect(getRetryInfo(response)?.outcome).toBe('exhausted');
  });

  it('POST 503 → 1 attempt: a POST without a key is never sent twice', async () => {
    server.script('/orders', [{ status: 503 }, { status: 201 }]);
    const response = await retryFetch(fetch, fast)(`${server.url}/orders`, {
      method: 'POST',
      body: '{"sku":1}',
    });
    expect(response.status).toBe(503);
    expect(server.requests('/orders')).toHaveLength(1);
  });

  it('POST with idempotencyKey: true, 503 then 201 → 2 attempts carrying the same key', async () => {
    server.script('/orders', [{ status: 503 }, { status: 201 }]);
    const response = await retryFetch(fetch, { ...fast, idempotencyKey: true })(`${server.url}/orders`, {
      method: 'POST',
      body: '{"sku":1}',
    });
    expect(response.status).toBe(201);
    const [first, second] = server.requests('/orders');
    expect(first?.headers['idempotency-key']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
    expect(second?.bodyText).toBe('{"sku":1}');
  });

  it('keeps a key the caller set, and quotes it as an sf-string when asked', async () => {
    server.script('/pay', [{ status: 503 }, { status: 200 }]);
    const client = retryFetch(fetch, { ...fast, idempotencyKey: { format: 'sf-string' } });
    await client(`${server.url}/pay`, { method: 'POST', body: 'x', headers: { 'Idempotency-Key': 'mine' } });
    await client(`${server.url}/pay`, { method: 'PATCH', body: 'y' });
    const keys = server.requests('/pay').map((r) => r.headers['idempotency-key']);
    expect(keys.slice(0, 2)).toEqual(['mine', 'mine']);
    expect(keys[2]).toMatch(/^"[0-9a-f-]{36}"$/);
  });

  it("POST to a refused port with redirect: 'error' → retried, since it was never sent", async () => {
    const refused = await server.refusedUrl();
    const events: RetrylineEvent[] = [];
    // Following no redirect, fetch's refusal can only be the request's own first hop.
    const { error } = await settle(
      retryFetch(fetch, { ...fast, onEvent: (e) => events.push(e) })(`${refused}/x`, {
        method: 'POST',
        body: 'b',
        redirect: 'error',
      }),
    );
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect((error as RetriesExhaustedError).attempts).toBe(3);
    expect((error as Error).message).toMatch(
      /^POST http:\/\/127\.0\.0\.1:\d+\/x failed after 3 attempts: fetch failed$/,
    );
    expect((error as Error).cause).toBeInstanceOf(TypeError);
    const ends = events.filter((e) => e.type === 'attempt-end');
    expect(ends.map((e) => e.type === 'attempt-end' && [e.phase, (e as { code?: string }).code])).toEqual([
      ['not-sent', 'ECONNREFUSED'],
      ['not-sent', 'ECONNREFUSED'],
      ['not-sent', 'ECONNREFUSED'],
    ]);
  });

  it('a redirect loop or redirect: "error" is fetch refusing, not the network failing: thrown, never retried', async () => {
    // Every request to /loop redirects to /loop: fetch gives up after 20 redirects, 21 requests.
    server.script('/loop', [{ status: 302, headers: { location: '/loop' } }]);
    const loop = await settle(retryFetch(fetch, fast)(`${server.url}/loop`));
    expect((loop.error as TypeError).message).toBe('fetch failed');
    expect(server.requests('/loop')).toHaveLength(21);
    server.script('/moved', [{ status: 302, headers: { location: '/elsewhere' } }]);
    const refused = await settle(retryFetch(fetch, fast)(`${server.url}/moved`, { redirect: 'error' }));
    expect(((refused.error as TypeError).cause as Error).message).toBe('unexpected redirect');
    expect(server.requests('/moved')).toHaveLength(1);
  });

  it.each([
    ['a signal in init', {}, 'init'],
    ['a signal in init, with a timeout', { timeout: 5_000 }, 'init'],
    ["a Request's own signal, with a timeout", { timeout: 5_000 }, 'request'],
    ['a signal in init, with a deadline', { deadline: 5_000 }, 'init'],
  ] as const)(
    'an abort after the response still ends its body, as fetch does: %s',
    async (_name, options, where) => {
      server.script('/trickle', [{ fault: 'stall-body' }]);
      const controller = new AbortController();
      const client = retryFetch(fetch, { ...fast, ...options });
      const url = `${server.url}/trickle`;
      const response =
        where === 'init'
          ? await client(url, { signal: controller.signal })
          : await client(new Request(url, { signal: controller.signal }));
      const reason = new Error('user left');
      const body = settle(response.text());
      controller.abort(reason);
      const { error } = await body;
      expect(error).toBe(reason);
    },
  );

  it('GET reset before headers → retried', async () => {
    server.script('/reset', [{ fault: 'reset-before-headers' }, { status: 200, body: 'second' }]);
    const response = await retryFetch(fetch, fast)(`${server.url}/reset`);
    expect(await response.text()).toBe('second');
    expect(server.requests('/reset')).toHaveLength(2);
  });

  it('POST reset mid-body → not retried: the server may have acted on it', async () => {
    server.script('/upload', [{ fault: 'reset-mid-request-body', afterBytes: 1 }, { status: 200 }]);
    const body = 'x'.repeat(256 * 1024);
    const { error } = await settle(retryFetch(fetch, fast)(`${server.url}/upload`, { method: 'POST', body }));
    expect(error).toBeInstanceOf(TypeError); // fetch's own error, rethrown as it is
    expect(server.requests('/upload')).toHaveLength(1);
  });

  it('429 with Retry-After: 1 → the second attempt comes at least 1000 ms after the first', async () => {
    server.script('/limited', [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200 }]);
    const response = await retryFetch(fetch, fast)(`${server.url}/limited`);
    expect(response.status).toBe(200);
    const [first, second] = server.requests('/limited');
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(1000);
    expect(getRetryInfo(response)?.delays[0]?.reason).toBe('retry-after');
  });

  it('503 with an HTTP-date ahead → waits until that date', async () => {
    // Whole seconds, at least 2 s after the first attempt will arrive.
    const date = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    server.script('/maintenance', [
      { status: 503, headers: { 'Retry-After': httpDate(date) } },
      { status: 200 },
    ]);
    const response = await retryFetch(fetch, fast)(`${server.url}/maintenance`);
    expect(response.status).toBe(200);
    const [first, second] = server.requests('/maintenance');
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(2000);
    expect(second?.receivedAt ?? 0).toBeGreaterThanOrEqual(date - 2); // timers may round by a millisecond
  });

  it('Retry-After: 3600 → one attempt, the 503 resolved as fetch gives it, retryAt in its retry info', async () => {
    server.script('/later', [{ status: 503, headers: { 'Retry-After': '3600' }, body: 'come back later' }]);
    const events: RetrylineEvent[] = [];
    const before = Date.now();
    const response = await retryFetch(fetch, { ...fast, onEvent: (event) => events.push(event) })(
      `${server.url}/later`,
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('3600');
    expect(await response.text()).toBe('come back later');
    const info = getRetryInfo(response);
    expect(info).toMatchObject({
      attempts: 1,
      totalDelay: 0,
      outcome: 'retry-after-too-long',
      stoppedBy: 'retry-after-too-long',
    });
    expect(info?.retryAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(info?.retryAt).toBeLessThan(Date.now() + 3_600_000 + 1000);
    // Why it stopped is still told by request-end, with the error that says it.
    const end = events.at(-1) as { type: string; error?: { name: string; message: string } };
    expect(end).toMatchObject({ type: 'request-end', outcome: 'retry-after-too-long', status: 503 });
    expect(end.error?.name).toBe('RetryAfterTooLongError');
    expect(end.error?.message).toContain('the server asked to wait 3600000 ms (retry-after)');
    expect(server.requests('/later')).toHaveLength(1);
  });

  it("onRetryAfterTooLong: 'clamp' waits maxRetryAfter instead", async () => {
    server.script('/later', [{ status: 503, headers: { 'Retry-After': '3600' } }, { status: 200 }]);
    const response = await retryFetch(fetch, { ...fast, maxRetryAfter: 50, onRetryAfterTooLong: 'clamp' })(
      `${server.url}/later`,
    );
    expect(response.status).toBe(200);
    const [first, second] = server.requests('/later');
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(50);
  });

  it('stalled headers with timeout: 200 → retried, then DeadlineExceededError under deadline', async () => {
    server.script('/stall', [{ fault: 'stall-headers' }]);
    const started = Date.now();
    const { error } = await settle(
      retryFetch(fetch, { ...fast, retries: 10, timeout: 200, deadline: 700 })(`${server.url}/stall`),
    );
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(server.requests('/stall').length).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(690);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('abort during a wait → rejects with the abort reason at once; the server sees no further attempt', async () => {
    server.script('/slow', [{ status: 503 }]);
    const controller = new AbortController();
    const reason = new Error('user left the page');
    let abortedAt = 0;
    const { error } = await settle(
      retryFetch(fetch, {
        ...fast,
        backoff: { strategy: 'constant', base: 10_000 },
        onRetry: () => {
          setTimeout(() => {
            abortedAt = Date.now();
            controller.abort(reason);
          }, 20);
        },
      })(`${server.url}/slow`, { signal: controller.signal }),
    );
    expect(error).toBe(reason);
    expect(Date.now() - abortedAt).toBeLessThan(50);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.requests('/slow')).toHaveLength(1);
  });

  it('stream body + 503 → BodyNotReplayableError; the server never sees an empty body', async () => {
    server.script('/stream', [{ status: 503 }, { status: 200 }]);
    const payload = 'streamed payload';
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(payload));
        controller.close();
      },
    });
    const { error } = await settle(
      retryFetch(fetch, { ...fast, idempotencyKey: true })(`${server.url}/stream`, {
        method: 'POST',
        body: stream,
        duplex: 'half',
      } as RequestInit),
    );
    expect(error).toBeInstanceOf(BodyNotReplayableError);
    expect(server.requests('/stream').map((r) => r.bodyText)).toEqual([payload]);
  });

  const bodies: Array<[string, () => BodyInit]> = [
    ['a string', () => 'plain text ✓'],
    ['an ArrayBuffer', () => new TextEncoder().encode('array buffer').buffer],
    ['a typed array', () => new Uint8Array([0, 1, 2, 250, 255])],
    ['a Blob', () => new Blob(['blob ', 'parts'], { type: 'text/plain' })],
    ['URLSearchParams', () => new URLSearchParams({ a: '1', b: 'two words' })],
    [
      'FormData',
      () => {
        const form = new FormData();
        form.append('field', 'value');
        form.append('file', new Blob(['file body']), 'f.txt');
        return form;
      },
    ],
  ];
  it.each(bodies)('replays %s byte-identical on every attempt', async (_name, makeBody) => {
    server.script('/put', [{ status: 503 }, { status: 502 }, { status: 200 }]);
    const response = await retryFetch(fetch, fast)(`${server.url}/put`, { method: 'PUT', body: makeBody() });
    expect(response.status).toBe(200);
    const attempts = server.requests('/put');
    expect(attempts).toHaveLength(3);
    expect(attempts[0]?.body.length).toBeGreaterThan(0);
    for (const attempt of attempts) {
      expect(attempt.body.equals(attempts[0]?.body ?? Buffer.alloc(0))).toBe(true);
      expect(attempt.headers['content-type']).toBe(attempts[0]?.headers['content-type']);
    }
  });

  it('replays a Request object, body included', async () => {
    server.script('/req', [{ status: 503 }, { status: 200 }]);
    const request = new Request(`${server.url}/req`, {
      method: 'PUT',
      body: 'from a Request',
      headers: { 'x-a': '1' },
    });
    const response = await retryFetch(fetch, fast)(request);
    expect(response.status).toBe(200);
    expect(server.requests('/req').map((r) => [r.bodyText, r.headers['x-a']])).toEqual([
      ['from a Request', '1'],
      ['from a Request', '1'],
    ]);
  });

  it('cancels the bodies of the responses it discards', async () => {
    server.script('/big', [{ status: 503, body: 'x'.repeat(100_000) }, { status: 200 }]);
    const seen: Response[] = [];
    const recording = async (...args: Parameters<typeof fetch>): Promise<Response> => {
      const response = await fetch(...args);
      seen.push(response);
      return response;
    };
    const response = await retryFetch(recording, fast)(`${server.url}/big`);
    expect(seen).toHaveLength(2);
    expect(seen[0]?.bodyUsed).toBe(true); // cancelled, so its connection is free
    expect(seen[1]).toBe(response);
    expect(response.bodyUsed).toBe(false);
  });

  it('adds no header the caller did not ask for', async () => {
    server.script('/plain', [{ status: 503 }, { status: 200 }]);
    await fetch(`${server.url}/plain`);
    server.clear();
    server.script('/plain', [{ status: 503 }, { status: 200 }]);
    await fetch(`${server.url}/plain`, { headers: { 'x-own': '1' } });
    const bare = Object.keys(server.requests('/plain')[0]?.headers ?? {}).sort();
    server.clear();
    server.script('/plain', [{ status: 503 }, { status: 200 }]);
    await retryFetch(fetch, fast)(`${server.url}/plain`, { headers: { 'x-own': '1' } });
    for (const attempt of server.requests('/plain'))
      expect(Object.keys(attempt.headers).sort()).toEqual(bare);
  });

  it('sends the correlation headers when asked: request id, attempt, remaining deadline', async () => {
    server.script('/corr', [{ status: 503 }, { status: 200 }]);
    await retryFetch(fetch, {
      ...fast,
      requestIdHeader: 'X-Request-Id',
      attemptHeader: 'Retry-Attempt',
      deadlineHeader: 'X-Deadline-Ms',
      deadline: 5000,
    })(`${server.url}/corr`);
    const [first, second] = server.requests('/corr');
    expect(first?.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second?.headers['x-request-id']).toBe(first?.headers['x-request-id']);
    expect([first?.headers['retry-attempt'], second?.headers['retry-attempt']]).toEqual([
      'attempt=1; max=3',
      'attempt=2; max=3',
    ]);
    const remaining = [first, second].map((r) => Number(r?.headers['x-deadline-ms']));
    expect(remaining[0]).toBeLessThanOrEqual(5000);
    expect(remaining[1]).toBeLessThan(remaining[0] ?? 0);
    expect(remaining[1]).toBeGreaterThan(4000);
  });

  it('fails fast with init.retry = false, and takes per-request overrides', async () => {
    server.script('/once', [{ status: 503 }, { status: 200 }]);
    const client = retryFetch(fetch, fast);
    expect((await client(`${server.url}/once`, { retry: false })).status).toBe(503);
    server.script('/once', [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200 }]);
    expect((await client(`${server.url}/once`, { retry: { retries: 3 } })).status).toBe(200);
    expect(server.requests('/once')).toHaveLength(5);
  });

  it('retries a status of the caller’s choosing through retryOn, and nothing else', async () => {
    server.script('/teapot', [{ status: 418 }, { status: 200 }]);
    const client = retryFetch(fetch, { ...fast, retryOn: (o) => o.retryable || o.status === 418 });
    expect((await client(`${server.url}/teapot`)).status).toBe(200);
    server.script('/gone', [{ status: 404 }, { status: 200 }]);
    expect((await client(`${server.url}/gone`)).status).toBe(404);
    expect(server.requests('/gone')).toHaveLength(1);
  });

  it('emits one request’s events in order, with headers redacted and query values masked', async () => {
    server.script('/events', [
      { status: 503, headers: { 'Set-Cookie': 'session=secret', 'X-Trace': 't1' } },
      { status: 200 },
    ]);
    const events: RetrylineEvent[] = [];
    await retryFetch(fetch, { ...fast, redactHeaders: ['x-api-key'], onEvent: (e) => events.push(e) })(
      `${server.url}/events?token=abc123&page=2`,
      { headers: { Authorization: 'Bearer s3cret', 'X-Api-Key': 'k', Accept: 'text/plain' } },
    );
    expect(events.map((e) => e.type)).toEqual([
      'request-start',
      'attempt-start',
      'attempt-end',
      'budget',
      'retry-scheduled',
      'attempt-start',
      'attempt-end',
      'request-end',
    ]);
    const [start, firstAttempt, firstEnd, , scheduled, , , end] = events as never as Array<
      Record<string, unknown>
    >;
    expect(start).toMatchObject({
      client: 'fetch',
      method: 'GET',
      url: `${server.url}/events?token=***&page=***`,
    });
    expect(firstAttempt?.headers).toEqual({
      authorization: '[redacted]',
      'x-api-key': '[redacted]',
      // Not on the allowlist of names that never carry secrets.
      accept: '[redacted]',
    });
    expect(firstEnd).toMatchObject({ phase: 'response', status: 503, outcome: 'retry' });
    expect(((firstEnd?.headers ?? {}) as Record<string, string>)['set-cookie']).toBe('[redacted]');
    expect(((firstEnd?.headers ?? {}) as Record<string, string>)['x-trace']).toBe('[redacted]');
    expect(scheduled).toMatchObject({ attempt: 2, retry: 1, delay: 20, reason: 'backoff' });
    expect(end).toMatchObject({ outcome: 'success', attempts: 2, status: 200 });
    expect(new Set(events.map((e) => e.requestId)).size).toBe(1);
    expect(JSON.stringify(events)).not.toMatch(/s3cret|abc123|session=secret/);
  });
});
