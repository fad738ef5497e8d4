// When an attempt goes out, and a response handed back late: the first attempt of a request is sent
// within the caller's call (an abort right after it reaches a request in flight), and a held
// response whose body was cut off while a retry was pending still settles when handed back.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attachRetry } from '@retryline/axios';
import { circuitBreaker } from '@retryline/core';
import { type HttpExchange, runHttpRequest } from '@retryline/core/adapter';
import axios from 'axios';
import { afterEach, describe, expect, it } from 'vitest';
import { settle } from './support/settle';

const servers: Server[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

describe('axios: a handed-back body whose stream closed before it was read', () => {
  it("settles: the caller gets axios's error for a cut-off body, not a request that never ends", async () => {
    // A 503 whose body is cut off while Retryline waits to retry; the breaker then refuses the
    // retry, so the held 503 is handed back and read only now, after its stream has closed.
    const url = await listen((_req, res) => {
      res.writeHead(503, { 'content-length': '1000' });
      res.write('partial');
      setTimeout(() => res.socket?.destroy(), 30);
    });
    const api = axios.create();
    attachRetry(api, {
      retries: 1,
      backoff: { strategy: 'constant', base: 200 },
      jitter: 'none',
      breaker: circuitBreaker({ consecutiveFailures: 1 }),
      deadline: 1_000, // not even the deadline ends it
    });
    // A request that never settles fails this test by its timeout; no clock is compared.
    const { error } = await settle(api.get(url));
    expect(axios.isAxiosError(error)).toBe(true);
    expect((error as { code?: string }).code).toBe('ERR_BAD_RESPONSE');
  });
});

describe('the attempt loop: the first attempt of a request that goes through the loop', () => {
  it('is sent within the call, and never with a signal already aborted', async () => {
    const controller = new AbortController();
    const sent: boolean[] = [];
    const exchange: HttpExchange<never> = {
      client: 'review',
      method: 'GET',
      url: 'https://api.example/x',
      headers: undefined,
      replayable: true,
      signal: controller.signal,
      // onEvent sends the request through the attempt loop rather than the shortcut.
      options: { retries: 2, onEvent: () => {} },
      send: ({ signal }) => {
        sent.push(signal?.aborted === true);
        return new Promise<never>((_, reject) =>
          signal?.addEventListener('abort', () => reject(signal.reason), { once: true }),
        );
      },
      inspect: (response: never) => response,
      discard: () => {},
    };
    const running = runHttpRequest(exchange);
    const sentWithinCall = sent.length;
    controller.abort(new Error('caller gave up'));
    await running.catch(() => {});
    // Sent synchronously, so the abort reaches a request in flight, never one about to be sent.
    expect(sentWithinCall).toBe(1);
    expect(sent).not.toContain(true);
  });
});
