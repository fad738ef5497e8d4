import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../scripts/release.mjs', import.meta.url));
const release = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  spawnSync(process.execPath, [script, ...args], {
    encoding: 'utf8',
    env: { ...process.env, npm_config_dry_run: '', ...env },
  });

describe('pnpm release: its options', () => {
  it('refuses --offline outside a dry run, before doing anything: a forced publish would republish', () => {
    const { status, stderr, stdout } = release(['--offline']);
    expect(status).toBe(2);
    expect(stderr).toContain('--offline is for a dry run only');
    expect(stdout).toBe('');
  });

  it('refuses an unknown option with its usage', () => {
    const { status, stderr } = release(['--publish-now']);
    expect(status).toBe(2);
    expect(stderr).toContain('usage: pnpm release [--dry-run] [--offline]');
  });
});
