/** One RetryInfo shape for aborts, through every adapter. */
import { attachRetry, getRetryInfo as axiosInfo } from '@retryline/axios';
import { getRetryInfo as fetchInfo, retryFetch } from '@retryline/fetch';
import { getRetryInfo as kyInfo, retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';
import { describe, expect, it } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

const server = useFaultServer();
const tick = () => new Promise((resolve) => setTimeout(resolve, 5));

describe('abort info', () => {
  it('fetch: aborted before the call', async () => {
    const c = new AbortController();
    c.abort();
    const { error } = await settle(retryFetch(fetch)(`${server.url}/x`, { signal: c.signal }));
    expect(fetchInfo(error)).toMatchObject({ outcome: 'aborted', attempts: 0 });
  });
  it('fetch: aborted mid first attempt (fast path)', async () => {
    server.script('/stall', [{ fault: 'stall-headers', ms: 300 }]);
    const c = new AbortController();
    const p = settle(retryFetch(fetch)(`${server.url}/stall`, { signal: c.signal }));
    while (server.requests('/stall').length === 0) await tick();
    c.abort();
    const { error } = await p;
    expect(fetchInfo(error)).toMatchObject({ outcome: 'aborted', attempts: 1 });
  });
  it('axios: aborted mid first attempt', async () => {
    server.script('/stall', [{ fault: 'stall-headers', ms: 300 }]);
    const instance = axios.create();
    attachRetry(instance);
    const c = new AbortController();
    const p = settle(instance.get(`${server.url}/stall`, { signal: c.signal }));
    while (server.requests('/stall').length === 0) await tick();
    c.abort();
    const { error } = await p;
    expect(axiosInfo(error)).toMatchObject({ outcome: 'aborted', attempts: 1 });
  });
  it('axios: aborted before', async () => {
    const instance = axios.create();
    attachRetry(instance);
    const c = new AbortController();
    c.abort();
    const { error } = await settle(instance.get(`${server.url}/x`, { signal: c.signal }));
    // Documented: axios cancels before Retryline sees the request.
    expect(axios.isCancel(error)).toBe(true);
    expect(axiosInfo(error)).toBeUndefined();
  });
  it('ky: aborted mid first attempt', async () => {
    server.script('/stall', [{ fault: 'stall-headers', ms: 300 }]);
    const api = ky.create(retryline());
    const c = new AbortController();
    const p = settle(api.get(`${server.url}/stall`, { signal: c.signal }));
    while (server.requests('/stall').length === 0) await tick();
    c.abort();
    const { error } = await p;
    expect(kyInfo(error)).toMatchObject({ outcome: 'aborted', attempts: 1 });
  });
});
