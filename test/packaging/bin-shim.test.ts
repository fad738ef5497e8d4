import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * `retryline`'s bin is a committed shim (packages/cli/bin/retryline.js), so install links it before
 * any build; the command itself is dist/cli.js. Run through the shim, the built command behaves as
 * it does alone; unbuilt, the shim says what to do.
 */

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../../packages/cli/', import.meta.url));
const shim = join(cli, 'bin/retryline.js');

async function node(args: readonly string[]) {
  try {
    const { stdout, stderr } = await run(process.execPath, args);
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('the retryline bin shim', () => {
  it('runs the built command with its arguments and exit code (pnpm build first)', async () => {
    const args = ['schedule', '--retries', '3', '--format', 'csv'];
    const direct = await node([join(cli, 'dist/cli.js'), ...args]);
    expect(direct.code, direct.stderr).toBe(0);
    expect(await node([shim, ...args])).toEqual(direct);
    // A usage error keeps its exit code (2) and message through the shim.
    expect(await node([shim, 'schedule', '--bogus'])).toEqual(
      await node([join(cli, 'dist/cli.js'), 'schedule', '--bogus']),
    );
  });

  it('says to build first, and exits 1, when dist/cli.js does not exist', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'retryline-shim-'));
    try {
      await mkdir(join(dir, 'bin'));
      await cp(shim, join(dir, 'bin/retryline.js'));
      await cp(join(cli, 'package.json'), join(dir, 'package.json'));
      expect(await node([join(dir, 'bin/retryline.js'), 'schedule'])).toEqual({
        code: 1,
        stdout: '',
        stderr: 'retryline: the command is not built yet (dist/cli.js is missing): run `pnpm build` first\n',
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
