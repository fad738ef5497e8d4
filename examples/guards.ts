import { isRetrylineError, retry } from '@retryline/core';
import { memoryStore, retryFetch } from '@retryline/fetch';

declare const db: { query(sql: string, options: { signal: AbortSignal }): Promise<unknown[]> };

// One store for the clients that should share their guards (each client has its own otherwise).
const store = memoryStore();

const api = retryFetch(fetch, {
  store,
  // On by default for HTTP clients: retries stay within 10% of requests (+ 10/s).
  budget: { ratio: 0.1, windowMs: 10_000, minPerSecond: 10 },
  // Fail fast while an origin is down: open past 50% failures over 20 calls, or 5 in a row.
  breaker: { failureRate: 0.5, windowSize: 20, minCalls: 20, consecutiveFailures: 5, openMs: 30_000 },
  // At most 100 requests a second with bursts of 50, waiting for a token rather than failing.
  limiter: { capacity: 50, refillPerSecond: 100, mode: 'wait' },
  // At most 10 in flight per origin; 50 more wait their turn, the rest are refused.
  bulkhead: { maxConcurrent: 10, maxQueue: 50 },
  deadline: 10_000,
});

try {
  const response = await api('https://api.example/orders');
  console.log(response.status);
} catch (error) {
  if (isRetrylineError(error, 'CircuitOpenError')) {
    console.warn(`api.example is down; try again after ${new Date(error.retryAt).toISOString()}`);
  } else if (isRetrylineError(error, 'BulkheadRejectedError')) {
    console.warn('too many requests in flight: shed this one');
  } else throw error;
}

// A per-request override: this call may retry whatever the budget says.
await api('https://api.example/health', { retry: { budget: false } });

// Guards for any operation: name the dependency with guardKey.
const rows = await retry(({ signal }) => db.query('select 1', { signal }), {
  guardKey: 'db-primary',
  breaker: { consecutiveFailures: 3, openMs: 5_000 },
  budget: true,
  bulkhead: { maxConcurrent: 4, maxQueue: 16 },
});
console.log(rows.length);
