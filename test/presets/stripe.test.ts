import { InvalidOptionsError } from '@retryline/core';
import { presets } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';
import { drivers, equal, sendFetch, sendThrough, statusOf } from './harness';

// presets.stripe(): each rule Stripe documents (https://docs.stripe.com/error-low-level) or its
// SDK follows (stripe-node's RequestSender), played by a loopback server answering as Stripe does.
const server = useFaultServer();
const url = (path: string) => `${server.url}${path}`;
const post = { method: 'POST', body: 'amount=2000&currency=usd' };

describe('presets.stripe()', () => {
  it('stops at once when Stripe says Stripe-Should-Retry: false, even on a 503 it would retry', async () => {
    server.script('/v1/charges', [
      { status: 503, headers: { 'stripe-should-retry': 'false' } },
      { status: 200, body: '{}' },
    ]);
    const sent = await sendFetch(presets.stripe(), url('/v1/charges'), post);
    expect(sent.status).toBe(503);
    expect(server.requests('/v1/charges')).toHaveLength(1);
  });

  it('retries when Stripe says Stripe-Should-Retry: true, even a 400 on a POST sent without a key', async () => {
    server.script('/v1/charges', [
      { status: 400, headers: { 'stripe-should-retry': 'true' } },
      { status: 200, body: '{}' },
    ]);
    const sent = await sendFetch(presets.stripe({ idempotency: false }), url('/v1/charges'), post);
    expect(sent.status).toBe(200);
    const [first, second] = server.requests('/v1/charges');
    expect(first?.headers['idempotency-key']).toBeUndefined();
    expect(second?.method).toBe('POST');
  });

  it('sends one Idempotency-Key with a POST, the same on every attempt, and retries its 500', async () => {
    server.script('/v1/payment_intents', [{ status: 500 }, { status: 500 }, { status: 200, body: '{}' }]);
    const sent = await sendFetch(presets.stripe(), url('/v1/payment_intents'), post);
    expect(sent.status).toBe(200);
    const keys = server.requests('/v1/payment_intents').map((request) => request.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
  });

  it('with idempotency: false sends no key, and a 500 on the POST is not sent again', async () => {
    server.script('/v1/refunds', [{ status: 500 }, { status: 200 }]);
    const sent = await sendFetch(presets.stripe({ idempotency: false }), url('/v1/refunds'), post);
    expect(sent.status).toBe(500);
    expect(server.requests('/v1/refunds')).toHaveLength(1);
    expect(server.requests('/v1/refunds')[0]?.headers['idempotency-key']).toBeUndefined();
  });

  it('retries GET and DELETE without a key: Stripe guarantees their idempotency', async () => {
    server.script('/v1/customers/cus_1', [{ status: 503 }, { status: 200, body: '{}' }]);
    expect((await sendFetch(presets.stripe(), url('/v1/customers/cus_1'))).status).toBe(200);
    server.script('/v1/customers/cus_1', [{ status: 502 }, { status: 200, body: '{}' }]);
    expect((await sendFetch(presets.stripe(), url('/v1/customers/cus_1'), { method: 'DELETE' })).status).toBe(
      200,
    );
    const requests = server.requests('/v1/customers/cus_1');
    expect(requests.map((request) => request.method)).toEqual(['GET', 'GET', 'DELETE', 'DELETE']);
    expect(requests.every((request) => request.headers['idempotency-key'] === undefined)).toBe(true);
  });

  it('retries a 409 Conflict on a keyed POST', async () => {
    server.script('/v1/charges', [{ status: 409 }, { status: 200, body: '{}' }]);
    const sent = await sendFetch(presets.stripe(), url('/v1/charges'), post);
    expect(sent.status).toBe(200);
    expect(server.requests('/v1/charges')).toHaveLength(2);
  });

  it('retries a 429 after an exponential backoff with randomness: the first wait is 0.5 s, drawn from [0.25 s, 0.5 s]', async () => {
    server.script('/v1/charges', [{ status: 429 }, { status: 200, body: '{}' }]);
    const sent = await sendFetch(presets.stripe(), url('/v1/charges'), post);
    expect(sent.status).toBe(200);
    expect(sent.waits).toHaveLength(1);
    expect(sent.waits[0]?.capped).toBe(500);
    expect(sent.waits[0]?.delay).toBeCloseTo(equal(500, sent.draws[0] as number), 9);
  });

  it('retries every status ≥ 500, as stripe-node does: a 520 too', async () => {
    server.script('/v1/balance', [{ status: 520 }, { status: 200, body: '{}' }]);
    expect((await sendFetch(presets.stripe(), url('/v1/balance'))).status).toBe(200);
    expect(server.requests('/v1/balance')).toHaveLength(2);
  });

  it.each([400, 401, 402, 403, 404])(
    'does not retry a %i: the request itself must change',
    async (status) => {
      server.script('/v1/charges', [{ status }, { status: 200 }]);
      expect((await sendFetch(presets.stripe(), url('/v1/charges'), post)).status).toBe(status);
      expect(server.requests('/v1/charges')).toHaveLength(1);
    },
  );

  it('retries a POST the network cut with the same key; without a key, it is not sent again', async () => {
    server.script('/v1/charges', [{ fault: 'reset-before-headers' }, { status: 200, body: '{}' }]);
    expect((await sendFetch(presets.stripe(), url('/v1/charges'), post)).status).toBe(200);
    const [first, second] = server.requests('/v1/charges');
    expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);

    server.script('/v1/transfers', [{ fault: 'reset-before-headers' }, { status: 200 }]);
    await expect(
      sendFetch(presets.stripe({ idempotency: false }), url('/v1/transfers'), post),
    ).rejects.toThrow();
    expect(server.requests('/v1/transfers')).toHaveLength(1);
  });

  it('backs off 0.5 s, 1 s, 2 s, 4 s, then 5 s at most, each drawn from [d/2, d]', async () => {
    server.script('/v1/events', [{ status: 503 }]);
    const sent = await sendFetch({ ...presets.stripe(), retries: 6 }, url('/v1/events'));
    expect(sent.waits.map((wait) => wait.capped)).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    sent.waits.forEach((wait, i) => {
      expect(wait.delay).toBeCloseTo(equal(wait.capped, sent.draws[i] as number), 9);
    });
  });

  it('makes 2 retries, stripe-node’s default, then hands back the last answer', async () => {
    server.script('/v1/events', [{ status: 503 }]);
    expect((await sendFetch(presets.stripe(), url('/v1/events'))).status).toBe(503);
    expect(server.requests('/v1/events')).toHaveLength(3);
  });

  it('refuses an idempotency option that is not a boolean', () => {
    expect(() => presets.stripe({ idempotency: 'yes' as unknown as boolean })).toThrow(InvalidOptionsError);
    expect(() => presets.stripe('all' as never)).toThrow(InvalidOptionsError);
  });

  it.each(drivers.map((driver) => [driver.name, driver] as const))(
    'through %s: Stripe-Should-Retry: false stops a 503, and a 409 is retried with the same key',
    async (_name, driver) => {
      server.script('/v1/charges', [{ status: 503, headers: { 'stripe-should-retry': 'false' } }]);
      const stopped = await sendThrough(driver, presets.stripe(), {
        method: 'POST',
        url: url('/v1/charges'),
        body: 'a=1',
      });
      expect(statusOf(stopped)).toBe(503);
      expect(server.requests('/v1/charges')).toHaveLength(1);

      server.script('/v1/refunds', [{ status: 409 }, { status: 200, body: '{}' }]);
      const retried = await sendThrough(driver, presets.stripe(), {
        method: 'POST',
        url: url('/v1/refunds'),
        body: 'a=1',
      });
      expect(statusOf(retried)).toBe(200);
      const [first, second] = server.requests('/v1/refunds');
      expect(first?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
      expect(second?.headers['idempotency-key']).toBe(first?.headers['idempotency-key']);
    },
  );
});
