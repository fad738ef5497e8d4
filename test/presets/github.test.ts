import { presets } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';
import { drivers, sendFetch, sendThrough, spread, statusOf, T0_SECONDS } from './harness';

// presets.github(): each rule of "Exceeding the rate limit"
// (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#exceeding-the-rate-limit),
// played by a loopback server answering as GitHub does. The virtual clock starts at T0, so a reset
// in epoch seconds is counted from it.
const server = useFaultServer();
const url = (path: string) => `${server.url}${path}`;
const ok = { status: 200, body: '{}' };

describe('presets.github()', () => {
  it('primary rate limit: a 403 with x-ratelimit-remaining: 0 waits until x-ratelimit-reset, then retries', async () => {
    server.script('/repos/o/r', [
      {
        status: 403,
        headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(T0_SECONDS + 30) },
      },
      ok,
    ]);
    const sent = await sendFetch(presets.github(), url('/repos/o/r'));
    expect(sent.status).toBe(200);
    expect(server.requests('/repos/o/r')).toHaveLength(2);
    expect(sent.waits[0]?.hint?.delay).toBe(30_000);
    // Never sooner than the reset; spread by at most a second so clients told the same reset part.
    expect(sent.waits[0]?.delay).toBe(spread(30_000, sent.draws[1] as number));
  });

  it('primary rate limit: a 429 with x-ratelimit-remaining: 0 waits until the reset too', async () => {
    server.script('/user', [
      {
        status: 429,
        headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(T0_SECONDS + 12) },
      },
      ok,
    ]);
    const sent = await sendFetch(presets.github(), url('/user'));
    expect(sent.status).toBe(200);
    expect(sent.waits[0]?.delay).toBe(spread(12_000, sent.draws[1] as number));
  });

  it('primary rate limit: a reset further away than maxRetryAfter is not waited out; retryAt is the reset', async () => {
    const reset = T0_SECONDS + 1800;
    server.script('/search/code', [
      { status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) } },
      ok,
    ]);
    const sent = await sendFetch(presets.github(), url('/search/code'));
    expect(sent.status).toBe(403);
    expect(server.requests('/search/code')).toHaveLength(1);
    expect(sent.info?.stoppedBy).toBe('retry-after-too-long');
    expect(sent.info?.retryAt).toBe(reset * 1000);

    // With a longer maxRetryAfter, the half hour is waited out.
    server.script('/search/code', [
      { status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) } },
      ok,
    ]);
    const patient = await sendFetch({ ...presets.github(), maxRetryAfter: 3_600_000 }, url('/search/code'));
    expect(patient.status).toBe(200);
    expect(patient.waits[0]?.delay).toBeGreaterThanOrEqual(1_800_000);
  });

  it('secondary rate limit: a 403 with retry-after waits that many seconds', async () => {
    server.script('/repos/o/r/issues', [{ status: 403, headers: { 'retry-after': '5' } }, { status: 201 }]);
    const sent = await sendFetch(presets.github(), url('/repos/o/r/issues'));
    expect(sent.status).toBe(201);
    expect(sent.waits[0]?.delay).toBe(spread(5_000, sent.draws[1] as number));
  });

  it('secondary rate limit: retry-after comes first, even when x-ratelimit-remaining is 0 too', async () => {
    server.script('/repos/o/r/pulls', [
      {
        status: 429,
        headers: {
          'retry-after': '7',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(T0_SECONDS + 50),
        },
      },
      ok,
    ]);
    const sent = await sendFetch(presets.github(), url('/repos/o/r/pulls'));
    expect(sent.waits[0]?.hint?.delay).toBe(7_000);
  });

  it('secondary rate limit without retry-after or a spent quota: waits at least one minute', async () => {
    server.script('/repos/o/r/forks', [{ status: 429, headers: { 'x-ratelimit-remaining': '4990' } }, ok]);
    const sent = await sendFetch(presets.github(), url('/repos/o/r/forks'));
    expect(sent.status).toBe(200);
    expect(sent.waits[0]?.hint?.delay).toBe(60_000);
    expect(sent.waits[0]?.delay).toBe(60_000);
  });

  it('retries a rate-limited POST: the limiter refused it, so GitHub did nothing yet', async () => {
    server.script('/repos/o/r/issues', [{ status: 429, headers: { 'retry-after': '1' } }, { status: 201 }]);
    const sent = await sendFetch(presets.github(), url('/repos/o/r/issues'), { method: 'POST', body: '{}' });
    expect(sent.status).toBe(201);
    expect(server.requests('/repos/o/r/issues').map((request) => request.method)).toEqual(['POST', 'POST']);

    // A 502 on a POST may have been acted on: Retryline's default, not sent again.
    server.script('/repos/o/r/labels', [{ status: 502 }, { status: 201 }]);
    const failed = await sendFetch(presets.github(), url('/repos/o/r/labels'), {
      method: 'POST',
      body: '{}',
    });
    expect(failed.status).toBe(502);
    expect(server.requests('/repos/o/r/labels')).toHaveLength(1);
  });

  it('does not retry a 403 with no rate-limit headers: a missing permission, not a limit', async () => {
    server.script('/orgs/o/members', [{ status: 403, headers: { 'x-ratelimit-remaining': '4999' } }, ok]);
    const sent = await sendFetch(presets.github(), url('/orgs/o/members'));
    expect(sent.status).toBe(403);
    expect(server.requests('/orgs/o/members')).toHaveLength(1);
  });

  it('retries a 5xx on a GET by Retryline’s defaults', async () => {
    server.script('/repos/o/r/commits', [{ status: 502 }, ok]);
    expect((await sendFetch(presets.github(), url('/repos/o/r/commits'))).status).toBe(200);
    expect(server.requests('/repos/o/r/commits')).toHaveLength(2);
  });

  it('throws after a specific number of retries: 2, then the last answer', async () => {
    server.script('/rate_limited', [{ status: 429, headers: { 'retry-after': '1' } }]);
    const sent = await sendFetch(presets.github(), url('/rate_limited'));
    expect(sent.status).toBe(429);
    expect(server.requests('/rate_limited')).toHaveLength(3);
    expect(sent.info?.stoppedBy).toBe('exhausted');
  });

  it.each(drivers.map((driver) => [driver.name, driver] as const))(
    'through %s: a secondary 429 waits the minute; a primary 403 waits for its reset',
    async (_name, driver) => {
      server.script('/notifications', [{ status: 429 }, ok]);
      const secondary = await sendThrough(driver, presets.github(), {
        method: 'GET',
        url: url('/notifications'),
      });
      expect(statusOf(secondary)).toBe(200);
      expect(secondary.waits.map((wait) => wait.delay)).toEqual([60_000]);

      server.script('/events', [
        {
          status: 403,
          headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(T0_SECONDS + 20) },
        },
        ok,
      ]);
      const primary = await sendThrough(driver, presets.github(), { method: 'GET', url: url('/events') });
      expect(statusOf(primary)).toBe(200);
      expect(primary.waits[0]?.hint?.delay).toBe(20_000);
      expect(primary.waits[0]?.delay).toBe(spread(20_000, primary.draws[1] as number));
    },
  );
});
