import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cmd, type LintMessage, type LintResult } from 'web-ext';

// `web-ext lint` (addons-linter: what addons.mozilla.org runs on a submission) over the Firefox
// build. The release build is minified, so a finding's line and column say nothing of whose code
// it is; the same sources built with `--dev` keep esbuild's `// path` comment before each module,
// and a finding there belongs to the module whose comment comes last before it. A finding in a
// dependency's code (node_modules) is that dependency's to fix and is allowed; one in Retryline's
// own code (extension/src, packages/*) fails the test, and so does any error or notice.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const RELEASE = join(ROOT, 'extension/dist/firefox');

let dev: string;
let release: LintResult;
let devResult: LintResult;

const lint = (sourceDir: string) => cmd.lint({ sourceDir, output: 'none' }, { shouldExitProgram: false });

beforeAll(async () => {
  if (!existsSync(join(RELEASE, 'manifest.json'))) {
    throw new Error(`${RELEASE} is not built: run \`pnpm build:extension\` (pnpm test builds it)`);
  }
  dev = mkdtempSync(join(tmpdir(), 'retryline-lint-'));
  await promisify(execFile)(process.execPath, ['extension/scripts/build.mjs', '--dev', '--out', dev], {
    cwd: ROOT,
  });
  [release, devResult] = await Promise.all([lint(RELEASE), lint(join(dev, 'firefox'))]);
}, 60_000);

afterAll(() => {
  if (dev) rmSync(dev, { recursive: true, force: true });
});

/** The module (a path from the repository's root) a finding's line of a dev build falls in. */
function moduleOf(message: LintMessage): string {
  if (!message.file || !message.line) return '(no line)';
  const lines = readFileSync(join(dev, 'firefox', message.file), 'utf8').split('\n');
  for (let at = message.line - 1; at >= 0; at--) {
    const comment = /^\s*\/\/ ((?:\.\.\/)*[\w@.+-]+\/[\w@.+/-]+\.[cm]?[jt]sx?)$/.exec(lines[at] ?? '');
    if (comment?.[1]) return comment[1].replace(/^(\.\.\/)+/, '');
  }
  return message.file;
}

const ofDependency = (message: LintMessage) => moduleOf(message).includes('node_modules/');
const describeMessage = (message: LintMessage) =>
  `${message.code} in ${message.file ?? 'the add-on'}${message.line ? `:${message.line}` : ''} (${moduleOf(message)}): ${message.message}`;

describe('web-ext lint on the Firefox build', () => {
  it('finds no error, notice or warning in Retryline’s own code, nor in its manifest', () => {
    for (const result of [release, devResult]) {
      expect(result.errors.map((m) => `${m.code}: ${m.message}`)).toEqual([]);
      expect(result.notices.map((m) => `${m.code}: ${m.message}`)).toEqual([]);
    }
    expect(devResult.warnings.filter((message) => !ofDependency(message)).map(describeMessage)).toEqual([]);
  });

  it('warns of the release build only what it warns of the same code of a dependency in the dev build', () => {
    // Preact's `dangerouslySetInnerHTML` support assigns innerHTML (Retryline renders text only and
    // never passes that prop, DESIGN §10): addons-linter flags the assignment wherever it is bundled.
    const passing = readFileSync(join(dev, 'firefox', 'panel.js'), 'utf8')
      .split('\n')
      .flatMap((line, at) =>
        line.includes('dangerouslySetInnerHTML')
          ? [moduleOf({ code: '', message: '', file: 'panel.js', line: at + 1 })]
          : [],
      );
    expect(passing.filter((module) => !module.includes('node_modules/'))).toEqual([]);
    const key = (message: LintMessage) => `${message.code} in ${message.file}`;
    const allowed = devResult.warnings.filter(ofDependency).map(key).sort();
    expect(release.warnings.map(key).sort()).toEqual(allowed);
  });
});

describe('the permissions each build asks for', () => {
  // `storage` alone: no install warning. The relay reports new documents itself, so neither build
  // asks for `webNavigation` ("read your browsing history"), nor for host permissions or tabs.
  it.each(['chrome', 'firefox'])('the %s build asks for storage and nothing else', (browser) => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'extension/dist', browser, 'manifest.json'), 'utf8'));
    expect(manifest.permissions).toEqual(['storage']);
    expect(manifest.optional_permissions ?? []).toEqual([]);
    expect(manifest.host_permissions ?? []).toEqual([]);
  });
});
