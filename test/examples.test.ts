import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { health, placeOrder } from '../examples/fetch-retry';
import { type FaultServer, startFaultServer } from './support/fault-server';

// The README's fetch example, run as written against the fault server.
let server: FaultServer;
beforeAll(async () => {
  server = await startFaultServer();
});
afterAll(async () => {
  await server.close();
});

describe('examples/fetch-retry.ts', () => {
  it('places an order through a 503 with one idempotency key', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    server.script('/orders', [{ status: 503 }, { status: 201, body: '{"id":7}' }]);
    const response = await placeOrder(server.url, { sku: 'A-1', quantity: 2 });
    expect(response.status).toBe(201);
    const [first, second] = server.requests('/orders');
    expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
    expect(second?.bodyText).toBe('{"sku":"A-1","quantity":2}');
    expect(log).toHaveBeenCalledWith(expect.stringMatching(/^201 after 2 attempts, \d+ ms waiting$/));
  });

  it('checks health once, without retrying', async () => {
    server.script('/health', [{ status: 503 }, { status: 200 }]);
    expect((await health(server.url)).status).toBe(503);
    expect(server.requests('/health')).toHaveLength(1);
  });
});
