// A server at 2× its capacity, through the CLI's simulator (virtual time): `retryline simulate
// overload --seed <seed> --format json`, through bench/lib/cli-json.mjs, for seeds 1–5. The server (8 workers ×
// 40 ms, 200 req/s) answers 503 at once when its queue of 16 is full, and each 503 costs a worker
// 10 % of a request's time; 400 req/s arrive (Poisson) through 10 client processes for 10 s of
// warm-up and 30 s measured. Policies: no retries, Retryline's defaults (retries with the budget and
// the recovery gate), and the same with `adaptiveThrottle()`. Keeps goodput, rejections at the
// server, attempts sent and refused by the clients, success and latency: seed 1, and min/max over
// the seeds. Then seed 1 again with one setting changed at a time (`variants`): free rejections,
// dearer rejections, one client process instead of ten, 1.5× and 3× load — how far the result
// depends on the choices above.
//
// Run after `pnpm build`: `node bench/overload.mjs`; writes bench/results/overload.json and prints tables.
import { retrylineJson } from './lib/cli-json.mjs';
import { writeResult } from './lib/results.mjs';

const SEEDS = [1, 2, 3, 4, 5];
const METRICS = [
  'goodputPerSecond',
  'rejected',
  'rejectedPerSecond',
  'attempts',
  'refused',
  'refusedFirst',
  'rejectWorkShare',
  'successRate',
  'p50Ms',
  'p99Ms',
  'successP99Ms',
  'wasted',
  'logicalRequests',
];
const VARIANTS = [
  { id: 'free-rejections', title: 'rejections cost nothing', args: ['--reject-cost', '0'] },
  { id: 'dear-rejections', title: 'a rejection costs 25 % of a request', args: ['--reject-cost', '0.25'] },
  { id: 'one-client', title: 'one client process instead of ten', args: ['--clients', '1'] },
  { id: 'load-1.5', title: '1.5× capacity', args: ['--load', '1.5'] },
  { id: 'load-3', title: '3× capacity', args: ['--load', '3'] },
];
const VARIANT_METRICS = [
  'goodputPerSecond',
  'rejectedPerSecond',
  'attempts',
  'refused',
  'successRate',
  'p99Ms',
];

/** One run of every policy through the CLI's JSON output. */
const overloadRun = (seed, extra = []) =>
  retrylineJson(['simulate', 'overload', '--seed', String(seed), ...extra]);

const range = (values) => ({ min: Math.min(...values), max: Math.max(...values) });

const started = performance.now();
const runs = [];
for (const seed of SEEDS) runs.push(await overloadRun(seed));
const [first] = runs;
const policies = first.policies.map((policy, index) => ({
  policy: policy.policy,
  ...Object.fromEntries(
    METRICS.map((metric) => [
      metric,
      { seed1: policy[metric], ...range(runs.map((r) => r.policies[index][metric])) },
    ]),
  ),
  failuresSeed1: policy.failures,
}));

/** Per seed: the throttle's goodput over the defaults', and its rejections at the server over theirs. */
const byName = (r, name) => r.policies.find((p) => p.policy === name);
const perSeed = runs.map((r, i) => {
  const plain = byName(r, 'Retryline defaults');
  const throttled = byName(r, 'Retryline + throttle');
  return {
    seed: SEEDS[i],
    goodputRatio: throttled.goodputPerSecond / plain.goodputPerSecond,
    rejectedRatio: throttled.rejected / plain.rejected,
  };
});

const variants = [];
for (const variant of VARIANTS) {
  const result = await overloadRun(1, variant.args);
  variants.push({
    id: variant.id,
    title: variant.title,
    command: `pnpm retryline simulate overload --seed 1 ${variant.args.join(' ')}`,
    scenario: result.scenario,
    policies: result.policies.map((policy) => ({
      policy: policy.policy,
      ...Object.fromEntries(VARIANT_METRICS.map((metric) => [metric, policy[metric]])),
    })),
  });
}
const seconds = (performance.now() - started) / 1000;

const path = writeResult('overload', {
  command: 'node bench/overload.mjs',
  cliCommand: 'pnpm retryline simulate overload --seed <seed> --format json',
  runSeconds: Number(seconds.toFixed(1)),
  scenario: (({ seed: _seed, ...rest }) => rest)(first.scenario),
  capacityPerSecond: first.capacityPerSecond,
  seeds: { from: SEEDS[0], to: SEEDS.at(-1) },
  policies,
  throttleVsDefaults: perSeed,
  variants,
});

const cell = ({ seed1, min, max }, digits) =>
  `${seed1.toFixed(digits)} [${min.toFixed(digits)}–${max.toFixed(digits)}]`;
console.log(`\noverload at 2× capacity (seeds ${SEEDS[0]}–${SEEDS.at(-1)}; seed 1 [min–max])`);
const columns = [
  ['policy', 22],
  ['goodput/s', 24],
  ['503s/s', 24],
  ['attempts', 26],
  ['refused', 24],
  ['success', 24],
  ['p99 ms', 24],
];
console.log(
  columns.map(([name, width], i) => (i === 0 ? name.padEnd(width) : name.padStart(width))).join(''),
);
for (const row of policies) {
  const cells = [
    row.policy,
    cell(row.goodputPerSecond, 1),
    cell(row.rejectedPerSecond, 1),
    cell(row.attempts, 0),
    cell(row.refused, 0),
    cell(row.successRate, 3),
    cell(row.p99Ms, 0),
  ];
  console.log(
    cells.map((text, i) => (i === 0 ? text.padEnd(columns[i][1]) : text.padStart(columns[i][1]))).join(''),
  );
}
for (const { seed, goodputRatio, rejectedRatio } of perSeed) {
  console.log(
    `seed ${seed}: throttle/defaults goodput ${goodputRatio.toFixed(3)}×, rejections at the server ${rejectedRatio.toFixed(3)}×`,
  );
}
for (const variant of variants) {
  console.log(`\nseed 1, ${variant.title} (${variant.command})`);
  for (const p of variant.policies) {
    console.log(
      `${p.policy.padEnd(22)}goodput ${p.goodputPerSecond.toFixed(1).padStart(6)}/s  503s ${p.rejectedPerSecond.toFixed(1).padStart(6)}/s  refused ${String(p.refused).padStart(6)}  success ${(p.successRate * 100).toFixed(1)} %  p99 ${Math.round(p.p99Ms)} ms`,
    );
  }
}
console.log(
  `\n${SEEDS.length + VARIANTS.length} runs of ${first.policies.length} policies in ${seconds.toFixed(1)} s`,
);
console.log(`written to ${path}`);
