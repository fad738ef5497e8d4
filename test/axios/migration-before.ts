// biome-ignore-all assist/source/organizeImports: the import on line 3 is the one line in which the two migration files differ
import axios from 'axios';
import axiosRetry from 'axios-retry';

/**
 * A typical axios-retry setup: an API client that retries twice with exponential backoff and
 * logs each retry. migration-before.ts and migration-after.ts differ in the axiosRetry import only.
 */
export function createApiClient(baseURL: string, log: string[] = []) {
  const api = axios.create({ baseURL, timeout: 10_000 });
  axiosRetry(api, {
    retries: 2,
    retryDelay: axiosRetry.exponentialDelay,
    retryCondition: axiosRetry.isNetworkOrIdempotentRequestError,
    onRetry: (retryCount, error, config) => {
      log.push(
        `${config.method} ${config.url}: retry ${retryCount} after ${error.response?.status ?? error.code}`,
      );
    },
  });
  return api;
}
