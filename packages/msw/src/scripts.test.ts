import { virtualClock } from '@retryline/core';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Script } from './scope';
import { failTimes, flaky, outage, sequence } from './scripts';
import { networkError, status } from './steps';

const url = 'https://api.example/scripts';
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

/** Sends `n` GETs one after another and returns their statuses (0 for a network error). */
async function statuses(script: Script, n: number, headers?: Record<string, string>): Promise<number[]> {
  server.use(http.get(url, script));
  const seen: number[] = [];
  for (let i = 0; i < n; i++) {
    try {
      const response = await globalThis.fetch(url, headers ? { headers } : {});
      seen.push(response.status);
    } catch {
      seen.push(0);
    }
  }
  return seen;
}

describe('sequence()', () => {
  it('answers one step per attempt, then repeats the last', async () => {
    const script = sequence([status(503), networkError(), status(200)]);
    expect(await statuses(script, 5)).toEqual([503, 0, 200, 200, 200]);
    expect(script.attempts()).toBe(5);
  });

  it("answers a 500 that says so once an 'error' sequence is exhausted", async () => {
    server.use(http.get(url, sequence([status(503), status(200)], { exhausted: 'error' })));
    await globalThis.fetch(url);
    await globalThis.fetch(url);
    const third = await globalThis.fetch(url);
    expect(third.status).toBe(500);
    expect(third.headers.get('x-retryline-msw')).toBe('sequence-exhausted');
    expect(await third.text()).toBe('[Retryline msw] sequence exhausted: attempt 3 of a 2-step sequence');
  });

  it('starts over after reset()', async () => {
    const script = sequence([status(503), status(200)]);
    expect(await statuses(script, 2)).toEqual([503, 200]);
    script.reset();
    expect(script.attempts()).toBe(0);
    expect(await statuses(script, 2)).toEqual([503, 200]);
  });

  it('rejects steps that are not resolvers, naming the one', () => {
    expect(() => sequence([])).toThrow(
      new TypeError('[Retryline msw] Expected steps to be a non-empty array of steps, got an empty array'),
    );
    expect(() => sequence([status(503), 200 as never])).toThrow(
      'Expected steps[1] to be a function (an msw resolver), got 200',
    );
    expect(() => sequence([status(200)], { exhausted: 'throw' as never })).toThrow(
      "Expected exhausted to be one of 'repeat', 'error', got 'throw'",
    );
  });
});

describe('failTimes()', () => {
  it('fails n times with 503, then answers 200', async () => {
    expect(await statuses(failTimes(2), 4)).toEqual([503, 503, 200, 200]);
  });

  it('takes its own failure and success', async () => {
    expect(await statuses(failTimes(1, networkError(), status(204)), 3)).toEqual([0, 204, 204]);
  });

  it('never fails with n = 0, and rejects a count that is not one', async () => {
    expect(await statuses(failTimes(0), 1)).toEqual([200]);
    expect(() => failTimes(-1)).toThrow('[Retryline msw] Expected n to be a whole number ≥ 0, got -1');
  });
});

describe('outage()', () => {
  it('fails until the outage is over on the clock, counted from the first request', async () => {
    const clock = virtualClock(1_000_000);
    const script = outage({ for: 1_000, clock });
    expect(await statuses(script, 2)).toEqual([503, 503]);
    await clock.advance(999);
    expect(await statuses(script, 1)).toEqual([503]);
    await clock.advance(1);
    expect(await statuses(script, 1)).toEqual([200]);
  });

  it('starts at `from` when given', async () => {
    const clock = virtualClock(5_000);
    expect(await statuses(outage({ for: 1_000, from: 4_500, clock }), 1)).toEqual([503]);
    await clock.advance(500);
    expect(await statuses(outage({ for: 1_000, from: 4_500, clock }), 1)).toEqual([200]);
  });

  it('rejects a negative duration', () => {
    expect(() => outage({ for: -5 })).toThrow('[Retryline msw] Expected for to be a number ≥ 0, got -5');
  });
});

describe('flaky()', () => {
  it('fails the same attempts on every run with the same seed', async () => {
    const first = await statuses(flaky({ rate: 0.5, seed: 42 }), 20);
    const second = await statuses(flaky({ rate: 0.5, seed: 42 }), 20);
    expect(second).toEqual(first);
    expect(first).toContain(503);
    expect(first).toContain(200);
    const other = await statuses(flaky({ rate: 0.5, seed: 43 }), 20);
    expect(other).not.toEqual(first);
  });

  it('never fails at rate 0 and always fails at rate 1', async () => {
    expect(await statuses(flaky({ rate: 0, seed: 1 }), 5)).toEqual([200, 200, 200, 200, 200]);
    expect(await statuses(flaky({ rate: 1, seed: 1 }), 3)).toEqual([503, 503, 503]);
  });

  it('rejects a rate outside [0, 1] and a missing seed', () => {
    expect(() => flaky({ rate: 2, seed: 1 })).toThrow(
      new TypeError('[Retryline msw] Expected rate to be a number in [0, 1], got 2'),
    );
    expect(() => flaky({ rate: 0.5 } as never)).toThrow(
      '[Retryline msw] Expected seed to be a number or a string, got undefined',
    );
  });
});

describe('scope', () => {
  it('keeps one counter per value of a request header', async () => {
    const script = failTimes(1, status(503), status(200), { scope: { header: 'x-request-id' } });
    expect(await statuses(script, 2, { 'x-request-id': 'a' })).toEqual([503, 200]);
    expect(await statuses(script, 2, { 'x-request-id': 'b' })).toEqual([503, 200]);
    expect(script.attempts('a')).toBe(2);
    expect(script.attempts('b')).toBe(2);
    expect(script.attempts()).toBe(4);
  });

  it('counts requests without the header in the handler-wide counter', async () => {
    const script = failTimes(1, status(503), status(200), { scope: { header: 'x-request-id' } });
    expect(await statuses(script, 1, { 'x-request-id': 'a' })).toEqual([503]);
    expect(await statuses(script, 2)).toEqual([503, 200]);
    expect(script.attempts('a')).toBe(1);
  });

  it('keeps one counter per key a function returns', async () => {
    const script = sequence([status(503), status(200)], {
      scope: (request) => request.headers.get('x-tenant') ?? 'none',
    });
    expect(await statuses(script, 1, { 'x-tenant': 't1' })).toEqual([503]);
    expect(await statuses(script, 1, { 'x-tenant': 't2' })).toEqual([503]);
    expect(await statuses(script, 1, { 'x-tenant': 't1' })).toEqual([200]);
    expect(script.attempts('t1')).toBe(2);
  });

  it('gives each key its own generator and its own outage start', async () => {
    const byKey = flaky({ rate: 0.5, seed: 9, scope: { header: 'x-request-id' } });
    const a = await statuses(byKey, 10, { 'x-request-id': 'a' });
    const b = await statuses(byKey, 10, { 'x-request-id': 'b' });
    expect(b).toEqual(a);

    const clock = virtualClock();
    const down = outage({ for: 100, clock, scope: { header: 'x-request-id' } });
    expect(await statuses(down, 1, { 'x-request-id': 'a' })).toEqual([503]);
    await clock.advance(100);
    expect(await statuses(down, 1, { 'x-request-id': 'a' })).toEqual([200]);
    expect(await statuses(down, 1, { 'x-request-id': 'b' })).toEqual([503]);
  });

  it('rejects a scope it cannot read', () => {
    expect(() => failTimes(1, status(503), status(200), { scope: 'header' as never })).toThrow(
      "[Retryline msw] Expected scope to be 'handler', { header: string } or a function (request) => string, got 'header'",
    );
  });
});
