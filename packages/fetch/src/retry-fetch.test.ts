import { getEventListeners } from 'node:events';
import { InvalidOptionsError } from '@retryline/core';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getRetryInfo, retryFetch } from './retry-fetch';

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

describe('retryFetch: a Request as input', () => {
  const unavailable = () => Promise.resolve(new Response('busy', { status: 503 }));

  it('sends a Request without a body as it is on every attempt, and clones one with a body', async () => {
    const sent: unknown[] = [];
    const fetchImpl = vi.fn((input: RequestInfo | URL) => {
      sent.push(input);
      return sent.length < 3 ? unavailable() : Promise.resolve(new Response('ok'));
    });
    const client = retryFetch(fetchImpl, { retries: 2, backoff: 'constant', jitter: 'none', maxDelay: 1 });
    const get = new Request('https://api.example/x');
    await client(get, { retry: { backoff: { strategy: 'constant', base: 1 } } });
    expect(sent).toEqual([get, get, get]);
    expect(sent.every((input) => input === get)).toBe(true);

    sent.length = 0;
    const put = new Request('https://api.example/x', { method: 'PUT', body: 'v2' });
    const response = await client(put, { retry: { backoff: { strategy: 'constant', base: 1 } } });
    expect(await response.text()).toBe('ok');
    expect(sent).toHaveLength(3);
    expect(sent.some((input) => input === put)).toBe(false);
    expect(await Promise.all(sent.map((input) => (input as Request).text()))).toEqual(['v2', 'v2', 'v2']);
    expect(put.bodyUsed).toBe(false);
  });

  it('sends a Request with a body as it is when no retry can follow (a clone would buffer its body)', async () => {
    const sent: unknown[] = [];
    const fetchImpl = vi.fn((input: RequestInfo | URL) => {
      sent.push(input);
      return unavailable();
    });
    const client = retryFetch(fetchImpl);
    const upload = new Request('https://api.example/x', { method: 'PUT', body: 'v2' });
    const response = await client(upload, { retry: false });
    expect(response.status).toBe(503);
    expect(sent).toEqual([upload]);
    expect(sent[0]).toBe(upload);
  });

  it("follows a Request's own signal with no controller of its own, and its abort stops a wait at once", async () => {
    const controller = new AbortController();
    const request = new Request('https://api.example/x', { signal: controller.signal });
    const made = vi.spyOn(globalThis, 'AbortController');
    try {
      let sends = 0;
      const fetchImpl = (_input: RequestInfo | URL, init?: RequestInit) => {
        sends++;
        expect(init?.signal).toBe(request.signal);
        return unavailable();
      };
      const client = retryFetch(fetchImpl, { retries: 3, backoff: { strategy: 'constant', base: 60_000 } });
      const pending = client(request);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(sends).toBe(1); // waiting a minute before the second attempt
      const started = Date.now();
      controller.abort(new Error('user left'));
      await expect(pending).rejects.toThrow('user left');
      expect(Date.now() - started).toBeLessThan(1000);
      expect(sends).toBe(1);
      expect(made).not.toHaveBeenCalled();
    } finally {
      made.mockRestore();
    }
  });

  it('still makes its own controller for a signal given in init, which other requests may share', async () => {
    const shared = new AbortController();
    const seen: unknown[] = [];
    const fetchImpl = (_input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(init?.signal);
      return Promise.resolve(new Response('ok'));
    };
    const client = retryFetch(fetchImpl, { retries: 0 });
    await client(new Request('https://api.example/x'), { signal: shared.signal });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(AbortSignal);
    expect(seen[0]).not.toBe(shared.signal);
  });
});

describe('retryFetch: the retry info of a response', () => {
  it('is kept out of sight: no enumerable key, nothing in JSON', async () => {
    const client = retryFetch(ok, { retries: 0 });
    const response = await client('https://api.example/x');
    expect(getRetryInfo(response)).toMatchObject({ attempts: 1, totalDelay: 0, outcome: 'success' });
    expect(Object.keys(response)).toEqual([]);
    expect(JSON.stringify({ ...response })).toBe('{}');
  });

  it('is kept for a response that takes no new property (a frozen test double)', async () => {
    const frozen = Object.freeze(new Response('ok'));
    const client = retryFetch(() => Promise.resolve(frozen), { retries: 0 });
    const response = await client('https://api.example/x');
    expect(response).toBe(frozen);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 1, outcome: 'success' });
  });

  it('is not there for a response that did not come through retryFetch', async () => {
    expect(getRetryInfo(new Response('ok'))).toBeUndefined();
  });
});

describe('retryFetch: what each attempt is given', () => {
  it("passes the caller's headers as they are when nothing is added, and a copy with additions", async () => {
    const inits: (RequestInit | undefined)[] = [];
    const fetchImpl = (_input: RequestInfo | URL, init?: RequestInit) => {
      inits.push(init);
      return Promise.resolve(new Response('ok'));
    };
    const headers = new Headers({ authorization: 'Bearer t' });
    await retryFetch(fetchImpl, { retries: 0 })('https://api.example/x', { headers });
    expect(inits[0]?.headers).toBe(headers);

    await retryFetch(fetchImpl, { retries: 0, requestIdHeader: 'x-request-id' })('https://api.example/x', {
      headers,
    });
    const sent = inits[1]?.headers as Headers;
    expect(sent).not.toBe(headers);
    expect(sent.get('authorization')).toBe('Bearer t');
    expect(sent.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(headers.has('x-request-id')).toBe(false);
  });

  it('takes a null init as fetch does, as none', async () => {
    const inits: (RequestInit | undefined)[] = [];
    const fetchImpl = (_input: RequestInfo | URL, init?: RequestInit) => {
      inits.push(init);
      return Promise.resolve(new Response('ok'));
    };
    const response = await retryFetch(fetchImpl, { retries: 0 })('https://api.example/x', null as never);
    expect(await response.text()).toBe('ok');
    expect(inits).toEqual([{}]);
  });

  it('gives every attempt an init of its own, even when the caller gave none', async () => {
    const inits: (RequestInit | undefined)[] = [];
    const fetchImpl = (_input: RequestInfo | URL, init?: RequestInit) => {
      inits.push(init);
      if (init) (init as Record<string, unknown>).touched = true; // a fetch that writes to its init
      return Promise.resolve(new Response('busy', { status: inits.length < 2 ? 503 : 200 }));
    };
    const client = retryFetch(fetchImpl, { retries: 1, backoff: { strategy: 'constant', base: 1 } });
    expect((await client('https://api.example/x')).status).toBe(200);
    expect(inits).toHaveLength(2);
    expect(inits[0]).not.toBe(inits[1]);
    expect(Object.isFrozen(inits[0])).toBe(false);
  });
});

describe("retryFetch: a Request's own signal, raced", () => {
  it('carries one listener however often the same Request is sent', async () => {
    const request = new Request('https://api.example/x', { signal: new AbortController().signal });
    const client = retryFetch(ok, { retries: 0 });
    for (let i = 0; i < 20; i++) await client(request);
    expect(getEventListeners(request.signal, 'abort').length).toBeLessThanOrEqual(1);
  });

  it('still ends at once when aborted, even with a fetch that ignores the signal', async () => {
    const controller = new AbortController();
    const request = new Request('https://api.example/x', { signal: controller.signal });
    const hangs = () => new Promise<Response>(() => {});
    const pending = retryFetch(hangs, { retries: 0 })(request);
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('user left'));
    await expect(pending).rejects.toThrow('user left');
  });
});

describe('retryFetch: init.retry', () => {
  const unavailable = () => Promise.resolve(new Response('busy', { status: 503 }));
  const fast = { backoff: { strategy: 'constant', base: 1 }, jitter: 'none' } as const;

  it('takes a number of retries as the option retry does: 0 fails fast, 4 makes 5 attempts', async () => {
    const fetchImpl = vi.fn(unavailable);
    const client = retryFetch(fetchImpl, fast);
    expect((await client('https://api.example/x', { retry: 0 })).status).toBe(503);
    expect(fetchImpl).toHaveBeenCalledTimes(1);
    fetchImpl.mockClear();
    await client('https://api.example/x', { retry: 4 });
    expect(fetchImpl).toHaveBeenCalledTimes(5);
  });

  it.each([
    [
      'a string',
      'no',
      "Expected retry to be an object of options, a boolean or a number of retries, got 'no'",
    ],
    ['null', null, 'Expected retry to be an object of options, a boolean or a number of retries, got null'],
    ['a negative number', -1, 'Expected retry to be a boolean, a non-negative integer or Infinity, got -1'],
  ])('rejects %s with InvalidOptionsError before anything is sent', async (_name, retry, message) => {
    const fetchImpl = vi.fn(unavailable);
    const call = retryFetch(fetchImpl, fast)('https://api.example/x', { retry: retry as never });
    await expect(call).rejects.toThrow(InvalidOptionsError);
    await expect(call).rejects.toThrow(message);
    expect(fetchImpl).not.toHaveBeenCalled();
  });

  it('refuses options that give both retry and retries, in the client or in one request', async () => {
    expect(() => retryFetch(ok, { retry: 1, retries: 4 })).toThrow(
      'Expected only one of retry and retries, got both',
    );
    expect(() => retryFetch(ok, { retries: 4, retry: 1 })).toThrow(InvalidOptionsError);
    const call = retryFetch(ok)('https://api.example/x', { retry: { retries: 4, retry: 1 } });
    await expect(call).rejects.toThrow('Expected only one of retry and retries, got both');
  });
});

describe('retryFetch: a FormData body', () => {
  const unavailable = () => Promise.resolve(new Response('busy', { status: 503 }));
  const fast = { retries: 2, backoff: { strategy: 'constant', base: 1 }, jitter: 'none' } as const;
  // A file that counts its reads: fetch reads it as it sends; Retryline should not before.
  const reads = vi.fn();
  class WatchedFile extends File {
    override stream() {
      reads();
      return super.stream();
    }
    override arrayBuffer() {
      reads();
      return super.arrayBuffer();
    }
  }
  const form = () => {
    const body = new FormData();
    body.append('note', 'hello');
    body.append('file', new WatchedFile(['file body'], 'f.txt', { type: 'text/plain' }));
    return body;
  };

  it('with no retry possible, hands fetch the caller’s FormData as it is', async () => {
    const fetchImpl = vi.fn(ok);
    const body = form();
    await retryFetch(fetchImpl, fast)('https://api.example/x', { method: 'PUT', body, retry: false });
    await retryFetch(fetchImpl, { retries: 0 })('https://api.example/x', { method: 'PUT', body });
    expect(fetchImpl.mock.calls.map(([, init]) => init?.body)).toEqual([body, body]);
  });

  it('sends every attempt one encoding under one content type, its files not read beforehand', async () => {
    reads.mockClear();
    const bodies: Array<[unknown, string | null]> = [];
    const fetchImpl = vi.fn((_input: RequestInfo | URL, init?: RequestInit) => {
      bodies.push([init?.body, new Headers(init?.headers).get('content-type')]);
      return bodies.length < 3 ? unavailable() : ok();
    });
    await retryFetch(fetchImpl, fast)('https://api.example/x', { method: 'PUT', body: form() });
    expect(reads).not.toHaveBeenCalled();
    const [[body, type], ...rest] = bodies as [[Blob, string], ...Array<[Blob, string]>];
    expect(rest).toEqual([
      [body, type],
      [body, type],
    ]);
    const sent = await new Response(body, { headers: { 'content-type': type } }).formData();
    expect(sent.get('note')).toBe('hello');
    expect(await (sent.get('file') as File).text()).toBe('file body');
  });
});
