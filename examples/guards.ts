import { isRetrylineError, retry } from '@retryline/core';
import {
  adaptiveThrottle,
  bulkhead,
  circuitBreaker,
  rateLimiter,
  retryBudget,
  retryFetch,
} from '@retryline/fetch';

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
// A batch client that sheds its own load once an origin rejects more than half of what it is sent.
const batch = retryFetch(fetch, { throttle: adaptiveThrottle() });

breaker.state('https://api.example'); // { state: 'closed', failureRate: 0, calls: 0 }

export { admin, api, batch, breaker };

/** The orders, or `undefined` while the API is down or too busy. */
export async function listOrders(baseUrl: string): Promise<Response | undefined> {
  try {
    return await api(`${baseUrl}/orders`);
  } catch (error) {
    if (isRetrylineError(error, 'CircuitOpenError')) {
      console.warn(`the API is down; try again after ${new Date(error.retryAt).toISOString()}`);
    } else if (
      isRetrylineError(error, 'BulkheadRejectedError') ||
      isRetrylineError(error, 'ThrottledError')
    ) {
      console.warn('too many requests in flight, or the API is overloaded: shed this one');
    } else throw error;
    return undefined;
  }
}

/** A health check: this call may retry whatever the budget says. */
export const health = (baseUrl: string) => admin(`${baseUrl}/health`, { retry: { budget: false } });

/** Guards for any operation: name the dependency with guardKey. */
export async function selectOne(db: {
  query(sql: string, options: { signal: AbortSignal }): Promise<unknown[]>;
}): Promise<number> {
  const rows = await retry(({ signal }) => db.query('select 1', { signal }), {
    guardKey: 'db-primary',
    breaker: circuitBreaker({ consecutiveFailures: 3, openMs: 5_000 }),
    budget: retryBudget(),
    bulkhead: bulkhead({ maxConcurrent: 4, maxQueue: 16 }),
    backoff: { strategy: 'constant', base: 10 },
  });
  return rows.length;
}
