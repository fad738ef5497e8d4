import { describe, expect, it } from 'vitest';
import { type RunIo, run } from './run';

async function cli(argv: readonly string[], overrides: Partial<RunIo> = {}) {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    ...overrides,
  });
  return { code, stdout, stderr };
}

describe('retryline', () => {
  it.each([['--help'], ['-h'], ['help']])(
    '%s prints the usage with its commands and exits 0',
    async (flag) => {
      const { code, stdout, stderr } = await cli([flag]);
      expect(code).toBe(0);
      expect(stderr).toBe('');
      expect(stdout.startsWith('Usage: retryline <command> [options]\n')).toBe(true);
      expect(stdout).toMatch(/^ {2}schedule {2}\S/m);
    },
  );

  it('prints the usage on stderr and exits 2 without a command', async () => {
    const { code, stdout, stderr } = await cli([]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr.startsWith('Usage: retryline <command> [options]\n')).toBe(true);
  });

  it('help <command> prints that command’s help', async () => {
    const { code, stdout } = await cli(['help', 'schedule']);
    expect(code).toBe(0);
    expect(stdout.startsWith('Usage: retryline schedule [options]\n')).toBe(true);
  });

  it.each([
    [
      ['simulat'],
      "Unknown command 'simulat' (commands: demo, schedule, simulate, view): see 'retryline --help'",
    ],
    [
      ['help', 'nope'],
      "Unknown command 'nope' (commands: demo, schedule, simulate, view): see 'retryline --help'",
    ],
    [['--verbose'], "Unknown option '--verbose' before a command: see 'retryline --help'"],
  ])('refuses %j with exit code 2', async (argv, message) => {
    const { code, stdout, stderr } = await cli(argv);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`retryline: ${message}\n`);
  });

  it('exits 1 and reports an unexpected failure, such as a closed stdout', async () => {
    const { code, stderr } = await cli(['schedule'], {
      stdout: () => {
        throw new Error('write EPIPE');
      },
    });
    expect(code).toBe(1);
    expect(stderr).toMatch(/^retryline: unexpected error: Error: write EPIPE/);
  });
});
