import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandom } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { run } from '../run';

async function demo(dir: string) {
  const out: string[] = [];
  const err: string[] = [];
  const file = join(dir, 'recording.json');
  const code = await run(['demo', '--quick', '--seed', '1', '--out', file], {
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    random: seededRandom(1),
  });
  const text = out.join('');
  // The table: its header, then one line per run, up to the first blank line.
  const lines = text.split('\n');
  const header = lines.findIndex((line) => /^\s*Client\s+Policy\s+Success/.test(line));
  const end = lines.indexOf('', header);
  const rows = lines.slice(header + 1, end).map((line) => line.trim().split(/\s+/));
  return { code, err: err.join(''), text, file, rows };
}

describe('retryline demo', () => {
  it('runs fetch, axios and ky against the flaky API with and without retries, reproducibly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retryline-demo-'));
    const first = await demo(dir);
    expect(first.err).toBe('');
    expect(first.code).toBe(0);
    // client, policy, ok/total, (pct%), attempts, load, p50, p99
    expect(first.rows).toHaveLength(6);
    const success = (client: string, policy: string) => {
      const row = first.rows.find((r) => r[0] === client && r[1] === policy);
      return Number(row?.[2]?.split('/')[0]);
    };
    for (const client of ['fetch', 'axios', 'ky']) {
      expect(success(client, 'retryline')).toBeGreaterThanOrEqual(success(client, 'none'));
      expect(success(client, 'retryline')).toBeGreaterThan(0);
    }
    // Run from this clone: the root's `pnpm retryline` script, the file (outside the clone) absolute.
    expect(first.text).toContain(`Open it with: pnpm retryline view ${first.file}\n`);
    expect(first.text).toMatch(/✗429 ─Retry-After 1s, wait \d+ms─ ✓200/);
    expect(first.text).toMatch(/✗503 ─backoff \d+ms─ ✗503 ─backoff \d+ms─ ✓200/);
    expect(first.text).toMatch(/✗reset ─backoff \d+ms─/);

    const recording = JSON.parse(readFileSync(first.file, 'utf8'));
    expect(recording.format).toBe('retryline-recording');
    const starts = recording.entries.filter(
      (e: { type: string; event?: { type: string } }) => e.event?.type === 'request-start',
    );
    // Only the Retryline runs emit events: 3 clients × 12 requests.
    expect(starts).toHaveLength(36);

    // The same seed, the same outcomes: successes and attempts per run (timings aside).
    const second = await demo(mkdtempSync(join(tmpdir(), 'retryline-demo-')));
    const outcomes = (rows: string[][]) => rows.map((r) => r.slice(0, 6));
    expect(outcomes(second.rows)).toEqual(outcomes(first.rows));
  }, 30_000);

  it('refuses an --out it could not save to before the run, with exit code 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retryline-demo-'));
    for (const [out, message] of [
      [join(dir, 'missing', 'x.json'), `the folder ${join(dir, 'missing')} does not exist`],
      [dir, `--out ${dir} is a folder`],
      ['', "Expected --out to be a file path, got ''"],
    ] as const) {
      const printed: string[] = [];
      const code = await run(['demo', '--quick', '--seed', '1', '--out', out], {
        stdout: (t) => printed.push(t),
        stderr: (t) => printed.push(t),
        random: seededRandom(1),
      });
      expect(code).toBe(2);
      expect(printed.join('')).toContain(message);
      // Refused up front: no flaky API was started, no request sent.
      expect(printed.join('')).not.toContain('A flaky API');
    }
  });
});
