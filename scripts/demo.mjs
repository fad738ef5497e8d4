// `pnpm demo`: `retryline demo --seed 1`. A flaky API on 127.0.0.1 plays a failure story (503s,
// connection resets, a 2-second outage, a 429 with Retry-After) while fetch, axios and ky send the
// same requests with Retryline's defaults and without retries; it ends with a table and a
// recording (retryline-demo.json) that `pnpm retryline view retryline-demo.json` opens.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = fileURLToPath(new URL('../packages/cli/dist/cli.js', import.meta.url));

// Build first, quietly: the build's own log is shown only if it fails.
process.stdout.write('Building the packages… ');
const build = spawnSync('pnpm', ['run', 'build'], { cwd: root, encoding: 'utf8' });
if (build.status !== 0) {
  console.log('failed:\n');
  console.log(build.stdout, build.stderr);
  process.exit(build.status ?? 1);
}
console.log('done.\n');

console.log('$ retryline demo --seed 1\n');
const result = spawnSync(process.execPath, [cli, 'demo', '--seed', '1'], { stdio: 'inherit' });
process.exit(result.status ?? 1);
