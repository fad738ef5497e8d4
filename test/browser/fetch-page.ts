// The page script of the browser test: @retryline/fetch bundled for the browser, driven from
// the test through `window.retryline`.
import type { RetrylineEvent } from '@retryline/core';
import { getRetryInfo, retryFetch } from '@retryline/fetch';

async function run(url: string) {
  const events: RetrylineEvent[] = [];
  const client = retryFetch(fetch, {
    retries: 2,
    backoff: { strategy: 'constant', base: 20 },
    jitter: 'none',
    onEvent: (event) => events.push(event),
  });
  try {
    const response = await client(url);
    return { status: response.status, text: await response.text(), info: getRetryInfo(response), events };
  } catch (error) {
    const { name, message } = error as Error;
    const cause = (error as { cause?: { name?: string; message?: string } }).cause;
    return { error: { name, message, cause: cause && { name: cause.name, message: cause.message } }, events };
  }
}

(window as unknown as { retryline: { run: typeof run } }).retryline = { run };
