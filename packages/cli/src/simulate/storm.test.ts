import { InvalidOptionsError } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { simClock } from './sim-clock';
import {
  createStormServer,
  defaultGuardsPolicy,
  guardsOffPolicy,
  immediateRetryPolicy,
  STORM_DEFAULTS,
  type StormPolicy,
  type StormServerOptions,
  simulateStorm,
  simulateStorms,
} from './storm';

const serverOptions: StormServerOptions = {
  workers: 1,
  serviceMs: 100,
  stallAt: 0,
  stallMs: 0,
  queueLimit: Number.POSITIVE_INFINITY,
  slowWaitMs: 1_000,
};

/** Sends one request to `server` at the clock's current time; resolves with when and how it settled. */
function request(clock: ReturnType<typeof simClock>, fetchImpl: typeof fetch, signal?: AbortSignal) {
  return fetchImpl('http://storm.test/work', signal ? { signal } : {}).then(
    (response) => ({ at: clock.now(), status: response.status }),
    (error: unknown) => ({ at: clock.now(), error }),
  );
}

describe('the simulated server', () => {
  it('serves requests first come, first served, `workers` at a time, `serviceMs` each', async () => {
    const clock = simClock();
    const server = createStormServer(clock, { ...serverOptions, workers: 2 });
    const settled = Array.from({ length: 5 }, () => request(clock, server.fetch));
    expect(server.waiting()).toBe(3);
    await clock.run(1_000);
    expect((await Promise.all(settled)).map((s) => s.at)).toEqual([100, 100, 200, 200, 300]);
    expect(await settled[0]).toMatchObject({ status: 200 });
    expect([server.attempts(), server.served(), server.wasted(), server.peakQueue()]).toEqual([5, 5, 0, 3]);
  });

  it('lets a client give up at once but still spends a worker on its request (wasted work)', async () => {
    const clock = simClock();
    const server = createStormServer(clock, serverOptions);
    const controller = new AbortController();
    const abandoned = request(clock, server.fetch, controller.signal);
    const waiting = request(clock, server.fetch);
    clock.schedule(50, () => controller.abort(new Error('timed out')));
    await clock.run(1_000);
    expect(await abandoned).toMatchObject({ at: 50, error: new Error('timed out') });
    // The abandoned request held the only worker until 100, so the next one finished at 200.
    expect(await waiting).toMatchObject({ at: 200, status: 200 });
    expect([server.served(), server.wasted()]).toEqual([2, 1]);
  });

  it('pauses work in progress for the stall and starts nothing until it ends', async () => {
    const clock = simClock();
    const server = createStormServer(clock, { ...serverOptions, workers: 2, stallAt: 50, stallMs: 200 });
    const inProgress = request(clock, server.fetch);
    let duringStall: ReturnType<typeof request> | undefined;
    clock.schedule(100, () => {
      duringStall = request(clock, server.fetch);
    });
    await clock.run(1_000);
    expect((await inProgress).at).toBe(300); // 100 ms of work + the 200 ms stall
    expect((await duringStall)?.at).toBe(350); // a worker was free, but nothing starts before 250
    expect(server.served()).toBe(2);
  });

  it('answers 503 at once when its queue is full', async () => {
    const clock = simClock();
    const server = createStormServer(clock, { ...serverOptions, queueLimit: 1 });
    const served = [request(clock, server.fetch), request(clock, server.fetch)];
    const shed = request(clock, server.fetch);
    await clock.run(0);
    expect(await shed).toEqual({ at: 0, status: 503 });
    await clock.run(1_000);
    expect(await Promise.all(served)).toMatchObject([{ status: 200 }, { status: 200 }]);
    expect([server.attempts(), server.served()]).toEqual([3, 2]);
  });

  it("charges each 503 rejectMs of a worker's time, paid before the next queued request starts", async () => {
    const clock = simClock();
    const server = createStormServer(clock, { ...serverOptions, queueLimit: 1, rejectMs: 10 });
    const served = [request(clock, server.fetch), request(clock, server.fetch)];
    const shed = [request(clock, server.fetch), request(clock, server.fetch)];
    await clock.run(0);
    // The answers go at once; the work is owed.
    expect(await Promise.all(shed)).toEqual([
      { at: 0, status: 503 },
      { at: 0, status: 503 },
    ]);
    await clock.run(1_000);
    // The first request ends at 100; the worker then spends 2 × 10 ms on the rejections, so the
    // queued one starts at 120, not 100.
    expect((await Promise.all(served)).map((s) => s.at)).toEqual([100, 220]);
    expect([server.attempts(), server.served(), server.rejected()]).toEqual([4, 2, 2]);
  });

  it('rejects a request whose signal is already aborted, without counting an attempt', async () => {
    const clock = simClock();
    const server = createStormServer(clock, serverOptions);
    const reason = new Error('already');
    expect(await request(clock, server.fetch, AbortSignal.abort(reason))).toEqual({ at: 0, error: reason });
    expect(server.attempts()).toBe(0);
  });

  it('remembers the last request started after the stall that had waited slowWaitMs or more', async () => {
    const clock = simClock();
    const server = createStormServer(clock, { ...serverOptions, stallMs: 100, slowWaitMs: 150 });
    for (let i = 0; i < 3; i++) request(clock, server.fetch); // start at 100, 200, 300 (waits 100, 200, 300)
    clock.schedule(350, () => request(clock, server.fetch)); // starts at 400 after a 50 ms wait
    await clock.run(1_000);
    expect(server.lastSlowStart()).toBe(300);
    expect(server.oldestWait()).toBe(0);
  });
});

// Small scenarios, so each run takes a fraction of a second.
const quiet = { stallAt: 0, stallMs: 0, durationMs: 3_000 } as const;
const brokenThroughout = {
  workers: 10,
  serviceMs: 50,
  ratePerSecond: 100,
  timeoutMs: 200,
  stallAt: 1_000,
  stallMs: 3_000,
  durationMs: 4_000,
} as const;

describe('simulateStorm', () => {
  it('on a healthy server sends one attempt per request, all succeed and none is wasted', async () => {
    const report = await simulateStorm({ ...quiet, policy: guardsOffPolicy });
    const expected = (STORM_DEFAULTS.ratePerSecond * quiet.durationMs) / 1_000;
    expect(report.logicalRequests).toBeGreaterThan(expected * 0.9); // Poisson: close to rate × duration
    expect(report.logicalRequests).toBeLessThan(expected * 1.1);
    expect(report.attempts).toBe(report.logicalRequests);
    expect([report.amplification, report.successRate, report.wasted, report.recoveredAfterMs]).toEqual([
      1, 1, 0, 0,
    ]);
    expect(report.timeline).toHaveLength(30);
    expect(report.timeline.reduce((sum, bucket) => sum + bucket.sent, 0)).toBe(report.attempts);
  });

  it('counts every attempt of a request that arrived in the incident window', async () => {
    // Everything arriving during the stall times out on every attempt: 1 + 2 retries each.
    const report = await simulateStorm({ ...brokenThroughout, policy: immediateRetryPolicy(2) });
    expect(report.incidentRequests).toBeGreaterThan(200);
    expect(report.incidentAmplification).toBe(3);
    expect(report.failures).toMatchObject({ TimeoutError: expect.any(Number) });
    expect(report.recoveredAfterMs).toBeNull(); // the run ends with a backlog
    const once = await simulateStorm({
      ...brokenThroughout,
      policy: { name: 'once', options: { retry: false } },
    });
    expect(once.incidentAmplification).toBe(1);
  });

  it('shows the stall in the timeline: requests keep coming, nothing is served, the queue grows', async () => {
    const report = await simulateStorm({ ...brokenThroughout, policy: guardsOffPolicy });
    const stall = report.timeline.filter((bucket) => bucket.t >= 1_000 && bucket.t < 4_000);
    expect(stall.every((bucket) => bucket.served === 0 && bucket.sent > 0)).toBe(true);
    const queues = stall.map((bucket) => bucket.queue);
    expect(queues).toEqual([...queues].sort((a, b) => a - b));
    expect(report.timeline[0]).toMatchObject({ t: 0 });
  });

  it('sheds load with 503s once the server queue is full', async () => {
    const report = await simulateStorm({ ...brokenThroughout, queueLimit: 20, policy: guardsOffPolicy });
    expect(report.peakQueue).toBe(20);
    expect(report.failures['HTTP 503']).toBeGreaterThan(0);
  });

  it('runs a custom send with the server, the clock and the scenario', async () => {
    const seen: number[] = [];
    const probe: StormPolicy = {
      name: 'probe',
      send: (fetchImpl, clock, { timeoutMs }) => {
        seen.push(timeoutMs);
        return async (url, init) => {
          seen.push(clock.now());
          return fetchImpl(url, init);
        };
      },
    };
    const report = await simulateStorm({ ...quiet, durationMs: 500, policy: probe });
    expect(seen[0]).toBe(1_000);
    expect(seen.length).toBe(report.logicalRequests + 1);
    expect(report.succeeded).toBe(report.logicalRequests);
  });

  it('is deterministic for a seed, and another seed gives other arrivals', async () => {
    const config = { ...brokenThroughout, policy: defaultGuardsPolicy };
    const first = await simulateStorm(config);
    expect(await simulateStorm(config)).toEqual(first);
    const other = await simulateStorm({ ...config, seed: 2 });
    expect(other.timeline).not.toEqual(first.timeline);
  });

  it('compares several policies on the same scenario and arrivals', async () => {
    const reports = await simulateStorms({
      ...quiet,
      durationMs: 1_000,
      policies: [defaultGuardsPolicy, guardsOffPolicy],
    });
    expect(reports.map((report) => report.policy)).toEqual(['default guards', 'guards off']);
    expect(reports[0]?.logicalRequests).toBe(reports[1]?.logicalRequests);
  });

  it('rejects a scenario it cannot run, naming the field', async () => {
    await expect(simulateStorm({ workers: 0 })).rejects.toMatchObject({
      name: 'InvalidOptionsError',
      message: 'Expected workers to be a positive integer, got 0',
      option: 'workers',
    });
    await expect(simulateStorm({ stallAt: 14_000 })).rejects.toThrow(
      /stallAt \+ stallMs to be at most durationMs/,
    );
    expect(() => immediateRetryPolicy(-1)).toThrow(InvalidOptionsError);
  });
});
