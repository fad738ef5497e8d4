import type { HttpRetryOptions, RetrylineEvent } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { type Driver, drivers } from '../conformance/drivers';
import { useFaultServer } from '../support/use-fault-server';

/**
 * A hostile server answers a POST with a redirect to a host that cannot be reached. The client
 * follows it, and the connection to the *second* host fails with a "never reached" code
 * (ECONNREFUSED, ENOTFOUND) although the first server already processed the POST. Retryline must
 * not read that code as proof that nothing was sent: an unkeyed POST reaches the
 * server at most once, through every adapter.
 */
const server = useFaultServer();

const fast: HttpRetryOptions = { retries: 3, backoff: { strategy: 'constant', base: 1 }, jitter: 'none' };

type Target = 'refused' | 'unresolvable' | 'slow';

async function targetUrl(kind: Target): Promise<string> {
  if (kind === 'refused') return `${await server.refusedUrl()}/gone`;
  // RFC 6761 §6.4: names under .invalid never resolve.
  if (kind === 'unresolvable') return 'http://nohost.invalid/gone';
  server.script('/slow', [{ fault: 'stall-headers' }]);
  return `${server.url}/slow`;
}

const attemptEnds = (events: readonly RetrylineEvent[]) =>
  events.filter((e) => e.type === 'attempt-end') as Array<Extract<RetrylineEvent, { type: 'attempt-end' }>>;

const send = (driver: Driver, method: string, path: string, options: HttpRetryOptions = fast) =>
  driver.send({
    method,
    url: `${server.url}${path}`,
    ...(method === 'GET' ? {} : { body: 'order=1' }),
    options,
  });

describe.each(drivers.map((d) => [d.name, d] as const))('hostile redirects through %s', (_name, driver) => {
  for (const status of [303, 307, 308]) {
    for (const target of ['refused', 'unresolvable', 'slow'] as const) {
      it(`a POST answered ${status} to a ${target} host reaches the server once`, async () => {
        server.script('/orders', [{ status, headers: { location: await targetUrl(target) } }]);
        // The slow host stalls: the attempt timeout ends it (a timed-out attempt may have been processed).
        const options = target === 'slow' ? { ...fast, timeout: 300 } : fast;
        const { events } = await send(driver, 'POST', '/orders', options);
        expect(server.requests('/orders')).toHaveLength(1);
        const ends = attemptEnds(events);
        expect(ends).toHaveLength(1);
        expect(ends[0]?.phase).toBe('unknown');
      });
    }

    it(`a GET answered ${status} to a refused host is retried (it is idempotent)`, async () => {
      server.script('/report', [{ status, headers: { location: await targetUrl('refused') } }]);
      const { events } = await send(driver, 'GET', '/report');
      expect(server.requests('/report')).toHaveLength(4);
      expect(attemptEnds(events).map((e) => e.phase)).toEqual(['unknown', 'unknown', 'unknown', 'unknown']);
    });
  }

  it('a keyed POST redirected to a refused host is retried, with one key on every attempt', async () => {
    server.script('/orders', [{ status: 307, headers: { location: await targetUrl('refused') } }]);
    await send(driver, 'POST', '/orders', { ...fast, retries: 2, idempotencyKey: true });
    const keys = server.requests('/orders').map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a POST whose key is empty or blank is no keyed request: sent once', async () => {
    // Repeated empty fields reach a server joined: ', ' and '"", ""' are no key either.
    for (const blank of ['', '  ', '""', ', ', '"", ""']) {
      server.clear();
      server.script('/orders', [{ status: 503 }]);
      await driver.send({
        method: 'POST',
        url: `${server.url}/orders`,
        body: 'order=1',
        headers: { 'Idempotency-Key': blank },
        options: fast,
      });
      expect(server.requests('/orders')).toHaveLength(1);
    }
  });

  it('a blank caller key is replaced by a real one when idempotencyKey is on', async () => {
    server.script('/orders', [{ status: 503 }, { status: 503 }, { status: 201 }]);
    await driver.send({
      method: 'POST',
      url: `${server.url}/orders`,
      body: 'order=1',
      headers: { 'Idempotency-Key': ' ' },
      options: { ...fast, idempotencyKey: true },
    });
    const keys = server.requests('/orders').map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('a refused first hop', () => {
  const [fetchDriver, axiosDriver, kyDriver] = drivers as [Driver, Driver, Driver];

  it('axios says it followed no redirect: an unkeyed POST to a refused port is retried (never sent)', async () => {
    const { events } = await axiosDriver.send({
      method: 'POST',
      url: `${await server.refusedUrl()}/orders`,
      body: 'order=1',
      options: fast,
    });
    expect(attemptEnds(events).map((e) => e.phase)).toEqual(['not-sent', 'not-sent', 'not-sent', 'not-sent']);
  });

  it.each([
    ['fetch', fetchDriver],
    ['ky', kyDriver],
  ])('%s cannot say which hop failed: an unkeyed POST to a refused port is sent once', async (_n, driver) => {
    const { events } = await driver.send({
      method: 'POST',
      url: `${await server.refusedUrl()}/orders`,
      body: 'order=1',
      options: fast,
    });
    expect(attemptEnds(events).map((e) => e.phase)).toEqual(['unknown']);
  });
});
