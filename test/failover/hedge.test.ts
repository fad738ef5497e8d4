import { type HttpRetryOptions, type RetrylineEvent, retryBudget } from '@retryline/core';
import { failover, hedging } from '@retryline/core/failover';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, type Adapter, endpointOf, isHedge } from './clients';
import { answer, type Handler, useServices } from './loopback';

/**
 * Hedged requests end to end, through every adapter, over real loopback sockets: a server that
 * answers the first request it gets slowly and every other at once. Counts and what the server
 * saw of each exchange, never timings.
 */

const start = useServices();

const fast: HttpRetryOptions = { retries: 2, backoff: 1, jitter: 'none' };
// Longer than any test waits: an answer this slow is one the hedge beat.
const NEVER_MS = 10_000;
// Slow enough that a hedge sent 50 ms in would be answered first.
const SLOW_MS = 300;

/** A handler answering the first request `slowMs` late ('slow'), every later one at once ('fast'). */
function slowFirst(slowMs: number): Handler {
  let count = 0;
  return (_req, res) => {
    if (count++ > 0) return answer(res, 200, 'fast');
    const timer = setTimeout(() => answer(res, 200, 'slow'), slowMs);
    res.on('close', () => clearTimeout(timer));
  };
}

/**
 * A budget with room for one hedge per request: hedges are held to the budget's ratio (the
 * default, 10 %, has room for one in ten requests), and these tests hedge a client's first.
 */
const roomForHedges = () => retryBudget({ ratio: 1, minPerSecond: 0 });

const hedgeEvents = (events: readonly RetrylineEvent[]) => events.filter(isHedge);

describe.each(ADAPTERS)('$name with hedge: hedging(50)', (adapter: Adapter) => {
  it('takes a GET’s answer from the hedge, and closes the slow request’s connection unanswered', async () => {
    const server = await start(slowFirst(NEVER_MS));
    const client = adapter.create(server.url, { ...fast, hedge: hedging(50), budget: roomForHedges() });

    const result = await client.send('GET', `${server.url}/report`);

    expect(result).toEqual({ status: 200, body: 'fast' });
    expect(server.received.map((each) => each.url)).toEqual(['/report', '/report']);
    const slow = server.received[0];
    await slow?.closed;
    expect(slow?.closedEarly).toBe(true);
  });

  it('reports the hedge as its own attempt pair, overlapping the attempt it hedges, and who answered', async () => {
    const server = await start(slowFirst(NEVER_MS));
    const client = adapter.create(server.url, { ...fast, hedge: hedging(50), budget: roomForHedges() });

    await client.send('GET', `${server.url}/report`);

    const attempts = client.events.filter(
      (event) => event.type === 'attempt-start' || event.type === 'attempt-end',
    );
    const shape = attempts.map((event) => {
      const { type, attempt } = event as { type: string; attempt: number };
      const answeredBy = (event as { answeredBy?: string }).answeredBy;
      return `${type} ${attempt}${isHedge(event) ? ' hedge' : ''}${answeredBy ? ` answeredBy ${answeredBy}` : ''}`;
    });
    // The hedge starts after the attempt it hedges and ends first, with the answer.
    expect(shape).toEqual([
      'attempt-start 1',
      'attempt-start 1 hedge',
      'attempt-end 1 hedge',
      'attempt-end 1 answeredBy hedge',
    ]);
    const [, hedgeStart, hedgeEnd, end] = attempts as [
      RetrylineEvent,
      RetrylineEvent,
      RetrylineEvent,
      RetrylineEvent,
    ];
    expect(hedgeStart).toMatchObject({ hedge: true });
    expect(hedgeEnd).toMatchObject({ hedge: true, outcome: 'success', status: 200 });
    expect(end).toMatchObject({ status: 200 });
    expect(client.events.filter((event) => event.type === 'request-end')).toMatchObject([
      { outcome: 'success', attempts: 1, status: 200 },
    ]);
  });

  it('cancels a hedge that lost: it ends aborted and its connection is closed unanswered', async () => {
    let count = 0;
    const server = await start((_req, res) => {
      // The first request answers once the hedge is out; the hedge would answer much later.
      const first = count++ === 0;
      const timer = setTimeout(
        () => answer(res, 200, first ? 'primary' : 'hedge'),
        first ? SLOW_MS : NEVER_MS,
      );
      res.on('close', () => clearTimeout(timer));
    });
    const client = adapter.create(server.url, { ...fast, hedge: hedging(50), budget: roomForHedges() });

    const result = await client.send('GET', `${server.url}/report`);

    expect(result).toEqual({ status: 200, body: 'primary' });
    expect(server.received).toHaveLength(2);
    const hedge = server.received[1];
    await hedge?.closed;
    expect(hedge?.closedEarly).toBe(true);
    const ends = client.events.filter((event) => event.type === 'attempt-end');
    expect(ends.find(isHedge)).toMatchObject({ attempt: 1, hedge: true, outcome: 'aborted' });
    expect(ends.find((event) => !isHedge(event))).toMatchObject({ attempt: 1, outcome: 'success' });
    expect(ends.find((event) => !isHedge(event))).not.toHaveProperty('answeredBy');
  });

  it('sends the hedge to the other endpoint', async () => {
    const shared = slowFirst(NEVER_MS);
    const one = await start(shared);
    const two = await start(shared);
    const client = adapter.create(one.url, {
      ...fast,
      hedge: hedging(50),
      budget: roomForHedges(),
      endpoints: failover([one.url, two.url]),
    });

    const result = await client.send('GET', '/report');

    expect(result).toEqual({ status: 200, body: 'fast' });
    expect(one.received).toHaveLength(1);
    expect(two.received).toHaveLength(1);
    const starts = client.events.filter((event) => event.type === 'attempt-start');
    expect(starts).toHaveLength(2);
    const [primary, hedge] = starts as [RetrylineEvent, RetrylineEvent];
    expect(isHedge(hedge)).toBe(true);
    expect(new Set([endpointOf(primary), endpointOf(hedge)])).toEqual(new Set([one.url, two.url]));
  });

  it('never hedges a POST, even one with an idempotency key', async () => {
    const server = await start(slowFirst(SLOW_MS));
    const client = adapter.create(server.url, {
      ...fast,
      hedge: hedging(50),
      budget: roomForHedges(),
      idempotencyKey: { header: 'Idempotency-Key' },
    });

    const result = await client.send('POST', `${server.url}/orders`, { body: '{"sku":1}' });

    expect(result).toEqual({ status: 200, body: 'slow' });
    expect(server.received).toHaveLength(1);
    expect(hedgeEvents(client.events)).toEqual([]);
    // The same client hedges a GET to the same kind of server.
    const control = await start(slowFirst(SLOW_MS));
    expect(await client.send('GET', `${control.url}/orders`)).toEqual({ status: 200, body: 'fast' });
    expect(control.received).toHaveLength(2);
  });

  it('sends no hedge when the retry budget refuses one', async () => {
    const server = await start(slowFirst(SLOW_MS));
    const options: HttpRetryOptions = { ...fast, hedge: hedging(50), budget: roomForHedges() };
    const client = adapter.create(server.url, {
      ...options,
      // Its floor (10 a second) is for retries, never hedges.
      budget: retryBudget({ ratio: 0 }),
    });

    const result = await client.send('GET', `${server.url}/report`);

    expect(result).toEqual({ status: 200, body: 'slow' });
    expect(server.received).toHaveLength(1);
    expect(hedgeEvents(client.events)).toEqual([]);
    // With a budget that has room for it, the same request to the same kind of server is hedged.
    const control = await start(slowFirst(SLOW_MS));
    const funded = adapter.create(control.url, { ...options, budget: roomForHedges() });
    expect(await funded.send('GET', `${control.url}/report`)).toEqual({ status: 200, body: 'fast' });
    expect(control.received).toHaveLength(2);
  });
});
