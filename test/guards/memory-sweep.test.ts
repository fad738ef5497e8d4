/** The memory store's sweep drops idle keys of every guard table. */
import { circuitBreaker, memoryStore, rateLimiter, retry, retryBudget, virtualClock } from '@retryline/core';
import { expect, it } from 'vitest';

it('idle breaker, budget and limiter keys are swept from a shared memory store', async () => {
  const clock = virtualClock(Date.UTC(2026, 0, 1));
  const store = memoryStore();
  const guards = {
    store,
    clock,
    breaker: circuitBreaker(),
    budget: retryBudget(),
    limiter: rateLimiter({ capacity: 10_000, refillPerSecond: 10 }),
  };
  await retry(async () => 1, { ...guards, guardKey: 'idle' });
  expect(store.size()).toMatchObject({ breakers: 1, budgets: 1, limiters: 1 });
  await clock.advance(120_000);
  for (let i = 0; i < 1_000; i++) await retry(async () => 1, { ...guards, guardKey: 'busy' });
  expect(store.size()).toMatchObject({ breakers: 1, budgets: 1, limiters: 1 });
});
