// `pnpm demo`: `pnpm retryline demo --seed 1`, after building what that runs if it is stale. A
// flaky API on 127.0.0.1 plays a failure story (503s, connection resets, a 2-second outage, a 429
// with Retry-After) while fetch, axios and ky send the same requests with Retryline's defaults and
// without retries; it ends with a table and a recording (retryline-demo.json) that
// `pnpm retryline view retryline-demo.json` opens. It needs neither Chromium nor Redis.
// Flags after `pnpm demo` go to `retryline demo` (`pnpm demo --seed 7`); without `--seed`, seed 1.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'packages/cli/dist/cli.js');

// What the demo runs (the CLI and the workspace packages it depends on, the viewer included),
// where each one's sources and build output are.
const parts = ['core', 'fetch', 'axios', 'ky', 'cli'].map((name) => ({
  sources: [`packages/${name}/src`, `packages/${name}/package.json`, `packages/${name}/tsup.config.ts`],
  outputs: [`packages/${name}/dist/index.js`, `packages/${name}/dist/index.cjs`],
}));
parts.push(
  { sources: ['extension/src', 'extension/scripts', 'extension/package.json'], outputs: [] },
  { sources: [], outputs: ['packages/cli/dist/cli.js', 'packages/cli/viewer/viewer.html'] },
);
const shared = ['tsup.base.ts', 'tsconfig.base.json', 'package.json', 'pnpm-lock.yaml'];

/** The newest modification time under `path` (a file or a directory), 0 when it is missing. */
function newest(path) {
  const full = join(root, path);
  if (!existsSync(full)) return 0;
  const stat = statSync(full);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(full)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

/** Whether every output exists and is newer than every source the demo's packages build from. */
function upToDate() {
  const outputs = parts.flatMap((part) => part.outputs);
  if (!outputs.every((output) => existsSync(join(root, output)))) return false;
  const oldestOutput = Math.min(...outputs.map((output) => statSync(join(root, output)).mtimeMs));
  const newestSource = Math.max(...[...shared, ...parts.flatMap((part) => part.sources)].map(newest));
  return newestSource < oldestOutput;
}

if (upToDate()) {
  console.log('The packages are built and up to date.\n');
} else {
  // JavaScript only, and only what the demo runs: some 6 s instead of the full build's 45 s with
  // type declarations (`pnpm build` makes those; `pnpm test` runs it). The build's own log is
  // shown only if it fails.
  process.stdout.write('Building the packages the demo runs… ');
  const build = spawnSync('pnpm', ['--filter', '@retryline/cli...', 'run', 'build'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, RETRYLINE_BUILD_DTS: '0' },
  });
  if (build.status !== 0) {
    console.log('failed:\n');
    console.log(build.stdout, build.stderr);
    process.exit(build.status ?? 1);
  }
  console.log('done.\n');
}

const flags = process.argv.slice(2).filter((flag) => flag !== '--');
const args = flags.some((flag) => flag === '--seed' || flag.startsWith('--seed='))
  ? flags
  : ['--seed', '1', ...flags];
// What runs, as the user would type it here: `retryline` alone is not on PATH in a clone.
console.log(`$ pnpm retryline demo ${args.join(' ')}\n`);
const result = spawnSync(process.execPath, [cli, 'demo', ...args], { stdio: 'inherit' });
process.exit(result.status ?? 1);
