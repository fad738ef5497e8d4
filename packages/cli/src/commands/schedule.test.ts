import { describe, expect, it } from 'vitest';
import { run } from '../run';

interface Output {
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(args: readonly string[], random?: () => number): Promise<Output> {
  let stdout = '';
  let stderr = '';
  const code = await run(['schedule', ...args], {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    ...(random === undefined ? {} : { random }),
  });
  return { code, stdout, stderr };
}

/** CSV rows as numbers: [retry, attempt, delay ms, cumulative ms]. */
function csvRows(csv: string): number[][] {
  const [header, ...lines] = csv.trimEnd().split('\n');
  expect(header).toBe('retry,attempt,delay_ms,cumulative_ms');
  return lines.map((line) => line.split(',').map(Number));
}

interface JsonSchedule {
  options: Record<string, unknown>;
  seed?: number | string;
  rows: { retry: number; attempt: number; delay: number; cumulative: number }[];
  meanDelay: number;
  totalDelay: number;
  stop?: { retry: number; reason: string; delay: number };
}

async function json(args: readonly string[]): Promise<JsonSchedule> {
  const { code, stdout } = await cli([...args, '--format', 'json']);
  expect(code).toBe(0);
  return JSON.parse(stdout) as JsonSchedule;
}

// The reference table of each strategy at base 1 s, 10 retries (constant: 1 s each; linear: 2 … 11;
// polynomial, exponent 3: 1, 8, … 1000; exponential: 2, 4, … 1024, and capped at 64 s): the backoff
// before each retry in seconds, then the total and the mean.
const SEED_TABLES = [
  {
    name: 'constant',
    args: ['--strategy', 'constant', '--base', '1s'],
    backoff: [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
    cumulative: '10s',
    mean: '1s',
  },
  {
    name: 'linear',
    args: ['--strategy', 'linear', '--base', '1s', '--step', '1s'],
    backoff: [2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    cumulative: '65s (~1.1 min)',
    mean: '6.5s',
  },
  {
    name: 'polynomial',
    args: ['--strategy', 'polynomial', '--base', '1s', '--exponent', '3', '--max-delay', '1h'],
    backoff: [1, 8, 27, 64, 125, 216, 343, 512, 729, 1000],
    cumulative: '3025s (~50.4 min)',
    mean: '302.5s',
  },
  {
    name: 'exponential',
    args: ['--strategy', 'exponential', '--base', '1s', '--max-delay', '1h'],
    backoff: [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024],
    cumulative: '2046s (~34.1 min)',
    mean: '204.6s',
  },
  {
    name: 'exponential capped at 64 s',
    args: ['--strategy', 'exponential', '--base', '1s', '--max-delay', '64s'],
    backoff: [2, 4, 8, 16, 32, 64, 64, 64, 64, 64],
    cumulative: '382s (~6.4 min)',
    mean: '38.2s',
  },
];

describe('retryline schedule: the reference table of each strategy at base 1 s, 10 retries', () => {
  it.each(SEED_TABLES)('reproduces the $name table row by row', async ({ args, backoff }) => {
    const { code, stdout, stderr } = await cli([...args, '--retries', '10', '--format', 'csv']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    let cumulative = 0;
    const expected = backoff.map((seconds, index) => {
      cumulative += seconds * 1000;
      return [index + 1, index + 2, seconds * 1000, cumulative];
    });
    expect(csvRows(stdout)).toEqual(expected);
  });

  it.each(SEED_TABLES)('prints the $name total and mean', async ({ args, cumulative, mean }) => {
    const { code, stdout } = await cli([...args, '--retries', '10']);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines.find((line) => line.trimStart().startsWith('10 '))?.endsWith(` ${cumulative}`)).toBe(true);
    expect(lines).toContain(`Mean Delay: ${mean}`);
  });

  it('prints the capped exponential table exactly', async () => {
    const { code, stdout, stderr } = await cli([
      '--strategy',
      'exponential',
      '--base',
      '1s',
      '--retries',
      '10',
      '--max-delay',
      '64s',
    ]);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout).toBe(
      [
        'Exponential backoff: base 1s, factor 2, max delay 64s (clamp), jitter none (the library default is full: pass --jitter full to sample it)',
        '',
        'Retry  Attempt  Backoff  Cumulative',
        '    1        2       2s          2s',
        '    2        3       4s          6s',
        '    3        4       8s         14s',
        '    4        5      16s         30s',
        '    5        6      32s         62s (~1.0 min)',
        '    6        7      64s        126s (~2.1 min)',
        '    7        8      64s        190s (~3.2 min)',
        '    8        9      64s        254s (~4.2 min)',
        '    9       10      64s        318s (~5.3 min)',
        '   10       11      64s        382s (~6.4 min)',
        '',
        'Mean Delay: 38.2s',
        'retry n is attempt n + 1: 10 retries = 11 attempts',
        '',
      ].join('\n'),
    );
  });

  it('gives the exact delays, totals and built options as JSON', async () => {
    const result = await json(['--base', '1s', '--retries', '10', '--max-delay', '64s']);
    expect(result.options).toEqual({
      retries: 10,
      backoff: { base: 1000 },
      maxDelay: 64_000,
      jitter: { type: 'none' },
    });
    expect(result.seed).toBeUndefined();
    expect(result.rows.map((row) => row.delay)).toEqual([
      2000, 4000, 8000, 16_000, 32_000, 64_000, 64_000, 64_000, 64_000, 64_000,
    ]);
    expect(result.totalDelay).toBe(382_000);
    expect(result.meanDelay).toBe(38_200);
    expect(result.stop).toBeUndefined();
  });

  it("uses the library's defaults except jitter: exponential from 100 ms, 2 retries", async () => {
    const { code, stdout } = await cli([]);
    expect(code).toBe(0);
    expect(stdout.split('\n')[0]).toBe(
      'Exponential backoff: base 100ms, factor 2, max delay 20s (clamp), jitter none (the library default is full: pass --jitter full to sample it)',
    );
    const result = await json([]);
    expect(result.rows.map((row) => row.delay)).toEqual([200, 400]);
  });

  it('names the parameter of each strategy in the header', async () => {
    const header = async (args: string[]) => (await cli(args)).stdout.split('\n')[0];
    expect(await header(['--strategy', 'linear', '--base', '1s', '--step', '500ms'])).toMatch(
      /^Linear backoff: base 1s, step 500ms, max delay 20s \(clamp\), /,
    );
    expect(await header(['--strategy', 'polynomial', '--exponent', '3'])).toMatch(
      /^Polynomial backoff: base 100ms, exponent 3, /,
    );
    expect(await header(['--strategy', 'constant', '--jitter', 'none'])).toBe(
      'Constant backoff: base 100ms, max delay 20s (clamp), jitter none',
    );
  });
});

describe('retryline schedule: jitter', () => {
  const capped = ['--base', '1s', '--retries', '10', '--max-delay', '64s'];
  const backoff = [2000, 4000, 8000, 16_000, 32_000, 64_000, 64_000, 64_000, 64_000, 64_000];

  it('prints the same table for the same seed, byte for byte', async () => {
    const first = await cli([...capped, '--jitter', 'full', '--seed', '7']);
    const second = await cli([...capped, '--jitter', 'full', '--seed', '7']);
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(second.stdout);
    expect(first.stdout.split('\n').slice(0, 2)).toEqual([
      'Exponential backoff: base 1s, factor 2, max delay 64s (clamp), jitter full',
      'seed 7',
    ]);
  });

  it('draws different delays from a different seed', async () => {
    const seven = await json([...capped, '--jitter', 'full', '--seed', '7']);
    const eight = await json([...capped, '--jitter', 'full', '--seed', '8']);
    expect(seven.seed).toBe(7);
    expect(eight.seed).toBe(8);
    expect(seven.rows.map((row) => row.delay)).not.toEqual(eight.rows.map((row) => row.delay));
  });

  it('keeps every full-jitter delay within [0, capped backoff]', async () => {
    for (const seed of ['7', '8', 'canary']) {
      const { rows } = await json([...capped, '--jitter', 'full', '--seed', seed]);
      expect(rows).toHaveLength(10);
      rows.forEach((row, index) => {
        expect(row.delay).toBeGreaterThanOrEqual(0);
        expect(row.delay).toBeLessThanOrEqual(backoff[index] ?? Number.NaN);
      });
      // With full jitter, at least one delay is below its backoff: the jitter was applied.
      expect(rows.some((row, index) => row.delay < (backoff[index] ?? 0))).toBe(true);
    }
  });

  it('passes --spread to constant jitter', async () => {
    const { rows, options } = await json([
      ...capped,
      '--jitter',
      'constant',
      '--spread',
      '500ms',
      '--seed',
      '1',
    ]);
    expect(options.jitter).toEqual({ type: 'constant', spread: 500 });
    rows.forEach((row, index) => {
      const d = backoff[index] ?? Number.NaN;
      expect(row.delay).toBeGreaterThanOrEqual(d);
      expect(row.delay).toBeLessThanOrEqual(d + 500);
    });
  });

  it('passes --ratio to proportional jitter', async () => {
    const { rows, options } = await json([
      ...capped,
      '--jitter',
      'proportional',
      '--ratio',
      '0.1',
      '--seed',
      '1',
    ]);
    expect(options.jitter).toEqual({ type: 'proportional', ratio: 0.1 });
    rows.forEach((row, index) => {
      const d = backoff[index] ?? Number.NaN;
      expect(row.delay).toBeGreaterThanOrEqual(d * 0.9);
      expect(row.delay).toBeLessThanOrEqual(d * 1.1);
    });
  });

  it('picks a seed when none is given, prints it, and the printed seed reproduces the table', async () => {
    const picked = await cli([...capped, '--jitter', 'equal'], () => 0.25);
    expect(picked.code).toBe(0);
    expect(picked.stdout.split('\n')[1]).toBe('seed 1073741824 (pass --seed 1073741824 to reproduce)');
    const replay = await cli([...capped, '--jitter', 'equal', '--seed', '1073741824']);
    const rows = (text: string) => text.split('\n').slice(2);
    expect(rows(replay.stdout)).toEqual(rows(picked.stdout));
  });

  it('reports the picked seed on stderr for CSV, which has no room for it', async () => {
    const { code, stdout, stderr } = await cli([...capped, '--jitter', 'full', '--format', 'csv'], () => 0.5);
    expect(code).toBe(0);
    expect(stderr).toBe('retryline: seed 2147483648 (pass --seed 2147483648 to reproduce)\n');
    expect(csvRows(stdout)).toHaveLength(10);
  });

  it('reads a word as a seed', async () => {
    const first = await json([...capped, '--jitter', 'full', '--seed', 'canary']);
    const second = await json([...capped, '--jitter', 'full', '--seed', 'canary']);
    expect(first.seed).toBe('canary');
    expect(first.rows).toEqual(second.rows);
  });
});

describe('retryline schedule: stopping early', () => {
  it('says where give-up at the max delay stops, and the backoff it refused', async () => {
    const args = ['--base', '1s', '--retries', '10', '--max-delay', '64s', '--on-max-delay', 'give-up'];
    const { code, stdout } = await cli(args);
    expect(code).toBe(0);
    const lines = stdout.split('\n');
    expect(lines[0]).toContain('max delay 64s (give-up)');
    expect(lines.filter((line) => /^ +\d+ +\d+ /.test(line))).toHaveLength(6);
    expect(lines.slice(-4)).toEqual([
      'Mean Delay: 21s',
      'Gives up before retry 7: backoff 128s passes max delay 64s',
      'retry n is attempt n + 1: 6 retries = 7 attempts',
      '',
    ]);
    const result = await json(args);
    expect(result.rows).toHaveLength(6);
    expect(result.stop).toEqual({ retry: 7, reason: 'max-delay', delay: 64_000, raw: 128_000 });
  });

  it('says where a deadline stops the schedule', async () => {
    const args = ['--base', '1s', '--retries', '10', '--max-delay', '1h', '--deadline', '30s'];
    const { code, stdout } = await cli(args);
    expect(code).toBe(0);
    expect(stdout).toContain('max delay 3600s (clamp), deadline 30s, jitter none');
    // 2 + 4 + 8 = 14 s waited; the next 16 s wait would end at the 30 s deadline.
    expect(stdout).toContain(
      'Gives up before retry 4: its 16s wait would end at 30s, not before the deadline 30s\n',
    );
    expect((await json(args)).rows.map((row) => row.delay)).toEqual([2000, 4000, 8000]);
  });

  it('prints an empty table for zero retries', async () => {
    const { code, stdout } = await cli(['--retries', '0']);
    expect(code).toBe(0);
    expect(stdout).toContain('Retry  Attempt  Backoff  Cumulative\n\nMean Delay: 0ms\n');
    expect(stdout).toContain('0 retries = 1 attempt\n');
  });
});

describe('retryline schedule: mistakes', () => {
  it.each([
    [['--base', 'abc'], "Expected --base to be a duration such as 250ms, 1s or 2m, got 'abc'"],
    [['--max-delay', '1e999'], "Expected --max-delay to be a duration such as 250ms, 1s or 2m, got '1e999'"],
    [
      ['--spread', '-1s', '--jitter', 'constant'],
      "Expected --spread to be a duration such as 250ms, 1s or 2m, got '-1s'",
    ],
    [['--bogus'], "Unknown option '--bogus': see 'retryline schedule --help'"],
    [
      ['--maxDelay', '1s'],
      "Unknown option '--maxDelay' (did you mean '--max-delay'?): see 'retryline schedule --help'",
    ],
    [['-x'], "Unknown option '-x': see 'retryline schedule --help'"],
    [
      ['--strategy', 'fast'],
      "Expected --strategy to be one of constant, linear, polynomial, exponential, got 'fast'",
    ],
    [
      ['--jitter', 'random'],
      "Expected --jitter to be one of none, constant, equal, full, decorrelated, proportional, got 'random'",
    ],
    [['--on-max-delay', 'stop'], "Expected --on-max-delay to be one of clamp, give-up, got 'stop'"],
    [['--format', 'xml'], "Expected --format to be one of table, json, csv, got 'xml'"],
    [['--retries', '-1'], "Expected --retries to be a whole number from 0 to 100000, got '-1'"],
    [['--retries=-1'], "Expected --retries to be a whole number from 0 to 100000, got '-1'"],
    [['--retries', '1.5'], "Expected --retries to be a whole number from 0 to 100000, got '1.5'"],
    [['--retries', '100001'], "Expected --retries to be a whole number from 0 to 100000, got '100001'"],
    [
      ['--retries', 'Infinity'],
      "Expected --retries to be a finite whole number, got 'Infinity': a schedule lists every retry, so it needs a count",
    ],
    [['--retries'], "Option '--retries' needs a value"],
    [['--help=yes'], "Option '--help' takes no value"],
    [['--factor', 'two'], "Expected --factor to be a number such as 2 or 1.5, got 'two'"],
    [['--factor', 'NaN'], "Expected --factor to be a number such as 2 or 1.5, got 'NaN'"],
    [['--factor', '0.5'], 'Expected --factor to be a finite number ≥ 1, got 0.5'],
    [
      ['--ratio', '2', '--jitter', 'proportional'],
      'Expected --ratio to be a finite number between 0 and 1, got 2',
    ],
    [['--seed', ''], "Expected --seed to be a whole number from 0 to 4294967295 or a word, got ''"],
    [['--seed', '-1'], "Expected --seed to be a whole number from 0 to 4294967295 or a word, got '-1'"],
    [['--seed', '1.5'], "Expected --seed to be a whole number from 0 to 4294967295 or a word, got '1.5'"],
    [
      ['--seed', '4294967296'],
      "Expected --seed to be a whole number from 0 to 4294967295 or a word, got '4294967296'",
    ],
    [['extra'], "Unexpected argument 'extra': 'retryline schedule' takes only options"],
  ])('refuses %j with exit code 2, the message on stderr and nothing on stdout', async (args, message) => {
    const { code, stdout, stderr } = await cli(args);
    expect(code).toBe(2);
    expect(stderr).toBe(`retryline: ${message}\n`);
    expect(stdout).toBe('');
  });

  it('warns about a flag the strategy ignores, and still prints the table', async () => {
    const { code, stdout, stderr } = await cli(['--strategy', 'exponential', '--step', '1s']);
    expect(code).toBe(0);
    expect(stderr).toBe(
      'retryline: warning: --step has no effect with --strategy exponential (only with --strategy linear)\n',
    );
    expect(stdout).toContain('Mean Delay: 300ms');
  });

  it('warns that --seed does nothing without jitter', async () => {
    const { code, stderr } = await cli(['--seed', '7']);
    expect(code).toBe(0);
    expect(stderr).toBe(
      'retryline: warning: --seed has no effect with --jitter none (only a random jitter draws from it)\n',
    );
  });
});

describe('retryline schedule --help', () => {
  it('lists every option and exits 0', async () => {
    const { code, stdout, stderr } = await cli(['--help']);
    expect(code).toBe(0);
    expect(stderr).toBe('');
    expect(stdout.startsWith('Usage: retryline schedule [options]\n')).toBe(true);
    for (const flag of [
      '--strategy',
      '--base',
      '--step',
      '--factor',
      '--exponent',
      '--retries',
      '--max-delay',
      '--on-max-delay',
      '--deadline',
      '--jitter',
      '--spread',
      '--ratio',
      '--seed',
      '--format',
      '-h, --help',
    ]) {
      expect(stdout).toContain(`  ${flag} `);
    }
  });

  it('wins over other flags, as -h too', async () => {
    const { code, stdout } = await cli(['--base', '1s', '-h']);
    expect(code).toBe(0);
    expect(stdout.startsWith('Usage: retryline schedule')).toBe(true);
  });
});
