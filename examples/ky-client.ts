import { getRetryInfo, retryline } from '@retryline/ky';
import ky from 'ky';

// retryline() switches ky's own retry off: retries happen once, at one layer.
export function createApi(prefixUrl: string) {
  return ky.create({
    prefixUrl,
    ...retryline({
      retries: 3,
      idempotencyKey: true, // POST and PATCH become retryable, one key per request
      timeout: 5_000, // each attempt
      deadline: 20_000, // the whole request, waits included
    }),
  });
}

export async function listOrders(api: ReturnType<typeof createApi>) {
  const response = await api.get('orders', { retryline: { retries: 5 } }); // per-request override
  console.log(`${response.status} after ${getRetryInfo(response)?.attempts} attempts`);
  return response.json();
}

export const ping = (api: ReturnType<typeof createApi>) => api.get('health', { retryline: false }); // fail fast
