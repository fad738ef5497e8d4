/**
 * The matchers' verdicts and messages, as pure functions of the recorded attempts: what
 * `@retryline/msw/vitest` registers with `expect.extend`, kept free of vitest so they can be read
 * (and tested) alone.
 */

import type { AttemptRecord, Recorder } from './recorder';
import { isRecorder } from './recorder-brand';
import { describeValue, invalid } from './validate';

/** A matcher's verdict; `message(isNot)` explains a failure of `expect(…)` or of `expect(…).not`. */
export interface Verdict {
  readonly pass: boolean;
  readonly message: (isNot: boolean) => string;
  readonly actual: unknown;
  readonly expected: unknown;
}

const DEFAULT_KEY_HEADER = 'idempotency-key';

function expectRecorder(matcher: string, received: unknown): Recorder {
  if (!isRecorder(received)) {
    throw new TypeError(
      `[Retryline msw] ${matcher}() expects a Recorder from recordAttempts() (or its for() view), got ${describeValue(received)}`,
    );
  }
  return received;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * One line per attempt, timed from the first: `1. GET https://api.example/x at +0 ms
 * (idempotency-key: abc)`. The key header is shown where an attempt carries it.
 */
export function formatAttempts(attempts: readonly AttemptRecord[], keyHeader = DEFAULT_KEY_HEADER): string {
  if (attempts.length === 0) return '  (no attempts recorded)';
  const start = attempts[0]?.time ?? 0;
  const header = keyHeader.toLowerCase();
  return attempts
    .map((attempt, index) => {
      const key = attempt.headers[header];
      const shown = key === undefined ? '' : ` (${header}: ${key})`;
      return `  ${index + 1}. ${attempt.method} ${attempt.url} at +${attempt.time - start} ms${shown}`;
    })
    .join('\n');
}

/** `expect(recorder).toHaveBeenAttempted(n)`: exactly `n` attempts were recorded. */
export function attempted(received: unknown, times: number): Verdict {
  const { attempts } = expectRecorder('toHaveBeenAttempted', received);
  if (typeof times !== 'number' || !Number.isInteger(times) || times < 0) {
    throw invalid('times', 'a whole number ≥ 0', times);
  }
  const list = formatAttempts(attempts);
  return {
    pass: attempts.length === times,
    actual: attempts.length,
    expected: times,
    message: (isNot) =>
      isNot
        ? `Expected other than ${plural(times, 'attempt')}, got ${attempts.length}:\n${list}`
        : `Expected ${plural(times, 'attempt')}, got ${attempts.length}:\n${list}`,
  };
}

/**
 * `expect(recorder).toHaveRetriedWithSameIdempotencyKey(header?)`: at least two attempts, and one
 * non-empty key, the same on all of them (what makes a retried POST safe).
 */
export function sameIdempotencyKey(received: unknown, keyHeader: string = DEFAULT_KEY_HEADER): Verdict {
  const { attempts } = expectRecorder('toHaveRetriedWithSameIdempotencyKey', received);
  if (typeof keyHeader !== 'string' || keyHeader === '') throw invalid('header', 'a header name', keyHeader);
  const header = keyHeader.toLowerCase();
  const keys = attempts.map((attempt) => attempt.headers[header]);
  const missing = keys.findIndex((key) => key === undefined || key === '');
  const distinct = [...new Set(keys.filter((key) => key !== undefined && key !== ''))];
  const pass = attempts.length >= 2 && missing === -1 && distinct.length === 1;
  const list = formatAttempts(attempts, header);

  const why = () => {
    if (attempts.length < 2) {
      return `Expected a retry carrying the same ${header}, but got only ${plural(attempts.length, 'attempt')}`;
    }
    if (missing !== -1) {
      return `Expected every attempt to carry the same ${header}, but attempt ${missing + 1} had none`;
    }
    const values = distinct.map((key) => `'${key}'`).join(', ');
    return `Expected every attempt to carry the same ${header}, but got ${distinct.length} different keys (${values})`;
  };
  return {
    pass,
    actual: keys,
    expected: `one ${header} on every attempt`,
    message: (isNot) =>
      isNot
        ? `Expected the attempts not to share one ${header}, but all ${attempts.length} carried '${distinct[0]}':\n${list}`
        : `${why()}:\n${list}`,
  };
}

/**
 * `expect(recorder).toHaveWaitedAtLeast(ms)`: at least two attempts, and every gap between
 * consecutive attempts `ms` or longer (by the recorder's clock).
 */
export function waitedAtLeast(received: unknown, ms: number): Verdict {
  const { attempts } = expectRecorder('toHaveWaitedAtLeast', received);
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw invalid('ms', 'a number ≥ 0', ms);
  const gaps = attempts.slice(1).map((attempt, index) => attempt.time - (attempts[index]?.time ?? 0));
  const short = gaps.findIndex((gap) => gap < ms);
  const pass = gaps.length > 0 && short === -1;
  const list = formatAttempts(attempts);
  const shortest = Math.min(...gaps);

  const why = () =>
    gaps.length === 0
      ? `Expected waits of at least ${ms} ms between attempts, but got only ${plural(attempts.length, 'attempt')} (no wait to measure)`
      : `Expected waits of at least ${ms} ms between attempts, but attempt ${short + 2} came ${gaps[short]} ms after attempt ${short + 1}`;
  return {
    pass,
    actual: gaps,
    expected: `every gap ≥ ${ms} ms`,
    message: (isNot) =>
      isNot
        ? `Expected some wait between attempts to be shorter than ${ms} ms, but the shortest was ${shortest} ms:\n${list}`
        : `${why()}:\n${list}`,
  };
}
