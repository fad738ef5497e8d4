import { presets } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';
import { drivers, sendFetch, sendThrough, spread, statusOf, T0 } from './harness';

// presets.openai(): what OpenAI's SDKs do (https://github.com/openai/openai-node#retries,
// src/client.ts's shouldRetry and retryRequest) and the rate-limit headers OpenAI documents
// (https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers), played by a
// loopback server answering as OpenAI does.
const server = useFaultServer();
const url = (path: string) => `${server.url}${path}`;
const create = { method: 'POST', body: '{"model":"m","input":"hi"}' };
const ok = { status: 200, body: '{}' };

describe('presets.openai()', () => {
  it('obeys x-should-retry: false, even on a 503', async () => {
    server.script('/v1/responses', [{ status: 503, headers: { 'x-should-retry': 'false' } }, ok]);
    expect((await sendFetch(presets.openai(), url('/v1/responses'), create)).status).toBe(503);
    expect(server.requests('/v1/responses')).toHaveLength(1);
  });

  it('obeys x-should-retry: true, even on a 400', async () => {
    server.script('/v1/responses', [{ status: 400, headers: { 'x-should-retry': 'true' } }, ok]);
    expect((await sendFetch(presets.openai(), url('/v1/responses'), create)).status).toBe(200);
    expect(server.requests('/v1/responses')).toHaveLength(2);
  });

  it.each([408, 409, 429, 500, 503, 529])('retries a %i, on a POST as the SDKs do', async (status) => {
    server.script('/v1/chat/completions', [{ status }, ok]);
    expect((await sendFetch(presets.openai(), url('/v1/chat/completions'), create)).status).toBe(200);
    expect(server.requests('/v1/chat/completions').map((request) => request.method)).toEqual([
      'POST',
      'POST',
    ]);
  });

  it.each([400, 401, 403, 404, 422])('does not retry a %i', async (status) => {
    server.script('/v1/chat/completions', [{ status }, ok]);
    expect((await sendFetch(presets.openai(), url('/v1/chat/completions'), create)).status).toBe(status);
    expect(server.requests('/v1/chat/completions')).toHaveLength(1);
  });

  it('retries a POST whose connection was reset: the SDKs retry every connection error', async () => {
    server.script('/v1/embeddings', [{ fault: 'reset-before-headers' }, ok]);
    expect((await sendFetch(presets.openai(), url('/v1/embeddings'), create)).status).toBe(200);
    expect(server.requests('/v1/embeddings')).toHaveLength(2);
  });

  it('waits the milliseconds retry-after-ms gives', async () => {
    server.script('/v1/responses', [{ status: 429, headers: { 'retry-after-ms': '1500' } }, ok]);
    const sent = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(sent.waits[0]?.hint?.delay).toBe(1500);
    expect(sent.waits[0]?.delay).toBe(spread(1500, sent.draws[1] as number));
  });

  it('waits the seconds retry-after gives, a fraction too', async () => {
    server.script('/v1/responses', [{ status: 429, headers: { 'retry-after': '2.5' } }, ok]);
    const sent = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(sent.waits[0]?.hint?.delay).toBe(2500);
    expect(sent.waits[0]?.delay).toBe(spread(2500, sent.draws[1] as number));
  });

  it('prefers retry-after-ms to retry-after', async () => {
    server.script('/v1/responses', [
      { status: 503, headers: { 'retry-after-ms': '250', 'retry-after': '9' } },
      ok,
    ]);
    const sent = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(sent.waits[0]?.hint?.delay).toBe(250);
  });

  it('reads a retry-after date as every client does', async () => {
    const at = new Date(T0 + 4000).toUTCString();
    server.script('/v1/responses', [{ status: 429, headers: { 'retry-after': at } }, ok]);
    const sent = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(sent.waits[0]?.hint?.delay).toBe(4000);
  });

  it('on a 429 without retry-after, waits for the reset of the spent limit: x-ratelimit-reset-tokens: 20s', async () => {
    server.script('/v1/responses', [
      {
        status: 429,
        headers: {
          'x-ratelimit-remaining-requests': '59',
          'x-ratelimit-reset-requests': '1s',
          'x-ratelimit-remaining-tokens': '0',
          'x-ratelimit-reset-tokens': '20s',
        },
      },
      ok,
    ]);
    const sent = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(sent.status).toBe(200);
    expect(sent.waits[0]?.hint?.delay).toBe(20_000);
    expect(sent.waits[0]?.delay).toBe(spread(20_000, sent.draws[1] as number));
  });

  it('when both limits are spent, waits for the later reset: 1m2.5s over 20ms', async () => {
    server.script('/v1/responses', [
      {
        status: 429,
        headers: {
          'x-ratelimit-remaining-requests': '0',
          'x-ratelimit-reset-requests': '20ms',
          'x-ratelimit-remaining-tokens': '0',
          'x-ratelimit-reset-tokens': '0m2.5s',
        },
      },
      ok,
    ]);
    const sent = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(sent.waits[0]?.hint?.delay).toBe(2500);
  });

  it('a reset further away than maxRetryAfter (6m0s) stops at once, retryAt the reset', async () => {
    server.script('/v1/responses', [
      { status: 429, headers: { 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '6m0s' } },
      ok,
    ]);
    const sent = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(sent.status).toBe(429);
    expect(server.requests('/v1/responses')).toHaveLength(1);
    expect(sent.info?.stoppedBy).toBe('retry-after-too-long');
    expect(sent.info?.retryAt).toBe(T0 + 360_000);
  });

  it('ignores a reset whose remaining count says quota is left, and resets on anything but a 429', async () => {
    const resets = { 'x-ratelimit-remaining-tokens': '9000', 'x-ratelimit-reset-tokens': '30s' };
    server.script('/v1/responses', [{ status: 429, headers: resets }, ok]);
    const left = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(left.waits[0]?.hint).toBeUndefined();
    expect(left.waits[0]?.delay).toBeLessThanOrEqual(500);

    server.script('/v1/responses', [
      { status: 503, headers: { 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '30s' } },
      ok,
    ]);
    const other = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(other.waits[0]?.hint).toBeUndefined();
  });

  it('ignores a hostile reset header (12 000 characters) and falls back to its backoff', async () => {
    // As long as a client takes a header (undici refuses 16 KB); parseGoDuration's own tests go to 100 000.
    server.script('/v1/responses', [
      {
        status: 429,
        headers: {
          'x-ratelimit-remaining-tokens': '0',
          'x-ratelimit-reset-tokens': `${'9'.repeat(12_000)}h`,
        },
      },
      ok,
    ]);
    const sent = await sendFetch(presets.openai(), url('/v1/responses'), create);
    expect(sent.status).toBe(200);
    const [first] = sent.events.filter((event) => event.type === 'attempt-end');
    expect(first).toMatchObject({ phase: 'response', status: 429 });
    expect(sent.waits[0]?.hint).toBeUndefined();
    expect(sent.waits[0]?.delay).toBeLessThanOrEqual(500);
  });

  it('backs off 0.5 s, 1 s, 2 s, 4 s, then 8 s at most, each × U(0.75, 1]', async () => {
    server.script('/v1/files', [{ status: 500 }]);
    const sent = await sendFetch({ ...presets.openai(), retries: 6 }, url('/v1/files'));
    const sdk = [500, 1000, 2000, 4000, 8000, 8000];
    sent.waits.forEach((wait, i) => {
      const d = sdk[i] as number;
      const r = sent.draws[i] as number;
      // The SDK's wait for this draw: d × (1 − 0.25 r′) spans [0.75 d, d] as r′ does [0, 1).
      expect(wait.delay).toBeCloseTo(d * (0.75 + 0.25 * r), 9);
      expect(wait.delay).toBeGreaterThanOrEqual(0.75 * d);
      expect(wait.delay).toBeLessThanOrEqual(d);
    });
    expect(sent.waits).toHaveLength(6);
  });

  it('makes 2 retries, the SDKs’ default', async () => {
    server.script('/v1/files', [{ status: 500 }]);
    expect((await sendFetch(presets.openai(), url('/v1/files'))).status).toBe(500);
    expect(server.requests('/v1/files')).toHaveLength(3);
  });

  it.each(drivers.map((driver) => [driver.name, driver] as const))(
    'through %s: a 429 waits for its spent limit’s reset, and x-should-retry: false stops a 500',
    async (_name, driver) => {
      server.script('/v1/responses', [
        {
          status: 429,
          headers: { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1s' },
        },
        ok,
      ]);
      const reset = await sendThrough(driver, presets.openai(), {
        method: 'POST',
        url: url('/v1/responses'),
        body: '{}',
      });
      expect(statusOf(reset)).toBe(200);
      expect(reset.waits[0]?.hint?.delay).toBe(1000);

      server.script('/v1/images', [{ status: 500, headers: { 'x-should-retry': 'false' } }, ok]);
      const stopped = await sendThrough(driver, presets.openai(), {
        method: 'POST',
        url: url('/v1/images'),
        body: '{}',
      });
      expect(statusOf(stopped)).toBe(500);
      expect(server.requests('/v1/images')).toHaveLength(1);
    },
  );
});
