import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The failure path of `pnpm release`: scripts/check-tarball.mjs, which the release runs on every
 * packed tarball, fails on a tarball a user could not use. The fixture is a tiny, well-formed dual
 * ESM/CommonJS package; each case packs a copy of it with one kind of damage.
 */

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/tiny-package/', import.meta.url));
const checker = join(root, 'scripts/check-tarball.mjs');

let work = '';

/** Packs a copy of the fixture after `damage` has changed it; resolves to the tarball's path. */
async function packFixture(name: string, damage: (dir: string) => Promise<void> = async () => {}) {
  const dir = join(work, name);
  await cp(fixture, dir, { recursive: true });
  await damage(dir);
  // npm, not pnpm: npm packs package.json as it is, as a hand-run `npm publish` would, which is
  // what lets a `workspace:` range through.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: dir });
  const [packed] = JSON.parse(stdout) as [{ filename: string }];
  // Named for the case, so the checker's report tells the cases apart.
  const tarball = join(work, `${name}.tgz`);
  await rename(join(dir, packed.filename), tarball);
  return tarball;
}

async function check(...tarballs: string[]) {
  try {
    const { stdout } = await run(process.execPath, [checker, ...tarballs], { cwd: root });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '' };
  }
}

/** The problems the checker listed for one tarball (by file name), one string each. */
function problemsOf(stdout: string, tarball: string): string[] {
  const section = stdout.split('\n✗ ').find((each) => each.includes(`(${tarball.split('/').at(-1)}):`));
  // The section ends at the first blank line (before the next tarball's, or the table).
  return (section ?? '').split('\n\n')[0]?.split('\n  - ').slice(1) ?? [];
}

async function edit(file: string, change: (text: string) => string) {
  await writeFile(file, change(await readFile(file, 'utf8')));
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'retryline-check-tarball-'));
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe('the tarball check of pnpm release', () => {
  it('passes a well-formed package and lists its sizes', async () => {
    const tarball = await packFixture('well-formed');
    const { code, stdout } = await check(tarball);
    expect(stdout).not.toContain('✗');
    expect(stdout).toMatch(/@retryline\/tiny-fixture +1\.0\.0 +well-formed\.tgz +[\d.]+ kB +[\d.]+ kB +7\n/);
    expect(stdout).toContain('Every tarball passed.');
    expect(code).toBe(0);
  });

  it('fails a tarball whose exports name a file it does not ship, and a tarball npm would serve broken', async () => {
    // The CommonJS build is missing: `require('@retryline/tiny-fixture')` would throw for every user.
    const missingBuild = await packFixture('missing-cjs', (dir) => rm(join(dir, 'lib/index.cjs')));
    // Packed with a workspace range, a README link that only works in the repository, a test
    // file, and no LICENSE.
    const unkempt = await packFixture('unkempt', async (dir) => {
      await edit(join(dir, 'package.json'), (text) =>
        text.replace('"engines"', '"dependencies": { "@retryline/core": "workspace:^" },\n  "engines"'),
      );
      await edit(join(dir, 'README.md'), (text) => `${text}\nMore in the [guide](../../README.md#guide).\n`);
      await writeFile(join(dir, 'lib/index.test.js'), 'export {};\n');
      await rm(join(dir, 'LICENSE'));
    });

    const { code, stdout } = await check(missingBuild, unkempt);
    expect(code).toBe(1);
    expect(stdout).toContain('Some tarballs have problems');

    const missing = problemsOf(stdout, missingBuild);
    expect(missing).toContain(
      'exports["."]["require"]["default"] is ./lib/index.cjs, which is not in the tarball',
    );
    expect(missing).toContain('main is ./lib/index.cjs, which is not in the tarball');
    // publint, run on the tarball itself, says so too.
    expect(missing.find((each) => each.startsWith('publint --strict:'))).toContain(
      'pkg.exports["."].require.default is ./lib/index.cjs but the file does not exist',
    );

    expect(problemsOf(stdout, unkempt)).toEqual([
      'LICENSE is missing',
      'dependencies.@retryline/core is "workspace:^": pack with pnpm, which rewrites it',
      'lib/index.test.js is a test file',
      'README.md links to ../../README.md#guide, which is dead on npm: link to the repository instead',
    ]);
  });
});
