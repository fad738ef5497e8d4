// The page of the fault-injection end-to-end test: Retryline's fetch, bundled for the browser as an
// app's development build is, making one request when the test asks and telling how it went.
import type { RetrylineEvent } from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';

/** How one request went: its final status, its attempts, and which of them were injected. */
export interface CallResult {
  readonly status: number;
  readonly attempts: number;
  readonly injected: readonly number[];
}

async function call(path: string): Promise<CallResult> {
  const events: RetrylineEvent[] = [];
  const api = retryFetch({
    retries: 3,
    backoff: { strategy: 'constant', base: 10 },
    jitter: 'none',
    onEvent: (event) => events.push(event),
  });
  const response = await api(path);
  await response.text();
  const injected = events.flatMap((event) =>
    event.type === 'attempt-end' && event.injected === true ? [event.attempt] : [],
  );
  return { status: response.status, attempts: getRetryInfo(response)?.attempts ?? 0, injected };
}

(window as unknown as { faultPage: { call: typeof call } }).faultPage = { call };
