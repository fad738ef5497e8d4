import { Agent, createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { attachRetry, getRetryInfo } from '@retryline/axios';
import {
  BodyNotReplayableError,
  bulkhead,
  circuitBreaker,
  isRetrylineError,
  type RetrylineEvent,
  rateLimiter,
} from '@retryline/core';
import axios, {
  type AxiosAdapter,
  AxiosError,
  type AxiosInstance,
  type AxiosRequestConfig,
  CanceledError,
} from 'axios';
import axiosRetry from 'axios-retry';
import { describe, expect, it, vi } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

const server = useFaultServer();
const fast = { retries: 2, backoff: { strategy: 'constant', base: 20 }, jitter: 'none' } as const;

function client(options: Parameters<typeof attachRetry>[1] = fast): AxiosInstance {
  const instance = axios.create({ baseURL: server.url });
  attachRetry(instance, options);
  return instance;
}

describe('attachRetry (axios)', () => {
  it('GET 503, 503, 200 → 3 attempts and the 200', async () => {
    server.script('/a', [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    const response = await client().get('/a');
    expect(response.status).toBe(200);
    expect(response.data).toBe('ok');
    expect(server.requests('/a')).toHaveLength(3);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 3, totalDelay: 40, outcome: 'success' });
  });

  it("retries through a request's own adapter, and the next request goes through the instance's", async () => {
    server.script('/own', [{ status: 503 }, { status: 200, body: 'from the server' }]);
    const instance = client();
    let calls = 0;
    // As axios's own adapters do, it rejects a response that fails validateStatus.
    const own: AxiosAdapter = async (config) => {
      calls++;
      const response = { data: 'from my adapter', status: 200, statusText: '', headers: {}, config };
      if (calls > 1) return response;
      const busy = { ...response, data: 'busy', status: 503 };
      throw new AxiosError('busy', AxiosError.ERR_BAD_RESPONSE, config, undefined, busy);
    };
    const response = await instance.get('/own', { adapter: own });
    expect(response.data).toBe('from my adapter');
    expect(calls).toBe(2);
    expect(server.requests('/own')).toHaveLength(0);
    const next = await instance.get('/own');
    expect(next.data).toBe('from the server');
    expect(server.requests('/own')).toHaveLength(2);
    expect(calls).toBe(2);
    expect(getRetryInfo(next)).toMatchObject({ attempts: 2, outcome: 'success' });
  });

  it('reads the hints of a response whose header names are not lower-cased (a custom adapter)', async () => {
    const instance = client();
    let calls = 0;
    const own: AxiosAdapter = async (config) => {
      calls++;
      // Two minutes: past maxRetryAfter (60 s), so the request stops at once if the hint is read.
      const busy = { data: '', status: 503, statusText: '', headers: { 'Retry-After': '120' }, config };
      throw new AxiosError('busy', AxiosError.ERR_BAD_RESPONSE, config, undefined, busy);
    };
    const before = Date.now();
    const { error } = await settle(instance.get('/hinted', { adapter: own }));
    // Stopped by the hint, the request rejects as axios would without retries: with the 503's own
    // AxiosError; getRetryInfo() says why, and when the server said to come back.
    expect(error).toBeInstanceOf(AxiosError);
    expect((error as AxiosError).response?.status).toBe(503);
    expect((error as AxiosError).response?.data).toBe('');
    const info = getRetryInfo(error);
    expect(info).toMatchObject({
      attempts: 1,
      outcome: 'retry-after-too-long',
      stoppedBy: 'retry-after-too-long',
    });
    expect(info?.retryAt).toBeGreaterThanOrEqual(before + 120_000);
    expect(info?.retryAt).toBeLessThanOrEqual(Date.now() + 120_000);
    expect(calls).toBe(1);
  });

  it('rejects with axios’s own AxiosError once retries run out, retry info attached', async () => {
    server.script('/down', [{ status: 503, body: 'down' }]);
    const { error } = await settle(client().get('/down'));
    expect(error).toBeInstanceOf(AxiosError);
    expect((error as AxiosError).response?.status).toBe(503);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 3, outcome: 'exhausted' });
    expect(server.requests('/down')).toHaveLength(3);
  });

  it('POST 503 → 1 attempt; with idempotencyKey → retried with the same key', async () => {
    server.script('/orders', [{ status: 503 }, { status: 201 }]);
    const { error } = await settle(client().post('/orders', { sku: 1 }));
    expect((error as AxiosError).response?.status).toBe(503);
    expect(server.requests('/orders')).toHaveLength(1);
    server.script('/orders', [{ status: 503 }, { status: 201 }]);
    const response = await client({ ...fast, idempotencyKey: true }).post('/orders', { sku: 1 });
    expect(response.status).toBe(201);
    const [, first, second] = server.requests('/orders');
    expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
    expect(second?.bodyText).toBe('{"sku":1}');
  });

  it('a refused connection is retried and ends with axios’s ECONNREFUSED error', async () => {
    const refused = await server.refusedUrl();
    const instance = axios.create({ baseURL: refused });
    attachRetry(instance, fast);
    const { error } = await settle(instance.post('/x', 'body'));
    expect(error).toBeInstanceOf(AxiosError);
    expect((error as AxiosError).code).toBe('ECONNREFUSED');
    // The whole account, as for an HTTP failure: both waits and why the request stopped.
    expect(getRetryInfo(error)).toMatchObject({ attempts: 3, totalDelay: 40, outcome: 'exhausted' });
    expect(getRetryInfo(error)?.delays?.map((d) => d.delay)).toEqual([20, 20]);
  });

  it('honours axios’s own per-attempt timeout and retries a GET that timed out', async () => {
    server.script('/stall', [{ fault: 'stall-headers' }]);
    const { error } = await settle(client().get('/stall', { timeout: 100 }));
    expect((error as AxiosError).code).toBe('ECONNABORTED');
    expect(server.requests('/stall')).toHaveLength(3);
  });

  it("a POST that timed out is not retried and rejects with axios's ECONNABORTED, its retry info kept", async () => {
    server.script('/slow-post', [{ fault: 'stall-headers' }]);
    const { error } = await settle(client({ ...fast, timeout: 100 }).post('/slow-post', 'x'));
    expect(error).toBeInstanceOf(AxiosError);
    expect((error as AxiosError).code).toBe('ECONNABORTED');
    expect((error as AxiosError).message).toBe('timeout of 100ms exceeded');
    expect(server.requests('/slow-post')).toHaveLength(1);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, outcome: 'not-retryable' });
  });

  it('getRetryInfo tells how a request ended whatever it rejected with', async () => {
    server.script('/down', [{ status: 503, body: 'down' }]);
    const deadline = await settle(
      client({ ...fast, backoff: { strategy: 'constant', base: 400 }, deadline: 300 }).get('/down'),
    );
    // The deadline left no room for the next wait: the 503's AxiosError, as without retries.
    expect(deadline.error).toBeInstanceOf(AxiosError);
    expect((deadline.error as AxiosError).response).toMatchObject({ status: 503, data: 'down' });
    expect(getRetryInfo(deadline.error)).toMatchObject({
      attempts: 1,
      outcome: 'deadline',
      stoppedBy: 'deadline',
    });
    expect(server.requests('/down')).toHaveLength(1);

    server.script('/reset', [{ fault: 'reset-before-headers' }]);
    const reset = await settle(client().post('/reset', 'x'));
    expect(reset.error).toBeInstanceOf(AxiosError);
    expect(getRetryInfo(reset.error)).toMatchObject({
      attempts: 1,
      outcome: 'not-retryable',
      stoppedBy: 'not-retryable',
    });
  });

  it('waits for Retry-After', async () => {
    server.script('/limited', [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200 }]);
    await client().get('/limited');
    const [first, second] = server.requests('/limited');
    expect((second?.receivedAt ?? 0) - (first?.receivedAt ?? 0)).toBeGreaterThanOrEqual(1000);
  });

  it('re-runs request interceptors before every attempt; response interceptors run once', async () => {
    server.script('/i', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const instance = axios.create({ baseURL: server.url });
    let stamps = 0;
    instance.interceptors.request.use((config) => {
      config.headers.set('x-stamp', String(++stamps));
      return config;
    });
    attachRetry(instance, fast);
    const seen = vi.fn((response) => response);
    instance.interceptors.response.use(seen);
    await instance.get('/i');
    expect(server.requests('/i').map((r) => r.headers['x-stamp'])).toEqual(['1', '2', '3']);
    expect(seen).toHaveBeenCalledTimes(1);
  });

  it('a config sent again (a token refreshed on a 401) gets its own 3 attempts, not 3 × 3', async () => {
    server.script('/replay', [
      { status: 401 },
      { status: 503 },
      { status: 503 },
      { status: 503 },
      { status: 200 },
    ]);
    const instance = client();
    instance.interceptors.response.use(undefined, async (error) => {
      if (error.response?.status === 401 && !error.config._replayed) {
        error.config._replayed = true;
        return instance(error.config);
      }
      throw error;
    });
    const { error } = await settle(instance.get('/replay'));
    expect((error as AxiosError).response?.status).toBe(503);
    // The 401, then the replay's 3 attempts.
    expect(server.requests('/replay')).toHaveLength(4);
  });

  it('retries with added headers after an interceptor replaced config.headers with a plain object', async () => {
    server.script('/plain', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const instance = axios.create({ baseURL: server.url });
    attachRetry(instance, { ...fast, idempotencyKey: true, attemptHeader: 'x-attempt' });
    instance.interceptors.request.use((config) => {
      // axios accepts plain headers from an interceptor; Retryline adds its own to them.
      (config as { headers: unknown }).headers = { ...config.headers, authorization: 'Bearer x' };
      return config;
    });
    expect((await instance.post('/plain', 'x')).status).toBe(200);
    const requests = server.requests('/plain');
    expect(requests.map((r) => r.headers['x-attempt'])).toEqual([
      'attempt=1; max=3',
      'attempt=2; max=3',
      'attempt=3; max=3',
    ]);
    expect(new Set(requests.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    expect(requests.every((r) => r.headers.authorization === 'Bearer x')).toBe(true);
  });

  it('a CancelToken cancelled during a wait rejects with its CanceledError at once and sends nothing more', async () => {
    server.script('/token', [{ status: 503 }]);
    const source = axios.CancelToken.source();
    let interceptorRuns = 0;
    const instance = client({
      ...fast,
      backoff: { strategy: 'constant', base: 10_000 },
      onRetry: () => source.cancel('bye'),
    });
    instance.interceptors.request.use((config) => {
      interceptorRuns++;
      return config;
    });
    const started = Date.now();
    const { error } = await settle(instance.get('/token', { cancelToken: source.token }));
    expect(axios.isCancel(error)).toBe(true);
    expect((error as CanceledError<unknown>).message).toBe('bye');
    expect(Date.now() - started).toBeLessThan(1000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.requests('/token')).toHaveLength(1);
    expect(interceptorRuns).toBe(1);
  });

  it('per-request config.retry: false fails fast; an object overrides', async () => {
    server.script('/once', [{ status: 503 }, { status: 200 }]);
    const instance = client();
    expect((await settle(instance.get('/once', { retry: false }))).error).toBeInstanceOf(AxiosError);
    server.script('/once', [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200 }]);
    expect((await instance.get('/once', { retry: { retries: 3 } })).status).toBe(200);
    expect(server.requests('/once')).toHaveLength(5);
    // A number of retries, as the option retry takes it: 0 fails fast too.
    server.script('/zero', [{ status: 503 }, { status: 200 }]);
    expect((await settle(instance.get('/zero', { retry: 0 }))).error).toBeInstanceOf(AxiosError);
    expect(server.requests('/zero')).toHaveLength(1);
  });

  it('an abort during a wait rejects with CanceledError at once and sends nothing more', async () => {
    server.script('/slow', [{ status: 503 }]);
    const controller = new AbortController();
    const instance = client({
      ...fast,
      backoff: { strategy: 'constant', base: 10_000 },
      onRetry: () => controller.abort(),
    });
    const started = Date.now();
    const { error } = await settle(instance.get('/slow', { signal: controller.signal }));
    expect(error).toBeInstanceOf(CanceledError);
    expect(axios.isCancel(error)).toBe(true);
    // As axios's own: the request's config on the error (a cancel handler reads error.config.url).
    expect((error as CanceledError<unknown>).config?.url).toBe('/slow');
    expect(Date.now() - started).toBeLessThan(1000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.requests('/slow')).toHaveLength(1);
  });

  it('hands a stream body to the caller whole, even with a transform that pipes it', async () => {
    const body = 'x'.repeat(1_000_000);
    server.script('/big', [{ status: 503, body }]);
    const instance = axios.create({
      baseURL: server.url,
      responseType: 'stream',
      transformResponse: [(data: Readable) => data.pipe(new PassThrough())],
    });
    attachRetry(instance, { retries: 0, retryOn: ({ error }) => Boolean((error as AxiosError).response) });
    const { error } = await settle(instance.get('/big'));
    let length = 0;
    const stream = (error as AxiosError).response?.data as Readable;
    for await (const chunk of stream) length += chunk.length;
    expect(length).toBe(body.length);
  });

  it('knows its own interceptor whatever axios numbers it: refuses a second attach, re-runs the others', async () => {
    const instance = axios.create({ baseURL: server.url });
    instance.interceptors.request.eject(instance.interceptors.request.use((config) => config));
    attachRetry(instance, fast);
    expect(() => attachRetry(instance, fast)).toThrow('already has it');
    let token = 0;
    instance.interceptors.request.use((config) => {
      config.headers.set('x-token', String(++token));
      return config;
    });
    server.script('/tokens', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    await instance.get('/tokens');
    expect(server.requests('/tokens').map((r) => r.headers['x-token'])).toEqual(['1', '2', '3']);
    // Cleared by axios, it is gone: attaching again works.
    instance.interceptors.request.clear();
    expect(() => attachRetry(instance, fast)).not.toThrow();
  });

  it('refuses to replay a stream body', async () => {
    server.script('/stream', [{ status: 503 }, { status: 200 }]);
    const { error } = await settle(
      client({ ...fast, idempotencyKey: true }).post('/stream', Readable.from(['chunk']), {
        headers: { 'content-type': 'text/plain' },
      }),
    );
    expect(axios.isAxiosError(error)).toBe(true);
    expect((error as AxiosError).code).toBe('ERR_BODY_NOT_REPLAYABLE');
    expect((error as AxiosError).cause).toBeInstanceOf(BodyNotReplayableError);
    expect((error as AxiosError).message).toBe(((error as AxiosError).cause as Error).message);
    expect((error as AxiosError).config?.url).toBe('/stream');
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1 });
    expect(server.requests('/stream')).toHaveLength(1);
  });

  it('events name axios as the client', async () => {
    server.script('/e', [{ status: 503 }, { status: 200 }]);
    const events: RetrylineEvent[] = [];
    await client({ ...fast, onEvent: (e) => events.push(e) }).get('/e?key=secret');
    expect(events[0]).toMatchObject({
      type: 'request-start',
      client: 'axios',
      method: 'GET',
      url: `${server.url}/e?key=***`,
    });
    expect(events.at(-1)).toMatchObject({
      type: 'request-end',
      outcome: 'success',
      attempts: 2,
      status: 200,
    });
  });

  it('refuses to attach twice, and detach() removes it', async () => {
    const instance = axios.create({ baseURL: server.url });
    const detach = attachRetry(instance, fast);
    expect(() => attachRetry(instance, fast)).toThrow(/already has it: retries would stack/);
    detach();
    server.script('/d', [{ status: 503 }, { status: 200 }]);
    expect((await settle(instance.get('/d'))).error).toBeInstanceOf(AxiosError);
    expect(server.requests('/d')).toHaveLength(1);
    expect(() => attachRetry(instance, fast)).not.toThrow();
  });

  it('warns when axios-retry is installed on the same instance (retries would stack)', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const instance = axios.create({ baseURL: server.url });
    axiosRetry(instance, { retries: 0 });
    attachRetry(instance, fast);
    server.script('/both', [{ status: 200 }]);
    await instance.get('/both');
    await instance.get('/both');
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]?.[0]).toMatch(/also has axios-retry installed: retries stack/);
  });

  it('names in its events the URL axios sends to, as getUri() would: base URL, absolute URL, params', async () => {
    server.script('/api/items', [{ status: 200 }]);
    const cases: Array<[Parameters<AxiosInstance['get']>[0], Parameters<AxiosInstance['get']>[1]]> = [
      ['items', { baseURL: `${server.url}/api/` }],
      ['/items', { baseURL: `${server.url}/api` }],
      [`${server.url}/api/items`, { baseURL: 'http://elsewhere.invalid' }],
      ['items', { baseURL: `${server.url}/api`, params: { page: 2, q: 'a b' } }],
      ['', { baseURL: `${server.url}/api/items` }],
    ];
    for (const [url, config] of cases) {
      const events: RetrylineEvent[] = [];
      const instance = client({ ...fast, onEvent: (event) => events.push(event) });
      await instance.get(url, config);
      const start = events.find((event) => event.type === 'request-start');
      expect(start && 'url' in start ? start.url : undefined).toBe(
        instance.getUri({ ...config, url }).replace(/=[^&]*/g, '=***'),
      );
    }
  });
});

describe('attachRetry (axios): a request refused before anything was sent rejects with an AxiosError', () => {
  it('breaker open: ERR_CIRCUIT_OPEN, the CircuitOpenError its cause, its retryAt kept, nothing sent', async () => {
    server.script('/broken', [{ status: 503 }]);
    const instance = client({ retries: 0, breaker: circuitBreaker({ consecutiveFailures: 1 }) });
    await settle(instance.get('/broken'));
    expect(server.requests('/broken')).toHaveLength(1);
    const { error } = await settle(instance.get('/broken'));
    expect(axios.isAxiosError(error)).toBe(true);
    expect(error).toBeInstanceOf(AxiosError);
    const failure = error as AxiosError & { retryAt?: number };
    expect(failure.code).toBe('ERR_CIRCUIT_OPEN');
    expect(isRetrylineError(failure.cause, 'CircuitOpenError')).toBe(true);
    expect(failure.message).toBe((failure.cause as Error).message);
    expect(failure.config?.url).toBe('/broken');
    expect(failure.response).toBeUndefined();
    expect(failure.retryAt).toBe((failure.cause as unknown as { retryAt: number }).retryAt);
    expect(failure.retryAt).toBeGreaterThan(Date.now() - 1000);
    expect(getRetryInfo(error)).toMatchObject({ stoppedBy: 'breaker', retryAt: failure.retryAt });
    expect(server.requests('/broken')).toHaveLength(1);
  });

  it('limiter in reject mode: ERR_RATE_LIMITED, the RateLimitedError its cause, nothing sent', async () => {
    server.script('/limited', [{ status: 200 }]);
    const instance = client({
      ...fast,
      limiter: rateLimiter({ capacity: 1, refillPerSecond: 0.001, mode: 'reject' }),
    });
    await instance.get('/limited');
    const { error } = await settle(instance.get('/limited'));
    expect(axios.isAxiosError(error)).toBe(true);
    const failure = error as AxiosError & { retryAt?: number };
    expect(failure.code).toBe('ERR_RATE_LIMITED');
    expect(isRetrylineError(failure.cause, 'RateLimitedError')).toBe(true);
    expect(failure.retryAt).toBe((failure.cause as unknown as { retryAt: number }).retryAt);
    expect(getRetryInfo(error)).toBeDefined();
    expect(server.requests('/limited')).toHaveLength(1);
  });

  it('bulkhead full: ERR_BULKHEAD_FULL, the BulkheadRejectedError its cause, the second not sent', async () => {
    server.script('/busy', [{ status: 200, delayMs: 300 }]);
    const instance = client({ ...fast, bulkhead: bulkhead({ maxConcurrent: 1 }) });
    const [first, second] = await Promise.all([settle(instance.get('/busy')), settle(instance.get('/busy'))]);
    expect(first.error).toBeUndefined();
    expect(axios.isAxiosError(second.error)).toBe(true);
    const failure = second.error as AxiosError;
    expect(failure.code).toBe('ERR_BULKHEAD_FULL');
    expect(isRetrylineError(failure.cause, 'BulkheadRejectedError')).toBe(true);
    expect(failure.config?.url).toBe('/busy');
    expect(getRetryInfo(failure)).toBeDefined();
    expect(server.requests('/busy')).toHaveLength(1);
  });

  it('a deadline that ends the request without a response: ERR_DEADLINE', async () => {
    server.script('/stall', [{ fault: 'stall-headers' }]);
    const { error } = await settle(client({ ...fast, deadline: 100 }).get('/stall'));
    expect(axios.isAxiosError(error)).toBe(true);
    expect((error as AxiosError).code).toBe('ERR_DEADLINE');
    expect(isRetrylineError((error as AxiosError).cause, 'DeadlineExceededError')).toBe(true);
  });
});

describe('attachRetry (axios): response bodies in Node', () => {
  const MB = 1024 * 1024;

  it('drops a retried response unread: its body is not downloaded, only the last one is', async () => {
    server.script('/big', [
      { status: 503, body: 'x'.repeat(32 * MB) },
      { status: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' },
    ]);
    const agent = new Agent();
    const sockets: Socket[] = [];
    const connect = agent.createConnection.bind(agent);
    agent.createConnection = (...args: Parameters<typeof connect>) => {
      const socket = connect(...args) as Socket;
      sockets.push(socket);
      return socket;
    };
    const response = await client().get('/big', { httpAgent: agent });
    expect(response.data).toEqual({ ok: true });
    expect(sockets).toHaveLength(2);
    // The 503's socket read its headers and a little more, not the 32 MB behind them.
    expect(sockets[0]?.bytesRead).toBeLessThan(8 * MB);
    agent.destroy();
  });

  const bodies: Array<[string, AxiosRequestConfig, string]> = [
    ['JSON after a byte order mark (the default)', {}, '\uFEFF{"a":[1,"ü"]}'],
    ['text, its byte order mark stripped', { responseType: 'text' }, '\uFEFFplain ü'],
    ['an arraybuffer (a Buffer, BOM and all)', { responseType: 'arraybuffer' }, '\uFEFFbytes ü'],
    ['text in latin1', { responseType: 'text', responseEncoding: 'latin1' }, 'ü'],
    ['JSON through transformResponse', { transformResponse: [(data: string) => `<${data}>`] }, '{"a":1}'],
  ];
  it.each(bodies)('hands back the final body as axios itself gives it: %s', async (_name, config, body) => {
    const step = { status: 200, headers: { 'content-type': 'application/json' }, body };
    server.script('/plain', [step]);
    server.script('/retried', [{ status: 503 }, step]);
    const plain = await axios.create({ baseURL: server.url }).get('/plain', config);
    const retried = await client().get('/retried', config);
    expect(retried.data).toEqual(plain.data);
    expect(Buffer.isBuffer(retried.data)).toBe(Buffer.isBuffer(plain.data));
    expect(retried.config.responseType).toBe(plain.config.responseType);
    expect(server.requests('/retried')).toHaveLength(2);
  });

  it('fails a final body over maxContentLength as axios does', async () => {
    server.script('/long', [{ status: 503 }, { status: 200, body: 'x'.repeat(100) }]);
    server.script('/plain-long', [{ status: 200, body: 'x'.repeat(100) }]);
    const plain = await settle(
      axios.create({ baseURL: server.url }).get('/plain-long', { maxContentLength: 10 }),
    );
    const { error } = await settle(client().get('/long', { maxContentLength: 10 }));
    expect(error).toBeInstanceOf(AxiosError);
    expect((error as AxiosError).message).toBe((plain.error as AxiosError).message);
    expect((error as AxiosError).code).toBe((plain.error as AxiosError).code);
  });

  it('rejects with the last 503, its body read as axios reads it; a retryOn that reads bodies sees them parsed', async () => {
    const json = { status: 503, headers: { 'content-type': 'application/json' }, body: '{"code":"BUSY"}' };
    server.script('/busy', [json]);
    const seen: unknown[] = [];
    const retryOn = ({ error }: { error?: unknown }) => seen.push((error as AxiosError).response?.data) > 0;
    const { error } = await settle(client({ ...fast, retryOn }).get('/busy'));
    expect((error as AxiosError).response?.data).toEqual({ code: 'BUSY' });
    expect(seen).toEqual([{ code: 'BUSY' }, { code: 'BUSY' }, { code: 'BUSY' }]);
    server.script('/busy', [json]);
    const plainly = await settle(client().get('/busy'));
    expect((plainly.error as AxiosError).response?.data).toEqual({ code: 'BUSY' });
  });
});

describe('attachRetry (axios): a FormData body', () => {
  it('goes out as the same bytes under the same content type on every attempt, read back as sent', async () => {
    server.script('/upload', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const form = new FormData();
    form.append('note', 'line\none "quoted"');
    form.append('file', new File([new Uint8Array([0, 13, 10, 255])], 'a\n"b".bin', { type: 'image/png' }));
    await client().put('/upload', form, { headers: { 'Content-Type': 'multipart/form-data' } });
    const [first, ...rest] = server.requests('/upload');
    expect(rest).toHaveLength(2);
    for (const attempt of rest) {
      expect(attempt.body.equals(first?.body ?? Buffer.alloc(0))).toBe(true);
      expect(attempt.headers['content-type']).toBe(first?.headers['content-type']);
    }
    const parsed = await new Request(server.url, {
      method: 'POST',
      body: new Uint8Array(first?.body ?? []),
      headers: { 'content-type': first?.headers['content-type'] ?? '' },
    }).formData();
    expect(parsed.get('note')).toBe('line\r\none "quoted"');
    const file = parsed.get('file') as File;
    expect([file.name, file.type, [...new Uint8Array(await file.arrayBuffer())]]).toEqual([
      'a\n"b".bin',
      'image/png',
      [0, 13, 10, 255],
    ]);
  });

  it('with retry: false goes as axios sends it, unencoded by Retryline', async () => {
    server.script('/once', [{ status: 200 }]);
    const form = new FormData();
    form.append('note', 'once');
    await client().put('/once', form, { retry: false });
    expect(server.requests('/once')[0]?.headers['content-type']).toMatch(/boundary=axios-/);
  });
});

describe('attachRetry: a body cut off mid-way, as axios reports it', () => {
  it('rejects as plain axios does: ERR_BAD_RESPONSE, "stream has been aborted", with the response', async () => {
    // 10 bytes of a 100-byte body, then the connection is closed.
    const cut = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('0123456789');
      setTimeout(() => res.socket?.destroy(), 50);
    });
    await new Promise<void>((resolve) => cut.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(cut.address() as AddressInfo).port}/cut`;
    try {
      const plain = await settle(axios.create().get(url));
      const retrying = axios.create();
      attachRetry(retrying, { retries: 0 });
      const ours = await settle(retrying.get(url));
      const shape = (error: unknown) => {
        const e = error as AxiosError;
        return {
          isAxiosError: axios.isAxiosError(e),
          code: e.code,
          message: e.message,
          status: e.response?.status,
        };
      };
      expect(shape(plain.error)).toEqual({
        isAxiosError: true,
        code: 'ERR_BAD_RESPONSE',
        message: 'stream has been aborted',
        status: 200,
      });
      expect(shape(ours.error)).toEqual(shape(plain.error));
    } finally {
      await new Promise((resolve) => cut.close(resolve));
    }
  });
});
