/**
 * guard values through axios's per-request config. axios deep-merges plain
 * objects of a request's config (mergeConfig → utils.merge), copying string keys only.
 */
import { attachRetry, getRetryInfo } from '@retryline/axios';
import { circuitBreaker, isRetrylineError, retryBudget } from '@retryline/core';
import axios from 'axios';
import { describe, expect, it } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

const server = useFaultServer();

describe('guard values given per request through axios config', () => {
  it('config.retry.breaker = a circuitBreaker() value is accepted and is that breaker', async () => {
    server.script('/down', [{ status: 503 }]);
    const breaker = circuitBreaker({ consecutiveFailures: 1, openMs: 60_000 });
    const instance = axios.create({ baseURL: server.url });
    attachRetry(instance, { retries: 0 });
    const first = await settle(instance.get('/down', { retry: { breaker } }));
    // Today: InvalidOptionsError "Expected breaker to be a circuitBreaker() value …, got an object",
    // nothing sent: axios's mergeConfig cloned the value (string keys only) before Retryline saw it.
    expect(isRetrylineError(first.error, 'InvalidOptionsError')).toBe(false);
    // The 503 itself.
    expect((first.error as { response?: { status?: number } }).response?.status).toBe(503);
    expect(breaker.state(server.url).state).toBe('open');
  });

  it('a retryBudget() value in instance.defaults.retry reaches Retryline as that value', async () => {
    server.script('/ok', [{ status: 200 }]);
    const budget = retryBudget();
    const instance = axios.create({ baseURL: server.url, retry: { budget } } as never);
    attachRetry(instance);
    const { value, error } = await settle(instance.get('/ok'));
    expect(error).toBeUndefined();
    expect(getRetryInfo(value)?.attempts).toBe(1);
    expect(budget.state(server.url).requests).toBe(1);
  });
});
