import { isRetrylineError, RETRY, retry } from '@retryline/core';

interface Leader {
  node: string;
}

async function findLeader(signal: AbortSignal): Promise<Leader | undefined> {
  const response = await fetch('http://127.0.0.1:8080/leader', { signal });
  return response.ok ? ((await response.json()) as Leader) : undefined;
}

try {
  const leader = await retry(
    // Return RETRY to ask for another attempt; a thrown error is retried too.
    async ({ signal }) => (await findLeader(signal)) ?? RETRY,
    {
      retries: 5, // 6 attempts in all
      backoff: { strategy: 'exponential', base: 200 }, // 400 ms, 800 ms, 1.6 s …
      maxDelay: 5_000,
      jitter: 'full',
      deadline: 15_000, // the whole call, waits included
      onRetry: ({ attempt, delay, error }) =>
        console.warn(`attempt ${attempt} failed, next in ${Math.round(delay)} ms`, error),
    },
  );
  console.log('leader is', leader.node);
} catch (error) {
  if (isRetrylineError(error, 'DeadlineExceededError')) console.error('no leader within 15 s');
  else throw error;
}
