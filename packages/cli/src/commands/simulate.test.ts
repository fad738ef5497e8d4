import { describe, expect, it } from 'vitest';
import { run } from '../run';
import { simulateHerd } from '../simulate/herd';

async function cli(args: readonly string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(['simulate', ...args], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

describe('retryline simulate', () => {
  it('lists its simulations with --help, and on stderr with exit 2 without one', async () => {
    const help = await cli(['--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.startsWith('Usage: retryline simulate <simulation> [options]\n')).toBe(true);
    expect(help.stdout).toMatch(/^ {2}herd {6}\S/m);
    expect(help.stdout).toMatch(/^ {2}storm {5}\S/m);
    expect(help.stdout).toMatch(/^ {2}overload {2}\S/m);
    const bare = await cli([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toBe(help.stdout);
  });

  it.each([
    [
      ['herds'],
      "Unknown simulation 'herds' (simulations: herd, storm, overload): see 'retryline simulate --help'",
    ],
    [['--seed', '1'], "Unknown option '--seed' before a subcommand: see 'retryline simulate --help'"],
  ])('refuses %j with exit code 2', async (args, message) => {
    const { code, stdout, stderr } = await cli(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`retryline: ${message}\n`);
  });

  it('help herd and herd --help print the herd help', async () => {
    const a = await cli(['help', 'herd']);
    const b = await cli(['herd', '--help']);
    expect(a.stdout.startsWith('Usage: retryline simulate herd [options]\n')).toBe(true);
    expect(b).toEqual(a);
  });

  it.each(['storm', 'overload'])('dispatches %s to its own command', async (name) => {
    const { code, stdout, stderr } = await cli([name, '--help']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout.startsWith(`Usage: retryline simulate ${name}`)).toBe(true);
  });
});

describe('retryline simulate herd', () => {
  it('prints calls and completion per strategy for each client count', async () => {
    const { code, stdout, stderr } = await cli(['herd', '--clients', '10..30']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    const first = await simulateHerd({ clients: 10, strategy: 'full', seed: 1 });
    expect(stdout).toContain('Calls (read-then-write tries of all clients)\n');
    expect(stdout).toContain('Clients  none  full  equal  decorrelated  no-backoff\n');
    expect(stdout).toContain('Completion (the last client');
    const calls = stdout.split('Completion')[0] ?? '';
    const row10 = calls.split('\n').find((line) => line.trimStart().startsWith('10 '));
    expect(row10?.trim().split(/\s+/)[2]).toBe(String(first.calls));
    // 100 was not run, so the ratio is read at the largest count.
    expect(stdout).toMatch(/none \(no jitter\) makes \d+\.\d\d× the calls of full jitter at 30 clients\.\n$/);
  });

  it('reports the none/full ratio at 100 clients', async () => {
    const { stdout } = await cli(['herd', '--clients', '90..110', '--format', 'json']);
    const report = JSON.parse(stdout) as {
      model: Record<string, number>;
      rows: { clients: number; strategy: string; calls: number; completionMs: number }[];
      noneToFullCalls: { clients: number; ratio: number };
    };
    expect(report.model).toEqual({ seed: 1, hopMs: 10, base: 5, cap: 2000 });
    expect(report.rows).toHaveLength(15);
    expect(report.noneToFullCalls.clients).toBe(100);
    expect(report.noneToFullCalls.ratio).toBeGreaterThan(2);
  });

  it('writes CSV, one row per clients and strategy; the output is a function of --seed', async () => {
    const a = await cli(['herd', '--clients', '20', '--seed', '4', '--format', 'csv']);
    const b = await cli(['herd', '--clients', '20', '--seed', '4', '--format', 'csv']);
    expect(b).toEqual(a);
    const lines = a.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('clients,strategy,calls,completion_ms');
    expect(lines.slice(1).map((line) => line.split(',').slice(0, 2).join(','))).toEqual([
      '20,none',
      '20,full',
      '20,equal',
      '20,decorrelated',
      '20,no-backoff',
    ]);
    const none = await simulateHerd({ clients: 20, strategy: 'none', seed: 4 });
    expect(lines[1]).toBe(`20,none,${none.calls},${Math.round(none.completionMs * 1000) / 1000}`);
  });

  it('--step spaces the counts', async () => {
    const { stdout } = await cli(['herd', '--clients', '5..25', '--step', '10', '--format', 'csv']);
    const counts = new Set(
      stdout
        .trimEnd()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[0]),
    );
    expect([...counts]).toEqual(['5', '15', '25']);
    // The range's end is run even when the step does not land on it.
    const offStep = await cli(['herd', '--clients', '10..25', '--step', '10', '--format', 'csv']);
    expect(
      new Set(
        offStep.stdout
          .trimEnd()
          .split('\n')
          .slice(1)
          .map((line) => line.split(',')[0]),
      ),
    ).toEqual(new Set(['10', '20', '25']));
  });

  it.each([
    [
      ['--clients', '0'],
      "Expected --clients to be a count from 1 to 2000 or a range such as 10..200, got '0'",
    ],
    [
      ['--clients', '10..x'],
      "Expected --clients to be a count from 1 to 2000 or a range such as 10..200, got '10..x'",
    ],
    [
      ['--clients', '2001'],
      "Expected --clients to be a count from 1 to 2000 or a range such as 10..200, got '2001'",
    ],
    [
      ['--clients', '50..10'],
      "Expected --clients to be a range from low to high such as 10..200, got '50..10'",
    ],
    [['--step', '0'], "Expected --step to be a whole number from 1 to 2000, got '0'"],
    [['--step', '-1'], "Expected --step to be a whole number from 1 to 2000, got '-1'"],
    [
      ['--clients', '5', '--step', '3'],
      '--step spaces a range of client counts, and --clients 5 is one count: use a range such as 5..50',
    ],
    [
      ['--clients', '1000..2000', '--step', '100'],
      'That sweep would run 11 herds of up to 2000 clients, about 7× the most one command simulates (one herd of 2000 clients, some 20 s): raise --step or narrow --clients',
    ],
    [
      ['--clients', '1..2000', '--step', '1'],
      'That sweep would run 2000 herds of up to 2000 clients, about 668× the most one command simulates (one herd of 2000 clients, some 20 s): raise --step or narrow --clients',
    ],
    [['--seed', 'x'], "Expected --seed to be a whole number from 0 to 4294967295, got 'x'"],
    [['--format', 'xml'], "Expected --format to be one of table, json, csv, got 'xml'"],
    [['--jitter', 'full'], "Unknown option '--jitter': see 'retryline simulate herd --help'"],
    [['now'], "Unexpected argument 'now': 'retryline simulate herd' takes only options"],
  ])('refuses %j with exit code 2', async (args, message) => {
    const { code, stdout, stderr } = await cli(['herd', ...args]);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`retryline: ${message}\n`);
  });
});
