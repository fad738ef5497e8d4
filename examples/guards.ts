import { isRetrylineError, retry } from '@retryline/core';
import { bulkhead, circuitBreaker, rateLimiter, retryBudget, retryFetch } from '@retryline/fetch';

declare const db: { query(sql: string, options: { signal: AbortSignal }): Promise<unknown[]> };

// Guards are values: a bundle carries only those it imports. Give one value to several clients
// and they share it; each client's state is otherwise its own.
// Fail fast while an origin is down: open past 50% failures over 20 calls, or 5 in a row.
const breaker = circuitBreaker({ failureRate: 0.5, windowSize: 20, minCalls: 20, consecutiveFailures: 5 });

const api = retryFetch(fetch, {
  // Every client has a budget of its own (retries within 10% of requests, + 10/s); this one is tuned.
  budget: retryBudget({ ratio: 0.2 }),
  breaker,
  // At most 100 requests a second with bursts of 50, waiting for a token rather than failing.
  limiter: rateLimiter({ capacity: 50, refillPerSecond: 100, mode: 'wait' }),
  // At most 10 in flight per origin; 50 more wait their turn, the rest are refused.
  bulkhead: bulkhead({ maxConcurrent: 10, maxQueue: 50 }),
  deadline: 10_000,
});
// Another client given the same breaker shares it: one opens it for both.
const admin = retryFetch(fetch, { breaker });

breaker.state('https://api.example'); // { state: 'closed', failureRate: 0, calls: 0 }

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
await admin('https://api.example/admin/health');

// A per-request override: this call may retry whatever the budget says.
await api('https://api.example/health', { retry: { budget: false } });

// Guards for any operation: name the dependency with guardKey.
const rows = await retry(({ signal }) => db.query('select 1', { signal }), {
  guardKey: 'db-primary',
  breaker: circuitBreaker({ consecutiveFailures: 3, openMs: 5_000 }),
  budget: retryBudget(),
  bulkhead: bulkhead({ maxConcurrent: 4, maxQueue: 16 }),
});
console.log(rows.length);
