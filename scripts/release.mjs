// `pnpm release`: version, build, pack, check and publish the public @retryline/* packages.
//
//   pnpm release --dry-run   everything but the upload, changing no file of this checkout: with
//                            pending changesets the run happens in a temporary copy, where
//                            `changeset version` applies them; CI runs this, so a broken tarball
//                            fails the build. Add --offline where the registry cannot be reached.
//   pnpm release             with pending changesets: `changeset version` here, then stops so the
//                            new versions and changelogs are reviewed and committed; without any:
//                            build, pack, check, `pnpm publish -r` and `changeset tag`.
//
// The tarballs are packed with `pnpm pack` (which rewrites `workspace:^` to the version's caret
// range) and checked as a user would get them: publint, arethetypeswrong and the checks in
// check-tarball.mjs. Only then does anything publish.
import { execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { checkTarballs, formatTable } from './check-tarball.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = new Set(process.argv.slice(2));
const known = new Set(['--dry-run', '--offline']);
for (const arg of args) {
  if (!known.has(arg)) {
    console.error(`release: unknown option ${arg}; usage: pnpm release [--dry-run] [--offline]`);
    process.exit(2);
  }
}
// `npm run release --dry-run` takes --dry-run as npm's own setting and never passes it on: it
// arrives as npm_config_dry_run, and must still mean a dry run rather than a real release.
const dryRun = args.has('--dry-run') || process.env.npm_config_dry_run === 'true';
const offline = args.has('--offline');
if (offline && !dryRun) {
  // A real publish with --force would republish versions the registry has, and fail partway.
  console.error('release: --offline is for a dry run only: pnpm release --dry-run --offline');
  process.exit(2);
}
const started = Date.now();

function step(title) {
  console.log(`\n=== ${title} (${Math.round((Date.now() - started) / 1000)}s)`);
}

/** Runs a command; its output is shown only when it fails (or always, with `show`). */
function sh(command, commandArgs, { cwd, show = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { cwd, stdio: show ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(output);
      else {
        if (!show) console.error(output);
        reject(
          new Error(`release: \`${[command, ...commandArgs].join(' ')}\` failed (exit ${code}) in ${cwd}`),
        );
      }
    });
  });
}

/** The changesets waiting to be applied (.changeset/*.md but its README). */
async function pendingChangesets(dir) {
  const names = await readdir(join(dir, '.changeset'));
  return names.filter((name) => name.endsWith('.md') && name !== 'README.md');
}

/** The public packages under packages/, with their directory, name and version. */
async function publicPackages(dir) {
  const found = [];
  for (const entry of (await readdir(join(dir, 'packages'), { withFileTypes: true })).filter((each) =>
    each.isDirectory(),
  )) {
    const path = join(dir, 'packages', entry.name);
    const pkg = JSON.parse(await readFile(join(path, 'package.json'), 'utf8'));
    if (!pkg.private) found.push({ dir: path, name: pkg.name, version: pkg.version });
  }
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * A copy of this checkout as it is (tracked files and new ones git does not ignore, uncommitted
 * changes included), with its own install: `changeset version` may change it freely.
 */
async function copyOfCheckout() {
  const copy = await mkdtemp(join(tmpdir(), 'retryline-release-'));
  const { stdout } = await promisify(execFile)(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    {
      cwd: root,
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  for (const file of stdout.split('\0').filter(Boolean)) {
    // A tracked file deleted in the working tree is not part of this checkout.
    await cp(join(root, file), join(copy, file), { preserveTimestamps: true }).catch((error) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  // From the store this machine's install filled: no download.
  await sh('pnpm', ['install', '--frozen-lockfile', offline ? '--offline' : '--prefer-offline'], {
    cwd: copy,
  });
  return copy;
}

async function version(dir) {
  const before = new Map((await publicPackages(dir)).map((each) => [each.name, each.version]));
  await sh('pnpm', ['exec', 'changeset', 'version'], { cwd: dir });
  for (const each of await publicPackages(dir)) {
    const was = before.get(each.name);
    console.log(
      `  ${each.name}: ${was === each.version ? `${was} (unchanged)` : `${was} → ${each.version}`}`,
    );
  }
}

async function pack(packages, destination) {
  await mkdir(destination, { recursive: true });
  const tarballs = [];
  for (const each of packages) {
    const output = await sh('pnpm', ['pack', '--pack-destination', destination], { cwd: each.dir });
    // pnpm prints the tarball's path last.
    const tarball = output.trim().split('\n').at(-1)?.trim();
    if (!tarball?.endsWith('.tgz'))
      throw new Error(`release: no tarball in the output of pnpm pack for ${each.name}:\n${output}`);
    tarballs.push(tarball);
  }
  return tarballs;
}

async function publish(dir) {
  const flags = ['publish', '-r', '--access', 'public'];
  if (dryRun) flags.push('--dry-run', '--no-git-checks');
  // `pnpm publish -r` asks the registry (anonymously) which versions it already has, to skip
  // them; --force publishes without asking, which only a dry run without a registry wants.
  if (offline) flags.push('--force');
  const output = await sh('pnpm', flags, { cwd: dir });
  const published = output.split('\n').filter((line) => line.startsWith('+ '));
  for (const line of published) console.log(`  ${line}${dryRun ? ' (dry run)' : ''}`);
  if (published.length === 0) console.log('  nothing to publish: every version is on the registry already');
}

/** The whole release; returns once done, throws on the first failure. */
async function release(work) {
  let dir = root;
  const pending = await pendingChangesets(root);
  if (pending.length > 0) {
    if (dryRun) {
      step(`Copying the checkout to apply ${pending.length} pending changesets there`);
      dir = await copyOfCheckout();
      work.push(dir);
      console.log(`  ${dir}`);
    }
    step(`Versioning (${pending.length} changesets)`);
    await version(dir);
    if (!dryRun) {
      console.log(
        '\nReview the new versions and CHANGELOG.md files, commit them, and run `pnpm release` again to publish.',
      );
      return;
    }
  } else {
    step('Versioning: no pending changesets, versions stay as they are');
  }

  step('Building');
  await sh('pnpm', ['run', 'build'], { cwd: dir });

  step('Packing');
  const destination = await mkdtemp(join(tmpdir(), 'retryline-tarballs-'));
  work.push(destination);
  const tarballs = await pack(await publicPackages(dir), destination);
  console.log(`  ${tarballs.length} tarballs in ${destination}`);

  step('Checking the tarballs (publint --strict, arethetypeswrong, files, links, dependencies)');
  const { results, ok } = await checkTarballs(tarballs);
  console.log(`\n${formatTable(results)}`);
  if (!ok) throw new Error('release: some tarballs have problems (listed above); nothing was published');

  step(dryRun ? 'Publishing (dry run)' : 'Publishing');
  await publish(dir);
  if (!dryRun) {
    await sh('pnpm', ['exec', 'changeset', 'tag'], { cwd: dir, show: true });
    console.log('\nPush the tags: git push --follow-tags');
  }
  step(dryRun ? 'Dry run passed' : 'Released');
}

// Temporary directories (the copy, the tarballs), removed however the run ends.
const work = [];
try {
  await release(work);
} catch (error) {
  console.error(`\n${error instanceof Error ? error.message : error}`);
  process.exitCode = 1;
} finally {
  for (const each of work) await rm(each, { recursive: true, force: true });
}
