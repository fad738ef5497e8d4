// Bundle size of each Retryline entry point next to the peer retry libraries: minified and
// min+gzip bytes of what an app ships after bundling and tree-shaking (see bench/lib/bundle-size.mjs),
// with Retryline's size budget (bench/size-budget.json, enforced by test/size-budget.test.ts).
// Also breaks @retryline/fetch and the devtools extension's page hook down by source module, to show
// where their bytes come from. Run after `pnpm build`: `node bench/size.mjs`; writes
// bench/results/size.json.
import { readFileSync } from 'node:fs';
import {
  bundleSize,
  ENTRY_POINTS,
  fileSize,
  OPT_IN_GUARD_MODULES,
  PAGE_HOOK,
  pageHookBundle,
  sourceBundle,
} from './lib/bundle-size.mjs';
import { writeResult } from './lib/results.mjs';

const budgets = JSON.parse(readFileSync(new URL('./size-budget.json', import.meta.url), 'utf8'));

const rows = [];
for (const entry of ENTRY_POINTS) {
  const { minBytes, gzipBytes } = await bundleSize(entry.contents, {
    external: entry.external,
    ...(entry.platform ? { platform: entry.platform } : {}),
  });
  const budget = budgets[entry.name];
  rows.push({
    name: entry.name,
    kind: entry.kind,
    minBytes,
    gzipBytes,
    budgetBytes: typeof budget === 'number' ? budget : null,
    ...(entry.note ? { note: entry.note } : {}),
  });
}
// The page hook as the extension build wrote it: what every page the user opens is given.
{
  const { minBytes, gzipBytes } = fileSize(PAGE_HOOK.file);
  const budget = budgets[PAGE_HOOK.name];
  rows.push({
    name: PAGE_HOOK.name,
    kind: PAGE_HOOK.kind,
    minBytes,
    gzipBytes,
    budgetBytes: typeof budget === 'number' ? budget : null,
  });
}

// The dist files are flat bundles, so the per-module split of retryFetch comes from bundling the
// same import from TypeScript source (sourceBundle). It shows which guards a default retryFetch
// carries: the budget only; breaker, limiter, bulkhead and pacing come with their import.
const BREAKDOWN_ENTRY = "export { retryFetch } from './packages/fetch/src/index.ts';";
const source = await sourceBundle(BREAKDOWN_ENTRY);
const carried = OPT_IN_GUARD_MODULES.filter((path) => source.modules.some((module) => module.path === path));
const breakdown = {
  name: '@retryline/fetch (retryFetch)',
  from: 'source',
  contents: BREAKDOWN_ENTRY,
  minBytes: source.minBytes,
  gzipBytes: source.gzipBytes,
  modules: source.modules,
  optInGuardModulesCarried: carried,
};

const bytes = (n) => n.toLocaleString('en-US');
const table = [
  ['entry point', 'kind', 'min B', 'min+gz B', 'budget B'],
  ...rows.map((row) => [
    row.name + (row.note ? ' *' : ''),
    row.kind,
    bytes(row.minBytes),
    bytes(row.gzipBytes),
    row.budgetBytes === null ? '-' : bytes(row.budgetBytes),
  ]),
];
const widths = table[0].map((_, column) => Math.max(...table.map((cells) => cells[column].length)));
const line = (cells) =>
  cells
    .map((cell, column) => (column < 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
    .join('  ');
console.log(line(table[0]));
console.log(widths.map((width) => '-'.repeat(width)).join('  '));
for (const cells of table.slice(1)) console.log(line(cells));
for (const row of rows.filter((r) => r.note)) console.log(`* ${row.name}: ${row.note}`);

console.log(`\n${breakdown.name} by source module (${bytes(breakdown.minBytes)} B min):`);
for (const module of breakdown.modules) console.log(`${bytes(module.bytes).padStart(8)}  ${module.path}`);
console.log(
  carried.length === 0
    ? `none of the opt-in guard modules (${OPT_IN_GUARD_MODULES.map((path) => path.split('/').at(-1)).join(', ')})`
    : `carries opt-in guard modules: ${carried.join(', ')}`,
);

const hookSource = await pageHookBundle();
const hookBreakdown = {
  name: PAGE_HOOK.name,
  from: 'source',
  entry: PAGE_HOOK.source,
  minBytes: hookSource.minBytes,
  gzipBytes: hookSource.gzipBytes,
  modules: hookSource.modules,
};
console.log(`\n${hookBreakdown.name} by source module (${bytes(hookBreakdown.minBytes)} B min):`);
for (const module of hookBreakdown.modules) console.log(`${bytes(module.bytes).padStart(8)}  ${module.path}`);

const path = writeResult('size', { command: 'node bench/size.mjs', rows, breakdown, hookBreakdown });
console.log(`\nwrote ${path}`);
