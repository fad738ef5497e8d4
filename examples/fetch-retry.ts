import { getRetryInfo, isRetrylineError, retryFetch } from '@retryline/fetch';

// One client for the app: backoff with full jitter, Retry-After honoured, and POSTs made
// retryable by an Idempotency-Key (the same on every attempt).
export const api = retryFetch(fetch, {
  retries: 3,
  idempotencyKey: true,
  timeout: 5_000, // each attempt
  deadline: 20_000, // the whole request, waits included
});

export async function placeOrder(baseUrl: string, order: { sku: string; quantity: number }) {
  try {
    const response = await api(`${baseUrl}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(order),
    });
    const info = getRetryInfo(response);
    console.log(
      `${response.status} after ${info?.attempts} attempts, ${Math.round(info?.totalDelay ?? 0)} ms waiting`,
    );
    return response;
  } catch (error) {
    // Transport failures that outlast every retry, the deadline, or a Retry-After too long to wait.
    if (isRetrylineError(error)) console.error(error.message);
    throw error;
  }
}

export async function health(baseUrl: string) {
  return api(`${baseUrl}/health`, { retry: false }); // this call fails fast
}
