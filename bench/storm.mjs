// A retry storm after a 2-second stall, through the CLI's simulator (`simulateStorm`, virtual time):
// each of STORM_POLICIES (a naive client, the peers' defaults, Retryline's defaults, Retryline with
// its breaker) on two scenarios — (a) the stall with timeouts only (STORM_DEFAULTS) and (b) the same
// server shedding load (503 at once when 320 requests, half a second of work, are queued) — for
// seeds 1–5. Keeps seed 1's figures, their min/max over all seeds, and seed 1's 100 ms timeline.
// Run after `pnpm build`: `node bench/storm.mjs`; writes bench/results/storm.json and prints a table.
import {
  INCIDENT_TAIL_MS,
  STORM_DEFAULTS,
  STORM_POLICIES,
  simulateStorm,
} from '../packages/cli/dist/index.js';
import { writeResult } from './lib/results.mjs';

const SEEDS = [1, 2, 3, 4, 5];
const METRICS = [
  'incidentAmplification',
  'amplification',
  'recoveredAfterMs',
  'successRate',
  'wasted',
  'peakQueue',
];

const SCENARIOS = [
  { id: 'timeouts-only', title: 'stall, timeouts only', config: {} },
  { id: 'load-shedding', title: 'stall with load shedding', config: { queueLimit: 320 } },
];

/** min/max of one metric over all seeds; a run that never recovered (`null`) makes the max `null`. */
function range(values) {
  if (values.some((value) => value === null)) {
    const known = values.filter((value) => value !== null);
    return { min: known.length > 0 ? Math.min(...known) : null, max: null };
  }
  return { min: Math.min(...values), max: Math.max(...values) };
}

const started = performance.now();
const scenarios = [];
for (const scenario of SCENARIOS) {
  const policies = [];
  for (const policy of STORM_POLICIES) {
    const reports = [];
    for (const seed of SEEDS) reports.push(await simulateStorm({ ...scenario.config, seed, policy }));
    const [first] = reports;
    const metrics = Object.fromEntries(
      METRICS.map((metric) => [
        metric,
        { seed1: first[metric], ...range(reports.map((report) => report[metric])) },
      ]),
    );
    policies.push({
      policy: policy.name,
      ...metrics,
      failuresSeed1: first.failures,
      timeline: first.timeline.map(({ t, sent, served, queue }) => ({ t, sent, served, queue })),
    });
  }
  const { seed: _seed, ...server } = { ...STORM_DEFAULTS, ...scenario.config };
  scenarios.push({
    id: scenario.id,
    title: scenario.title,
    // Infinity is not JSON: an unbounded queue is written as null.
    server: { ...server, queueLimit: Number.isFinite(server.queueLimit) ? server.queueLimit : null },
    // An object rather than a list, so the JSON keeps one shape under the repository's formatter.
    seeds: { from: SEEDS[0], to: SEEDS.at(-1) },
    policies,
  });
}
const seconds = (performance.now() - started) / 1000;

const path = writeResult('storm', {
  command: 'node bench/storm.mjs',
  runSeconds: Number(seconds.toFixed(1)),
  incidentTailMs: INCIDENT_TAIL_MS,
  scenarios,
});

const fmt = (value, digits) => (value === null ? 'never' : value.toFixed(digits));
for (const scenario of scenarios) {
  console.log(`\n${scenario.title} (seeds ${SEEDS[0]}–${SEEDS.at(-1)}; seed 1 [min–max])`);
  console.log(
    `${'policy'.padEnd(22)}${'incident amp.'.padStart(22)}${'recovered after ms'.padStart(24)}${'success'.padStart(22)}`,
  );
  for (const row of scenario.policies) {
    const cell = ({ seed1, min, max }, digits) =>
      `${fmt(seed1, digits)} [${fmt(min, digits)}–${fmt(max, digits)}]`;
    console.log(
      `${row.policy.padEnd(22)}${cell(row.incidentAmplification, 2).padStart(22)}` +
        `${cell(row.recoveredAfterMs, 0).padStart(24)}${cell(row.successRate, 3).padStart(22)}`,
    );
  }
}
console.log(`\n${STORM_POLICIES.length * SCENARIOS.length * SEEDS.length} runs in ${seconds.toFixed(1)} s`);
console.log(`written to ${path}`);
