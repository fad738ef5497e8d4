import { failover, hedging, retryFetch } from '@retryline/fetch';

// One service behind three base URLs. Each attempt picks one (two random choices, the less loaded
// by requests in flight × latency); a retry goes to another; an endpoint that keeps failing is
// ejected by its own breaker and probed back after openMs.
export const api = retryFetch(fetch, {
  endpoints: failover(['https://eu.api.example', 'https://us.api.example', 'https://ap.api.example'], {
    breaker: { consecutiveFailures: 3, openMs: 5_000 },
  }),
  // A GET still unanswered at its endpoint's p95 gets a second copy, on another endpoint; the first
  // good answer wins. Hedges take retries from the retry budget, so they stay within its 10%.
  hedge: hedging({ delay: 'p95', fallback: 250 }),
  idempotencyKey: { header: 'Idempotency-Key' },
});

// Relative URLs go to the picked endpoint; the POST keeps one key on every endpoint it tries.
export async function charge(amount: number): Promise<Response> {
  return api('/v1/charges', { method: 'POST', body: JSON.stringify({ amount }) });
}

// Weighted: twice the traffic to the bigger region, in turn (smooth weighted round robin).
export const weighted = retryFetch(fetch, {
  endpoints: failover([{ url: 'https://eu.api.example', weight: 2 }, 'https://us.api.example'], {
    balance: 'weighted',
  }),
});
