import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { attachRetry } from '@retryline/axios';
import { isRetrylineError } from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * A hostile server sends a 200 and then a body that never ends, or one that trickles a byte at a
 * time forever. `deadline` bounds the whole request, the body handed back included:
 * whatever the client, reading it past the deadline rejects instead of hanging.
 */
let server: Server;
let base = '';
const open = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    if (req.url !== '/failing-endless') res.writeHead(200, { 'content-type': 'text/plain' });
    if (req.url === '/endless') {
      // Headers, a first chunk, then nothing: the body never ends.
      res.write('first chunk;');
      return;
    }
    if (req.url === '/failing-endless') {
      // A failed status whose body stalls: axios rejects at its headers, and reads the body after.
      res.statusCode = 503;
      res.write('{"error":');
      return;
    }
    if (req.url === '/trickle') {
      const timer = setInterval(() => res.write('.'), 20);
      res.on('close', () => clearInterval(timer));
      return;
    }
    res.end('whole body');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  for (const res of open) res.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** Settles with what `promise` came to, so a test can assert that it did settle. */
const outcome = (promise: Promise<unknown>) =>
  promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

const isDeadline = (error: unknown): boolean =>
  isRetrylineError(error, 'DeadlineExceededError') ||
  isRetrylineError((error as { cause?: unknown })?.cause, 'DeadlineExceededError');

describe.each(['endless', 'trickle'])('a %s body under a deadline', (path) => {
  it('fetch: reading it rejects with DeadlineExceededError instead of hanging', async () => {
    const response = await retryFetch(fetch, { deadline: 300 })(`${base}/${path}`);
    expect(response.status).toBe(200);
    const read = await outcome(response.text());
    expect(read.ok).toBe(false);
    expect(isDeadline(read.ok ? undefined : read.error)).toBe(true);
    expect(getRetryInfo(response)?.attempts).toBe(1);
  });

  it('fetch: with a timeout too (which bounds only up to the headers), the deadline still ends the body', async () => {
    const response = await retryFetch(fetch, { deadline: 300, timeout: 100 })(`${base}/${path}`);
    const read = await outcome(response.text());
    expect(read.ok).toBe(false);
    expect(isDeadline(read.ok ? undefined : read.error)).toBe(true);
  });

  it('ky: reading it rejects instead of hanging', async () => {
    const api = ky.create(retryline({ deadline: 300 }));
    const response = await api.get(`${base}/${path}`);
    const read = await outcome(response.text());
    expect(read.ok).toBe(false);
    expect(isDeadline(read.ok ? undefined : read.error)).toBe(true);
  });

  it('axios: the request rejects instead of hanging', async () => {
    const instance = axios.create();
    attachRetry(instance, { deadline: 300 });
    const result = await outcome(instance.get(`${base}/${path}`));
    expect(result.ok).toBe(false);
  });

  it("axios with responseType 'stream': the stream errors instead of hanging", async () => {
    const instance = axios.create({ responseType: 'stream' });
    attachRetry(instance, { deadline: 300 });
    const response = await instance.get(`${base}/${path}`);
    const drained = await outcome(
      new Promise<void>((resolve, reject) => {
        const stream = response.data as NodeJS.ReadableStream;
        stream.on('data', () => {});
        stream.on('end', resolve);
        stream.on('error', reject);
        stream.on('close', () => reject(new Error('closed before its end')));
      }),
    );
    expect(drained.ok).toBe(false);
  });
});

describe('axios: a failed response whose body stalls, handed back', () => {
  const stalled = `/failing-endless`;

  it.each([
    ['the deadline', { deadline: 300 }, undefined],
    ["the caller's signal", {}, () => AbortSignal.timeout(300)],
  ] as const)('is ended by %s, with no retry left (retries: 0)', async (_what, options, signal) => {
    const instance = axios.create();
    attachRetry(instance, { retries: 0, ...options });
    const result = await outcome(instance.get(`${base}${stalled}`, signal ? { signal: signal() } : {}));
    expect(result.ok).toBe(false);
  });

  it('is ended by the deadline after its retries ran out', async () => {
    const instance = axios.create();
    attachRetry(instance, {
      retries: 1,
      backoff: { strategy: 'constant', base: 1 },
      jitter: 'none',
      deadline: 500,
    });
    const result = await outcome(instance.get(`${base}${stalled}`));
    expect(result.ok).toBe(false);
  });

  it("is ended by the deadline with responseType 'stream' too", async () => {
    const instance = axios.create({ responseType: 'stream' });
    attachRetry(instance, { retries: 0, deadline: 300 });
    const failed = await outcome(instance.get(`${base}${stalled}`));
    const error = failed.ok ? undefined : (failed.error as { response?: { data?: NodeJS.ReadableStream } });
    const stream = error?.response?.data;
    expect(stream).toBeDefined();
    const drained = await outcome(
      new Promise<void>((resolve, reject) => {
        stream?.on('data', () => {});
        stream?.on('end', resolve);
        stream?.on('error', reject);
        stream?.on('close', () => reject(new Error('closed before its end')));
      }),
    );
    expect(drained.ok).toBe(false);
  });
});

describe('the deadline of a body still being read survives garbage collection', () => {
  it("axios with responseType 'stream': gc() while the body stalls does not drop the deadline", async () => {
    const dist = (name: string) =>
      JSON.stringify(join(import.meta.dirname, '..', '..', 'packages', name, 'dist', 'index.js'));
    // The engine's deadline timer lives as long as what the engine resolved with: that must be
    // kept while the response the caller holds lives, whatever collections run meanwhile.
    const script = `
      const { attachRetry } = await import(${dist('axios')});
      const { default: axios } = await import('axios');
      const instance = axios.create({ responseType: 'stream' });
      attachRetry(instance, { deadline: 400 });
      const response = await instance.get(${JSON.stringify(`${base}/endless`)});
      for (const at of [50, 120, 200, 300]) setTimeout(() => globalThis.gc(), at);
      const ended = await new Promise((resolve) => {
        response.data.on('data', () => {});
        response.data.on('error', () => resolve('ended'));
        response.data.on('close', () => resolve('ended'));
        setTimeout(() => resolve('still pending'), 3000).unref();
      });
      console.log(ended);
      process.exit(0);
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', '--input-type=module', '-e', script],
      { timeout: 15_000, cwd: join(import.meta.dirname, '..', '..', 'packages', 'axios') },
    );
    expect(stdout.trim()).toBe('ended');
  });
});

describe('a whole body inside the deadline', () => {
  it('is read as usual through every client', async () => {
    const fetched = await retryFetch(fetch, { deadline: 5_000 })(`${base}/whole`);
    expect(await fetched.text()).toBe('whole body');
    const kyed = await ky.create(retryline({ deadline: 5_000 })).get(`${base}/whole`);
    expect(await kyed.text()).toBe('whole body');
    const instance = axios.create();
    attachRetry(instance, { deadline: 5_000 });
    expect((await instance.get(`${base}/whole`)).data).toBe('whole body');
  });

  it("the deadline's timer does not hold the process open once the response is read", async () => {
    const dist = join(import.meta.dirname, '..', '..', 'packages', 'fetch', 'dist', 'index.js');
    expect(existsSync(dist), 'packages/fetch/dist is missing: run pnpm build').toBe(true);
    // A ten-minute deadline: were its timer left holding the event loop, the child would outlive the test.
    const script = `
      const { retryFetch } = await import(${JSON.stringify(dist)});
      const response = await retryFetch(fetch, { deadline: 600000 })(${JSON.stringify(`${base}/whole`)});
      console.log(await response.text());
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], {
      timeout: 15_000,
    });
    expect(stdout.trim()).toBe('whole body');
  });
});
