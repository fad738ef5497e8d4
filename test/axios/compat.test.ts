import { Agent } from 'node:http';
import type { Socket } from 'node:net';
import { getRetryInfo } from '@retryline/axios';
import axiosRetry, {
  type AxiosRetryCompatConfig,
  DEFAULT_OPTIONS,
  exponentialDelay,
  isIdempotentRequestError,
  isNetworkError,
  isNetworkOrIdempotentRequestError,
  isRetryableError,
  isSafeRequestError,
  linearDelay,
  namespace,
  noDelay,
  retryAfter,
} from '@retryline/axios/compat';
import { InvalidOptionsError, isRetrylineError, memoryStore, type RetrylineEvent } from '@retryline/core';
import axios, {
  AxiosError,
  AxiosHeaders,
  type AxiosInstance,
  type AxiosResponse,
  CanceledError,
  type InternalAxiosRequestConfig,
} from 'axios';
import original from 'axios-retry';
import { describe, expect, it, vi } from 'vitest';
import { type AttemptRecord, httpDate } from '../support/fault-server';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

const server = useFaultServer();

function client(config?: AxiosRetryCompatConfig): AxiosInstance {
  const instance = axios.create({ baseURL: server.url });
  axiosRetry(instance, config);
  return instance;
}

const statusOf = (error: unknown) => (axios.isAxiosError(error) ? error.response?.status : undefined);

const gaps = (records: readonly AttemptRecord[]) =>
  records.slice(1).map((record, index) => record.receivedAt - (records[index]?.receivedAt ?? Number.NaN));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('axiosRetry compat: defaults', () => {
  it('retries a GET 3 times without waiting: 503, 503, 503, 200 → 4 requests and the 200', async () => {
    server.script('/a', [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    const response = await client().get('/a');
    expect(response.data).toBe('ok');
    const requests = server.requests('/a');
    expect(requests).toHaveLength(4);
    for (const gap of gaps(requests)) expect(gap).toBeLessThan(150);
  });

  it('gives up after the 4th 503 with axios’s error, the retry count on its config', async () => {
    server.script('/down', [{ status: 503, body: 'down' }]);
    const { error } = await settle(client().get('/down'));
    expect(error).toBeInstanceOf(AxiosError);
    expect(statusOf(error)).toBe(503);
    expect((error as AxiosError).config?.[namespace]?.retryCount).toBe(3);
    expect(server.requests('/down')).toHaveLength(4);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 4, outcome: 'exhausted' });
  });

  it('does not retry a POST that got a 503', async () => {
    server.script('/orders', [{ status: 503 }, { status: 201 }]);
    const { error } = await settle(client().post('/orders', { sku: 1 }));
    expect(statusOf(error)).toBe(503);
    expect(server.requests('/orders')).toHaveLength(1);
  });

  it('does not resend a POST whose connection was reset, which may have reached the server', async () => {
    server.script('/orders', [{ fault: 'reset-before-headers' }, { status: 201, body: 'created' }]);
    const { error } = await settle(client().post('/orders', { sku: 1 }));
    expect((error as AxiosError).code).toBe('ECONNRESET');
    expect(server.requests('/orders')).toHaveLength(1);
  });

  it('resends a reset POST that carries an idempotency key, the same body and key each time', async () => {
    server.script('/orders', [{ fault: 'reset-before-headers' }, { status: 201, body: 'created' }]);
    const response = await client({ retryline: { idempotencyKey: true } }).post('/orders', { sku: 1 });
    expect(response.status).toBe(201);
    const requests = server.requests('/orders');
    expect(requests.map((r) => r.bodyText)).toEqual(['{"sku":1}', '{"sku":1}']);
    expect(requests[1]?.headers['idempotency-key']).toBe(requests[0]?.headers['idempotency-key']);
  });

  it('retries a refused POST 3 times and rejects with axios’s ECONNREFUSED error', async () => {
    const instance = axios.create({ baseURL: await server.refusedUrl() });
    const onMaxRetryTimesExceeded = vi.fn();
    axiosRetry(instance, { onMaxRetryTimesExceeded });
    const { error } = await settle(instance.post('/x', 'body'));
    expect((error as AxiosError).code).toBe('ECONNREFUSED');
    expect(getRetryInfo(error)).toMatchObject({ attempts: 4 });
    expect(onMaxRetryTimesExceeded).toHaveBeenCalledExactlyOnceWith(error, 3);
  });

  it('waits what Retry-After asks even without a retryDelay (noDelay honours it)', async () => {
    server.script('/limited', [{ status: 429, headers: { 'Retry-After': '1' } }, { status: 200 }]);
    await client().get('/limited');
    const [gap] = gaps(server.requests('/limited'));
    expect(gap).toBeGreaterThanOrEqual(1000);
  });
});

describe('axiosRetry compat: options', () => {
  it('retryDelay: exponentialDelay waits at least 200 then 400 ms', async () => {
    server.script('/a', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const started = Date.now();
    const response = await client({ retryDelay: axiosRetry.exponentialDelay }).get('/a');
    const [first, second] = gaps(server.requests('/a'));
    expect(first).toBeGreaterThanOrEqual(200);
    expect(second).toBeGreaterThanOrEqual(400);
    // The request's axios-retry state, as axios-retry keeps it: retries made, when the last began.
    const state = response.config[namespace];
    expect(state?.retryCount).toBe(2);
    expect(state?.lastRequestTime).toBeGreaterThanOrEqual(started + 600);
  });

  it('retryDelay is not capped (axios-retry has no maxDelay)', async () => {
    server.script('/a', [{ status: 503 }, { status: 200 }]);
    const controller = new AbortController();
    const scheduled: number[] = [];
    const instance = client({
      retryDelay: () => 90_000,
      onRetry: () => controller.abort(),
      retryline: {
        onEvent: (event) => {
          if (event.type === 'retry-scheduled') scheduled.push(event.delay);
        },
      },
    });
    await settle(instance.get('/a', { signal: controller.signal }));
    expect(scheduled).toEqual([90_000]);
  });

  it('retryDelay gets the retry number and the error; a bad value counts as no wait', async () => {
    server.script('/a', [{ status: 503 }, { status: 502 }, { status: 200 }]);
    const retryDelay = vi.fn((retryCount: number, _error: AxiosError) =>
      retryCount === 1 ? Number.NaN : -5,
    );
    await client({ retryDelay }).get('/a');
    expect(retryDelay.mock.calls.map(([n, error]) => [n, statusOf(error)])).toEqual([
      [1, 503],
      [2, 502],
    ]);
  });

  it.each([
    ['a sync true', () => true, 2],
    ['a sync false', () => false, 1],
    ['an async true', async () => true, 2],
    ['an async false', async () => false, 1],
    ['an async undefined (only `false` refuses, as in axios-retry)', async () => undefined as never, 2],
    ['a rejected promise', () => Promise.reject(new Error('no')), 1],
  ])('retryCondition returning %s decides, for a POST too', async (_, retryCondition, requests) => {
    server.script('/orders', [{ status: 503 }, { status: 201 }]);
    await settle(client({ retryCondition }).post('/orders', {}));
    expect(server.requests('/orders')).toHaveLength(requests);
  });

  it('retryCondition sees axios’s error for a response and for a transport failure', async () => {
    server.script('/a', [{ status: 500 }, { fault: 'reset-before-headers' }, { status: 200 }]);
    const retryCondition = vi.fn((_error: AxiosError) => true);
    await client({ retryCondition }).get('/a');
    const seen = retryCondition.mock.calls.map(([error]) => [
      error instanceof AxiosError,
      statusOf(error) ?? error.code,
    ]);
    expect(seen).toEqual([
      [true, 500],
      [true, 'ECONNRESET'],
    ]);
  });

  it('onRetry gets (retryCount, error, requestConfig); what it changes in the config goes out with the retry', async () => {
    server.script('/me', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const calls: [number, number | undefined, string | undefined][] = [];
    const instance = client({
      onRetry: (retryCount, error, requestConfig) => {
        calls.push([retryCount, statusOf(error), requestConfig.url]);
        AxiosHeaders.from(requestConfig.headers as AxiosHeaders).set('authorization', `Bearer ${retryCount}`);
        requestConfig.params = { retry: retryCount };
      },
    });
    await instance.get('/me');
    expect(calls).toEqual([
      [1, 503, '/me'],
      [2, 503, '/me'],
    ]);
    const requests = server.requests('/me');
    expect(requests.map((r) => r.headers.authorization)).toEqual([undefined, 'Bearer 1', 'Bearer 2']);
    expect(requests.map((r) => r.url)).toEqual(['/me', '/me?retry=1', '/me?retry=2']);
  });

  it('onMaxRetryTimesExceeded(error, retryCount) runs once, before the error is thrown', async () => {
    server.script('/down', [{ status: 503 }]);
    const order: string[] = [];
    const onMaxRetryTimesExceeded = vi.fn(async () => {
      await sleep(20);
      order.push('hook');
    });
    const pending = settle(client({ retries: 2, onMaxRetryTimesExceeded }).get('/down'));
    const { error } = await pending.finally(() => order.push('settled'));
    expect(onMaxRetryTimesExceeded).toHaveBeenCalledExactlyOnceWith(error, 2);
    expect(statusOf(error)).toBe(503);
    expect(order).toEqual(['hook', 'settled']);
  });

  it('onMaxRetryTimesExceeded does not run on success or on a failure retryCondition refuses early', async () => {
    const onMaxRetryTimesExceeded = vi.fn();
    const instance = client({ retries: 2, onMaxRetryTimesExceeded });
    server.script('/ok', [{ status: 503 }, { status: 200 }]);
    await instance.get('/ok');
    server.script('/missing', [{ status: 404 }]);
    await settle(instance.get('/missing'));
    expect(onMaxRetryTimesExceeded).not.toHaveBeenCalled();
  });

  it('the last attempt counts as exhausted whatever it failed with: retryCondition is not asked', async () => {
    server.script('/a', [{ status: 503 }, { status: 404 }]);
    const retryCondition = vi.fn(isNetworkOrIdempotentRequestError);
    const onMaxRetryTimesExceeded = vi.fn();
    const { error } = await settle(client({ retries: 1, retryCondition, onMaxRetryTimesExceeded }).get('/a'));
    expect(statusOf(error)).toBe(404);
    expect(retryCondition).toHaveBeenCalledTimes(1);
    expect(onMaxRetryTimesExceeded).toHaveBeenCalledExactlyOnceWith(error, 1);
  });

  it('validateResponse: a 200 it refuses is a failure, retried while retryCondition says so', async () => {
    server.script('/job', [
      { status: 200, body: 'pending' },
      { status: 200, body: 'pending' },
      { status: 200, body: 'done' },
    ]);
    const retryCondition = vi.fn((error: AxiosError) => error.response?.data === 'pending');
    const response = await client({
      validateResponse: (r: AxiosResponse) => r.data !== 'pending',
      retryCondition,
    }).get('/job');
    expect(response.data).toBe('done');
    expect(server.requests('/job')).toHaveLength(3);
    expect(retryCondition).toHaveBeenCalledTimes(2);
  });

  it('validateResponse: a 500 it accepts resolves, unretried', async () => {
    server.script('/odd', [{ status: 500, body: 'fine' }, { status: 200 }]);
    const response = await client({ validateResponse: (r: AxiosResponse) => r.data === 'fine' }).get('/odd');
    expect(response.status).toBe(500);
    expect(server.requests('/odd')).toHaveLength(1);
  });

  it("per request, config['axios-retry'] is laid over the instance's options", async () => {
    const warn = vi.spyOn(console, 'warn');
    const onMaxRetryTimesExceeded = vi.fn();
    const instance = client({ retries: 3, onMaxRetryTimesExceeded });
    server.script('/a', [{ status: 503 }, { status: 200 }]);
    const { error } = await settle(instance.get('/a', { 'axios-retry': { retries: 0 } }));
    expect(statusOf(error)).toBe(503);
    expect(server.requests('/a')).toHaveLength(1);
    expect(onMaxRetryTimesExceeded).toHaveBeenCalledExactlyOnceWith(error, 0);

    server.script('/b', [{ status: 503 }, { status: 201 }]);
    const posted = await instance.post('/b', {}, { 'axios-retry': { retryCondition: () => true } });
    expect(posted.status).toBe(201);
    // The instance's own options are untouched by the request's.
    server.script('/c', [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200 }]);
    expect((await instance.get('/c')).status).toBe(200);
    // The key is this layer's own: it is not taken for axios-retry installed alongside.
    expect(warn).not.toHaveBeenCalled();
  });

  it("per request, axios's `retry` key (Retryline's) still applies, retryCondition asked each time", async () => {
    server.script('/a', [{ status: 503 }, { status: 503 }, { status: 503 }, { status: 200 }]);
    const retryCondition = vi.fn(() => true);
    const response = await client({ retries: 1, retryCondition }).get('/a', { retry: { retries: 3 } });
    expect(response.status).toBe(200);
    expect(server.requests('/a')).toHaveLength(4);
    expect(retryCondition).toHaveBeenCalledTimes(3);
  });

  it('Retryline options ride along under `retryline`: events, and the request id header', async () => {
    server.script('/e', [{ status: 503 }, { status: 200 }]);
    const events: RetrylineEvent[] = [];
    await client({
      retryline: { onEvent: (event) => events.push(event), requestIdHeader: 'x-request-id' },
    }).get('/e');
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
    expect(events[0]).toMatchObject({ client: 'axios', method: 'GET' });
    const [first, second] = server.requests('/e');
    expect(first?.headers['x-request-id']).toBeTruthy();
    expect(second?.headers['x-request-id']).toBe(first?.headers['x-request-id']);
  });

  it('server hints are honoured whatever retryDelay says: a RateLimit reset of 1 s waits 1 s', async () => {
    server.script('/quota', [
      { status: 429, headers: { RateLimit: '"default";r=0;t=1' } },
      { status: 200, body: 'ok' },
    ]);
    expect((await client({ retryDelay: () => 0 }).get('/quota')).data).toBe('ok');
    const [gap] = gaps(server.requests('/quota'));
    expect(gap).toBeGreaterThanOrEqual(1000);
  });

  it('retryline.idempotencyKey sends one key on every attempt of a POST that retryCondition retries', async () => {
    server.script('/orders', [{ status: 503 }, { status: 201 }]);
    const instance = client({
      retryCondition: axiosRetry.isRetryableError,
      retryline: { idempotencyKey: true },
    });
    expect((await instance.post('/orders', { sku: 1 })).status).toBe(201);
    const [first, second] = server.requests('/orders');
    expect(first?.headers['idempotency-key']).toBeTruthy();
    expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
  });

  // axios-retry itself would wait the two minutes; Retryline stops at once and rejects as axios does
  // without retries, with the 503's own AxiosError: getRetryInfo() says why.
  it("a Retry-After beyond maxRetryAfter (60 s by default) stops at once with the response's AxiosError", async () => {
    server.script('/busy', [
      { status: 503, headers: { 'Retry-After': '120' }, body: 'busy' },
      { status: 200 },
    ]);
    const started = Date.now();
    const { error } = await settle(client().get('/busy'));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(error).toBeInstanceOf(AxiosError);
    expect(isRetrylineError(error)).toBe(false);
    expect(statusOf(error)).toBe(503);
    expect((error as AxiosError).response?.data).toBe('busy');
    const info = getRetryInfo(error);
    expect(info).toMatchObject({
      attempts: 1,
      outcome: 'retry-after-too-long',
      stoppedBy: 'retry-after-too-long',
    });
    expect(info?.retryAt).toBeGreaterThanOrEqual(started + 120_000);
    expect(info?.retryAt).toBeLessThanOrEqual(Date.now() + 120_000);
    expect(server.requests('/busy')).toHaveLength(1);
    server.script('/busy', [{ status: 503, headers: { 'Retry-After': '1' } }, { status: 200 }]);
    const { error: refused } = await settle(client({ retryline: { maxRetryAfter: 500 } }).get('/busy'));
    expect(refused).toBeInstanceOf(AxiosError);
    expect(statusOf(refused)).toBe(503);
    expect(getRetryInfo(refused)).toMatchObject({ attempts: 1, stoppedBy: 'retry-after-too-long' });
    expect(server.requests('/busy')).toHaveLength(2); // one each
  });

  it('a failure that is no AxiosError (a Retryline attempt timeout) is judged by Retryline’s rules', async () => {
    server.script('/slow', [{ fault: 'stall-headers' }, { status: 200, body: 'ok' }]);
    const retryCondition = vi.fn(() => false);
    const response = await client({ retryCondition, retryline: { timeout: 100 } }).get('/slow');
    expect(response.data).toBe('ok');
    expect(server.requests('/slow')).toHaveLength(2);
    expect(retryCondition).not.toHaveBeenCalled();
  });

  it('refuses options it cannot honour, naming them', () => {
    const instance = axios.create();
    expect(() => axiosRetry(instance, { retryDelay: 100 as never })).toThrow(
      'Expected retryDelay to be a function, got 100',
    );
    expect(() => axiosRetry(instance, { retries: -1 })).toThrow(InvalidOptionsError);
    expect(() => axiosRetry(instance, { retryline: { retries: 5 } as never })).toThrow(
      /Expected retryline not to set retries, got retryline\.retries: axios-retry's retries option says it/,
    );
    // Nothing was left installed by the refusals.
    expect(instance.interceptors.request.handlers?.filter(Boolean)).toHaveLength(0);
  });
});

describe('axiosRetry compat: timeouts', () => {
  it("a Retry-After that does not fit in the request's timeout rejects with the last error, as axios-retry's", async () => {
    server.script('/quota', [{ status: 429, headers: { 'Retry-After': '2' } }, { status: 200 }]);
    // Its own store: the 429's pause must not hold back the other tests' requests to this origin.
    const { error } = await settle(
      client({ retryline: { store: memoryStore() } }).get('/quota', { timeout: 1000 }),
    );
    expect(error).toBeInstanceOf(AxiosError);
    expect(statusOf(error)).toBe(429);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, stoppedBy: 'retry-after-too-long' });
    expect(server.requests('/quota')).toHaveLength(1);
  });

  const retryTimeouts = (error: AxiosError) => error.code === 'ECONNABORTED';

  it('shouldResetTimeout false: the timeout bounds all attempts and ends in axios’s timeout error', async () => {
    server.script('/stall', [{ fault: 'stall-headers' }]);
    const started = Date.now();
    const { error } = await settle(client({ retryCondition: retryTimeouts }).get('/stall', { timeout: 150 }));
    expect(Date.now() - started).toBeLessThan(450);
    expect(error).toBeInstanceOf(AxiosError);
    expect((error as AxiosError).code).toBe('ECONNABORTED');
    expect((error as AxiosError).message).toBe('timeout of 150ms exceeded');
    expect((error as AxiosError).config?.url).toBe('/stall');
    expect(isRetrylineError((error as AxiosError).cause, 'DeadlineExceededError')).toBe(true);
    expect(server.requests('/stall')).toHaveLength(1);
  });

  it('shouldResetTimeout true: every attempt gets the whole timeout', async () => {
    server.script('/stall', [{ fault: 'stall-headers' }]);
    const started = Date.now();
    const { error } = await settle(
      client({ retryCondition: retryTimeouts, shouldResetTimeout: true }).get('/stall', { timeout: 150 }),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 150);
    expect((error as AxiosError).code).toBe('ECONNABORTED');
    expect(server.requests('/stall')).toHaveLength(4);
  });

  it('shouldResetTimeout false: a later attempt that runs past the timeout ends in a timeout error', async () => {
    server.script('/late', [{ status: 503 }, { fault: 'stall-headers' }]);
    const started = Date.now();
    const { error } = await settle(client().get('/late', { timeout: 300 }));
    expect(Date.now() - started).toBeLessThan(600);
    expect((error as AxiosError).code).toBe('ECONNABORTED');
    expect(server.requests('/late')).toHaveLength(2);
  });

  it('shouldResetTimeout false: a wait that would outlast the timeout is not started; the last error is thrown', async () => {
    server.script('/slow', [{ status: 503 }, { status: 200 }]);
    const started = Date.now();
    const { error } = await settle(client({ retryDelay: () => 1000 }).get('/slow', { timeout: 300 }));
    expect(Date.now() - started).toBeLessThan(250);
    expect(statusOf(error)).toBe(503);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, stoppedBy: 'deadline' });
    expect(server.requests('/slow')).toHaveLength(1);
  });

  it('a retryline deadline is Retryline’s own: an AxiosError ERR_DEADLINE, its cause DeadlineExceededError', async () => {
    server.script('/stall', [{ fault: 'stall-headers' }]);
    const { error } = await settle(client({ retryline: { deadline: 150 } }).get('/stall'));
    expect(axios.isAxiosError(error)).toBe(true);
    expect((error as { code?: string }).code).toBe('ERR_DEADLINE');
    expect(isRetrylineError((error as Error).cause, 'DeadlineExceededError')).toBe(true);
  });
});

describe('axiosRetry compat: installing', () => {
  it('returns the interceptor ids; ejecting them removes the retries', async () => {
    const instance = axios.create({ baseURL: server.url });
    const { requestInterceptorId, responseInterceptorId } = axiosRetry(instance);
    instance.interceptors.request.eject(requestInterceptorId);
    instance.interceptors.response.eject(responseInterceptorId);
    server.script('/a', [{ status: 503 }, { status: 200 }]);
    const { error } = await settle(instance.get('/a'));
    expect(statusOf(error)).toBe(503);
    expect(server.requests('/a')).toHaveLength(1);
    expect(instance.interceptors.response.handlers?.filter(Boolean)).toHaveLength(0);
    // Ejected, it can be installed again, as axios-retry can.
    axiosRetry(instance, { retries: 1 });
    server.script('/b', [{ status: 503 }, { status: 200 }]);
    expect((await instance.get('/b')).status).toBe(200);
    expect(server.requests('/b')).toHaveLength(2);
  });

  it('detach() removes every interceptor it added, and allows installing again', async () => {
    const instance = axios.create({ baseURL: server.url });
    const { detach } = axiosRetry(instance);
    expect(() => axiosRetry(instance)).toThrow(/retries would stack/);
    detach();
    expect(instance.interceptors.request.handlers?.filter(Boolean)).toHaveLength(0);
    expect(instance.interceptors.response.handlers?.filter(Boolean)).toHaveLength(0);
    axiosRetry(instance, { retries: 1 });
    server.script('/a', [{ status: 503 }, { status: 200 }]);
    expect((await instance.get('/a')).status).toBe(200);
  });

  it('re-runs request interceptors before each retry; response interceptors see the final outcome once', async () => {
    server.script('/i', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const instance = axios.create({ baseURL: server.url });
    let stamps = 0;
    instance.interceptors.request.use((config) => {
      config.headers.set('x-stamp', String(++stamps));
      return config;
    });
    axiosRetry(instance);
    const seen = vi.fn((response: AxiosResponse) => response);
    instance.interceptors.response.use(seen);
    await instance.get('/i');
    expect(server.requests('/i').map((r) => r.headers['x-stamp'])).toEqual(['1', '2', '3']);
    expect(seen).toHaveBeenCalledTimes(1);
  });

  it('an abort during a retryDelay wait rejects at once with CanceledError and sends nothing more', async () => {
    server.script('/slow', [{ status: 503 }, { status: 200 }]);
    const instance = axios.create({ baseURL: server.url });
    let prepared = 0;
    instance.interceptors.request.use((config) => {
      prepared++;
      return config;
    });
    axiosRetry(instance, { retryDelay: () => 10_000 });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const { error } = await settle(instance.get('/slow', { signal: controller.signal }));
    expect(error).toBeInstanceOf(CanceledError);
    expect(Date.now() - started).toBeLessThan(1000);
    await sleep(100);
    expect(server.requests('/slow')).toHaveLength(1);
    // Nothing of the cancelled retry ran: no interceptor prepared a request that will never go.
    expect(prepared).toBe(1);
  });
});

describe('axiosRetry compat: helpers', () => {
  const error = (
    init: { code?: string; method?: string; status?: number; headers?: Record<string, string> } = {},
  ) => {
    const config = { headers: new AxiosHeaders(), ...(init.method ? { method: init.method } : {}) };
    const response =
      init.status === undefined
        ? undefined
        : ({
            status: init.status,
            statusText: '',
            headers: init.headers ?? {},
            config,
            data: '',
          } as AxiosResponse);
    return new AxiosError('failed', init.code, config as InternalAxiosRequestConfig, undefined, response);
  };

  const table: [string, AxiosError, Record<string, boolean>][] = [
    [
      'a reset GET',
      error({ code: 'ECONNRESET', method: 'get' }),
      { net: true, retry: true, safe: true, idem: true },
    ],
    [
      'a reset POST',
      error({ code: 'ECONNRESET', method: 'post' }),
      { net: true, retry: true, safe: false, idem: false },
    ],
    [
      'a refused POST',
      error({ code: 'ECONNREFUSED', method: 'post' }),
      { net: true, retry: true, safe: false, idem: false },
    ],
    [
      'an unknown host',
      error({ code: 'ENOTFOUND', method: 'get' }),
      { net: false, retry: true, safe: true, idem: true },
    ],
    [
      'an expired certificate',
      error({ code: 'CERT_HAS_EXPIRED', method: 'get' }),
      { net: false, retry: true, safe: true, idem: true },
    ],
    [
      'an axios timeout',
      error({ code: 'ECONNABORTED', method: 'get' }),
      { net: false, retry: false, safe: false, idem: false },
    ],
    [
      'a cancel',
      error({ code: 'ERR_CANCELED', method: 'get' }),
      { net: false, retry: true, safe: true, idem: true },
    ],
    ['no code, no response', error({ method: 'get' }), { net: false, retry: true, safe: true, idem: true }],
    [
      'a GET 503',
      error({ code: 'ERR_BAD_RESPONSE', method: 'get', status: 503 }),
      { net: false, retry: true, safe: true, idem: true },
    ],
    [
      'a GET 429',
      error({ code: 'ERR_BAD_REQUEST', method: 'get', status: 429 }),
      { net: false, retry: true, safe: true, idem: true },
    ],
    [
      'a GET 404',
      error({ code: 'ERR_BAD_REQUEST', method: 'get', status: 404 }),
      { net: false, retry: false, safe: false, idem: false },
    ],
    [
      'a PUT 500',
      error({ code: 'ERR_BAD_RESPONSE', method: 'put', status: 500 }),
      { net: false, retry: true, safe: false, idem: true },
    ],
    [
      'a DELETE 502',
      error({ code: 'ERR_BAD_RESPONSE', method: 'delete', status: 502 }),
      { net: false, retry: true, safe: false, idem: true },
    ],
    [
      'an OPTIONS 504',
      error({ code: 'ERR_BAD_RESPONSE', method: 'options', status: 504 }),
      { net: false, retry: true, safe: true, idem: true },
    ],
    [
      'a POST 503',
      error({ code: 'ERR_BAD_RESPONSE', method: 'post', status: 503 }),
      { net: false, retry: true, safe: false, idem: false },
    ],
    [
      'a PATCH 503',
      error({ code: 'ERR_BAD_RESPONSE', method: 'patch', status: 503 }),
      { net: false, retry: true, safe: false, idem: false },
    ],
    [
      'a 503 without a method',
      error({ code: 'ERR_BAD_RESPONSE', status: 503 }),
      { net: false, retry: true, safe: false, idem: false },
    ],
  ];

  it.each(table)('%s: the predicates answer as axios-retry’s do', (_, failure, expected) => {
    const answers = {
      net: isNetworkError(failure),
      retry: isRetryableError(failure),
      safe: isSafeRequestError(failure),
      idem: isIdempotentRequestError(failure),
      either: isNetworkOrIdempotentRequestError(failure),
    };
    expect(answers).toEqual({ ...expected, either: Boolean(expected.net || expected.idem) });
    expect(answers).toEqual({
      net: original.isNetworkError(failure),
      retry: original.isRetryableError(failure),
      safe: original.isSafeRequestError(failure),
      idem: original.isIdempotentRequestError(failure),
      either: original.isNetworkOrIdempotentRequestError(failure),
    });
  });

  it.each([
    ['whole seconds', () => '2', 2000],
    ['an HTTP-date', () => httpDate(Date.now() + 60_000), 59_000],
    ['a date already past', () => httpDate(Date.now() - 60_000), 0],
    ['a decimal (not delay-seconds)', () => '1.5', 0],
    ['a word', () => 'soon', 0],
    ['a negative number', () => '-3', 0],
  ])('retryAfter reads %s strictly', (_, value, atLeast) => {
    const delay = retryAfter(error({ status: 503, headers: { 'Retry-After': value() } }));
    expect(delay).toBeGreaterThanOrEqual(atLeast);
    expect(delay).toBeLessThanOrEqual(atLeast === 0 ? 0 : atLeast + 1000);
  });

  it('retryAfter is 0 without a response or a header', () => {
    expect(retryAfter()).toBe(0);
    expect(retryAfter(error({ code: 'ECONNRESET' }))).toBe(0);
    expect(retryAfter(error({ status: 503 }))).toBe(0);
  });

  it('exponentialDelay: delayFactor · 2^n plus 0–20 % drawn from the random source', () => {
    const random = vi.spyOn(Math, 'random');
    random.mockReturnValue(0);
    expect([0, 1, 2, 3].map((n) => exponentialDelay(n))).toEqual([100, 200, 400, 800]);
    expect(exponentialDelay(2, undefined, 1000)).toBe(4000);
    expect(exponentialDelay()).toBe(100);
    random.mockReturnValue(0.5);
    expect(exponentialDelay(3)).toBe(880);
    random.mockReturnValue(0);
    expect(exponentialDelay(1, error({ status: 429, headers: { 'retry-after': '5' } }))).toBe(5000);
  });

  it('linearDelay and noDelay', () => {
    expect([1, 2, 3].map((n) => linearDelay()(n, undefined))).toEqual([100, 200, 300]);
    expect(linearDelay(500)(2, undefined)).toBe(1000);
    expect(linearDelay(10)(1, error({ status: 503, headers: { 'retry-after': '3' } }))).toBe(3000);
    expect(noDelay(4)).toBe(0);
    expect(noDelay(1, error({ status: 503, headers: { 'retry-after': '1' } }))).toBe(1000);
  });

  it('the default export carries the helpers and the defaults, as axios-retry’s does', () => {
    expect({ ...axiosRetry }).toEqual({
      isNetworkError,
      isRetryableError,
      isSafeRequestError,
      isIdempotentRequestError,
      isNetworkOrIdempotentRequestError,
      exponentialDelay,
      linearDelay,
      noDelay,
      retryAfter,
      namespace: 'axios-retry',
      DEFAULT_OPTIONS,
    });
    expect(DEFAULT_OPTIONS).toMatchObject({
      retries: 3,
      retryCondition: isNetworkOrIdempotentRequestError,
      retryDelay: noDelay,
      shouldResetTimeout: false,
      validateResponse: null,
    });
  });
});

describe('axiosRetry compat: what the callbacks see, as axios-retry shows it', () => {
  const json = (status: number, body: unknown) => ({
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

  it('retryCondition, retryDelay, onRetry and onMaxRetryTimesExceeded read response.data parsed', async () => {
    server.script('/parsed', [json(503, { code: 'TEMPORARY' })]);
    const seen: unknown[] = [];
    const read = (error: AxiosError) => {
      seen.push(error.response?.data);
      return true;
    };
    const { error } = await settle(
      client({
        retries: 1,
        retryCondition: read,
        retryDelay: (_count, error) => (read(error) ? 0 : 0),
        onRetry: (_count, error) => void read(error),
        onMaxRetryTimesExceeded: (error) => void read(error),
      }).get('/parsed'),
    );
    expect(seen.length).toBeGreaterThanOrEqual(4);
    for (const data of seen) expect(data).toEqual({ code: 'TEMPORARY' });
    // The caller's error is parsed once, by axios, as before.
    expect((error as AxiosError).response?.data).toEqual({ code: 'TEMPORARY' });
  });

  it('retryDelay reads the retry it is for on the config, and a refused 2xx is ERR_BAD_RESPONSE', async () => {
    server.script('/counted', [{ status: 503 }, { status: 503 }, { status: 200 }]);
    const counts: unknown[] = [];
    await client({
      retryDelay: (retryCount, error) => {
        counts.push([retryCount, error.config?.[namespace]?.retryCount]);
        return 0;
      },
    }).get('/counted');
    expect(counts).toEqual([
      [1, 1],
      [2, 2],
    ]);
    server.script('/refused', [{ status: 200 }]);
    const { error } = await settle(client({ retries: 0, validateResponse: () => false }).get('/refused'));
    expect((error as AxiosError).code).toBe(AxiosError.ERR_BAD_RESPONSE);
  });

  it('validateResponse reads the parsed body, once per response', async () => {
    server.script('/validated', [json(200, { ok: false }), json(200, { ok: true })]);
    const validateResponse = vi.fn((response: AxiosResponse) => (response.data as { ok: boolean }).ok);
    const response = await client({ retryCondition: () => true, validateResponse }).get('/validated');
    expect(response.data).toEqual({ ok: true });
    expect(server.requests('/validated')).toHaveLength(2);
    expect(validateResponse).toHaveBeenCalledTimes(2);
  });
});

describe('axiosRetry compat: the caller’s body, transformed once', () => {
  it('a transformResponse that is not idempotent runs once on the error the caller gets, whatever callbacks read', async () => {
    server.script('/wrapped', [{ status: 429, headers: { 'Retry-After': '5' }, body: 'busy' }]);
    const instance = axios.create({
      baseURL: server.url,
      transformResponse: [(data: unknown) => ({ wrapped: data })],
    });
    axiosRetry(instance, {
      retryCondition: (error) => (error.response?.data as { wrapped?: unknown })?.wrapped === 'busy',
      retryline: { store: memoryStore() },
    });
    const { error } = await settle(instance.get('/wrapped', { timeout: 1000 }));
    expect(statusOf(error)).toBe(429);
    expect((error as AxiosError).response?.data).toEqual({ wrapped: 'busy' });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, outcome: 'retry-after-too-long' });
  });
});

describe('axiosRetry compat: the bodies of retried responses', () => {
  const MB = 1024 * 1024;
  /** An agent that keeps the sockets it opens, to see how much each one read. */
  function countingAgent(): { agent: Agent; sockets: Socket[] } {
    const agent = new Agent();
    const sockets: Socket[] = [];
    const connect = agent.createConnection.bind(agent);
    agent.createConnection = (...args: Parameters<typeof connect>) => {
      const socket = connect(...args) as Socket;
      sockets.push(socket);
      return socket;
    };
    return { agent, sockets };
  }

  it('with axios-retry’s own callbacks, a response retried past is not downloaded', async () => {
    server.script('/big', [
      { status: 503, body: 'x'.repeat(32 * MB) },
      { status: 200, body: 'ok' },
    ]);
    const { agent, sockets } = countingAgent();
    const response = await client({ retryDelay: exponentialDelay }).get('/big', { httpAgent: agent });
    expect(response.data).toBe('ok');
    expect(sockets[0]?.bytesRead).toBeLessThan(8 * MB);
    agent.destroy();
  });

  it('hands the caller the earlier attempt’s body, read, when the request’s timeout leaves no room to retry', async () => {
    server.script('/later', [{ status: 429, headers: { 'Retry-After': '5' }, body: 'come back later' }]);
    const { error } = await settle(client().get('/later', { timeout: 1000 }));
    expect(statusOf(error)).toBe(429);
    expect((error as AxiosError).response?.data).toBe('come back later');
  });
});
