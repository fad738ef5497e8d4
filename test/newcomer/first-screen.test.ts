import { afterEach, expect, it, vi } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';

// The README's first example (examples/first-screen.ts) as a newcomer copies it, run against a
// loopback server standing in for https://api.example.com: only the global fetch is swapped for
// one that sends there, before the example captures it.
const server = useFaultServer();

afterEach(() => {
  vi.unstubAllGlobals();
});

it('retries the POST through a 503 with one Idempotency-Key and logs "201 after 2 attempts"', async () => {
  server.script('/orders', [{ status: 503 }, { status: 201, body: '{"id":7}' }]);
  const realFetch = globalThis.fetch;
  const sent: string[] = [];
  vi.stubGlobal('fetch', (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    sent.push(request.url);
    const local = request.url.replace('https://api.example.com', server.url);
    return realFetch(new Request(local, request));
  });
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});

  await import('../../examples/first-screen');

  expect(sent).toEqual(['https://api.example.com/orders', 'https://api.example.com/orders']);
  const [first, second] = server.requests('/orders');
  expect(first?.method).toBe('POST');
  expect(first?.bodyText).toBe('{"sku":"A-1"}');
  expect(first?.headers['idempotency-key']).toMatch(/\S/);
  expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
  expect(log).toHaveBeenCalledWith('201 after 2 attempts');
});
