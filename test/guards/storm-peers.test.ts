import {
  axiosRetryDefaultsPolicy,
  kyDefaultsPolicy,
  STORM_POLICIES,
  type StormPolicy,
  type StormReport,
  simulateStorm,
  simulateStorms,
} from '@retryline/cli';
import { describe, expect, it } from 'vitest';

// The storm comparison: immediate retries, axios-retry's defaults, ky's defaults,
// Retryline's defaults and Retryline with breaker, in the default scenario of
// packages/cli/src/simulate/storm.ts (seed 1). The peers are modelled from their installed
// sources (packages/cli/src/simulate/peers.ts). Figures are exact: time is virtual, draws seeded.
//
// Do Retryline's defaults beat every peer's defaults on both amplification and recovery? In this
// model they cannot: the server only ever times out, and neither ky's defaults
// (retryOnTimeout: false) nor axios-retry's (a timeout is ECONNABORTED, which its default condition
// excludes) retry a timeout, so both send each request exactly once — 1.00×, the floor. These tests
// pin what does hold, and state the rest as it is.

const figures = (report: StormReport) =>
  [
    `${report.policy}:`,
    `incident amplification ${report.incidentAmplification.toFixed(3)}×;`,
    `recovery ${report.recoveredAfterMs === null ? 'never' : `${report.recoveredAfterMs} ms after the stall`};`,
    `success ${(report.successRate * 100).toFixed(1)} %;`,
    `wasted ${report.wasted} of ${report.served} served;`,
    `failures ${JSON.stringify(report.failures)}`,
  ].join(' ');

// The storm policies run once (about 7 s), when a test first needs them, and print their figures.
let all: Promise<Map<string, StormReport>> | undefined;
function reports(): Promise<Map<string, StormReport>> {
  all ??= simulateStorms({ policies: STORM_POLICIES }).then((done) => {
    for (const report of done) console.log(figures(report));
    return new Map(done.map((report) => [report.policy, report]));
  });
  return all;
}
async function report(policy: StormPolicy | string): Promise<StormReport> {
  const name = typeof policy === 'string' ? policy : policy.name;
  const found = (await reports()).get(name);
  if (!found) throw new Error(`no report for ${name}`);
  return found;
}

describe("the storm, Retryline's defaults against the peers' (seed 1)", () => {
  it("Retryline's defaults keep incident amplification under 1.2× and recover within 2 s", async () => {
    const retryline = await report('Retryline defaults');
    expect(retryline.incidentAmplification).toBeLessThan(1.2);
    expect(retryline.recoveredAfterMs).not.toBeNull();
    expect(retryline.recoveredAfterMs).toBeLessThanOrEqual(2_000);
  }, 60_000);

  it('beat immediate retries on amplification, recovery and success', async () => {
    const [retryline, immediate] = [await report('Retryline defaults'), await report('immediate retries ×3')];
    expect(immediate.incidentAmplification).toBeCloseTo(4, 5);
    expect(immediate.recoveredAfterMs).toBeNull();
    expect(retryline.incidentAmplification).toBeLessThan(immediate.incidentAmplification);
    expect(retryline.successRate).toBeGreaterThan(immediate.successRate);
  }, 60_000);

  it("ky's and axios-retry's defaults send every request once here: they do not retry a timeout", async () => {
    const retryline = await report('Retryline defaults');
    for (const policy of [kyDefaultsPolicy, axiosRetryDefaultsPolicy]) {
      const peer = await report(policy);
      expect(peer.incidentAmplification).toBe(1);
      expect(peer.attempts).toBe(peer.logicalRequests);
      expect(peer.recoveredAfterMs).not.toBeNull();
      // So Retryline's defaults do not beat every peer's on both counts in this model: the peers
      // add no load at all, and Retryline's retries of the stall's first second add a little.
      expect(retryline.incidentAmplification).toBeGreaterThan(peer.incidentAmplification);
      expect(retryline.recoveredAfterMs).toBeGreaterThanOrEqual(
        peer.recoveredAfterMs ?? Number.POSITIVE_INFINITY,
      );
    }
  }, 60_000);

  it('Retryline with breaker sheds the load at once, and its breaker stays open for the rest of the run', async () => {
    const breaker = await report('Retryline + breaker');
    expect(breaker.incidentAmplification).toBeLessThan(1.2);
    expect(breaker.recoveredAfterMs).not.toBeNull();
    // openMs defaults to 30 s: longer than the 8 s left of the run, so it fails every later request fast.
    expect(breaker.failures).toHaveProperty('CircuitOpenError');
  }, 60_000);

  it('is deterministic: the same seed gives the same figures (a shorter scenario)', async () => {
    const short = { durationMs: 6_000, stallAt: 2_000, seed: 5 };
    for (const policy of STORM_POLICIES) {
      const [first, second] = [
        await simulateStorm({ ...short, policy }),
        await simulateStorm({ ...short, policy }),
      ];
      expect(second).toEqual(first);
    }
  }, 60_000);
});
