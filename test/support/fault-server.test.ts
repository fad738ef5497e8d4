import { request } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AttemptRecord, type FaultServer, httpDate, startFaultServer } from './fault-server';
import { trackTimers } from './track-timers';

let server: FaultServer;

beforeEach(async () => {
  server = await startFaultServer();
});

afterEach(async () => {
  await server.close();
});

const now = () => performance.timeOrigin + performance.now();

/** Resolves with what `promise` rejected with; fails the test if it fulfilled. */
async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof Error) return error;
    throw new Error(`Expected an Error, got ${String(error)}`);
  }
  throw new Error('Expected the promise to reject, but it fulfilled');
}

function causeCode(error: Error): unknown {
  return (error.cause as { code?: unknown } | undefined)?.code;
}

/** An AbortSignal that fires after `ms`, whose timer the test clears. */
function abortAfter(ms: number) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  return { signal: controller.signal, dispose: () => clearTimeout(timer) };
}

async function waitFor(predicate: () => boolean, what: string, timeoutMs = 2_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(5);
  }
}

async function waitForRecord(path: string, index = 0): Promise<AttemptRecord> {
  await waitFor(() => server.requests(path).length > index, `request ${index} to ${path}`);
  const record = server.requests(path)[index];
  if (!record) throw new Error(`no request ${index} to ${path}`);
  return record;
}

interface RawOutcome {
  data: string;
  /** The socket saw a FIN from the server. */
  ended: boolean;
  error: NodeJS.ErrnoException | undefined;
}

/** A bare TCP client: shows exactly what reached the wire (RST → error, FIN → end). */
function rawClient(port: number) {
  const socket = connect(port, '127.0.0.1');
  const outcome: RawOutcome = { data: '', ended: false, error: undefined };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    outcome.data += chunk;
  });
  socket.on('end', () => {
    outcome.ended = true;
  });
  socket.on('error', (error: NodeJS.ErrnoException) => {
    outcome.error = error;
  });
  const closed = new Promise<RawOutcome>((resolve) => socket.on('close', () => resolve(outcome)));
  return { socket, outcome, closed };
}

function rawGet(path: string): string {
  return `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
}

describe('startFaultServer', () => {
  it('listens on a free loopback port and says where', () => {
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
  });

  describe('scripts', () => {
    it('answers the scripted steps in order, then repeats the last one', async () => {
      server.script('/flaky', [
        { status: 503 },
        { status: 429, headers: { 'Retry-After': '2' }, body: 'slow down' },
        { status: 200, body: 'ok' },
      ]);
      const answers: Array<[number, string, string | null]> = [];
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${server.url}/flaky`);
        answers.push([response.status, await response.text(), response.headers.get('retry-after')]);
      }
      expect(answers).toEqual([
        [503, '', null],
        [429, 'slow down', '2'],
        [200, 'ok', null],
        [200, 'ok', null],
      ]);
      expect(server.requests('/flaky').map((record) => [record.attempt, record.step])).toEqual([
        [0, 0],
        [1, 1],
        [2, 2],
        [3, 2],
      ]);
    });

    it('sends text/plain unless the step names a content-type', async () => {
      server.script('/plain', [{ status: 200, body: 'hi' }]);
      server.script('/json', [{ status: 200, headers: { 'Content-Type': 'application/json' }, body: '{}' }]);
      const plain = await fetch(`${server.url}/plain`);
      const json = await fetch(`${server.url}/json`);
      await Promise.all([plain.text(), json.text()]);
      expect(plain.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(json.headers.get('content-type')).toBe('application/json');
    });

    it('answers 500 "script exhausted" after the last step when repeatLast is false', async () => {
      server.script('/once', [{ status: 200, body: 'first' }], { repeatLast: false });
      const first = await fetch(`${server.url}/once`);
      const second = await fetch(`${server.url}/once`);
      expect([first.status, await first.text()]).toEqual([200, 'first']);
      expect([second.status, await second.text()]).toEqual([500, 'script exhausted']);
      expect(server.requests('/once').map((record) => record.step)).toEqual([0, -1]);
    });

    it('counts per path, ignores the query string, and restarts the count when re-scripted', async () => {
      server.script('/a', [{ status: 500 }, { status: 201 }]);
      server.script('/b', [{ status: 502 }, { status: 202 }]);
      const statuses = async (...paths: string[]) => {
        const result: number[] = [];
        for (const path of paths) {
          const response = await fetch(`${server.url}${path}`);
          await response.arrayBuffer();
          result.push(response.status);
        }
        return result;
      };
      expect(await statuses('/a?x=1', '/b', '/a?x=2', '/b')).toEqual([500, 502, 201, 202]);
      server.script('/a', [{ status: 503 }, { status: 204 }]);
      expect(await statuses('/a', '/a', '/b')).toEqual([503, 204, 202]);
      expect(server.requests('/a').map((record) => record.url)).toEqual(['/a?x=1', '/a?x=2', '/a', '/a']);
    });

    it('answers 404 for a path with no script and still records the request', async () => {
      const response = await fetch(`${server.url}/nowhere?q=1`);
      expect(response.status).toBe(404);
      await response.text();
      expect(server.requests('/nowhere')).toMatchObject([{ url: '/nowhere?q=1', step: -1, completed: true }]);
    });

    it('waits delayMs after reading the request before answering', async () => {
      server.script('/slow', [{ status: 200, body: 'done', delayMs: 150 }]);
      const started = now();
      const response = await fetch(`${server.url}/slow`);
      const headersAt = now();
      expect(await response.text()).toBe('done');
      expect(headersAt - started).toBeGreaterThanOrEqual(145);
    });

    it('rejects a malformed script with a message naming the step', () => {
      expect(() => server.script('/x', [])).toThrow('Expected steps to be non-empty');
      expect(() => server.script('/x', [{ status: 200 }, { status: 42 }])).toThrow(
        'Expected steps[1].status to be an integer from 200 to 999, got 42',
      );
      expect(() => server.script('/x', [{ fault: 'stall-body', ms: -1 }])).toThrow('steps[0].ms');
      expect(() => server.script('x', [{ status: 200 }])).toThrow('Expected path to start with "/"');
      expect(() => server.script('/x?y', [{ status: 200 }])).toThrow('have no query');
    });
  });

  describe('log', () => {
    it('records method, url, lower-cased headers with repeats joined, raw headers and body', async () => {
      server.script('/echo', [{ status: 201 }]);
      const before = now();
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const req = request(
          `${server.url}/echo?id=7`,
          {
            method: 'POST',
            agent: false,
            // Node's own req.headers would keep only the first User-Agent; the log keeps both.
            headers: {
              'Idempotency-Key': 'k-1',
              'X-Twice': ['one', 'two'],
              'User-Agent': ['first', 'second'],
              'Content-Type': 'text/plain',
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode));
          },
        );
        req.on('error', reject);
        req.end('hello body');
      });
      const after = now();
      expect(status).toBe(201);
      const [record] = server.requests('/echo');
      expect(record).toMatchObject({
        seq: 1,
        method: 'POST',
        path: '/echo',
        url: '/echo?id=7',
        bodyText: 'hello body',
        attempt: 0,
        step: 0,
        completed: true,
      });
      expect(record?.body.equals(Buffer.from('hello body'))).toBe(true);
      expect(record?.headers).toMatchObject({
        'idempotency-key': 'k-1',
        'x-twice': 'one, two',
        'user-agent': 'first, second',
        'content-type': 'text/plain',
      });
      expect(record?.rawHeaders).toEqual(
        expect.arrayContaining(['Idempotency-Key', 'k-1', 'X-Twice', 'two']),
      );
      expect(record?.receivedAt).toBeGreaterThanOrEqual(before);
      expect(record?.receivedAt).toBeLessThanOrEqual(after);
    });

    it('keeps every request in arrival order with rising seq, across paths', async () => {
      server.script('/one', [{ status: 200 }]);
      for (const path of ['/one', '/two', '/one']) await (await fetch(`${server.url}${path}`)).text();
      expect(server.log.map((record) => [record.seq, record.path])).toEqual([
        [1, '/one'],
        [2, '/two'],
        [3, '/one'],
      ]);
      expect(server.requests('/one').map((record) => record.seq)).toEqual([1, 3]);
    });

    it('clear() forgets the log and the scripts but keeps static paths', async () => {
      server.script('/s', [{ status: 200 }]);
      server.static('/page.html', '<p>hi</p>', 'text/html');
      await (await fetch(`${server.url}/s`)).text();
      const log = server.log;
      server.clear();
      expect(log).toHaveLength(0);
      const scripted = await fetch(`${server.url}/s`);
      const page = await fetch(`${server.url}/page.html`);
      expect([scripted.status, await scripted.text()]).toEqual([404, 'no script for /s']);
      expect([page.status, await page.text()]).toEqual([200, '<p>hi</p>']);
      expect(server.log.map((record) => record.path)).toEqual(['/s', '/page.html']);
      expect(server.log[0]?.seq).toBe(2);
    });
  });

  describe('faults', () => {
    it('reset-before-headers: reads the whole request, then resets without a byte (fetch: ECONNRESET)', async () => {
      server.script('/rst', [{ fault: 'reset-before-headers' }]);
      const error = await rejection(fetch(`${server.url}/rst`, { method: 'POST', body: 'payload' }));
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe('fetch failed');
      expect(causeCode(error)).toBe('ECONNRESET');
      expect(server.requests('/rst')).toMatchObject([{ bodyText: 'payload', completed: true, step: 0 }]);

      const raw = rawClient(server.port);
      raw.socket.write(rawGet('/rst'));
      const outcome = await raw.closed;
      expect(outcome).toMatchObject({ data: '', ended: false, error: { code: 'ECONNRESET' } });
    });

    it('reset-mid-request-body: resets while a 64 KB body arrives; the log keeps the part that came (fetch: ECONNRESET)', async () => {
      server.script('/upload', [{ fault: 'reset-mid-request-body' }]);
      const body = 'x'.repeat(64 * 1024);
      const error = await rejection(fetch(`${server.url}/upload`, { method: 'POST', body }));
      expect(error.message).toBe('fetch failed');
      expect(causeCode(error)).toBe('ECONNRESET');
      const [record] = server.requests('/upload');
      expect(record?.completed).toBe(false);
      expect(record?.headers['content-length']).toBe(String(body.length));
      expect(record?.body.length).toBeGreaterThan(0);
      expect(record?.body.length).toBeLessThan(body.length);
      expect(record?.bodyText).toBe('x'.repeat(record?.body.length ?? -1));
    });

    it('reset-mid-request-body: waits for afterBytes body bytes before resetting', async () => {
      server.script('/upload', [{ fault: 'reset-mid-request-body', afterBytes: 15 }]);
      const raw = rawClient(server.port);
      raw.socket.write('POST /upload HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n');
      raw.socket.write('0123456789');
      await waitFor(() => server.requests('/upload')[0]?.body.length === 10, '10 body bytes');
      await sleep(50);
      expect(raw.socket.destroyed).toBe(false);
      raw.socket.write('abcdefghij');
      const outcome = await raw.closed;
      expect(outcome).toMatchObject({ data: '', error: { code: 'ECONNRESET' } });
      expect(server.requests('/upload')).toMatchObject([
        { bodyText: '0123456789abcdefghij', completed: false },
      ]);
    });

    it('reset-mid-response-body: sends headers and part of the body, then resets (fetch: "terminated", ECONNRESET)', async () => {
      server.script('/cut', [{ fault: 'reset-mid-response-body', status: 200, partialBody: 'half of it' }]);
      const response = await fetch(`${server.url}/cut`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-length')).toBe(String('half of it'.length + 1024));
      const reader = response.body?.getReader();
      if (!reader) throw new Error('Expected a response body');
      const received: string[] = [];
      const error = await rejection(
        (async () => {
          for (;;) {
            const chunk = await reader.read();
            if (chunk.done) return;
            received.push(Buffer.from(chunk.value).toString('utf8'));
          }
        })(),
      );
      expect(received.join('')).toBe('half of it');
      expect(error).toBeInstanceOf(TypeError);
      expect(error.message).toBe('terminated');
      expect(causeCode(error)).toBe('ECONNRESET');

      const raw = rawClient(server.port);
      raw.socket.write(rawGet('/cut'));
      const outcome = await raw.closed;
      expect(outcome.data).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nhalf of it$/);
      expect(outcome.error?.code).toBe('ECONNRESET');
    });

    it('reset-mid-response-body with resetDelayMs 0: a same-process client reads a clean end instead (fetch: UND_ERR_SOCKET)', async () => {
      server.script('/cut', [{ fault: 'reset-mid-response-body', partialBody: 'half', resetDelayMs: 0 }]);
      const response = await fetch(`${server.url}/cut`);
      const error = await rejection(response.text());
      expect(error.message).toBe('terminated');
      expect(causeCode(error)).toBe('UND_ERR_SOCKET');
      expect((error.cause as Error).message).toBe('other side closed');
    });

    it('stall-headers: sends nothing until the client aborts, and close() still returns promptly', async () => {
      server.script('/hang', [{ fault: 'stall-headers' }]);
      const abort = abortAfter(150);
      const started = now();
      try {
        const error = await rejection(fetch(`${server.url}/hang`, { signal: abort.signal }));
        expect(error.name).toBe('AbortError');
      } finally {
        abort.dispose();
      }
      expect(now() - started).toBeGreaterThanOrEqual(145);
      expect(server.requests('/hang')).toMatchObject([{ completed: true }]);
      const closing = now();
      await server.close();
      expect(now() - closing).toBeLessThan(1_000);
    });

    it('stall-headers with ms: answers 200 "late" once the stall is over', async () => {
      server.script('/hang', [{ fault: 'stall-headers', ms: 100 }]);
      const started = now();
      const response = await fetch(`${server.url}/hang`);
      expect(now() - started).toBeGreaterThanOrEqual(95);
      expect([response.status, await response.text()]).toEqual([200, 'late']);
    });

    it('stall-body: the headers arrive, the body never does before the client aborts', async () => {
      server.script('/drip', [{ fault: 'stall-body', status: 202, body: 'never' }]);
      const controller = new AbortController();
      const response = await fetch(`${server.url}/drip`, { signal: controller.signal });
      expect(response.status).toBe(202);
      expect(response.headers.get('content-length')).toBe('5');
      const reader = response.body?.getReader();
      if (!reader) throw new Error('Expected a response body');
      const read = rejection(reader.read());
      // Abort only once the headers are in: the read can then end only by the body or the abort.
      const timer = setTimeout(() => controller.abort(), 150);
      try {
        const error = await read;
        expect(error.name).toBe('AbortError');
      } finally {
        clearTimeout(timer);
      }
    });

    it('stall-body with ms: the body follows the headers once the stall is over', async () => {
      server.script('/drip', [{ fault: 'stall-body', ms: 100 }]);
      const started = now();
      const response = await fetch(`${server.url}/drip`);
      expect(await response.text()).toBe('late');
      expect(now() - started).toBeGreaterThanOrEqual(95);
    });

    it('close-before-headers: ends the connection cleanly with no response (fetch: UND_ERR_SOCKET)', async () => {
      server.script('/fin', [{ fault: 'close-before-headers' }]);
      const error = await rejection(fetch(`${server.url}/fin`));
      expect(error.message).toBe('fetch failed');
      expect(causeCode(error)).toBe('UND_ERR_SOCKET');
      expect((error.cause as Error).message).toBe('other side closed');

      const raw = rawClient(server.port);
      raw.socket.write(rawGet('/fin'));
      const outcome = await raw.closed;
      expect(outcome).toEqual({ data: '', ended: true, error: undefined });
    });

    it('mixes faults and responses in one script', async () => {
      server.script('/mixed', [
        { fault: 'reset-before-headers' },
        { fault: 'close-before-headers' },
        { status: 200 },
      ]);
      const first = await rejection(fetch(`${server.url}/mixed`));
      const second = await rejection(fetch(`${server.url}/mixed`));
      const third = await fetch(`${server.url}/mixed`);
      await third.text();
      expect([causeCode(first), causeCode(second), third.status]).toEqual([
        'ECONNRESET',
        'UND_ERR_SOCKET',
        200,
      ]);
    });
  });

  describe('other endpoints', () => {
    it('refusedUrl() names a loopback port where nothing listens (fetch: ECONNREFUSED)', async () => {
      const url = await server.refusedUrl();
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(url).not.toBe(server.url);
      const error = await rejection(fetch(url));
      expect(error.message).toBe('fetch failed');
      expect(causeCode(error)).toBe('ECONNREFUSED');
    });

    it('static() serves a page and its script from the same origin', async () => {
      server.static('/', '<script src="/app.js"></script>', 'text/html; charset=utf-8');
      server.static('/app.js', 'console.log(1);', 'text/javascript');
      const page = await fetch(`${server.url}/`);
      const script = await fetch(`${server.url}/app.js`);
      expect([page.status, page.headers.get('content-type'), await page.text()]).toEqual([
        200,
        'text/html; charset=utf-8',
        '<script src="/app.js"></script>',
      ]);
      expect([script.status, script.headers.get('content-type'), await script.text()]).toEqual([
        200,
        'text/javascript',
        'console.log(1);',
      ]);
    });
  });

  describe('robustness and shutdown', () => {
    it('close() resolves within 1 s with a stalled request pending, and the client sees the connection end', async () => {
      server.script('/hang', [{ fault: 'stall-headers' }]);
      const pending = rejection(fetch(`${server.url}/hang`));
      await waitForRecord('/hang');
      const started = now();
      await server.close();
      expect(now() - started).toBeLessThan(1_000);
      const error = await pending;
      expect(error.message).toBe('fetch failed');
      expect(causeCode(error)).toBe('UND_ERR_SOCKET');
    });

    it('close() clears every timer it armed and ends every connection', async () => {
      const timers = trackTimers();
      try {
        server.script('/delayed', [{ status: 200, delayMs: 60_000 }]);
        server.script('/hang', [{ fault: 'stall-headers', ms: 60_000 }]);
        server.script('/drip', [{ fault: 'stall-body', ms: 60_000 }]);
        const clients = ['/delayed', '/hang', '/drip'].map((path) => {
          const client = rawClient(server.port);
          client.socket.write(rawGet(path));
          return client;
        });
        await waitFor(() => timers.active() === 3, 'three armed timers');
        await server.close();
        expect(timers.active()).toBe(0);
        const outcomes = await Promise.all(clients.map((client) => client.closed));
        expect(outcomes.map((outcome) => outcome.data.startsWith('HTTP/1.1 200 OK'))).toEqual([
          false,
          false,
          true,
        ]);
      } finally {
        timers.restore();
      }
    });

    it('drops the timer of a delayed answer when the client goes away', async () => {
      const timers = trackTimers();
      try {
        server.script('/delayed', [{ status: 200, delayMs: 60_000 }]);
        const client = rawClient(server.port);
        client.socket.write(rawGet('/delayed'));
        await waitFor(() => timers.active() === 1, 'the delay timer');
        client.socket.destroy();
        await waitFor(() => timers.active() === 0, 'the delay timer to be cleared');
      } finally {
        timers.restore();
      }
    });

    it('survives clients that vanish mid-request and keeps answering', async () => {
      server.script('/ok', [{ status: 200, body: 'still here' }]);
      server.script('/cut', [{ fault: 'reset-mid-response-body', resetDelayMs: 200 }]);
      const halfHead = rawClient(server.port);
      halfHead.socket.write('POST /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le');
      const halfBody = rawClient(server.port);
      halfBody.socket.write('POST /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 50\r\n\r\nabc');
      const reader = rawClient(server.port);
      reader.socket.write(rawGet('/cut'));
      await waitFor(() => server.requests('/ok').length === 1, 'the half-sent body');
      await waitFor(() => reader.outcome.data.includes('partial'), 'the partial response');
      halfHead.socket.resetAndDestroy();
      halfBody.socket.resetAndDestroy();
      reader.socket.resetAndDestroy();
      await Promise.all([halfHead.closed, halfBody.closed, reader.closed]);
      const response = await fetch(`${server.url}/ok`);
      expect(await response.text()).toBe('still here');
      expect(server.requests('/ok')[0]).toMatchObject({ bodyText: 'abc', completed: false });
    });
  });
});

describe('httpDate', () => {
  it('formats an epoch time as an IMF-fixdate', () => {
    expect(httpDate(0)).toBe('Thu, 01 Jan 1970 00:00:00 GMT');
    expect(httpDate(Date.UTC(2030, 5, 9, 8, 7, 6, 999))).toBe('Sun, 09 Jun 2030 08:07:06 GMT');
  });
});
