import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// The built binary, as a user runs it: this suite needs `pnpm build` first (`pnpm test` does it).
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = 'packages/cli/dist/cli.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function expectBuilt(): void {
  expect(existsSync(new URL(`../${bin}`, import.meta.url)), `${bin} is missing: run pnpm build`).toBe(true);
}

async function retryline(args: readonly string[]): Promise<Run> {
  expectBuilt();
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], { cwd: root });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('the retryline binary', () => {
  it('prints the exponential table capped at 64 s and exits 0', async () => {
    const { code, stdout, stderr } = await retryline([
      'schedule',
      '--strategy',
      'exponential',
      '--base',
      '1s',
      '--retries',
      '10',
      '--max-delay',
      '64s',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const backoffs = stdout
      .split('\n')
      .filter((line) => /^ +\d+ +\d+ /.test(line))
      .map((line) => line.trim().split(/ +/)[2]);
    expect(backoffs).toEqual(['2s', '4s', '8s', '16s', '32s', '64s', '64s', '64s', '64s', '64s']);
    expect(stdout).toContain('   10       11      64s        382s (~6.4 min)\n');
    expect(stdout).toContain('\nMean Delay: 38.2s\n');
  });

  it('exits 2 with the message on stderr for an unknown flag', async () => {
    const { code, stdout, stderr } = await retryline(['schedule', '--bogus']);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe("retryline: Unknown option '--bogus': see 'retryline schedule --help'\n");
  });

  it('stops quietly when the reader closes the pipe early, as `retryline schedule | head -1` does', async () => {
    expectBuilt();
    // 100,000 rows are megabytes: far more than a pipe holds, so the binary is still writing.
    const child = spawn(process.execPath, [bin, 'schedule', '--retries', '100000'], { cwd: root });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
