import { attachRetry } from '@retryline/axios';
import { type HttpRetryOptions, isRetrylineError, type RetrylineEvent, virtualClock } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios, { AxiosError } from 'axios';
import ky, { HTTPError } from 'ky';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { drivers } from '../conformance/drivers';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';
import { installFakeHook, installHook, removeHookAfterEach } from './fake-hook';

// Faults the DevTools panel injects, as each adapter answers them at its send step: a fake devtools
// hook on globalThis (as the extension's page script defines it) scripts the attempts, and a real
// loopback server answers whatever is passed through. Waits run on a virtual clock.
const server = useFaultServer();
removeHookAfterEach();
afterEach(() => {
  vi.unstubAllEnvs();
});

const fast: HttpRetryOptions = { retries: 3, backoff: { strategy: 'constant', base: 1 }, jitter: 'none' };
const STATUS_503 = { step: 'status', status: 503 } as const;

/** The attempt-start and attempt-end events, by attempt: whether each is marked injected. */
function marks(events: readonly RetrylineEvent[]) {
  return events
    .filter((event) => event.type === 'attempt-start' || event.type === 'attempt-end')
    .map(
      (event) =>
        `${event.type} ${(event as { attempt: number }).attempt}${'injected' in event ? ' injected' : ''}`,
    );
}

const statuses = (events: readonly RetrylineEvent[]) =>
  events.flatMap((event) => (event.type === 'attempt-end' ? [event.status ?? event.error?.name] : []));

describe.each(drivers)('$name at the send step', (driver) => {
  it('503, 503, passthrough → 3 attempts, the last one answered by the server', async () => {
    server.script('/api/items', [{ status: 200, body: 'from the server' }]);
    const hook = installFakeHook([STATUS_503, STATUS_503, 'pass']);
    const result = await driver.send({ method: 'GET', url: `${server.url}/api/items?page=2`, options: fast });
    expect(result.outcome).toEqual({ kind: 'response', status: 200, body: 'from the server' });
    expect(result.info).toMatchObject({ attempts: 3, outcome: 'success' });
    expect(server.requests('/api/items')).toHaveLength(1);
    expect(statuses(result.events)).toEqual([503, 503, 200]);
    expect(marks(result.events)).toEqual([
      'attempt-start 1 injected',
      'attempt-end 1 injected',
      'attempt-start 2 injected',
      'attempt-end 2 injected',
      'attempt-start 3',
      'attempt-end 3',
    ]);
    // Asked once per attempt, about one request, with the URL as events show it.
    expect(hook.queries).toEqual(
      [1, 2, 3].map((attempt) => ({
        client: driver.name,
        method: 'GET',
        url: `${server.url}/api/items?page=***`,
        attempt,
        requestId: hook.queries[0]?.requestId,
      })),
    );
    expect(hook.queries[0]?.requestId).toBe(result.info?.requestId);
    // The hook's own stream carries the marks too (the panel's rows and exports come from it).
    expect(hook.pushed).toContainEqual(
      expect.objectContaining({ type: 'attempt-end', attempt: 1, injected: true }),
    );
  });

  it('a network error, then passthrough → 2 attempts: the first failed as the network fails, nothing sent', async () => {
    server.script('/api/items', [{ status: 200, body: 'ok' }]);
    installFakeHook([{ step: 'networkError' }, 'pass']);
    const result = await driver.send({ method: 'GET', url: `${server.url}/api/items`, options: fast });
    expect(result.outcome).toEqual({ kind: 'response', status: 200, body: 'ok' });
    const first = result.events.find((event) => event.type === 'attempt-end');
    expect(first).toMatchObject({ attempt: 1, phase: 'unknown', injected: true });
    expect(server.requests('/api/items')).toHaveLength(1);
  });

  it('a network error that outlasts the retries → the client’s own transport failure', async () => {
    installFakeHook([{ step: 'networkError' }]);
    const result = await driver.send({
      method: 'GET',
      url: `${server.url}/api/items`,
      options: { ...fast, retries: 1 },
    });
    expect(result.outcome).toEqual({ kind: 'network-error' });
    expect(result.info).toMatchObject({ attempts: 2, outcome: 'exhausted' });
    expect(server.requests('/api/items')).toHaveLength(0);
  });

  it('a POST is not retried after an injected network error: it may have reached the server', async () => {
    installFakeHook([{ step: 'networkError' }, 'pass']);
    const result = await driver.send({
      method: 'POST',
      url: `${server.url}/api/orders`,
      body: '{}',
      options: fast,
    });
    expect(result.outcome).toEqual({ kind: 'network-error' });
    expect(result.info?.attempts).toBe(1);
    expect(server.requests('/api/orders')).toHaveLength(0);
  });

  it('honours an injected Retry-After: the next attempt waits for it', async () => {
    server.script('/api/limited', [{ status: 200, body: 'ok' }]);
    installFakeHook([{ step: 'status', status: 429, headers: { 'retry-after': '30' } }, 'pass']);
    const clock = virtualClock(Date.UTC(2026, 0, 1));
    const sent = driver.send({
      method: 'GET',
      url: `${server.url}/api/limited`,
      options: { ...fast, clock },
    });
    await vi.waitFor(() => expect(clock.pending()).toBe(1));
    await clock.advance(29_999);
    expect(server.requests('/api/limited')).toHaveLength(0);
    await clock.runAll();
    const result = await sent;
    expect(result.outcome).toEqual({ kind: 'response', status: 200, body: 'ok' });
    // At least what the server asked for (core spreads hinted retries a little past it).
    expect(result.info?.delays).toEqual([{ retry: 1, delay: expect.any(Number), reason: 'retry-after' }]);
    expect(result.info?.delays[0]?.delay).toBeGreaterThanOrEqual(30_000);
    expect(server.requests('/api/limited')).toHaveLength(1);
    const end = result.events.find((event) => event.type === 'attempt-end');
    expect(end).toMatchObject({ status: 429, headers: { 'retry-after': '30' }, injected: true });
  });

  it('a slow step holds the real send: an attempt delayed, marked injected, answered by the server', async () => {
    server.script('/api/slow', [{ status: 200, body: 'late' }]);
    installFakeHook([{ step: 'slow', ms: 5000 }]);
    const clock = virtualClock();
    const sent = driver.send({ method: 'GET', url: `${server.url}/api/slow`, options: { ...fast, clock } });
    await vi.waitFor(() => expect(clock.pending()).toBe(1));
    await clock.advance(4999);
    expect(server.requests('/api/slow')).toHaveLength(0);
    await clock.advance(1);
    const result = await sent;
    expect(result.outcome).toEqual({ kind: 'response', status: 200, body: 'late' });
    expect(marks(result.events)).toEqual(['attempt-start 1 injected', 'attempt-end 1 injected']);
    expect(server.requests('/api/slow')).toHaveLength(1);
  });

  it('a slow step longer than the attempt timeout times the attempt out, as a slow server would', async () => {
    server.script('/api/slow', [{ status: 200, body: 'ok' }]);
    installFakeHook([{ step: 'slow', ms: 60_000 }, 'pass']);
    const clock = virtualClock();
    const sent = driver.send({
      method: 'GET',
      url: `${server.url}/api/slow`,
      options: { ...fast, clock, timeout: 1000 },
    });
    // The slow step's wait and the attempt's timeout.
    await vi.waitFor(() => expect(clock.pending()).toBe(2));
    // The first attempt's timeout, then the backoff; the second attempt's own timeout is left running.
    await clock.advance(1000);
    expect(server.requests('/api/slow')).toHaveLength(0);
    await clock.advance(1);
    const result = await sent;
    expect(result.outcome).toEqual({ kind: 'response', status: 200, body: 'ok' });
    expect(result.events.find((event) => event.type === 'attempt-end')).toMatchObject({
      attempt: 1,
      outcome: 'timeout',
      injected: true,
    });
    expect(server.requests('/api/slow')).toHaveLength(1);
  });

  it('injects nothing in a production build: the hook is never asked', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    server.script('/api/items', [{ status: 200, body: 'ok' }]);
    const hook = installFakeHook([STATUS_503]);
    const result = await driver.send({ method: 'GET', url: `${server.url}/api/items`, options: fast });
    expect(result.outcome).toEqual({ kind: 'response', status: 200, body: 'ok' });
    expect(hook.queries).toEqual([]);
    expect(marks(result.events)).toEqual(['attempt-start 1', 'attempt-end 1']);
  });

  it('a hook whose fault throws leaves the request as it was, and still receives its events', async () => {
    server.script('/api/items', [{ status: 200, body: 'ok' }]);
    const pushed: unknown[] = [];
    installHook({
      push: (event: unknown) => pushed.push(event),
      fault() {
        throw new Error('hostile');
      },
    });
    const result = await driver.send({ method: 'GET', url: `${server.url}/api/items`, options: fast });
    expect(result.outcome).toEqual({ kind: 'response', status: 200, body: 'ok' });
    expect(marks(result.events)).toEqual(['attempt-start 1', 'attempt-end 1']);
    expect(pushed).toContainEqual(expect.objectContaining({ type: 'request-end', outcome: 'success' }));
    expect(server.requests('/api/items')).toHaveLength(1);
  });

  it('a header value fetch would refuse (above U+00FF) is left out of the answer, which is still injected', async () => {
    // The panel refuses such a value; a hostile or stale hook may still send one. fetch's Response
    // would throw on it, so every client answers with the rest of the step, and says it injected it.
    server.script('/api/items', [{ status: 200, body: 'ok' }]);
    installFakeHook([
      { step: 'status', status: 503, headers: { 'retry-after': '0 €', 'content-type': 'text/plain' } },
      'pass',
    ]);
    const result = await driver.send({ method: 'GET', url: `${server.url}/api/items`, options: fast });
    expect(result.outcome).toEqual({ kind: 'response', status: 200, body: 'ok' });
    expect(statuses(result.events)).toEqual([503, 200]);
    expect(marks(result.events)).toEqual([
      'attempt-start 1 injected',
      'attempt-end 1 injected',
      'attempt-start 2',
      'attempt-end 2',
    ]);
    const first = result.events.find((event) => event.type === 'attempt-end');
    expect(first?.type === 'attempt-end' && first.headers).toEqual({ 'content-type': 'text/plain' });
    expect(server.requests('/api/items')).toHaveLength(1);
  });

  it('a hook that answers nonsense leaves the request as it was', async () => {
    server.script('/api/items', [{ status: 200, body: 'ok' }]);
    installHook({ push() {}, fault: () => ({ step: 'status', status: 'five hundred' }) });
    const result = await driver.send({ method: 'GET', url: `${server.url}/api/items`, options: fast });
    expect(result.outcome).toEqual({ kind: 'response', status: 200, body: 'ok' });
    expect(result.info?.attempts).toBe(1);
  });
});

describe("each client's own conventions for an injected answer", () => {
  it('fetch resolves a real Response with the status, headers, body and URL', async () => {
    installFakeHook([
      { step: 'status', status: 503, headers: { 'retry-after': '0', 'x-why': 'injected' }, body: 'down' },
    ]);
    const response = await retryFetch(fetch, { ...fast, retries: 0 })(`${server.url}/api/items`);
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(503);
    expect(response.headers.get('x-why')).toBe('injected');
    expect(response.url).toBe(`${server.url}/api/items`);
    expect(await response.text()).toBe('down');
  });

  it("fetch's network error is fetch's TypeError (the cause of RetriesExhaustedError), saying it was injected", async () => {
    installFakeHook([{ step: 'networkError' }]);
    const { error } = await settle(retryFetch(fetch, { ...fast, retries: 0 })(`${server.url}/api/items`));
    expect(isRetrylineError(error, 'RetriesExhaustedError')).toBe(true);
    const cause = (error as Error).cause as TypeError;
    expect(cause).toBeInstanceOf(TypeError);
    expect(cause.message).toBe('Failed to fetch');
    expect(String(cause.cause)).toContain('injected from the Retryline DevTools panel');
  });

  it('axios rejects a 503 with its AxiosError holding the response, as validateStatus says', async () => {
    installFakeHook([
      { step: 'status', status: 503, headers: { 'retry-after': '0' }, body: '{"error":"down"}' },
    ]);
    const instance = axios.create();
    attachRetry(instance, { ...fast, retries: 0 });
    const { error } = await settle(instance.get(`${server.url}/api/items`));
    expect(error).toBeInstanceOf(AxiosError);
    expect(error).toMatchObject({
      code: AxiosError.ERR_BAD_RESPONSE,
      message: 'Request failed with status code 503',
    });
    // The body went through axios's own transformResponse: JSON parsed, as for a real response.
    expect((error as AxiosError).response).toMatchObject({ status: 503, data: { error: 'down' } });
    expect((error as AxiosError).response?.headers['retry-after']).toBe('0');
  });

  it("axios resolves an injected 503 that the caller's validateStatus accepts", async () => {
    installFakeHook([{ step: 'status', status: 503, body: 'down' }]);
    const instance = axios.create({ validateStatus: () => true });
    attachRetry(instance, fast);
    const response = await instance.get(`${server.url}/api/items`);
    expect(response).toMatchObject({ status: 503, data: 'down' });
  });

  it("axios's network error is its ERR_NETWORK AxiosError", async () => {
    installFakeHook([{ step: 'networkError' }]);
    const instance = axios.create();
    attachRetry(instance, { ...fast, retries: 0 });
    const { error } = await settle(instance.get(`${server.url}/api/items`));
    expect(error).toBeInstanceOf(AxiosError);
    expect(error).toMatchObject({ code: AxiosError.ERR_NETWORK, message: 'Network Error' });
    expect(server.requests('/api/items')).toHaveLength(0);
  });

  it("ky throws its HTTPError for an injected 503, and fetch's TypeError for a network error", async () => {
    installFakeHook([STATUS_503]);
    const api = ky.create(retryline({ ...fast, retries: 0 }));
    const { error } = await settle(api.get(`${server.url}/api/items`));
    expect(error).toBeInstanceOf(HTTPError);
    expect((error as HTTPError).response.status).toBe(503);

    installFakeHook([{ step: 'networkError' }]);
    const failed = await settle(api.get(`${server.url}/api/items`));
    expect(failed.error).toBeInstanceOf(TypeError);
  });
});

describe('a hook that goes away', () => {
  it('leaves no fault behind: an attempt made once nobody listens is sent as usual', async () => {
    server.script('/api/items', [{ status: 200, body: 'ok' }]);
    const HOOK = Symbol.for('retryline.devtools');
    installHook({
      push() {},
      fault() {
        // Asked about the first attempt, then removed: no listener is left for the second.
        delete (globalThis as Record<symbol, unknown>)[HOOK];
        return STATUS_503;
      },
    });
    const response = await retryFetch(fetch, fast)(`${server.url}/api/items`);
    expect(response.status).toBe(200);
    expect(server.requests('/api/items')).toHaveLength(1);
  });
});

describe('requests without Retryline', () => {
  it('are never touched, whatever the hook would answer', async () => {
    server.script('/api/items', [{ status: 200, body: 'ok' }]);
    const hook = installFakeHook([STATUS_503]);
    expect((await fetch(`${server.url}/api/items`)).status).toBe(200);
    expect((await axios.get(`${server.url}/api/items`)).status).toBe(200);
    expect((await ky.get(`${server.url}/api/items`)).status).toBe(200);
    expect(hook.queries).toEqual([]);
    expect(server.requests('/api/items')).toHaveLength(3);
  });
});
