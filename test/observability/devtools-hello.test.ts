import { attachRetry } from '@retryline/axios';
import { retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';
import { describe, expect, it, vi } from 'vitest';
import { installHook, removeHookAfterEach } from '../faults/fake-hook';
import { useFaultServer } from '../support/use-fault-server';

// The devtools hook's `hello`, as each adapter's client says it: once when the client is created,
// before any request, so the DevTools panel can tell a page that uses Retryline but has sent
// nothing from a page without it. A fake hook on globalThis stands in for the extension's.
const server = useFaultServer();
removeHookAfterEach();

/** Each adapter: make a client, and send one GET through it. */
const adapters = [
  {
    name: 'fetch',
    create: () => {
      const api = retryFetch();
      return async (url: string) => (await api(url)).status;
    },
  },
  {
    name: 'axios',
    create: () => {
      const client = axios.create();
      attachRetry(client, {});
      return async (url: string) => (await client.get(url)).status;
    },
  },
  {
    name: 'ky',
    create: () => {
      const api = ky.create(retryline());
      return async (url: string) => (await api.get(url)).status;
    },
  },
];

describe.each(adapters)('a $name client and the devtools hook', (adapter) => {
  it('says hello once when it is created, not once per request', async () => {
    server.script('/ok', [{ status: 200, body: 'ok' }]);
    const hello = vi.fn();
    const pushed: unknown[] = [];
    installHook({ push: (event: unknown) => pushed.push(event), hello });
    const send = adapter.create();
    expect(hello).toHaveBeenCalledTimes(1);
    expect(pushed).toEqual([]);
    expect(await send(`${server.url}/ok`)).toBe(200);
    expect(await send(`${server.url}/ok`)).toBe(200);
    expect(hello).toHaveBeenCalledTimes(1);
    expect(pushed.length).toBeGreaterThan(0);
  });

  it('is created and used as usual when hello throws', async () => {
    server.script('/ok', [{ status: 200, body: 'ok' }]);
    installHook({
      push: () => {},
      hello: () => {
        throw new Error('extension context invalidated');
      },
    });
    expect(await adapter.create()(`${server.url}/ok`)).toBe(200);
  });
});
