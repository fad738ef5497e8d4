import { createRetry } from '@retryline/core';

// One policy for the service, checked once, here…
const withRetry = createRetry({ retries: 5, backoff: { strategy: 'constant', base: 5_000 } });

async function register(): Promise<string> {
  return 'registered';
}

// …and per-call overrides where a call needs something else.
await withRetry(register, { retries: Number.POSITIVE_INFINITY, backoff: { base: 250 }, deadline: 60_000 });
await withRetry(register, { retry: false }); // fail fast on this path
