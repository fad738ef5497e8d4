import type { Recorder } from './recorder';

/**
 * The mark of a recorder. `Symbol.for` makes it the same symbol in every copy of this package
 * (the ESM and CJS builds, the main entry and `./vitest`), so the matchers recognise any recorder.
 */
export const RECORDER = Symbol.for('@retryline/msw.recorder');

/** Whether `value` is a {@link Recorder} (or a `for()` view of one). */
export function isRecorder(value: unknown): value is Recorder {
  return typeof value === 'object' && value !== null && RECORDER in value;
}
