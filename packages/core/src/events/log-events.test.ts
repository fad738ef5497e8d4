import { describe, expect, it, vi } from 'vitest';
import { InvalidOptionsError } from '../errors';
import { RETRY, retry } from '../retry';
import { seededRandom } from '../time/random';
import { virtualClock } from '../time/virtual-clock';
import { eventLogger, eventLogLine, logEvents } from './log-events';
import type { RetrylineEvent } from './types';

const T0 = 1_700_000_000_000;

/** A logger that keeps what it was given, as pino would receive it. */
function memoryLogger() {
  const lines: Array<{ level: 'info' | 'warn'; line: Record<string, unknown>; message: string }> = [];
  return {
    lines,
    info: (line: Record<string, unknown>, message: string) => lines.push({ level: 'info', line, message }),
    warn: (line: Record<string, unknown>, message: string) => lines.push({ level: 'warn', line, message }),
  };
}

/** One operation that fails once, then succeeds after a 100 ms constant backoff. */
async function runOnce(options: Parameters<typeof retry>[1] = {}) {
  const clock = virtualClock(T0);
  const done = retry(({ attempt }) => (attempt < 2 ? RETRY : 'ok'), {
    clock,
    random: seededRandom(1),
    backoff: { strategy: 'constant', base: 100 },
    jitter: 'none',
    operation: 'sync-users',
    ...options,
  });
  // Settled (and handled) before the clock runs, so a give-up is no unhandled rejection.
  const settled = done.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await clock.runAll();
  return settled;
}

describe('logEvents', () => {
  it('writes one structured line per event, retries and give-ups as warnings, until stopped', async () => {
    const logger = memoryLogger();
    const stop = logEvents(logger);
    await runOnce();
    stop();
    await runOnce();

    expect(logger.lines.map((l) => `${l.level} ${l.line.event}`)).toEqual([
      'info retryline.request-start',
      'info retryline.attempt-start',
      'info retryline.attempt-end',
      'warn retryline.retry-scheduled',
      'info retryline.attempt-start',
      'info retryline.attempt-end',
      'info retryline.request-end',
    ]);
    const requestId = logger.lines[0]?.line.requestId;
    expect(typeof requestId).toBe('string');
    expect(logger.lines.every((l) => l.line.requestId === requestId)).toBe(true);
    expect(logger.lines[3]).toEqual({
      level: 'warn',
      message: '[retryline] attempt 2 in 100 ms (backoff)',
      line: expect.objectContaining({
        event: 'retryline.retry-scheduled',
        requestId,
        time: T0,
        attempt: 2,
        delay: 100,
        reason: 'backoff',
      }),
    });
    expect(logger.lines[6]?.line).toMatchObject({ outcome: 'success', attempts: 2, duration: 100 });
    expect(logger.lines[6]?.message).toBe('[retryline] success after 2 attempts in 100 ms');
    // JSON-able: what a log shipper sends.
    for (const { line } of logger.lines) expect(JSON.parse(JSON.stringify(line))).toEqual(line);
  });

  it('logs only the chosen event types; a give-up is a warning', async () => {
    const logger = memoryLogger();
    const stop = logEvents(logger, { types: ['request-end'] });
    const { error } = (await runOnce({ retries: 0 })) as { error?: unknown };
    expect(error).toBeInstanceOf(Error);
    stop();
    expect(logger.lines).toHaveLength(1);
    expect(logger.lines[0]).toMatchObject({ level: 'warn', line: { event: 'retryline.request-end' } });
    expect(logger.lines[0]?.line.outcome).not.toBe('success');
  });

  it('as a per-client listener; a logger that throws changes nothing', async () => {
    const throwing = {
      info: vi.fn(() => {
        throw new Error('disk full');
      }),
      warn: vi.fn(),
    };
    expect(await runOnce({ onEvent: eventLogger(throwing) })).toEqual({ value: 'ok' });
    expect(throwing.info).toHaveBeenCalled();
    expect(throwing.warn).toHaveBeenCalledTimes(1);
  });

  it('rejects a logger without info() and warn()', () => {
    expect(() => logEvents({ info: () => {} } as never)).toThrow(InvalidOptionsError);
    expect(() => eventLogger(undefined as never)).toThrow(
      /Expected logger to be an object with info\(\) and warn\(\)/,
    );
  });

  it('drops the envelope version and renames type and t', () => {
    const event: RetrylineEvent = {
      v: 1,
      type: 'budget',
      requestId: 'r-1',
      t: T0,
      key: 'https://api.example',
      remaining: 3,
      allowed: false,
    };
    expect(eventLogLine(event)).toEqual({
      event: 'retryline.budget',
      requestId: 'r-1',
      time: T0,
      key: 'https://api.example',
      remaining: 3,
      allowed: false,
    });
  });
});
