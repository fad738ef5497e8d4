import { describe, expect, it } from 'vitest';
import { run } from '../run';
import { STORM_POLICIES } from '../simulate/peers';
import { stormCommand } from './simulate-storm';

interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: readonly string[]): Promise<Output> {
  let stdout = '';
  let stderr = '';
  const code = await run(['simulate', 'storm', ...args], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

interface JsonStorm {
  scenario: Record<string, number | string>;
  policies: {
    policy: string;
    incidentAmplification: number;
    recoveredAfterMs: number | null;
    successRate: number;
    wasted: number;
    served: number;
  }[];
}

// A full run of the five policies takes some 7 s; the table test runs the default scenario once,
// the rest use a lighter load (--rate 60: a quarter of the requests).
describe('retryline simulate storm', () => {
  it('prints one row per policy, in STORM_POLICIES order, for the default scenario', async () => {
    const { code, stdout, stderr } = await cli(['--seed', '1']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain(
      'Retry storm, seed 1: 32 workers × 50ms (640 req/s), 240 req/s arriving for 15s',
    );
    const lines = stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('Policy'));
    expect(lines[header]).toMatch(
      /^Policy +Incident amplification +Recovery after stall +Success +Wasted work$/,
    );
    const rows = lines.slice(header + 1, header + 1 + STORM_POLICIES.length);
    expect(rows.map((row) => row.split(/ {2,}/)[0]?.trim())).toEqual(
      STORM_POLICIES.map((policy) => policy.name),
    );
    // Immediate retries: 4 attempts per request, and the backlog never clears.
    expect(rows[0]).toMatch(/ 4\.00× +never +/);
    // Retryline's defaults: under 1.2×, recovered within 2 s.
    const retryline = rows[3]?.split(/ {2,}/) ?? [];
    expect(Number.parseFloat(retryline[1] ?? '')).toBeLessThan(1.2);
    expect(Number.parseInt(retryline[2] ?? '', 10)).toBeLessThanOrEqual(2_000);
    console.log(stdout);
  }, 30_000);

  it('prints JSON with the same figures and is deterministic for a seed', async () => {
    const first = await cli(['--rate', '60', '--seed', '3', '--format', 'json']);
    const second = await cli(['--format', 'json', '--seed', '3', '--rate', '60']);
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const json = JSON.parse(first.stdout) as JsonStorm;
    expect(json.scenario).toMatchObject({
      seed: 3,
      ratePerSecond: 60,
      stallMs: 2_000,
      queueLimit: 'Infinity',
    });
    expect(json.policies.map((entry) => entry.policy)).toEqual(STORM_POLICIES.map((policy) => policy.name));
    for (const entry of json.policies) {
      expect(entry.incidentAmplification).toBeGreaterThanOrEqual(1);
      expect(entry.successRate).toBeGreaterThan(0);
      expect(entry.successRate).toBeLessThanOrEqual(1);
    }
  }, 30_000);

  it('takes --stall', async () => {
    const { code, stdout } = await cli(['--rate', '60', '--stall', '500ms', '--format', 'json']);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as JsonStorm).scenario.stallMs).toBe(500);
  }, 30_000);

  it('prints its help', async () => {
    const { code, stdout } = await cli(['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: retryline simulate storm \[options\]/);
    for (const flag of ['--seed', '--rate', '--stall', '--format']) expect(stdout).toContain(flag);
  });

  it.each([
    [['--format', 'csv'], "Expected --format to be one of table, json, got 'csv'"],
    [['--seed', '-1'], "Expected --seed to be a whole number from 0 to 4294967295, got '-1'"],
    [['--rate', '0'], 'Expected --rate to be a number of requests per second above 0 and at most 1000'],
    [['--rate', '5000'], 'at most 1000'],
    [['--rate', 'fast'], "Expected --rate to be a number such as 2 or 1.5, got 'fast'"],
    [
      ['--rate', '0.001'],
      "Expected --rate to bring at least 10 requests into the incident (the stall and the 8s after it, 10s): at least 1 per second, got '0.001'",
    ],
    [
      ['--rate', '0.5', '--stall', '500ms'],
      "Expected --rate to bring at least 10 requests into the incident (the stall and the 8s after it, 8.5s): at least 1.18 per second, got '0.5'",
    ],
    [['--stall', '11s'], 'Expected --stall to be at most 10s'],
    [['--stall', 'long'], '--stall'],
    [['--retries', '3'], "Unknown option '--retries'"],
    [['extra'], "Unexpected argument 'extra'"],
  ])('refuses %j', async (args, message) => {
    const { code, stdout, stderr } = await cli(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(message);
  });

  it('keeps the signature simulate.ts dispatches to', () => {
    const command: (args: readonly string[], io: never) => number | Promise<number> = stormCommand;
    expect(command).toBeTypeOf('function');
  });
});
