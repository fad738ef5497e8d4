import { describe, expect, it } from 'vitest';
import { run } from '../run';
import { CLOSED_STORM_POLICIES, STORM_POLICIES } from '../simulate/peers';
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

// A full run of the six policies takes some 8 s; the table test runs the default scenario once,
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

interface JsonClosedStorm {
  scenario: Record<string, number | string>;
  windowMs: number;
  policies: {
    policy: string;
    logicalRequests: number;
    windowRequests: number;
    windowAmplification: number;
    peakVsSteady: number | null;
    successRate: number;
    p50Ms: number;
    p99Ms: number;
    recoveredAfterMs: number | null;
    wasted: number;
    served: number;
    maxOutstanding: number;
    attempts: number;
    timeline: { t: number; sent: number; served: number; queue: number }[];
  }[];
}

// A closed-loop run of the nine policies at the defaults takes some 5 s; the table test runs it
// once, the rest use 100 clients.
describe('retryline simulate storm --clients (closed loop)', () => {
  it('prints one row per policy with the five measures, for the default closed loop', async () => {
    const { code, stdout, stderr } = await cli(['--clients', '400', '--seed', '1']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toContain(
      'Closed-loop retry storm, seed 1: 400 clients thinking 412ms on average (about 60 % of capacity), 8 workers × 5ms (1600 req/s), a 2s stall at 5s',
    );
    const lines = stdout.split('\n');
    const header = lines.findIndex((line) => line.startsWith('Policy'));
    expect(lines[header]).toMatch(
      /^Policy +Requests +Amplification \(4s\) +Peak vs steady +Success +p50 +p99 +Recovery after stall +Wasted work$/,
    );
    const rows = lines.slice(header + 1, header + 1 + CLOSED_STORM_POLICIES.length);
    const cells = rows.map((row) => row.split(/ {2,}/).map((cell) => cell.trim()));
    expect(cells.map((row) => row[0])).toEqual(CLOSED_STORM_POLICIES.map((policy) => policy.name));
    // No retries: one attempt per request, some requests time out (p99 = the 1 s timeout).
    expect(cells[0]?.slice(2)).toEqual([
      '1.00×',
      expect.stringMatching(/^\d\.\d\d×$/),
      expect.stringMatching(/^9\d\.\d %$/),
      '5ms',
      '1s',
      expect.stringMatching(/^\d+ ms$/),
      expect.stringMatching(/^\d+ of \d+ served \(\d+\.\d %\)$/),
    ]);
    // Immediate retries ×3: more than one attempt per request in the window.
    expect(Number.parseFloat(cells[1]?.[2] ?? '')).toBeGreaterThan(1);
    console.log(stdout);
  }, 60_000);

  it('prints JSON with the measures and is deterministic for a seed', async () => {
    const args = ['--clients', '100', '--seed', '3', '--format', 'json'];
    const first = await cli(args);
    const second = await cli(['--format', 'json', '--seed', '3', '--clients', '100']);
    expect(first.code).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    const json = JSON.parse(first.stdout) as JsonClosedStorm;
    expect(json.scenario).toMatchObject({
      clients: 100,
      thinkMs: 412,
      seed: 3,
      workers: 8,
      queueLimit: 'Infinity',
    });
    expect(json.windowMs).toBe(4_000);
    expect(json.policies.map((entry) => entry.policy)).toEqual(
      CLOSED_STORM_POLICIES.map((policy) => policy.name),
    );
    for (const entry of json.policies) {
      expect(entry.maxOutstanding).toBeLessThanOrEqual(100);
      expect(entry.p50Ms).toBeLessThanOrEqual(entry.p99Ms);
      expect(entry.successRate).toBeGreaterThan(0);
      expect(entry.successRate).toBeLessThanOrEqual(1);
    }
    expect(json.policies[0]).toMatchObject({ policy: 'no retries', windowAmplification: 1 });
    // The timeline: 100 ms buckets over the 15 s requests start in, for charts.
    for (const entry of json.policies) {
      expect(entry.timeline).toHaveLength(150);
      expect(entry.timeline[149]?.t).toBe(14_900);
      const sent = entry.timeline.reduce((sum, bucket) => sum + bucket.sent, 0);
      expect(sent).toBeLessThanOrEqual(entry.attempts);
      expect(sent).toBeGreaterThan(entry.attempts * 0.9);
    }
  }, 60_000);

  it('takes --think and --stall', async () => {
    const { code, stdout } = await cli([
      '--clients',
      '100',
      '--think',
      '1s',
      '--stall',
      '500ms',
      '--format',
      'json',
    ]);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as JsonClosedStorm).scenario).toMatchObject({ thinkMs: 1_000, stallMs: 500 });
  }, 60_000);

  it('documents --clients and --think in its help', async () => {
    const { stdout } = await cli(['--help']);
    expect(stdout).toContain('--clients <n>        closed loop with this many clients, 1 to 10000');
    expect(stdout).toContain('--think <duration>   closed loop: mean think time');
    expect(stdout).toContain('retryline simulate storm --clients 400 --think 412ms');
  });

  it.each([
    [['--clients', '0'], "Expected --clients to be a whole number from 1 to 10000, got '0'"],
    [['--clients', '2.5'], "Expected --clients to be a whole number from 1 to 10000, got '2.5'"],
    [['--clients', 'many'], "Expected --clients to be a whole number from 1 to 10000, got 'many'"],
    [['--clients', '20000'], "Expected --clients to be a whole number from 1 to 10000, got '20000'"],
    [
      ['--clients', '400', '--think', 'slow'],
      "Expected --think to be a duration such as 250ms, 1s or 2m, got 'slow'",
    ],
    [
      ['--think', '1s'],
      "Expected --think only with --clients: it is the closed loop's mean think time, got '1s' without --clients",
    ],
    [['--clients', '400', '--rate', '100'], 'Expected --rate or --clients, not both'],
    [
      ['--clients', '400', '--think', '100ms'],
      'Expected --clients / --think to be at most 2000 requests per second (a client whose requests fail at once starts one per think time), got 400 clients thinking 100ms (4000 per second)',
    ],
    [
      ['--clients', '400', '--think', '0'],
      "Expected --think to be above 0 with --clients: a client whose requests fail at once would start them without end, got '0'",
    ],
    [
      ['--clients', '1', '--think', '1s'],
      "Expected --clients and --think to start at least 10 requests in the stall's 4s window (clients × 4s / (think + 5ms)), got 1 client thinking 1s (about 4)",
    ],
    [['--clients', '400', '--stall', '11s'], 'Expected --stall to be at most 10s'],
  ])('refuses %j', async (args, message) => {
    const { code, stdout, stderr } = await cli(args);
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toContain(message);
  });
});
