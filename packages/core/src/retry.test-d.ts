import { expectTypeOf } from 'vitest';
import { type AttemptContext, createRetry, RETRY, retry } from './retry';

// The RETRY sentinel never reaches the caller's type.
const found: number = 42;
expectTypeOf(retry(async () => (found > 0 ? RETRY : found))).toEqualTypeOf<Promise<number>>();
expectTypeOf(retry(() => 'sync')).toEqualTypeOf<Promise<string>>();
expectTypeOf(createRetry({ retries: 3 })(async ({ attempt }: AttemptContext) => attempt)).toEqualTypeOf<
  Promise<number>
>();

// Options are checked: a misspelt jitter or a string retries is a compile error.
// @ts-expect-error 'fulll' is not a jitter
retry(async () => 1, { jitter: 'fulll' });
// @ts-expect-error retries is a number
retry(async () => 1, { retries: '3' });
