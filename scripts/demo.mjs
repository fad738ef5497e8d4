// `pnpm demo`: seed 000's exponential backoff (base 1 s, 10 retries) through the retryline CLI,
// first without a cap, then capped at 64 s, the two tables the talk compares.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = fileURLToPath(new URL('../packages/cli/dist/cli.js', import.meta.url));

// Build first, quietly: the build's own log is shown only if it fails.
process.stdout.write('Building @retryline/core and @retryline/cli… ');
const build = spawnSync('pnpm', ['run', 'build'], { cwd: root, encoding: 'utf8' });
if (build.status !== 0) {
  console.log('failed:\n');
  console.log(build.stdout, build.stderr);
  process.exit(build.status ?? 1);
}
console.log('done.');

const runs = [
  ['Exponential backoff, no cap (the seed talk: 2046 s, ~34 min, in all)', ['--max-delay', '1h']],
  ['The same, capped at 64 s (the seed talk: 382 s, ~6.4 min, in all)', ['--max-delay', '64s']],
  [
    'Capped at 64 s with full jitter, seed 7 (what the library does by default)',
    ['--max-delay', '64s', '--jitter', 'full', '--seed', '7'],
  ],
];
for (const [title, extra] of runs) {
  console.log(`\n## ${title}\n`);
  const args = [cli, 'schedule', '--strategy', 'exponential', '--base', '1s', '--retries', '10', ...extra];
  console.log(`$ retryline ${args.slice(1).join(' ')}\n`);
  const result = spawnSync(process.execPath, args, { stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
