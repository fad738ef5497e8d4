import type { FaultQuery, FaultStep } from '@retryline/core/instrument';
import { afterEach } from 'vitest';

/** The global the devtools extension defines in a page, where core asks its questions. */
export const HOOK = Symbol.for('retryline.devtools');

/** A step of a fake hook's script: a fault step, or `'pass'` (the request is sent as usual). */
export type ScriptStep = FaultStep | 'pass';

export interface FakeHook {
  /** Every question core asked, in order. */
  readonly queries: FaultQuery[];
  /** Every event core pushed. */
  readonly pushed: unknown[];
}

/**
 * Puts a devtools hook on `globalThis` that answers attempt n of every request with `steps[n-1]`
 * (the last one past the end), as the extension's page hook does for a matching rule, and records
 * what it is asked and pushed. Removed after each test.
 */
export function installFakeHook(steps: readonly ScriptStep[]): FakeHook {
  const queries: FaultQuery[] = [];
  const pushed: unknown[] = [];
  const hook = {
    push(event: unknown) {
      pushed.push(event);
    },
    fault(query: FaultQuery): FaultStep | undefined {
      queries.push(query);
      const step = steps[Math.min(query.attempt, steps.length) - 1];
      return step === 'pass' ? undefined : step;
    },
  };
  installHook(hook);
  return { queries, pushed };
}

/** Puts `hook` on `globalThis` as the devtools hook, for this test. */
export function installHook(hook: unknown): void {
  Object.defineProperty(globalThis, HOOK, { value: hook, configurable: true, writable: true });
}

/** Removes the devtools hook after each test of the file that calls it. */
export function removeHookAfterEach(): void {
  afterEach(() => {
    delete (globalThis as Record<symbol, unknown>)[HOOK];
  });
}
