import { describe, expect, it, vi } from 'vitest';
import * as axiosExample from '../examples/axios-client';
import { health, placeOrder } from '../examples/fetch-retry';
import * as kyExample from '../examples/ky-client';
import { settle } from './support/settle';
import { useFaultServer } from './support/use-fault-server';

// The README's fetch example, run as written against the fault server.
const server = useFaultServer();

describe('examples', () => {
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

  it.each([
    ['axios', axiosExample],
    ['ky', kyExample],
  ] as const)(
    'examples/%s-client.ts lists orders through two 503s and pings once',
    async (_name, example) => {
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      const api = example.createApi(server.url) as never;
      server.script('/orders', [
        { status: 503 },
        { status: 503 },
        { status: 200, body: '[1,2]', headers: { 'content-type': 'application/json' } },
      ]);
      expect(await example.listOrders(api)).toEqual([1, 2]);
      expect(server.requests('/orders')).toHaveLength(3);
      expect(log).toHaveBeenCalledWith('200 after 3 attempts');
      server.script('/health', [{ status: 503 }, { status: 200 }]);
      await expect(example.ping(api)).rejects.toThrow();
      expect(server.requests('/health')).toHaveLength(1);
    },
  );
});

describe('examples/guards.ts', () => {
  it('one breaker for two clients: five 503s through api open it for admin too, and listOrders says so', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const { admin, breaker, listOrders } = await import('../examples/guards');
    server.script('/orders', [{ status: 503 }]);
    // Each call is 3 attempts (2 retries), until the fifth failure in a row opens the breaker.
    const first = await listOrders(server.url);
    expect(first?.status).toBe(503);
    const second = await listOrders(server.url);
    expect(second?.status).toBe(503);
    expect(breaker.state(server.url).state).toBe('open');
    expect(server.requests('/orders')).toHaveLength(5);
    expect(await listOrders(server.url)).toBeUndefined();
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/^the API is down; try again after /));
    server.script('/health', [{ status: 200 }]);
    await expect(admin(`${server.url}/health`)).rejects.toMatchObject({ name: 'CircuitOpenError' });
    expect(server.requests('/health')).toHaveLength(0);
  });

  it('the batch client throttles itself: against an origin answering 503, it sends fewer than it is asked to', async () => {
    const { batch } = await import('../examples/guards');
    server.script('/export', [{ status: 503 }]);
    let refused = 0;
    for (let i = 0; i < 20; i++) {
      const { error } = await settle(batch(`${server.url}/export`));
      if (error) {
        expect(error).toMatchObject({ name: 'ThrottledError' });
        refused += 1;
      }
    }
    expect(refused).toBeGreaterThan(0);
    // Without the throttle, each of the 20 requests would be three attempts (2 retries): 60.
    expect(server.requests('/export').length).toBeLessThan(60 - refused);
  });

  it('guards a database call with retry(): two resets, then the row', async () => {
    const { selectOne } = await import('../examples/guards');
    let calls = 0;
    const db = {
      query: async () => {
        calls++;
        if (calls <= 2) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
        return [1];
      },
    };
    expect(await selectOne(db)).toBe(1);
    expect(calls).toBe(3);
  });
});
