import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError } from '../errors';
import type { RetrylineEvent } from '../events/types';
import { retryingFetch } from './fetch-exchange';
import { prepareHttpOptions } from './request-engine';
import { retryInfoOf } from './retry-info';

const URL_ = 'https://api.example/items';
const FAST = { backoff: { strategy: 'constant', base: 1 }, jitter: 'none' } as const;

/** A fetch that answers 503 to its first `failures` attempts, then 200. */
function flaky(failures: number) {
  let attempts = 0;
  return vi.fn((_input: RequestInfo | URL, _init?: RequestInit) => {
    attempts += 1;
    return Promise.resolve(new Response(null, { status: attempts <= failures ? 503 : 200 }));
  });
}

describe('retryingFetch', () => {
  afterEach(() => vi.unstubAllGlobals());

  it("lays the request's own options, given apart from init, over the client's", async () => {
    const fetchImpl = flaky(5);
    const send = retryingFetch(fetchImpl, prepareHttpOptions({ retries: 5, ...FAST }), 'test');
    const response = await send(URL_, { headers: { accept: 'text/plain' } }, { retries: 1 });
    expect(response.status).toBe(503);
    expect(fetchImpl).toHaveBeenCalledTimes(2);
    expect(retryInfoOf(response)).toMatchObject({ attempts: 2, outcome: 'exhausted' });
  });

  it('hands fetch the caller’s init as a copy of its own on every attempt', async () => {
    const fetchImpl = flaky(1);
    const send = retryingFetch(fetchImpl, prepareHttpOptions({ retries: 1, ...FAST }), 'test');
    const init: RequestInit = { method: 'PUT', body: 'x' };
    await send(URL_, init);
    const [first, second] = fetchImpl.mock.calls.map(([, given]) => given);
    expect(first).toEqual(init);
    expect(first).not.toBe(init);
    expect(second).not.toBe(first);
  });

  it('names its client in events', async () => {
    const events: RetrylineEvent[] = [];
    const options = prepareHttpOptions({ retries: 0, onEvent: (event) => events.push(event) });
    await retryingFetch(flaky(0), options, 'my-client')(URL_);
    expect(events.find((event) => event.type === 'request-start')).toMatchObject({ client: 'my-client' });
  });

  it('without a fetch, calls the global fetch of the moment', async () => {
    const send = retryingFetch(undefined, prepareHttpOptions({ retries: 0 }), 'test');
    const later = flaky(0);
    vi.stubGlobal('fetch', later);
    await send(URL_);
    expect(later).toHaveBeenCalledTimes(1);
  });

  it('rejects, never throws, on options a request gives wrong', async () => {
    const send = retryingFetch(flaky(0), prepareHttpOptions({}), 'test');
    const call = send(URL_, null, 'three' as never);
    await expect(call).rejects.toThrow(InvalidOptionsError);
  });
});
