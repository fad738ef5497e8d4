import {
  defaultGuardsPolicy,
  guardsOffPolicy,
  immediateRetryPolicy,
  type StormPolicy,
  type StormReport,
  simulateStorm,
} from '@retryline/cli';
import { describe, expect, it } from 'vitest';
import { BUCKET_MS } from '../../packages/cli/src/simulate/storm';

// A retry storm after a 2-second database stall: a fake clock, a
// simulated server of fixed capacity that stalls for 2 s, Retryline's real fetch adapter as the
// client. Time is virtual and every draw seeded, so these figures are exact for the default
// scenario (see packages/cli/src/simulate/storm.ts) and the same on every machine.

const figures = (report: StormReport) =>
  [
    `${report.policy}:`,
    `amplification ${report.amplification.toFixed(2)}× overall,`,
    `${report.incidentAmplification.toFixed(2)}× in the incident;`,
    `backlog ${report.recoveredAfterMs === null ? 'never cleared' : `cleared ${report.recoveredAfterMs} ms after the stall`};`,
    `success ${(report.successRate * 100).toFixed(1)} %;`,
    `wasted ${report.wasted} of ${report.served} served;`,
    `peak queue ${report.peakQueue}`,
  ].join(' ');

// Each policy runs once, when a test first needs it, and prints its figures (the closing note quotes them).
const runs = new Map<StormPolicy, Promise<StormReport>>();
function run(policy: StormPolicy): Promise<StormReport> {
  let report = runs.get(policy);
  if (!report) {
    report = simulateStorm({ policy });
    report.then((done) => console.log(figures(done)));
    runs.set(policy, report);
  }
  return report;
}
const immediate = immediateRetryPolicy(3);

/** Requests waiting for a worker at `t` (a bucket's queue is taken at its end). */
const queueAt = (report: StormReport, t: number) =>
  report.timeline.find((bucket) => bucket.t + BUCKET_MS >= t)?.queue ?? Number.NaN;

describe('a retry storm after a 2-second database stall', () => {
  it('with the default guards, amplification stays under 1.2× and the backlog clears within 2 s', async () => {
    const guarded = await run(defaultGuardsPolicy);
    expect(guarded.incidentAmplification).toBeLessThan(1.2);
    expect(guarded.recoveredAfterMs).not.toBeNull();
    expect(guarded.recoveredAfterMs).toBeLessThanOrEqual(2_000);
    // The budget is what held the line: it refused retries during the incident.
    expect(guarded.failures).toHaveProperty('RetryBudgetExhaustedError');
    expect(guarded.unfinished).toBe(0);
  });

  it('with the guards off, the same retries and backoff keep the server saturated after the stall', async () => {
    const [guarded, unguarded] = await Promise.all([run(defaultGuardsPolicy), run(guardsOffPolicy)]);
    const meetsBoth =
      unguarded.incidentAmplification < 1.2 &&
      unguarded.recoveredAfterMs !== null &&
      unguarded.recoveredAfterMs <= 2_000;
    expect(meetsBoth).toBe(false);
    expect(unguarded.incidentAmplification).toBeGreaterThanOrEqual(1.2);
    expect(unguarded.recoveredAfterMs).toBeNull();
    // Metastable: 2 s of stall, and the backlog is longer at the end of the run than when it ended.
    const { stallAt, stallMs, durationMs } = unguarded.scenario;
    expect(queueAt(unguarded, durationMs)).toBeGreaterThan(queueAt(unguarded, stallAt + stallMs));
    expect(unguarded.successRate).toBeLessThan(guarded.successRate);
    expect(unguarded.wasted).toBeGreaterThan(guarded.wasted);
  });

  it('three immediate retries, written as a plain loop, are worse still', async () => {
    const [unguarded, naive] = await Promise.all([run(guardsOffPolicy), run(immediate)]);
    expect(naive.recoveredAfterMs).toBeNull();
    expect(naive.incidentAmplification).toBeGreaterThan(unguarded.incidentAmplification);
    expect(naive.peakQueue).toBeGreaterThan(unguarded.peakQueue);
  });

  it('is deterministic: the same seed gives the same report', async () => {
    const guarded = await run(defaultGuardsPolicy);
    expect(await simulateStorm({ policy: defaultGuardsPolicy })).toEqual(guarded);
  });
});
