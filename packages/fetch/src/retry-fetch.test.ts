import { InvalidOptionsError } from '@retryline/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { retryFetch } from './retry-fetch';

const ok = (_input?: RequestInfo | URL, _init?: RequestInit) => Promise.resolve(new Response('ok'));

describe('retryFetch: which fetch it calls', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('without a fetch, calls the global fetch of the moment — a mock installed later applies', async () => {
    const client = retryFetch({ retries: 0 });
    const later = vi.fn(ok);
    vi.stubGlobal('fetch', later); // as msw's server.listen() does, after the client was made
    const response = await client('https://api.example/x');
    expect(await response.text()).toBe('ok');
    expect(later).toHaveBeenCalledTimes(1);
    expect(String(later.mock.calls[0]?.[0])).toBe('https://api.example/x');
  });

  it('retryFetch(undefined, options) does the same', async () => {
    const client = retryFetch(undefined, { retries: 0 });
    const later = vi.fn(ok);
    vi.stubGlobal('fetch', later);
    await client('https://api.example/x');
    expect(later).toHaveBeenCalledTimes(1);
  });

  it('keeps the fetch it was given, whatever the global becomes', async () => {
    const given = vi.fn(ok);
    const client = retryFetch(given, { retries: 0 });
    const other = vi.fn(ok);
    vi.stubGlobal('fetch', other);
    await client('https://api.example/x');
    expect(given).toHaveBeenCalledTimes(1);
    expect(other).not.toHaveBeenCalled();
  });

  it('rejects a fetchImpl that is not a function, with a clear message', () => {
    const call = () => retryFetch(42 as never);
    expect(call).toThrow(InvalidOptionsError);
    expect(call).toThrow('Expected fetchImpl to be a fetch function, got 42');
  });
});
