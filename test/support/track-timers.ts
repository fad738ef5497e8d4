import { vi } from 'vitest';

/**
 * Tracks the timers created while it is installed: `active()` counts those that have neither
 * fired nor been cleared. Lets a test prove that an abort leaves no timer behind without counting
 * the test runner's own timers.
 */
export function trackTimers() {
  const active = new Set<ReturnType<typeof setTimeout>>();
  const realSet = globalThis.setTimeout;
  const realClear = globalThis.clearTimeout;
  const set = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
    callback: (...args: unknown[]) => void,
    ms?: number,
    ...args: unknown[]
  ) => {
    const handle = realSet(() => {
      active.delete(handle);
      callback(...args);
    }, ms);
    active.add(handle);
    return handle;
  }) as typeof setTimeout);
  const clear = vi.spyOn(globalThis, 'clearTimeout').mockImplementation((handle) => {
    active.delete(handle as ReturnType<typeof setTimeout>);
    realClear(handle);
  });
  return {
    active: () => active.size,
    restore() {
      set.mockRestore();
      clear.mockRestore();
    },
  };
}
