/**
 * Opt-in vitest matchers for a {@link Recorder}: `import '@retryline/msw/vitest'` (in a test file
 * or a `setupFiles` module) registers them with `expect.extend` and adds their types to vitest's
 * `Assertion`.
 *
 * @example
 * ```ts
 * import '@retryline/msw/vitest';
 * expect(recorder.for('POST /orders')).toHaveBeenAttempted(3);
 * expect(recorder.for('POST /orders')).toHaveRetriedWithSameIdempotencyKey();
 * expect(recorder).toHaveWaitedAtLeast(1_000);
 * ```
 */

import { expect } from 'vitest';
import { attempted, sameIdempotencyKey, type Verdict, waitedAtLeast } from './matchers';

/** The matchers on a {@link Recorder} (or a `recorder.for()` view). */
export interface RecorderMatchers<R = unknown> {
  /**
   * Exactly `times` attempts were recorded: the first try plus the retries.
   * @example
   * ```ts
   * expect(recorder.for('/orders')).toHaveBeenAttempted(3);
   * ```
   */
  toHaveBeenAttempted(times: number): R;
  /**
   * At least two attempts, all carrying one and the same non-empty key in `header`.
   * @default header 'idempotency-key'
   * @example
   * ```ts
   * expect(recorder.for('POST /orders')).toHaveRetriedWithSameIdempotencyKey('x-idempotency-key');
   * ```
   */
  toHaveRetriedWithSameIdempotencyKey(header?: string): R;
  /**
   * At least two attempts, each gap between consecutive ones `ms` or longer.
   * @example
   * ```ts
   * expect(recorder.for('/orders')).toHaveWaitedAtLeast(1_000);
   * ```
   */
  toHaveWaitedAtLeast(ms: number): R;
}

declare module 'vitest' {
  // The type parameter must repeat vitest's own declaration for the interfaces to merge.
  // biome-ignore lint/suspicious/noExplicitAny: vitest declares Assertion<T = any>
  interface Assertion<T = any> extends RecorderMatchers<void> {}
  interface AsymmetricMatchersContaining extends RecorderMatchers<unknown> {}
}

type MatcherResult = { pass: boolean; message: () => string; actual: unknown; expected: unknown };

const result = (verdict: Verdict, isNot: boolean): MatcherResult => ({
  pass: verdict.pass,
  message: () => verdict.message(isNot),
  actual: verdict.actual,
  expected: verdict.expected,
});

expect.extend({
  toHaveBeenAttempted(received: unknown, times: number) {
    return result(attempted(received, times), this.isNot);
  },
  toHaveRetriedWithSameIdempotencyKey(received: unknown, header?: string) {
    return result(sameIdempotencyKey(received, header), this.isNot);
  },
  toHaveWaitedAtLeast(received: unknown, ms: number) {
    return result(waitedAtLeast(received, ms), this.isNot);
  },
});
