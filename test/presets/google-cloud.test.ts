import { presets } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { useFaultServer } from '../support/use-fault-server';
import { drivers, sendFetch, sendThrough, statusOf } from './harness';

// presets.googleCloud(): Google's retry strategy (https://cloud.google.com/storage/docs/retry-strategy,
// https://cloud.google.com/iam/docs/retry-strategy) with the Node.js client's defaults
// (https://github.com/googleapis/nodejs-storage/blob/main/src/storage.ts), played by a loopback server.
const server = useFaultServer();
const url = (path: string) => `${server.url}${path}`;
const ok = { status: 200, body: '{}' };

describe('presets.googleCloud()', () => {
  it.each([408, 429, 500, 502, 503, 504, 599])('retries a %i on an idempotent request', async (status) => {
    server.script('/storage/v1/b/bucket/o', [{ status }, ok]);
    expect((await sendFetch(presets.googleCloud(), url('/storage/v1/b/bucket/o'))).status).toBe(200);
    expect(server.requests('/storage/v1/b/bucket/o')).toHaveLength(2);
  });

  it.each([400, 401, 403, 404, 412])('does not retry a %i: the request must change first', async (status) => {
    server.script('/storage/v1/b/bucket/o', [{ status }, ok]);
    expect((await sendFetch(presets.googleCloud(), url('/storage/v1/b/bucket/o'))).status).toBe(status);
    expect(server.requests('/storage/v1/b/bucket/o')).toHaveLength(1);
  });

  it('does not retry a request that is not idempotent: a 503 on a POST is not sent again', async () => {
    server.script('/pubsub/v1/topics/t:publish', [{ status: 503 }, ok]);
    const sent = await sendFetch(presets.googleCloud(), url('/pubsub/v1/topics/t:publish'), {
      method: 'POST',
      body: '{}',
    });
    expect(sent.status).toBe(503);
    expect(server.requests('/pubsub/v1/topics/t:publish')).toHaveLength(1);
  });

  it('retries a TCP disconnect on an idempotent request, and not on a POST', async () => {
    server.script('/storage/v1/b/bucket', [{ fault: 'reset-before-headers' }, ok]);
    expect((await sendFetch(presets.googleCloud(), url('/storage/v1/b/bucket'))).status).toBe(200);
    expect(server.requests('/storage/v1/b/bucket')).toHaveLength(2);

    server.script('/storage/v1/b', [{ fault: 'reset-before-headers' }, ok]);
    await expect(
      sendFetch(presets.googleCloud(), url('/storage/v1/b'), { method: 'POST', body: '{}' }),
    ).rejects.toThrow();
    expect(server.requests('/storage/v1/b')).toHaveLength(1);
  });

  it('waits 1 s + a random fraction, then 2 s +, 4 s +, up to a maximum of 64 s, and goes on at the maximum', async () => {
    server.script('/compute/v1/projects/p', [{ status: 503 }]);
    const sent = await sendFetch({ ...presets.googleCloud(), retries: 9 }, url('/compute/v1/projects/p'));
    expect(sent.waits.map((wait) => wait.capped)).toEqual([
      1000, 2000, 4000, 8000, 16000, 32000, 64000, 64000, 64000,
    ]);
    // random_number_milliseconds: up to a second, drawn anew before each retry.
    sent.waits.forEach((wait, i) => {
      expect(wait.delay).toBe(wait.capped + (sent.draws[i] as number) * 1000);
    });
  });

  it('stops at the 600 s deadline: no wait that would end past it is started', async () => {
    server.script('/compute/v1/projects/p', [{ status: 503 }]);
    const sent = await sendFetch({ ...presets.googleCloud(), retries: 100 }, url('/compute/v1/projects/p'));
    expect(sent.status).toBe(503);
    expect(sent.info?.stoppedBy).toBe('deadline');
    const waited = sent.waits.reduce((sum, wait) => sum + wait.delay, 0);
    expect(waited).toBeLessThan(600_000);
    // The next wait, 64 s at the cap plus up to a second, would have passed the deadline.
    expect(waited + 65_000).toBeGreaterThanOrEqual(600_000);
    expect(server.requests('/compute/v1/projects/p')).toHaveLength(sent.waits.length + 1);
  });

  it('makes 3 retries, the Node.js client’s default', async () => {
    server.script('/storage/v1/b/bucket/o/x', [{ status: 503 }]);
    expect((await sendFetch(presets.googleCloud(), url('/storage/v1/b/bucket/o/x'))).status).toBe(503);
    expect(server.requests('/storage/v1/b/bucket/o/x')).toHaveLength(4);
  });

  it.each(drivers.map((driver) => [driver.name, driver] as const))(
    'through %s: a 429 is retried after 1 s plus a random fraction',
    async (_name, driver) => {
      server.script('/bigquery/v2/projects/p/jobs', [{ status: 429 }, ok]);
      const sent = await sendThrough(driver, presets.googleCloud(), {
        method: 'GET',
        url: url('/bigquery/v2/projects/p/jobs'),
      });
      expect(statusOf(sent)).toBe(200);
      expect(sent.waits.map((wait) => wait.delay)).toEqual([1000 + (sent.draws[0] as number) * 1000]);
    },
  );
});
