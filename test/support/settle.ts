/** Waits for a promise without throwing: `{ value }` or `{ error }`, so a test can assert on either. */
export function settle<T>(promise: Promise<T>): Promise<{ value: T | undefined; error: unknown }> {
  return promise.then(
    (value) => ({ value, error: undefined }),
    (error: unknown) => ({ value: undefined, error }),
  );
}
