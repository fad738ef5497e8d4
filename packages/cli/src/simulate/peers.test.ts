import { seededRandom } from '@retryline/core';
import { BREAKER_DEFAULTS } from '@retryline/core/store';
import { describe, expect, it } from 'vitest';
import {
  axiosRetryDefaultsPolicy,
  kyDefaultsPolicy,
  retrylineWithBreakerPolicy,
  STORM_POLICIES,
} from './peers';
import { simClock } from './sim-clock';
import { defaultGuardsPolicy, type StormPolicy } from './storm';

/** A server that answers from `script` in turn (a status, or 'hang' for no answer), recording when. */
function scripted(script: readonly (number | 'hang')[], headers: Record<string, string> = {}) {
  const calls: number[] = [];
  const clock = simClock();
  let index = 0;
  const fetchImpl: typeof fetch = (_input, init) => {
    calls.push(clock.now());
    const step = script[Math.min(index++, script.length - 1)] ?? 'hang';
    if (step === 'hang') {
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
      });
    }
    return Promise.resolve(new Response(null, { status: step, headers }));
  };
  return { calls, clock, fetchImpl };
}

async function send(policy: StormPolicy, server: ReturnType<typeof scripted>, timeoutMs = 1_000) {
  if (!('send' in policy)) throw new Error('not a custom policy');
  const sender = policy.send(server.fetchImpl, server.clock, { timeoutMs, random: seededRandom(1) });
  const outcome = sender('http://storm.test/work', {}).then(
    (value) => ({ value }),
    (error: unknown) => ({ error: error as Error }),
  );
  await server.clock.run(Number.POSITIVE_INFINITY);
  return outcome;
}

describe('ky defaults', () => {
  it('retries a 503 twice, after 300 ms then 600 ms', async () => {
    const server = scripted([503, 503, 503]);
    const outcome = await send(kyDefaultsPolicy, server);
    expect(server.calls).toEqual([0, 300, 900]);
    expect(outcome).toMatchObject({ error: { name: 'HTTPError' } });
  });

  it('succeeds on a retry', async () => {
    const server = scripted([500, 200]);
    const outcome = await send(kyDefaultsPolicy, server);
    expect(server.calls).toEqual([0, 300]);
    expect((outcome as { value: Response }).value.status).toBe(200);
  });

  it('does not retry a timeout (retryOnTimeout: false)', async () => {
    const server = scripted(['hang']);
    const outcome = await send(kyDefaultsPolicy, server, 1_000);
    expect(server.calls).toEqual([0]);
    expect(outcome).toMatchObject({ error: { name: 'TimeoutError' } });
    expect(server.clock.now()).toBe(1_000);
  });

  it('does not retry a status outside its list, nor a 413 without Retry-After', async () => {
    for (const status of [501, 413, 404]) {
      const server = scripted([status, 200]);
      await send(kyDefaultsPolicy, server);
      expect(server.calls).toEqual([0]);
    }
  });

  it('waits Retry-After on a 503', async () => {
    const server = scripted([503, 200], { 'retry-after': '2' });
    await send(kyDefaultsPolicy, server);
    expect(server.calls).toEqual([0, 2_000]);
  });
});

describe('axios-retry defaults', () => {
  it('retries a 5xx three times at once', async () => {
    const server = scripted([503, 500, 502, 504]);
    const outcome = await send(axiosRetryDefaultsPolicy, server);
    expect(server.calls).toEqual([0, 0, 0, 0]);
    expect(outcome).toMatchObject({ error: { name: 'AxiosError' } });
  });

  it('does not retry a timeout (ECONNABORTED), nor a 4xx other than 429', async () => {
    const hang = scripted(['hang']);
    expect(await send(axiosRetryDefaultsPolicy, hang)).toMatchObject({ error: { name: 'AxiosError' } });
    expect(hang.calls).toEqual([0]);
    const notFound = scripted([404, 200]);
    await send(axiosRetryDefaultsPolicy, notFound);
    expect(notFound.calls).toEqual([0]);
    const tooMany = scripted([429, 200]);
    await send(axiosRetryDefaultsPolicy, tooMany);
    expect(tooMany.calls).toEqual([0, 0]);
  });

  it('shares one timeout across all attempts (shouldResetTimeout: false)', async () => {
    // The first attempt answers 503 after 700 ms; the retry then has 300 ms left, and times out.
    const clock = simClock();
    const calls: number[] = [];
    const fetchImpl: typeof fetch = (_input, init) => {
      calls.push(clock.now());
      if (calls.length === 1) return clock.sleep(700).then(() => new Response(null, { status: 503 }));
      return new Promise<Response>((_resolve, reject) => {
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason), { once: true });
      });
    };
    const outcome = await send(axiosRetryDefaultsPolicy, { calls, clock, fetchImpl });
    expect(calls).toEqual([0, 700]);
    expect(outcome).toMatchObject({ error: { message: 'timeout of 300ms exceeded' } });
    expect(clock.now()).toBe(1_000);
  });

  it('gives up without a retry when the wait would spend the rest of the timeout', async () => {
    // noDelay waits Retry-After: 1 s, which leaves nothing of a 1 s timeout.
    const server = scripted([503, 200], { 'retry-after': '1' });
    const outcome = await send(axiosRetryDefaultsPolicy, server, 1_000);
    expect(server.calls).toEqual([0]);
    expect(outcome).toMatchObject({ error: { name: 'AxiosError' } });
    const longer = scripted([503, 200], { 'retry-after': '1' });
    await send(axiosRetryDefaultsPolicy, longer, 1_500);
    expect(longer.calls).toEqual([0, 1_000]);
  });
});

describe('STORM_POLICIES', () => {
  it('lists the five compared policies, naive client first and Retryline with breaker last', () => {
    expect(STORM_POLICIES.map((policy) => policy.name)).toEqual([
      'immediate retries ×3',
      'axios-retry defaults',
      'ky defaults',
      'Retryline defaults',
      'Retryline + breaker',
    ]);
    const retryline = STORM_POLICIES[3];
    expect(retryline && 'options' in retryline && retryline.options).toBe(
      'options' in defaultGuardsPolicy && defaultGuardsPolicy.options,
    );
    expect(retrylineWithBreakerPolicy.name).toBe('Retryline + breaker');
    const options = 'options' in retrylineWithBreakerPolicy ? retrylineWithBreakerPolicy.options : undefined;
    const made = typeof options === 'function' ? [options(), options()] : [];
    // A breaker with the defaults, and a fresh one for every run.
    expect(made[0]?.breaker).toMatchObject({ kind: 'breaker', config: BREAKER_DEFAULTS });
    expect(made[0]?.breaker).not.toBe(made[1]?.breaker);
  });
});
