// The page of the msw browser test: @retryline/msw with msw/browser's setupWorker (a real Service
// Worker) and Retryline's fetch adapter, bundled for Chromium.
import { retryFetch } from '@retryline/fetch';
import { failTimes, flaky, recordAttempts, status } from '@retryline/msw';
import { http } from 'msw';
import { setupWorker } from 'msw/browser';

async function run() {
  const worker = setupWorker(
    http.get('/api/orders', failTimes(2, status(503), status(200, { json: { orders: 3 } }))),
    http.get('/api/flaky', flaky({ rate: 0.5, seed: 7 })),
  );
  const recorder = recordAttempts(worker);
  await worker.start({ quiet: true, onUnhandledRequest: 'bypass' });
  const api = retryFetch({ backoff: { strategy: 'constant', base: 5 }, jitter: 'none', retries: 4 });
  const orders = await api('/api/orders');
  const flakyStatuses: number[] = [];
  for (let i = 0; i < 4; i++) flakyStatuses.push((await api('/api/flaky', { retry: false })).status);
  const result = {
    status: orders.status,
    body: await orders.json(),
    attempts: recorder.for('/api/orders').attempts.length,
    flakyStatuses,
  };
  recorder.dispose();
  worker.stop();
  return result;
}

(window as unknown as { mswPage: { run: typeof run } }).mswPage = { run };
