/**
 * Watches a promise without leaving a rejection unhandled: `state` fills in when it settles, so a
 * virtual-time test can advance the clock and then look at where the promise stands.
 */
export function observe<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  const done = promise.then(
    (value) => Object.assign(state, { settled: true, value }),
    (error: unknown) => Object.assign(state, { settled: true, error }),
  );
  return { state, done };
}
