import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cloneRoot, commandLine } from './how-to-run';

/** A fake CLI package at `packageDir` (under `base`), with its built module; returns the module's URL. */
function cliAt(base: string, packageDir: string, workspace: boolean): string {
  const dir = join(base, packageDir);
  mkdirSync(join(dir, 'dist'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"name":"@retryline/cli"}');
  writeFileSync(join(dir, 'dist', 'cli.js'), '');
  if (workspace) writeFileSync(join(base, 'pnpm-workspace.yaml'), "packages: ['packages/*']\n");
  return pathToFileURL(join(dir, 'dist', 'cli.js')).href;
}

describe('cloneRoot', () => {
  it('is the workspace root when the CLI runs from packages/cli of a clone', () => {
    const base = mkdtempSync(join(tmpdir(), 'retryline-clone-'));
    expect(cloneRoot(cliAt(base, 'packages/cli', true))).toBe(base);
  });

  it('is undefined for an installed package, even inside a workspace', () => {
    const base = mkdtempSync(join(tmpdir(), 'retryline-app-'));
    expect(cloneRoot(cliAt(base, 'node_modules/@retryline/cli', true))).toBeUndefined();
    expect(cloneRoot(cliAt(base, 'packages/cli/node_modules/@retryline/cli', true))).toBeUndefined();
  });

  it('is undefined for a packages/cli folder outside a pnpm workspace', () => {
    const base = mkdtempSync(join(tmpdir(), 'retryline-copy-'));
    expect(cloneRoot(cliAt(base, 'packages/cli', false))).toBeUndefined();
  });

  it('finds this repository when run from its sources', () => {
    expect(cloneRoot()).toBe(join(import.meta.dirname, '..', '..', '..'));
  });
});

describe('commandLine', () => {
  it('names the scoped package for npx, never the unscoped `retryline`', () => {
    expect(commandLine(['view'], 'retryline-demo.json', { root: undefined, cwd: '/home/me/app' })).toBe(
      'npx @retryline/cli view retryline-demo.json',
    );
  });

  it("in a clone, gives the file from the clone's root, where pnpm runs the script", () => {
    const root = '/src/retryline';
    expect(commandLine(['view'], 'retryline-demo.json', { root, cwd: root })).toBe(
      'pnpm retryline view retryline-demo.json',
    );
    expect(commandLine(['view'], 'out/run.json', { root, cwd: `${root}/examples` })).toBe(
      'pnpm retryline view examples/out/run.json',
    );
    expect(commandLine(['view'], '../run.json', { root, cwd: root })).toBe(
      'pnpm retryline view /src/run.json',
    );
    expect(commandLine(['view'], '/tmp/run.json', { root, cwd: root })).toBe(
      'pnpm retryline view /tmp/run.json',
    );
  });

  it('quotes a file name the shell would split or expand', () => {
    expect(commandLine(['view'], "my run's $HOME.json", { root: undefined, cwd: '/app' })).toBe(
      `npx @retryline/cli view 'my run'\\''s $HOME.json'`,
    );
  });
});
