import { attachRetry } from '@retryline/axios';
import type { HttpRetryOptions, RetrylineEvent } from '@retryline/core';
import type { FaultQuery, FaultStep } from '@retryline/core/instrument';
import { retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';
import { describe, expect, it, vi } from 'vitest';
import { installHook, removeHookAfterEach } from '../faults/fake-hook';
import { useFaultServer } from '../support/use-fault-server';

// The DevTools panel's Replay, at the adapters: core offers the devtools hook a way to send each
// GET again (in development builds, as vitest runs), and the replay goes out through the very
// client that sent the request (its options, its guards, the hook's faults), to a real loopback
// server that counts what arrives. Each client is made once per test and used for both.
const server = useFaultServer();
removeHookAfterEach();

const fast: HttpRetryOptions = { retries: 3, backoff: { strategy: 'constant', base: 1 }, jitter: 'none' };

/**
 * A request through one client: its final status, the body read. `retry: false` is the request's
 * own "no retries", given the way its client takes per-request options.
 */
type Send = (
  url: string,
  init?: {
    method?: string;
    body?: string;
    signal?: AbortSignal;
    headers?: Record<string, string>;
    retry?: false;
  },
) => Promise<number>;

const clients: ReadonlyArray<{ name: string; client: string; make(options: HttpRetryOptions): Send }> = [
  {
    name: 'fetch',
    client: 'fetch',
    make(options) {
      const api = retryFetch(fetch, options);
      return async (url, init) => {
        const response = await api(url, init?.retry === false ? { ...init, retry: false } : init);
        await response.text();
        return response.status;
      };
    },
  },
  {
    name: 'fetch, given a Request',
    client: 'fetch',
    make(options) {
      const api = retryFetch(fetch, options);
      return async (url, init) => {
        const { retry, ...rest } = init ?? {};
        const response = await api(new Request(url, rest), retry === false ? { retry } : undefined);
        await response.text();
        return response.status;
      };
    },
  },
  {
    name: 'axios',
    client: 'axios',
    make(options) {
      const instance = axios.create();
      attachRetry(instance, options);
      return async (url, init) => {
        const response = await instance
          .request({
            url,
            method: init?.method ?? 'GET',
            data: init?.body,
            ...(init?.headers ? { headers: init.headers } : {}),
            ...(init?.signal ? { signal: init.signal } : {}),
            ...(init?.retry === false ? { retry: false as const } : {}),
          })
          .catch((error: unknown) => {
            if (axios.isAxiosError(error) && error.response) return error.response;
            throw error;
          });
        return response.status;
      };
    },
  },
  {
    name: 'ky',
    client: 'ky',
    make(options) {
      const api = ky.create({ ...retryline(options), throwHttpErrors: false });
      return async (url, init) => {
        const response = await api(url, {
          method: init?.method ?? 'GET',
          ...(init?.body === undefined ? {} : { body: init.body }),
          ...(init?.headers ? { headers: init.headers } : {}),
          ...(init?.signal ? { signal: init.signal } : {}),
          ...(init?.retry === false ? { retryline: false as const } : {}),
        });
        await response.text();
        return response.status;
      };
    },
  },
];

/**
 * A devtools hook as the extension's page hook is to core: it keeps the replays it is offered, by
 * request id, records what is pushed, and answers attempts with `fault` (none by default).
 */
function replayHook(fault: (query: FaultQuery) => FaultStep | undefined = () => undefined) {
  const replays = new Map<string, () => void>();
  const events: RetrylineEvent[] = [];
  installHook({
    push: (event: RetrylineEvent) => events.push(event),
    fault,
    replayable: (id: string, replay: () => void) => replays.set(id, replay),
  });
  const starts = () => events.filter((event) => event.type === 'request-start');
  const endOf = (id: string) =>
    events.find((event) => event.type === 'request-end' && event.requestId === id);
  /** Runs the replay kept for the request that started `n`-th (from 0); resolves with the replay's request-end. */
  const replay = async (n: number) => {
    const id = starts()[n]?.requestId;
    const run = id === undefined ? undefined : replays.get(id);
    if (!run) throw new Error(`no replay for request ${n}`);
    const before = starts().length;
    run();
    return vi.waitFor(
      () => {
        const again = starts()[before];
        const end = again && endOf(again.requestId);
        if (!again || !end) throw new Error('the replay has not ended');
        return { start: again, end };
      },
      { timeout: 10_000 },
    );
  };
  return { replays, events, starts, endOf, replay };
}

describe.each(clients)('a replay through $name', ({ make, client }) => {
  it('sends the request again through the same client: the server counts it, and its retries happen again', async () => {
    server.script('/api/items', [{ status: 503 }, { status: 200 }, { status: 503 }, { status: 200 }]);
    const hook = replayHook();
    const send = make(fast);
    expect(await send(`${server.url}/api/items?page=2`)).toBe(200);
    expect(server.requests('/api/items')).toHaveLength(2);

    const { start, end } = await hook.replay(0);
    expect(server.requests('/api/items')).toHaveLength(4);
    expect(start).toMatchObject({ client, method: 'GET', url: `${server.url}/api/items?page=***` });
    expect(start.requestId).not.toBe(hook.starts()[0]?.requestId);
    expect(end).toMatchObject({ outcome: 'success', attempts: 2, status: 200 });
    // The replay's request sent the query as the caller's did.
    expect(server.requests('/api/items').map((request) => request.url)).toEqual(
      Array(4).fill('/api/items?page=2'),
    );
  });

  it('is not stopped by the caller’s abort signal, aborted since', async () => {
    server.script('/api/items', [{ status: 200 }, { status: 503 }, { status: 200 }]);
    const hook = replayHook();
    const send = make(fast);
    const caller = new AbortController();
    expect(await send(`${server.url}/api/items`, { signal: caller.signal })).toBe(200);
    caller.abort(new Error('the caller left'));

    const { end } = await hook.replay(0);
    expect(end).toMatchObject({ outcome: 'success', attempts: 2 });
    expect(server.requests('/api/items')).toHaveLength(3);
  });

  it('takes the hook’s faults as the request did: its first attempt injected, the next one sent', async () => {
    server.script('/api/items', [{ status: 200 }, { status: 200 }]);
    const hook = replayHook((query) => (query.attempt === 1 ? { step: 'status', status: 503 } : undefined));
    const send = make(fast);
    expect(await send(`${server.url}/api/items`)).toBe(200);

    const { start } = await hook.replay(0);
    const injected = hook.events.flatMap((event) =>
      event.type === 'attempt-end' && event.requestId === start.requestId
        ? [`${event.attempt}${event.injected ? ' injected' : ''}`]
        : [],
    );
    expect(injected).toEqual(['1 injected', '2']);
    expect(server.requests('/api/items')).toHaveLength(2);
  });

  it('is recorded under an id of its own when the caller sent its own request id, which goes out as it was', async () => {
    server.script('/api/items', [{ status: 503 }, { status: 200 }, { status: 200 }]);
    const hook = replayHook();
    const send = make({ ...fast, requestIdHeader: 'x-request-id' });
    expect(await send(`${server.url}/api/items`, { headers: { 'X-Request-Id': 'abc' } })).toBe(200);
    expect(hook.starts().map((start) => start.requestId)).toEqual(['abc']);

    const { start, end } = await hook.replay(0);
    expect(start.requestId).not.toBe('abc');
    expect(end).toMatchObject({ outcome: 'success', attempts: 1, status: 200 });
    // The original's row keeps its own attempts: 503, then 200.
    const statuses = hook.events.flatMap((event) =>
      event.type === 'attempt-end' && event.requestId === 'abc' ? [event.status] : [],
    );
    expect(statuses).toEqual([503, 200]);
    expect(server.requests('/api/items').map((request) => request.headers['x-request-id'])).toEqual([
      'abc',
      'abc',
      'abc',
    ]);
  });

  it('is not offered for a GET that the client’s retryOn.methods leave out', async () => {
    server.script('/api/items', [{ status: 200 }]);
    const hook = replayHook();
    const send = make({ ...fast, retryOn: { methods: ['HEAD'] } });
    expect(await send(`${server.url}/api/items`)).toBe(200);
    expect(hook.starts()).toHaveLength(1);
    expect(hook.replays.size).toBe(0);
  });

  it('is not offered for a request that said retry: false, and is for the next one that did not', async () => {
    server.script('/api/items', [{ status: 503 }, { status: 200 }]);
    const hook = replayHook();
    const send = make(fast);
    expect(await send(`${server.url}/api/items`, { retry: false })).toBe(503);
    expect(hook.replays.size).toBe(0);
    expect(await send(`${server.url}/api/items`)).toBe(200);
    expect(hook.starts()).toHaveLength(2);
    expect([...hook.replays.keys()]).toEqual([hook.starts()[1]?.requestId]);
  });

  it('is not offered for a POST, keyed or not', async () => {
    server.script('/api/orders', [{ status: 201 }, { status: 201 }]);
    const hook = replayHook();
    const send = make({ ...fast, idempotencyKey: true });
    expect(await send(`${server.url}/api/orders`, { method: 'POST', body: '{}' })).toBe(201);
    expect(hook.starts()).toHaveLength(1);
    expect(hook.replays.size).toBe(0);
  });
});

describe('axios: a request with a CancelToken', () => {
  it('is replayed, reaching the server, though its token was cancelled since', async () => {
    server.script('/api/items', [{ status: 200 }, { status: 503 }, { status: 200 }]);
    const hook = replayHook();
    const instance = axios.create();
    attachRetry(instance, fast);
    const source = axios.CancelToken.source();
    const response = await instance.get(`${server.url}/api/items`, { cancelToken: source.token });
    expect(response.status).toBe(200);
    source.cancel('the caller left');

    const { end } = await hook.replay(0);
    expect(end).toMatchObject({ outcome: 'success', attempts: 2, status: 200 });
    expect(server.requests('/api/items')).toHaveLength(3);
  });

  it('still stops when its token is cancelled while an attempt is in flight', async () => {
    // The token reaches each attempt through the request's signal, not the attempt's config.
    server.script('/api/items', [{ fault: 'stall-headers' }]);
    replayHook();
    const instance = axios.create();
    attachRetry(instance, fast);
    const source = axios.CancelToken.source();
    const sent = instance.get(`${server.url}/api/items`, { cancelToken: source.token });
    await vi.waitFor(() => expect(server.requests('/api/items')).toHaveLength(1));
    source.cancel('the caller left');
    const error = await sent.catch((reason: unknown) => reason);
    expect(axios.isCancel(error)).toBe(true);
    expect((error as Error).message).toBe('the caller left');
    expect(server.requests('/api/items')).toHaveLength(1);
  });

  it('still stops when its token is cancelled while it waits to retry', async () => {
    server.script('/api/items', [{ status: 503 }, { status: 200 }]);
    const hook = replayHook();
    const instance = axios.create();
    attachRetry(instance, { retries: 3, backoff: { strategy: 'constant', base: 60_000 }, jitter: 'none' });
    const source = axios.CancelToken.source();
    const sent = instance.get(`${server.url}/api/items`, { cancelToken: source.token });
    await vi.waitFor(() => expect(hook.events.some((event) => event.type === 'retry-scheduled')).toBe(true));
    source.cancel('the caller left');
    const error = await sent.catch((reason: unknown) => reason);
    expect(axios.isCancel(error)).toBe(true);
    expect((error as Error).message).toBe('the caller left');
    expect(server.requests('/api/items')).toHaveLength(1);
  });
});
