/**
 * A mistake in how the command was called: an unknown command or option, or a value that does
 * not parse. `run` prints its message as `retryline: <message>` and exits with code 2, the
 * conventional exit code for usage errors.
 */
export class UsageError extends Error {
  override name = 'UsageError';
}
