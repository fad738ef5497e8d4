/**
 * A guard's wait is reported like any other wait, and RetryInfo's docs say "a wait an abort cut
 * short counts what passed". Probes the pacing wait cut by an abort.
 */
import { pacing, seededRandom, virtualClock } from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { expect, it } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

const server = useFaultServer();

it("a pacing wait cut short by the caller's abort counts what passed in getRetryInfo", async () => {
  const clock = virtualClock(Date.UTC(2026, 0, 1));
  server.script('/v1/a', [{ status: 429, headers: { 'retry-after': '10' } }]);
  const client = retryFetch(fetch, { clock, random: seededRandom(1), retries: 0, pacing: pacing() });
  await client(`${server.url}/v1/a`);
  const controller = new AbortController();
  const waiting = settle(client(`${server.url}/v1/a`, { signal: controller.signal }));
  while (clock.pending() === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  await clock.advance(4_000);
  controller.abort();
  const { error } = await waiting;
  expect(error).toBe(controller.signal.reason);
  expect(getRetryInfo(error)).toMatchObject({ outcome: 'aborted', attempts: 0 });
  // Four seconds were spent waiting for pacing before the abort.
  expect(getRetryInfo(error)?.totalDelay).toBe(4_000);
  expect(getRetryInfo(error)?.delays).toEqual([{ retry: 0, delay: 4_000, reason: 'pacing' }]);
});
