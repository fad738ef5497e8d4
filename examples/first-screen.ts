// The README's first example, line for line: type-checked by `pnpm typecheck`, and run by
// test/newcomer/first-screen.test.ts against a loopback server that answers 503, then 201.
import { getRetryInfo, retryFetch } from '@retryline/fetch';

// fetch, retried where that is safe: backoff with full jitter, Retry-After honoured, and
// POSTs resent only with an Idempotency-Key (the same on every attempt).
const api = retryFetch(fetch, { retries: 3, idempotencyKey: true, deadline: 20_000 });

const response = await api('https://api.example.com/orders', { method: 'POST', body: '{"sku":"A-1"}' });
const info = getRetryInfo(response); // attempts, waits and why, for this request
console.log(`${response.status} after ${info?.attempts} attempts`); // 201 after 2 attempts
