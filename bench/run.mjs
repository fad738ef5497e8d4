// Runs the benches one after another, each as its own Node process with this terminal's output, then
// bench/report.mjs to rewrite bench/RESULTS.md and bench/charts/. A bench that needs a program this
// machine lacks (redis-server, Chromium) is skipped with a message and keeps its last result file;
// any other failure stops the run with a non-zero exit.
// Run after `pnpm build` (or as `pnpm bench`, which builds first):
//   node bench/run.mjs                  every bench, then the report
//   node bench/run.mjs herd storm       only those benches, then the report
//   node bench/run.mjs --report-only    only the report, from the results already on disk
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCHES } from './report.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Whether `command` is an executable file in one of PATH's directories. */
function onPath(command) {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** What each bench needs besides the build; a missing one returns why the bench is skipped. */
const PREREQUISITES = {
  // bench/redis-latency.mjs spawns `redis-server` from PATH.
  'redis-latency': () => (onPath('redis-server') ? undefined : 'redis-server is not on PATH'),
  // bench/viewer-render.mjs launches Chromium from this fixed path.
  'viewer-render': () => (existsSync('/usr/bin/chromium') ? undefined : '/usr/bin/chromium does not exist'),
};

const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(
    `usage: node bench/run.mjs [--report-only] [bench…]\nbenches: ${BENCHES.map((b) => b.name).join(', ')}`,
  );
  process.exit(0);
}
const reportOnly = args.includes('--report-only');
const names = args.filter((arg) => !arg.startsWith('-'));
const unknown = [...args.filter((arg) => arg.startsWith('-') && arg !== '--report-only'), ...names].filter(
  (arg) => arg.startsWith('-') || !BENCHES.some((bench) => bench.name === arg),
);
if (unknown.length > 0) {
  console.error(`unknown ${unknown.join(', ')}; benches: ${BENCHES.map((b) => b.name).join(', ')}`);
  process.exit(2);
}
if (reportOnly && names.length > 0) {
  console.error('--report-only runs no bench: leave out the bench names, or drop --report-only');
  process.exit(2);
}

// Benches always run in the canonical order, whatever order they were named in.
const selected = reportOnly
  ? []
  : BENCHES.filter((bench) => names.length === 0 || names.includes(bench.name));
const timings = [];

/** Runs one script as a child process; exits the whole run if it fails. */
function runScript(label, nodeArgs) {
  const command = `node ${nodeArgs.join(' ')}`;
  console.log(`\n▶ ${label}: ${command}`);
  const started = performance.now();
  const child = spawnSync(process.execPath, nodeArgs, { cwd: ROOT, stdio: 'inherit' });
  const seconds = (performance.now() - started) / 1000;
  if (child.error || child.status !== 0) {
    const why =
      child.error?.message ?? (child.signal ? `killed by ${child.signal}` : `exit code ${child.status}`);
    console.error(
      `\n✗ ${label} failed (${why}) after ${seconds.toFixed(1)} s: stopping; the report was not rewritten`,
    );
    process.exit(child.status || 1);
  }
  timings.push([label, `${seconds.toFixed(1)} s`]);
}

for (const bench of selected) {
  const missing = PREREQUISITES[bench.name]?.();
  if (missing) {
    console.log(`\n⏭ ${bench.name}: skipped, ${missing}; bench/results/${bench.name}.json is kept as it was`);
    timings.push([bench.name, 'skipped']);
    continue;
  }
  if (!existsSync(join(ROOT, bench.script))) {
    console.error(`\n✗ ${bench.name}: ${bench.script} does not exist: stopping`);
    process.exit(1);
  }
  runScript(bench.name, [...(bench.nodeFlags ?? []), bench.script]);
}
runScript('report', ['bench/report.mjs']);

console.log('\nDone:');
for (const [label, time] of timings) console.log(`  ${label.padEnd(14)} ${time}`);
