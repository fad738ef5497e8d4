// The README's order: the matchers' module first, then vitest. Type-checked against the built
// declarations by types.test.ts (not by the repository's typecheck, which reads the sources).
import '@retryline/msw/vitest';
import type { recordAttempts } from '@retryline/msw';
import { expect } from 'vitest';

declare const recorder: ReturnType<typeof recordAttempts>;
expect(recorder).toHaveBeenAttempted(3);
expect(recorder).toHaveRetriedWithSameIdempotencyKey();
expect(recorder).not.toHaveWaitedAtLeast(1_000);
expect({ recorder }).toEqual({ recorder: expect.toHaveBeenAttempted(3) });
