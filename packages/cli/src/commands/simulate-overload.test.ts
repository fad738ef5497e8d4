import { describe, expect, it } from 'vitest';
import { run } from '../run';
import { OVERLOAD_POLICIES } from '../simulate/peers';

async function cli(args: readonly string[]) {
  let stdout = '';
  let stderr = '';
  const code = await run(['simulate', 'overload', ...args], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  });
  return { code, stdout, stderr };
}

interface JsonOverload {
  scenario: Record<string, number>;
  capacityPerSecond: number;
  policies: {
    policy: string;
    goodputPerSecond: number;
    rejected: number;
    attempts: number;
    refused: number;
    successRate: number;
    p99Ms: number;
  }[];
}

// The three policies over the default 40 s of virtual time take some 5 s; these runs measure 10 s
// or 5 s instead of 30 (the claim itself is tested on the default scenario in overload.test.ts).
describe('retryline simulate overload', () => {
  it('prints one row per policy, in OVERLOAD_POLICIES order', async () => {
    const { code, stdout, stderr } = await cli(['--duration', '10s']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain(
      'Overload, seed 1: 8 workers × 40ms (200 req/s), 400 req/s arriving (2× capacity) through 10 clients',
    );
    expect(stdout).toContain(
      'each costing a worker 4ms (10.0 % of a request); measured for 10s after 10s of warm-up',
    );
    const lines = stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('Policy'));
    expect(lines[header]).toMatch(
      /^Policy +Goodput +Rejected at server +Attempts sent +Refused by client +Success +p99$/,
    );
    const rows = lines
      .slice(header + 1, header + 1 + OVERLOAD_POLICIES.length)
      .map((row) => row.split(/ {2,}/));
    expect(rows.map((row) => row[0]?.trim())).toEqual(OVERLOAD_POLICIES.map((policy) => policy.name));
    const goodput = rows.map((row) => Number(row[1]?.replace('/s', '')));
    const rejected = rows.map((row) => Number(row[2]?.split(' ')[0]?.replaceAll(',', '')));
    // Retryline + throttle (last) against Retryline's defaults: more goodput, fewer 503s.
    expect(goodput[2]).toBeGreaterThanOrEqual((goodput[1] as number) * 0.98);
    expect(rejected[2]).toBeLessThan(rejected[1] as number);
    // Only the throttle refuses anything.
    expect(rows.map((row) => row[4]?.startsWith('0 '))).toEqual([true, true, false]);
  }, 60_000);

  it('prints JSON with the same figures, deterministic for a seed, and takes its options', async () => {
    const args = [
      '--seed',
      '3',
      '--duration',
      '5s',
      '--load',
      '1.5',
      '--reject-cost',
      '0.2',
      '--clients',
      '4',
    ];
    const first = await cli([...args, '--format', 'json']);
    const again = await cli([...args, '--format', 'json']);
    expect(first.code).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    const json = JSON.parse(first.stdout) as JsonOverload;
    expect(json.scenario).toMatchObject({
      seed: 3,
      durationMs: 5_000,
      offeredLoad: 1.5,
      rejectShare: 0.2,
      clients: 4,
    });
    expect(json.policies.map((p) => p.policy)).toEqual(OVERLOAD_POLICIES.map((policy) => policy.name));
    for (const policy of json.policies) {
      expect(policy.goodputPerSecond).toBeGreaterThan(0);
      expect(policy.goodputPerSecond).toBeLessThanOrEqual(json.capacityPerSecond);
    }
  }, 60_000);

  it.each([
    [
      ['--load', '0'],
      "Expected --load to be a multiple of the server's capacity above 0 and at most 10, got '0'",
    ],
    [
      ['--reject-cost', '2'],
      "Expected --reject-cost to be a share of a request's service time from 0 to 1, such as 0.1, got '2'",
    ],
    [['--duration', '500ms'], "Expected --duration to be at least 1s (the window measured), got '500ms'"],
    [['--clients', '0'], "Expected --clients to be a whole number from 1 to 1000, got '0'"],
    [['--format', 'csv'], "Expected --format to be one of table, json, got 'csv'"],
    [['extra'], "Unexpected argument 'extra': 'retryline simulate overload' takes only options"],
    [
      ['--load', '10', '--duration', '60s'],
      'Expected --load and --duration to bring at most 40,000 requests per policy (2000 req/s for 10s of warm-up and the window), got 140,000: lower --load or --duration',
    ],
  ])('refuses %j with exit code 2', async (args, message) => {
    const { code, stdout, stderr } = await cli(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toBe(`retryline: ${message}\n`);
  });

  it('prints its help', async () => {
    const { code, stdout } = await cli(['--help']);
    expect(code).toBe(0);
    expect(stdout.startsWith('Usage: retryline simulate overload [options]\n')).toBe(true);
    expect(stdout).toContain('--reject-cost <share>');
  });
});
