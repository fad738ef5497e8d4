import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import {
  type HttpRetryOptions,
  isRetrylineError,
  type RetrylineEvent,
  seededRandom,
  virtualClock,
} from '@retryline/core';
import { buildConnector, FormData, Pool, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { getRetryInfo, type ResponseData, retryUndici } from '../../examples/undici-adapter';
import { observe } from '../support/observe';
import { onClock } from '../support/on-clock';
import { useFaultServer } from '../support/use-fault-server';

// examples/undici-adapter.ts, the adapter packages/core/ADAPTERS.md walks through, against the real
// fault server on loopback. Every wait runs on a virtual clock: what a test asserts of a wait is
// its exact length, and no real time is spent on it.
const server = useFaultServer();

const T0 = Date.UTC(2026, 0, 1);
const ok = { status: 200, body: 'ok' };

/** Polls `done` while the sockets get their turns: bounded, so a request that hangs fails the test. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (let round = 0; !done(); round++) {
    if (round > 3000) throw new Error(`still waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** A client on a virtual clock, its events kept in `events`. */
function client(options: Parameters<typeof retryUndici>[1] = {}) {
  const clock = virtualClock(T0);
  const events: RetrylineEvent[] = [];
  const policy: HttpRetryOptions = { clock, random: seededRandom(7), onEvent: (event) => events.push(event) };
  const send = retryUndici(request, { ...policy, ...options });
  // Where each attempt ended, and the code core classified its failure by (AttemptEndEvent's
  // type has no `code` yet, though the event carries it: read as test/fetch/fault-matrix.test.ts does).
  const attemptEnds = () =>
    events.flatMap((event) =>
      event.type === 'attempt-end' ? [{ phase: event.phase, code: (event as { code?: string }).code }] : [],
    );
  return { clock, events, send, attemptEnds };
}

/** undici's request, keeping every response it resolves with (each attempt's). */
function recording() {
  const received: ResponseData[] = [];
  const spy = (async (...args: Parameters<typeof request>) => {
    const response = await request(...args);
    received.push(response);
    return response;
  }) as typeof request;
  return { spy, received };
}

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable('it resolved'),
    (error: unknown) => error,
  );

describe('examples/undici-adapter.ts', () => {
  it("resolves with undici's ResponseData after 503, 503, 200: three attempts, each wait on the virtual clock", async () => {
    const { clock, send } = client();
    server.script('/flaky', [{ status: 503 }, { status: 503 }, ok]);
    const response = await onClock(clock, send(`${server.url}/flaky`));
    expect(response.statusCode).toBe(200);
    expect(await response.body.text()).toBe('ok');
    expect(server.requests('/flaky')).toHaveLength(3);
    const info = getRetryInfo(response);
    expect(info).toMatchObject({ attempts: 3, outcome: 'success' });
    expect(info?.stoppedBy).toBeUndefined();
    expect(info?.delays.map(({ reason }) => reason)).toEqual(['backoff', 'backoff']);
    expect(clock.now() - T0).toBeCloseTo(info?.totalDelay ?? Number.NaN, 3);
  });

  it('resolves a POST without a key with its 503 at once, as undici does: one attempt, not-retryable', async () => {
    const { clock, send } = client();
    server.script('/orders', [{ status: 503, body: 'busy' }, ok]);
    const response = await onClock(clock, send(`${server.url}/orders`, { method: 'POST', body: '{}' }));
    expect(response.statusCode).toBe(503);
    expect(await response.body.text()).toBe('busy');
    expect(server.requests('/orders')).toHaveLength(1);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 1, stoppedBy: 'not-retryable' });
  });

  it("retries a keyed POST with one key on both attempts, the caller's headers kept", async () => {
    const { clock, send } = client({ idempotencyKey: true });
    server.script('/orders', [{ status: 503 }, { status: 201, body: 'created' }]);
    const response = await onClock(
      clock,
      // undici's flat [name, value, …] form of headers.
      send(`${server.url}/orders`, { method: 'POST', body: '{"sku":1}', headers: ['x-tenant', 't1'] }),
    );
    expect(response.statusCode).toBe(201);
    await response.body.dump();
    const [first, second] = server.requests('/orders');
    expect(first?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
    expect([first?.headers['x-tenant'], second?.headers['x-tenant']]).toEqual(['t1', 't1']);
    expect(second?.bodyText).toBe('{"sku":1}');
  });

  it('sends a keyed FormData POST as the same bytes under one boundary on every attempt', async () => {
    const { clock, send } = client({ idempotencyKey: true });
    server.script('/forms', [{ status: 503 }, { status: 201 }]);
    // undici's own FormData, as its types ask (Node's global one is another copy of the class).
    const form = new FormData();
    form.set('sku', 'A-1');
    form.set('file', new Blob(['hello']), 'note.txt');
    const response = await onClock(clock, send(`${server.url}/forms`, { method: 'POST', body: form }));
    expect(response.statusCode).toBe(201);
    await response.body.dump();
    const [first, second] = server.requests('/forms');
    expect(first?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(second?.headers['content-type']).toBe(first?.headers['content-type']);
    expect(second?.bodyText).toBe(first?.bodyText);
    expect(first?.bodyText).toContain('hello');
  });

  it("retries a GET to a refused port, then rejects with undici's own error, its retry info kept", async () => {
    const { clock, send, attemptEnds } = client();
    const error = await rejection(onClock(clock, send(`${await server.refusedUrl()}/down`)));
    expect(isRetrylineError(error)).toBe(false);
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 3, outcome: 'exhausted', stoppedBy: 'exhausted' });
    // undici follows redirects only through an interceptor the adapter cannot see: a refusal may
    // have come from a later hop, so it counts as maybe-sent (a GET is retried all the same).
    expect(attemptEnds().map(({ phase }) => phase)).toEqual(['unknown', 'unknown', 'unknown']);
  });

  it('sends a POST to a refused port once, unless the client follows no redirects: then it was never sent, and is retried', async () => {
    const url = `${await server.refusedUrl()}/orders`;
    const maybe = client();
    await rejection(onClock(maybe.clock, maybe.send(url, { method: 'POST', body: '{}' })));
    expect(maybe.attemptEnds()).toEqual([{ phase: 'unknown', code: 'ECONNREFUSED' }]);

    const firstHop = client({ followsRedirects: false });
    const error = await rejection(
      onClock(firstHop.clock, firstHop.send(url, { method: 'POST', body: '{}' })),
    );
    expect(error).toMatchObject({ code: 'ECONNREFUSED' });
    expect(firstHop.attemptEnds().map(({ phase }) => phase)).toEqual(['not-sent', 'not-sent', 'not-sent']);
  });

  it.each([
    ['reset-before-headers', 'ECONNRESET'],
    ['close-before-headers', 'UND_ERR_SOCKET'],
  ] as const)('retries a GET after %s (%s), then resolves with the 200', async (fault, code) => {
    const { clock, send, attemptEnds } = client();
    server.script('/broken', [{ fault }, ok]);
    const response = await onClock(clock, send(`${server.url}/broken`));
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    expect(attemptEnds()).toEqual([{ phase: 'unknown', code }, { phase: 'response' }]);
  });

  it("rejects a POST reset mid-body with undici's error, sent once", async () => {
    const { clock, send } = client();
    server.script('/upload', [{ fault: 'reset-mid-request-body' }, ok]);
    const body = 'x'.repeat(256 * 1024);
    const error = await rejection(onClock(clock, send(`${server.url}/upload`, { method: 'POST', body })));
    expect(isRetrylineError(error)).toBe(false);
    expect(server.requests('/upload')).toHaveLength(1);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, stoppedBy: 'not-retryable' });
  });

  it('waits at least the Retry-After on the virtual clock, and sends nothing before the wait is over', async () => {
    const { clock, send, events } = client();
    server.script('/hinted', [{ status: 503, headers: { 'Retry-After': '2' } }, ok]);
    const result = send(`${server.url}/hinted`);
    const watched = observe(result);
    await until(() => clock.pending() === 1 || watched.state.settled, 'the retry to wait');
    const scheduled = events.find((event) => event.type === 'retry-scheduled');
    // DESIGN §5: the hint, plus up to a tenth of it (at most 1 s), so clients do not return at once.
    expect(scheduled).toMatchObject({ reason: 'retry-after' });
    const delay = scheduled?.type === 'retry-scheduled' ? scheduled.delay : Number.NaN;
    expect(delay).toBeGreaterThanOrEqual(2000);
    expect(delay).toBeLessThanOrEqual(2200);
    await clock.advance(delay - 1);
    expect(server.requests('/hinted')).toHaveLength(1);
    expect(clock.pending()).toBe(1);
    await clock.advance(1);
    const response = await result;
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    expect(server.requests('/hinted')).toHaveLength(2);
    expect(getRetryInfo(response)).toMatchObject({
      attempts: 2,
      totalDelay: delay,
      delays: [{ retry: 1, delay, reason: 'retry-after' }],
    });
  });

  it('hands back the 503 whose Retry-After is past the deadline at once, its body readable', async () => {
    const { clock, send } = client({ deadline: 1000 });
    server.script('/later', [{ status: 503, headers: { 'Retry-After': '5' }, body: 'come back' }, ok]);
    // No clock is run: the request stops without waiting (running it would end the deadline).
    const response = await send(`${server.url}/later`);
    expect(response.statusCode).toBe(503);
    expect(await response.body.text()).toBe('come back');
    expect(getRetryInfo(response)).toMatchObject({
      attempts: 1,
      stoppedBy: 'retry-after-too-long',
      retryAt: T0 + 5000,
    });
    expect(server.requests('/later')).toHaveLength(1);
    expect(clock.now()).toBe(T0);
  });

  describe('bodies of responses retried past', () => {
    // Past the body's 64 KiB highWaterMark, so undici holds the connection until someone reads it;
    // within dump()'s 128 KiB, so dumping reads it through and keeps the connection.
    const big = 'x'.repeat(96 * 1024);

    /** A pool of at most `connections` sockets to the fault server, counting each one it opens. */
    function countingPool(connections: number) {
      const connect = buildConnector({});
      const counted = { opened: 0 };
      const pool = new Pool(server.url, {
        connections,
        connect: (options, callback) => {
          counted.opened++;
          connect(options, callback);
        },
      });
      return { pool, counted };
    }

    it('control: a body nobody reads holds its connection, and the next request opens another', async () => {
      const { pool, counted } = countingPool(2);
      server.script('/big', [{ status: 503, body: big }, ok]);
      try {
        const unread = await request(`${server.url}/big`, { dispatcher: pool });
        const next = await request(`${server.url}/big`, { dispatcher: pool });
        expect(counted.opened).toBe(2);
        await Promise.all([unread.body.dump(), next.body.dump()]);
      } finally {
        await pool.destroy();
      }
    });

    it('dumps each response it retries: three attempts over one connection, only the last body left to read', async () => {
      const { pool, counted } = countingPool(1);
      const { spy, received } = recording();
      const clock = virtualClock(T0);
      const send = retryUndici(spy, { clock, random: seededRandom(7) });
      server.script('/big', [
        { status: 503, body: big },
        { status: 503, body: big },
        { status: 200, body: 'ok' },
      ]);
      try {
        // One socket: without the dumps, the second attempt would wait for it for ever.
        const response = await onClock(clock, send(`${server.url}/big`, { dispatcher: pool }));
        expect(received.map((r) => [r.statusCode, r.body.readableEnded])).toEqual([
          [503, true],
          [503, true],
          [200, false],
        ]);
        expect(await response.body.text()).toBe('ok');
        expect(counted.opened).toBe(1);
      } finally {
        await pool.destroy();
      }
    });
  });

  it('refuses to replay a one-shot stream: BodyNotReplayableError after one attempt, its 503 dumped', async () => {
    const { spy, received } = recording();
    const clock = virtualClock(T0);
    const send = retryUndici(spy, { clock, random: seededRandom(7) });
    server.script('/upload', [{ status: 503, body: 'busy' }, ok]);
    const error = await rejection(
      onClock(clock, send(`${server.url}/upload`, { method: 'PUT', body: Readable.from(['a', 'b']) })),
    );
    expect(isRetrylineError(error, 'BodyNotReplayableError')).toBe(true);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, stoppedBy: 'not-retryable' });
    expect(server.requests('/upload').map((r) => r.bodyText)).toEqual(['ab']);
    await until(() => received[0]?.body.readableEnded === true, 'the 503 to be read off its connection');
  });

  it('a string body is sent again as it is: PUT 503, 200 → 200', async () => {
    const { clock, send, events } = client();
    server.script('/doc', [{ status: 503 }, ok]);
    // No method: undici sends a body with PUT, which is idempotent.
    const response = await onClock(clock, send(`${server.url}/doc`, { body: 'v2' }));
    expect(response.statusCode).toBe(200);
    await response.body.dump();
    expect(server.requests('/doc').map((r) => [r.method, r.bodyText])).toEqual([
      ['PUT', 'v2'],
      ['PUT', 'v2'],
    ]);
    expect(events[0]).toMatchObject({ type: 'request-start', client: 'undici', method: 'PUT' });
  });
});

describe('packages/core/ADAPTERS.md', () => {
  it('shows only code from the example, which is compiled and run here', () => {
    const root = new URL('../../', import.meta.url);
    const guide = readFileSync(new URL('packages/core/ADAPTERS.md', root), 'utf8');
    const example = readFileSync(new URL('examples/undici-adapter.ts', root), 'utf8')
      .split('\n')
      .map((line) => line.trim());
    const snippets = [...guide.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
    expect(snippets.length).toBeGreaterThanOrEqual(1);
    const missing = snippets
      .flatMap((snippet) => snippet.split('\n'))
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('// …') && !example.includes(line));
    expect(missing).toEqual([]);
  });
});
