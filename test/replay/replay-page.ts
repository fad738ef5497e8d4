// The page of the Replay end-to-end test: one Retryline fetch client, bundled for the browser as an
// app's development build is, that sends a request when the test asks. Each call aborts its own
// signal once its response is read, as a component that unmounts would: a replay must not need it.
import { retryFetch } from '@retryline/fetch';

const api = retryFetch({ retries: 3, backoff: { strategy: 'constant', base: 10 }, jitter: 'none' });

async function call(path: string, method = 'GET'): Promise<number> {
  const caller = new AbortController();
  const response = await api(path, { method, signal: caller.signal });
  await response.text();
  caller.abort();
  return response.status;
}

(window as unknown as { replayPage: { call: typeof call } }).replayPage = { call };
