// A retry storm after a 2-second stall, through the CLI's simulator (virtual time).
//
// Open loop (`simulateStorm`): each of STORM_POLICIES (a naive client, the peers' defaults,
// Retryline's defaults, Retryline with its breaker, Retryline with adaptive throttling) on two
// scenarios — (a) the stall with timeouts only (STORM_DEFAULTS) and (b) the same server shedding
// load (503 at once when 320 requests, half a second of work, are queued) — for seeds 1–5. Keeps
// seed 1's figures, their min/max over all seeds, and seed 1's 100 ms timeline; written under
// `scenarios`.
//
// Closed loop (`retryline simulate storm --clients 400 --format json`, through bench/lib/cli-json.mjs, since the
// package's index exports the open loop only): 400 clients at 60 % of a 1,600 req/s server, each
// waiting for its request before thinking and sending the next, for each of the CLI's closed-loop
// policies (those above plus no retries, axios-retry with exponentialDelay and p-retry's defaults),
// for seeds 1–3. Keeps the five measures (amplification in the stall's 4 s window, peak arrivals vs
// steady, success, p99 latency, recovery) with p50, wasted work and the requests started: seed 1,
// and min/max over the seeds, and seed 1's attempts per 100 ms (the README's chart); written under
// `closedLoop`, apart from `scenarios`, which bench/report.mjs reads with the open loop's metrics.
//
// Both loops once more without a stall: (a)'s server for seeds 1–5 (`openHealthy`) and the closed
// loop for seed 1 (`--stall 0`, `closedLoop.healthy`). On a server that never fails every request
// should succeed at its first attempt, so a failure there is the policy's own.
//
// Run after `pnpm build`: `node bench/storm.mjs`; writes bench/results/storm.json and prints tables.
import {
  INCIDENT_TAIL_MS,
  STORM_DEFAULTS,
  STORM_POLICIES,
  simulateStorm,
} from '../packages/cli/dist/index.js';
import { retrylineJson } from './lib/cli-json.mjs';
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

// --- The open loop without a stall ---------------------------------------------------------------
// What each policy's requests do when the server never fails: every one should succeed, so a
// failure here is the policy's own (seeds as above).
const openHealthy = {
  title: 'the server of (a) without a stall',
  policies: [],
};
for (const policy of STORM_POLICIES) {
  const reports = [];
  for (const seed of SEEDS) reports.push(await simulateStorm({ stallMs: 0, seed, policy }));
  openHealthy.policies.push({
    policy: policy.name,
    logicalRequests: { seed1: reports[0].logicalRequests, ...range(reports.map((r) => r.logicalRequests)) },
    failed: { seed1: reports[0].failed, ...range(reports.map((r) => r.failed)) },
    failuresSeed1: reports[0].failures,
  });
}

// --- The closed loop --------------------------------------------------------------------------
const CLOSED_SEEDS = [1, 2, 3];
const CLOSED_CLIENTS = 400;
const CLOSED_METRICS = [
  'windowAmplification',
  'peakVsSteady',
  'successRate',
  'p99Ms',
  'amplificationBound',
  'p99BoundMs',
  'recoveredAfterMs',
  'p50Ms',
  'wasted',
  'logicalRequests',
];

/** One closed-loop run of every policy through the CLI's JSON output. */
const closedLoopRun = (seed, extra = []) =>
  retrylineJson(['simulate', 'storm', '--clients', String(CLOSED_CLIENTS), '--seed', String(seed), ...extra]);

const closedStarted = performance.now();
const closedRuns = [];
for (const seed of CLOSED_SEEDS) closedRuns.push(await closedLoopRun(seed));
const healthyRun = await closedLoopRun(1, ['--stall', '0']);
const closedSeconds = (performance.now() - closedStarted) / 1000;
const [closedFirst] = closedRuns;
const { seed: _closedSeed, ...closedServer } = closedFirst.scenario;
const closedLoop = {
  id: 'closed-loop',
  title: `closed loop, ${CLOSED_CLIENTS} clients at 60 % of capacity`,
  command: `pnpm retryline simulate storm --clients ${CLOSED_CLIENTS} --seed <seed> --format json`,
  // 'Infinity' (the CLI's JSON word for an unbounded queue) is written as null, as above.
  server: {
    ...closedServer,
    queueLimit: closedServer.queueLimit === 'Infinity' ? null : closedServer.queueLimit,
  },
  windowMs: closedFirst.windowMs,
  warmUpMs: closedFirst.warmUpMs,
  bucketMs: closedFirst.bucketMs,
  seeds: { from: CLOSED_SEEDS[0], to: CLOSED_SEEDS.at(-1) },
  runSeconds: Number(closedSeconds.toFixed(1)),
  policies: closedFirst.policies.map((first, index) => ({
    policy: first.policy,
    ...Object.fromEntries(
      CLOSED_METRICS.map((metric) => [
        metric,
        { seed1: first[metric], ...range(closedRuns.map((report) => report.policies[index][metric])) },
      ]),
    ),
    failuresSeed1: first.failures,
    // Attempts per bucket only (the chart's line), from t = 0: a list, not the open loop's objects,
    // to keep the file small.
    sentPerBucketSeed1: first.timeline.map(({ sent }) => sent),
  })),
  healthy: {
    command: `pnpm retryline simulate storm --clients ${CLOSED_CLIENTS} --seed 1 --stall 0 --format json`,
    policies: healthyRun.policies.map((policy) => ({
      policy: policy.policy,
      logicalRequests: policy.logicalRequests,
      attempts: policy.attempts,
      successRate: policy.successRate,
      failures: policy.failures,
    })),
  },
};
const seconds = (performance.now() - started) / 1000;

const path = writeResult('storm', {
  command: 'node bench/storm.mjs',
  runSeconds: Number(seconds.toFixed(1)),
  incidentTailMs: INCIDENT_TAIL_MS,
  scenarios,
  openHealthy,
  closedLoop,
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

console.log(
  `\n${closedLoop.title} (seeds ${CLOSED_SEEDS[0]}–${CLOSED_SEEDS.at(-1)}; seed 1 [min–max]; a 'never' max: not recovered for some seed)`,
);
const closedColumns = [
  ['policy', 28],
  ['requests', 22],
  ['amp. (4 s)', 20],
  ['peak/steady', 20],
  ['success', 24],
  ['p50 ms', 14],
  ['p99 ms', 22],
  ['recovery ms', 18],
  ['wasted', 18],
];
console.log(
  closedColumns.map(([name, width], i) => (i === 0 ? name.padEnd(width) : name.padStart(width))).join(''),
);
for (const row of closedLoop.policies) {
  // null: not recovered (recovery), or no steady bucket to compare with (peak/steady).
  const cell = ({ seed1, min, max }, digits, none = 'never') => {
    const text = (value) => (value === null ? none : value.toFixed(digits));
    return `${text(seed1)} [${text(min)}–${text(max)}]`;
  };
  const cells = [
    row.policy,
    cell(row.logicalRequests, 0),
    cell(row.windowAmplification, 2),
    cell(row.peakVsSteady, 2, 'n/a'),
    cell(row.successRate, 4),
    cell(row.p50Ms, 0),
    cell(row.p99Ms, 0),
    cell(row.recoveredAfterMs, 0),
    cell(row.wasted, 0),
  ];
  console.log(
    cells
      .map((text, i) => (i === 0 ? text.padEnd(closedColumns[i][1]) : text.padStart(closedColumns[i][1])))
      .join(''),
  );
}

const failedText = (failures) =>
  Object.entries(failures)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ') || 'none';
console.log(`\n${openHealthy.title} (seeds ${SEEDS[0]}–${SEEDS.at(-1)}): failed requests, seed 1 [min–max]`);
for (const policy of openHealthy.policies) {
  const { seed1, min, max } = policy.failed;
  console.log(
    `${policy.policy.padEnd(30)}${seed1} [${min}–${max}]  seed 1: ${failedText(policy.failuresSeed1)}`,
  );
}
console.log(`\nthe closed loop without a stall (seed 1): requests that did not succeed`);
for (const policy of closedLoop.healthy.policies) {
  console.log(`${policy.policy.padEnd(30)}${failedText(policy.failures)}`);
}

const openRuns = STORM_POLICIES.length * (SCENARIOS.length + 1) * SEEDS.length;
const closedCount = closedFirst.policies.length * (CLOSED_SEEDS.length + 1);
console.log(
  `\n${openRuns} open-loop runs and ${closedCount} closed-loop runs (${closedSeconds.toFixed(1)} s of them) in ${seconds.toFixed(1)} s`,
);
console.log(`written to ${path}`);
