import { attachRetry, getRetryInfo } from '@retryline/axios';
import axios from 'axios';

// Retries run inside axios's adapter: request interceptors run again before each retry,
// response interceptors once, on the final outcome.
export function createApi(baseURL: string) {
  const api = axios.create({ baseURL, timeout: 5_000 }); // axios's timeout bounds each attempt
  attachRetry(api, {
    retries: 3,
    idempotencyKey: true, // POST and PATCH become retryable, one key per request
    deadline: 20_000, // the whole request, waits included
  });
  return api;
}

export async function listOrders(api: ReturnType<typeof createApi>) {
  const response = await api.get('/orders', { retry: { retries: 5 } }); // per-request override
  console.log(`${response.status} after ${getRetryInfo(response)?.attempts} attempts`);
  return response.data;
}

export const ping = (api: ReturnType<typeof createApi>) => api.get('/health', { retry: false }); // fail fast
