// Brooker's thundering herd through the CLI's simulator (`simulateHerds`, virtual time, no real
// waiting): total calls and completion time per jitter strategy for N = 10…200 clients at seed 1,
// plus seeds 1–5 at N = 100 for the range of the none/full call ratio.
// Run after `pnpm build`: `node bench/herd.mjs`; writes bench/results/herd.json and prints a table.
import { HERD_STRATEGIES, simulateHerds } from '../packages/cli/dist/index.js';
import { writeResult } from './lib/results.mjs';

const CLIENTS = [10, 25, 50, 75, 100, 150, 200];
const SEEDS = [1, 2, 3, 4, 5];

/** One run of every strategy at exactly `clients` clients (a sweep of one point). */
const herdAt = (clients, seed) => simulateHerds({ from: clients, to: clients, step: 1, seed });

const rows = [];
for (const clients of CLIENTS) {
  for (const row of await herdAt(clients, 1)) {
    rows.push({
      clients,
      strategy: row.strategy,
      calls: row.calls,
      completionMs: Math.round(row.completionMs),
    });
  }
}

// Without jitter every client that collided backs off by the same amount and collides again; the
// ratio says how many calls that costs compared with full jitter, seed by seed.
const ratios = [];
for (const seed of SEEDS) {
  const runs = await herdAt(100, seed);
  const calls = (strategy) => runs.find((run) => run.strategy === strategy).calls;
  ratios.push({ seed, none: calls('none'), full: calls('full'), ratio: calls('none') / calls('full') });
}
const ratioAt100 = {
  seed1: ratios[0].ratio,
  min: Math.min(...ratios.map((r) => r.ratio)),
  max: Math.max(...ratios.map((r) => r.ratio)),
  bySeed: ratios,
};

const path = writeResult('herd', {
  command: 'node bench/herd.mjs',
  rows,
  ratioAt100,
});

const pad = (value, width) => String(value).padStart(width);
console.log(`${'clients'.padEnd(8)}${HERD_STRATEGIES.map((s) => pad(s, 24)).join('')}`);
for (const clients of CLIENTS) {
  const cells = HERD_STRATEGIES.map((strategy) => {
    const row = rows.find((r) => r.clients === clients && r.strategy === strategy);
    return pad(`${row.calls} calls ${row.completionMs} ms`, 24);
  });
  console.log(`${String(clients).padEnd(8)}${cells.join('')}`);
}
console.log(
  `none/full calls at 100 clients: ${ratioAt100.seed1.toFixed(2)}× (seed 1), ` +
    `${ratioAt100.min.toFixed(2)}–${ratioAt100.max.toFixed(2)}× over seeds ${SEEDS[0]}–${SEEDS.at(-1)}`,
);
console.log(`written to ${path}`);
