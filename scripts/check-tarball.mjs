// Checks packed tarballs (`pnpm pack` output) as npm would serve them: what a user installs, not the
// package directory it was packed from. `pnpm release` runs it on every public package; run it by
// hand on any tarball:
//
//   node scripts/check-tarball.mjs packages/fetch/retryline-fetch-0.1.0.tgz
//
// Each tarball gets publint (--strict) and arethetypeswrong, both on the tarball itself, plus the
// checks neither makes: every path package.json points at is in the tarball, LICENSE and README.md
// ship, no `workspace:`/`link:`/`file:` dependency survived packing, no test file ships, and the
// shipped Markdown links nowhere relative (npm renders a README away from the repository, so
// `../../README.md` is a dead link there). Exit code 1 when any tarball has a problem.
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => join(root, 'node_modules', '.bin', name);

/** package.json fields whose values are paths into the package. */
const POINTERS = ['main', 'module', 'types', 'typings', 'browser'];
const LOCAL_SPEC = /^(workspace|link|file):/;
const TEST_FILE = /\.test(-d)?\.[cm]?[jt]sx?$/;
// [text](target) and [text]: target. A target with a scheme, or only an anchor, works anywhere.
const MARKDOWN_LINK = /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|^\s*\[[^\]]+\]:\s*(\S+)/gm;
const CODE = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$|`[^`\n]*`/gm;
const ABSOLUTE_TARGET = /^([a-z][a-z\d+.-]*:|#)/i;

async function listFiles(dir) {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split('\\').join('/'));
}

/** Every string in an `exports`/`bin`/`typesVersions` value, with where it was found. */
function* targets(value, where) {
  if (typeof value === 'string') yield [where, value];
  else if (Array.isArray(value))
    for (const [index, item] of value.entries()) yield* targets(item, `${where}[${index}]`);
  else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) yield* targets(item, `${where}[${JSON.stringify(key)}]`);
  }
}

function pointerProblems(pkg, files) {
  const found = [];
  for (const field of POINTERS) if (typeof pkg[field] === 'string') found.push([`${field}`, pkg[field]]);
  found.push(...targets(pkg.exports, 'exports'));
  found.push(...targets(typeof pkg.bin === 'string' ? { [pkg.name]: pkg.bin } : pkg.bin, 'bin'));
  for (const [range, map] of Object.entries(pkg.typesVersions ?? {}))
    found.push(...targets(map, `typesVersions[${JSON.stringify(range)}]`));
  const shipped = new Set(files);
  const problems = [];
  for (const [where, target] of found) {
    // Source conditions (`@retryline/source`) point at src/, which ships; `null` and patterns with
    // `*` are not single files.
    if (target.includes('*')) continue;
    const path = target.replace(/^\.\//, '');
    if (!shipped.has(path)) problems.push(`${where} is ${target}, which is not in the tarball`);
  }
  return problems;
}

function dependencyProblems(pkg) {
  const problems = [];
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) {
    for (const [name, spec] of Object.entries(pkg[field] ?? {})) {
      if (LOCAL_SPEC.test(spec))
        problems.push(`${field}.${name} is "${spec}": pack with pnpm, which rewrites it`);
    }
  }
  return problems;
}

async function markdownProblems(dir, files) {
  const problems = [];
  for (const file of files.filter((name) => name.endsWith('.md'))) {
    // Code is not prose: `a[i](x)` in a code block or span is no link.
    const text = (await readFile(join(dir, file), 'utf8')).replace(CODE, '');
    for (const match of text.matchAll(MARKDOWN_LINK)) {
      const target = match[1] ?? match[2] ?? '';
      if (!ABSOLUTE_TARGET.test(target)) {
        problems.push(`${file} links to ${target}, which is dead on npm: link to the repository instead`);
      }
    }
  }
  return problems;
}

async function tool(command, args) {
  try {
    const { stdout, stderr } = await run(command, args, {
      maxBuffer: 16 * 1024 * 1024,
      env: { ...process.env, NO_COLOR: '1' },
    });
    return { ok: true, output: `${stdout}${stderr}` };
  } catch (error) {
    if (typeof error.code !== 'number') throw error;
    return { ok: false, output: `${error.stdout ?? ''}${error.stderr ?? ''}` };
  }
}

/**
 * Checks one tarball. Resolves to its name, version, sizes (bytes) and file count, and the
 * problems found (empty when it is fine); rejects only when a checker cannot run at all.
 */
export async function checkTarball(tarball) {
  const file = resolve(tarball);
  const dir = await mkdtemp(join(tmpdir(), 'retryline-tarball-'));
  try {
    await run('tar', ['-xzf', file, '-C', dir]);
    const packageDir = join(dir, 'package');
    const files = await listFiles(packageDir);
    const pkg = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8'));
    let unpacked = 0;
    for (const each of files) unpacked += (await stat(join(packageDir, each))).size;

    const problems = [
      ...['LICENSE', 'README.md'].filter((name) => !files.includes(name)).map((name) => `${name} is missing`),
      ...pointerProblems(pkg, files),
      ...dependencyProblems(pkg),
      ...files.filter((name) => TEST_FILE.test(name)).map((name) => `${name} is a test file`),
      ...(await markdownProblems(packageDir, files)),
    ];
    const [publint, attw] = await Promise.all([
      tool(bin('publint'), ['run', '--strict', file]),
      tool(bin('attw'), [file, '--format', 'ascii', '--no-emoji', '--no-color']),
    ]);
    // Without their blank lines, so a report's sections stay apart.
    const lines = (output) =>
      output
        .split('\n')
        .filter((line) => line.trim() !== '')
        .join('\n');
    if (!publint.ok) problems.push(`publint --strict:\n${lines(publint.output)}`);
    if (!attw.ok) problems.push(`arethetypeswrong:\n${lines(attw.output)}`);
    return {
      name: pkg.name,
      version: pkg.version,
      tarball: basename(file),
      packed: (await stat(file)).size,
      unpacked,
      files: files.length,
      problems,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const size = (bytes) => (bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(2)} MB`);

/** The tarballs as a table: package, version, packed and unpacked size, file count. */
export function formatTable(results) {
  const rows = [
    ['package', 'version', 'tarball', 'packed', 'unpacked', 'files'],
    ...results.map((each) => [
      each.name,
      each.version,
      each.tarball,
      size(each.packed),
      size(each.unpacked),
      String(each.files),
    ]),
  ];
  const total = results.reduce(
    (sum, each) => [sum[0] + each.packed, sum[1] + each.unpacked, sum[2] + each.files],
    [0, 0, 0],
  );
  rows.push(['total', '', '', size(total[0]), size(total[1]), String(total[2])]);
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  const numeric = new Set([3, 4, 5]);
  const line = (row) =>
    row
      .map((cell, column) =>
        numeric.has(column) ? cell.padStart(widths[column]) : cell.padEnd(widths[column]),
      )
      .join('  ')
      .trimEnd();
  return [
    line(rows[0]),
    widths.map((width) => '-'.repeat(width)).join('  '),
    ...rows.slice(1).map(line),
  ].join('\n');
}

/** Checks every tarball (two at a time: attw is the slow part) and reports; true when all pass. */
export async function checkTarballs(tarballs, log = console.log) {
  const results = [];
  for (let index = 0; index < tarballs.length; index += 2) {
    results.push(...(await Promise.all(tarballs.slice(index, index + 2).map(checkTarball))));
  }
  for (const each of results) {
    if (each.problems.length === 0) continue;
    log(`\n✗ ${each.name}@${each.version} (${each.tarball}):`);
    for (const problem of each.problems) log(`  - ${problem.replaceAll('\n', '\n    ')}`);
  }
  return { results, ok: results.every((each) => each.problems.length === 0) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const tarballs = process.argv.slice(2);
  if (tarballs.length === 0) {
    console.error('Usage: node scripts/check-tarball.mjs <package.tgz>...');
    process.exit(2);
  }
  const { results, ok } = await checkTarballs(tarballs);
  console.log(`\n${formatTable(results)}`);
  console.log(ok ? '\nEvery tarball passed.' : '\nSome tarballs have problems (listed above).');
  process.exitCode = ok ? 0 : 1;
}
