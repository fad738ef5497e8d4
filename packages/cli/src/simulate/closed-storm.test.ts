import { describe, expect, it } from 'vitest';
import {
  CLOSED_STORM_DEFAULTS,
  peakArrivals,
  percentile,
  simulateClosedStorm,
  simulateClosedStorms,
  WARM_UP_MS,
} from './closed-storm';
import { CLOSED_STORM_POLICIES, noRetriesPolicy, pRetryDefaultsPolicy } from './peers';
import { immediateRetryPolicy, type StormPolicy } from './storm';

const capacityPerSecond = (CLOSED_STORM_DEFAULTS.workers / CLOSED_STORM_DEFAULTS.serviceMs) * 1_000;

/** Wraps a custom policy to count its logical requests in flight, apart from the simulator's own count. */
function countingInFlight(policy: StormPolicy) {
  if (!('send' in policy)) throw new Error('a custom policy');
  const seen = { now: 0, max: 0 };
  const counted: StormPolicy = {
    name: policy.name,
    send: (fetchImpl, clock, context) => {
      const send = policy.send(fetchImpl, clock, context);
      return (url, init) => {
        seen.now++;
        seen.max = Math.max(seen.max, seen.now);
        return send(url, init).finally(() => {
          seen.now--;
        });
      };
    },
  };
  return { seen, counted };
}

describe('percentile', () => {
  it('is the nearest rank: the ceil(p · n)-th smallest', () => {
    expect(percentile([5, 1, 4, 2, 3], 0.5)).toBe(3); // ceil(2.5) = 3rd
    expect(percentile([5, 1, 4, 2, 3], 0.99)).toBe(5); // ceil(4.95) = 5th
    expect(percentile([5, 1, 4, 2, 3], 0)).toBe(1);
    // Ranks round up: ceil(0.26 · 4) = 2, ceil(0.6 · 4) = 3.
    expect(percentile([40, 10, 30, 20], 0.26)).toBe(20);
    expect(percentile([40, 10, 30, 20], 0.6)).toBe(30);
    const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100 … 1
    expect(percentile(hundred, 0.99)).toBe(99); // the 99th smallest, not the largest
    expect(percentile(hundred, 0.5)).toBe(50);
    expect(percentile([], 0.99)).toBe(0);
  });
});

describe('peakArrivals', () => {
  const timeline = (sent: readonly number[]) => sent.map((count, i) => ({ t: i * 100, sent: count }));

  it('divides the largest bucket from the stall on by the mean of the whole buckets in [1 s, stall)', () => {
    // Buckets 0–9 (warm-up) hold 50 each and are left out; 10–14 (1.0–1.5 s) hold 8, 10, 12, 10, 10:
    // a mean of 10. From 1.5 s on: 7, 30, 9. The 50s before the stall are not a peak.
    const result = peakArrivals(timeline([...Array(10).fill(50), 8, 10, 12, 10, 10, 7, 30, 9]), 1_500);
    expect(result).toEqual({ steadyPerBucket: 10, peakPerBucket: 30, peakVsSteady: 3 });
  });

  it('counts a bucket the stall begins in towards the peak, not the steady mean', () => {
    // The stall begins at 1.25 s, inside bucket 12 (1.2–1.3 s): steady is buckets 10 and 11 only.
    const result = peakArrivals(timeline([...Array(10).fill(0), 4, 6, 40, 1]), 1_250);
    expect(result).toEqual({ steadyPerBucket: 5, peakPerBucket: 40, peakVsSteady: 8 });
  });

  it('has no ratio without a steady bucket', () => {
    expect(peakArrivals(timeline([3, 4, 5]), 200, WARM_UP_MS).peakVsSteady).toBeNull();
  });
});

describe('simulateClosedStorm', () => {
  it('computes the measures as documented on a scenario checked by hand', async () => {
    // Two clients that never think, one worker of 100 ms: both send at 0; from then on one request
    // settles every 100 ms and its client sends the next at once, behind the other's (200 ms each).
    // The one sent at 1.4 s and the one sent at 1.5 s wait out the stall [1.5 s, 1.8 s): they start
    // at 1.8 s and 1.9 s and take 500 ms each. The request sent at 1.9 s ends at 2.1 s; the one
    // ending at 2 s starts none (requests start before durationMs).
    const report = await simulateClosedStorm({
      clients: 2,
      thinkMs: 0,
      workers: 1,
      serviceMs: 100,
      timeoutMs: 1_000,
      stallAt: 1_500,
      stallMs: 300,
      durationMs: 2_000,
      policy: noRetriesPolicy,
    });
    // Latencies: 100 (the first), 200 × 15, 500 × 2 — 18 requests.
    expect(report.logicalRequests).toBe(18);
    expect(report.p50Ms).toBe(200); // the 9th of 18
    expect(report.p99Ms).toBe(500); // the 18th of 18 (ceil(17.82))
    expect(report.timeline.map((bucket) => bucket.sent)).toEqual([
      2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1,
    ]);
    // Steady: buckets 1.0–1.5 s hold one attempt each; from the stall on, at most one.
    expect([report.steadyPerBucket, report.peakPerBucket, report.peakVsSteady]).toEqual([1, 1, 1]);
    // 10 attempts a second against a capacity of 10 a second.
    expect(report.steadyLoad).toBe(1);
    // First attempts in [1.5 s, 5.5 s): those sent at 1.5 s and 1.9 s, one attempt each.
    expect([report.windowRequests, report.windowAmplification]).toEqual([2, 1]);
    // The last start after a long wait (≥ 250 ms) was at 1.9 s: 100 ms after the stall's end.
    expect(report.recoveredAfterMs).toBe(100);
    expect([report.successRate, report.wasted, report.maxOutstanding, report.unfinished]).toEqual([
      1, 0, 2, 0,
    ]);
  });

  it('counts a request still running at the end with its age then, and as not succeeded', async () => {
    // One client, one request that the stall holds past the settle phase.
    const report = await simulateClosedStorm({
      clients: 1,
      thinkMs: 0,
      workers: 1,
      serviceMs: 100,
      timeoutMs: 100_000,
      stallAt: 1_450,
      stallMs: 10_000,
      durationMs: 11_450,
      settleMs: 0,
      policy: noRetriesPolicy,
    });
    // Requests at 0, 100, … 1400 settle in 100 ms; the one sent at 1.4 s pauses for the stall and
    // ends at 11.5 s, after the run (11.45 s).
    expect(report.unfinished).toBe(1);
    expect(report.logicalRequests).toBe(15);
    expect(report.successRate).toBe(14 / 15);
    expect(report.p99Ms).toBe(11_450 - 1_400);
  });

  it('keeps at most one request outstanding per client, and a stall blocks nearly all of them', async () => {
    const { seen, counted } = countingInFlight(immediateRetryPolicy(3));
    const report = await simulateClosedStorm({ policy: counted });
    expect(seen.max).toBe(report.maxOutstanding);
    expect(seen.max).toBeLessThanOrEqual(CLOSED_STORM_DEFAULTS.clients);
    expect(seen.max).toBeGreaterThan(CLOSED_STORM_DEFAULTS.clients * 0.9);
    expect(seen.now).toBe(0);
  }, 30_000);

  /** Every policy, on a server that never stalls: each request succeeds with one attempt. */
  async function expectHealthyRun(policies: readonly StormPolicy[]) {
    const reports = await simulateClosedStorms({ stallMs: 0, policies });
    expect(reports.map((report) => report.policy)).toEqual(policies.map((policy) => policy.name));
    for (const report of reports) {
      // Throughput from the count of requests, apart from the timeline: 15 s at 60 % of 1,600/s.
      const load = report.logicalRequests / 15 / capacityPerSecond;
      expect(load).toBeGreaterThan(0.57);
      expect(load).toBeLessThan(0.63);
      expect(report.steadyLoad).toBeGreaterThan(0.57);
      expect(report.steadyLoad).toBeLessThan(0.63);
      expect([report.successRate, report.windowAmplification, report.wasted]).toEqual([1, 1, 0]);
      expect(report.attempts).toBe(report.logicalRequests);
      // Staggered starts: no start-up wave in the first 100 ms.
      expect(report.timeline[0]?.sent).toBeLessThan(report.steadyPerBucket * 1.5);
      // p99 is a service time and a short wait.
      expect(report.p99Ms).toBeLessThan(20);
    }
  }

  it('offers ~60 % of capacity without a stall, and every policy then succeeds with one attempt', async () => {
    // The throttle included: a fresh one with many requests in flight refuses none of them.
    await expectHealthyRun(CLOSED_STORM_POLICIES);
  }, 60_000);

  it('without retries: success drops in a stall, and amplification is exactly 1', async () => {
    const report = await simulateClosedStorm({ policy: noRetriesPolicy });
    expect(report.windowRequests).toBeGreaterThan(1_000);
    expect(report.windowAmplification).toBe(1);
    expect(report.attempts).toBe(report.logicalRequests);
    expect(report.successRate).toBeLessThan(0.99);
    expect(report.failures).toEqual({ TimeoutError: report.failed });
    expect(report.p99Ms).toBe(CLOSED_STORM_DEFAULTS.timeoutMs); // over 1 % timed out
    expect(report.wasted).toBeGreaterThan(0);
    expect(report.recoveredAfterMs).not.toBeNull();
  }, 30_000);

  it("with p-retry: the stall's requests are retried until they succeed", async () => {
    const report = await simulateClosedStorm({ policy: pRetryDefaultsPolicy });
    expect(report.windowAmplification).toBeGreaterThan(1.05);
    expect(report.successRate).toBe(1);
    expect(report.p99Ms).toBeGreaterThan(2_000); // a timeout, a 1 s wait, and more
  }, 30_000);

  it('states lower bounds that every policy which makes the stalled requests succeed stays above', async () => {
    for (const policy of [pRetryDefaultsPolicy, { name: 'Retryline defaults', options: {} }] as const) {
      const report = await simulateClosedStorm({ policy });
      expect(report.successRate).toBe(1);
      // Some window requests were surely caught: the bound is above 1, and no policy that gets
      // every one of them through can send fewer attempts or finish its slowest 1 % sooner.
      expect(report.amplificationBound).toBeGreaterThan(1.05);
      expect(report.windowAmplification).toBeGreaterThanOrEqual(report.amplificationBound);
      expect(report.p99BoundMs).toBeGreaterThan(CLOSED_STORM_DEFAULTS.stallMs / 2);
      expect(report.p99Ms).toBeGreaterThanOrEqual(report.p99BoundMs);
    }
  }, 60_000);

  it('is deterministic for a seed, and another seed gives other think times', async () => {
    const config = { clients: 100, policy: immediateRetryPolicy(2) };
    const first = await simulateClosedStorm(config);
    expect(await simulateClosedStorm(config)).toEqual(first);
    const other = await simulateClosedStorm({ ...config, seed: 2 });
    expect(other.timeline).not.toEqual(first.timeline);
  }, 30_000);

  it('rejects a scenario it cannot run, naming the field', async () => {
    await expect(simulateClosedStorm({ clients: 0 })).rejects.toMatchObject({
      name: 'InvalidOptionsError',
      message: 'Expected clients to be a positive integer, got 0',
      option: 'clients',
    });
    await expect(simulateClosedStorm({ thinkMs: -1 })).rejects.toMatchObject({ option: 'thinkMs' });
    await expect(simulateClosedStorm({ stallAt: 14_000 })).rejects.toThrow(
      /stallAt \+ stallMs to be at most durationMs/,
    );
  });
});
