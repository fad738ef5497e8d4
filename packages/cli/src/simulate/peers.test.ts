import { seededRandom } from '@retryline/core';
import { BREAKER_DEFAULTS } from '@retryline/core/store';
import { describe, expect, it } from 'vitest';
import {
  axiosRetryDefaultsPolicy,
  axiosRetryExponentialPolicy,
  CLOSED_STORM_POLICIES,
  kyDefaultsPolicy,
  noRetriesPolicy,
  OVERLOAD_POLICIES,
  pRetryDefaultsPolicy,
  retrylineDefaultsPolicy,
  retrylineWithBreakerPolicy,
  retrylineWithThrottlePolicy,
  STORM_POLICIES,
} from './peers';
import { simClock } from './sim-clock';
import { defaultGuardsPolicy, policyClient, type StormPolicy } from './storm';

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
  it('lists the six compared policies, naive client first and Retryline with throttle last', () => {
    expect(STORM_POLICIES.map((policy) => policy.name)).toEqual([
      'immediate retries ×3',
      'axios-retry defaults',
      'ky defaults',
      'Retryline defaults',
      'Retryline + breaker',
      'Retryline + throttle',
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

describe('Retryline + throttle', () => {
  it("brings a fresh adaptiveThrottle() with the SRE book's k = 2 over two minutes for every client", () => {
    const options =
      'options' in retrylineWithThrottlePolicy ? retrylineWithThrottlePolicy.options : undefined;
    const made = typeof options === 'function' ? [options(), options()] : [];
    expect(made[0]?.throttle).toMatchObject({ kind: 'throttle', config: { k: 2, windowMs: 120_000 } });
    expect(made[0]?.throttle).not.toBe(made[1]?.throttle);
    // Nothing else: the budget and the gate stay Retryline's defaults.
    expect(Object.keys(made[0] ?? {})).toEqual(['throttle']);
  });

  it('refuses attempts itself once the server rejects more than half of them, and never while it accepts', async () => {
    // One client, a request every 100 ms; the server answers 200 to the first ten attempts, then
    // 503 to everything.
    const outcomes = async (policy: StormPolicy) => {
      const server = scripted([...Array(10).fill(200), 503]);
      const client = policyClient(policy, server.fetchImpl, server.clock, {
        timeoutMs: 1_000,
        random: seededRandom(1),
      });
      const results: string[] = [];
      for (let i = 0; i < 60; i++) {
        server.clock.schedule(i * 100, () => {
          client('http://storm.test/work', {}).then(
            (value) => {
              results[i] = value instanceof Response ? String(value.status) : 'other';
            },
            (error: Error) => {
              results[i] = error.name;
            },
          );
        });
      }
      await server.clock.run(Number.POSITIVE_INFINITY);
      return { results, calls: server.calls.length };
    };
    const plain = await outcomes(retrylineDefaultsPolicy);
    const throttled = await outcomes(retrylineWithThrottlePolicy);
    expect(throttled.results.slice(0, 10)).toEqual(Array(10).fill('200'));
    expect(plain.results).not.toContain('ThrottledError');
    // 10 accepts let 2 × 10 attempts through before any refusal; after that, most are refused.
    expect(throttled.results.filter((r) => r === 'ThrottledError').length).toBeGreaterThan(20);
    expect(throttled.calls).toBeLessThan(plain.calls);
  });
});

describe('axios-retry with exponentialDelay', () => {
  it('waits 2 ** retry × 100 ms plus up to 20 % between retries of a 5xx', async () => {
    const server = scripted([503, 503, 503, 503]);
    const outcome = await send(axiosRetryExponentialPolicy, server, 10_000);
    expect(server.calls).toHaveLength(4);
    const waits = server.calls.slice(1).map((at, i) => at - (server.calls[i] as number));
    for (const [i, wait] of waits.entries()) {
      const base = 2 ** (i + 1) * 100; // 200, 400, 800
      expect(wait).toBeGreaterThanOrEqual(base);
      expect(wait).toBeLessThanOrEqual(base * 1.2);
    }
    expect(new Set(waits.map((wait, i) => wait / 2 ** (i + 1))).size).toBeGreaterThan(1); // jittered
    expect(outcome).toMatchObject({ error: { name: 'AxiosError' } });
  });

  it('still does not retry a timeout, and the wait comes out of the one timeout', async () => {
    const hang = scripted(['hang']);
    expect(await send(axiosRetryExponentialPolicy, hang)).toMatchObject({ error: { name: 'AxiosError' } });
    expect(hang.calls).toEqual([0]);
    // 1 s in all: 200–240 ms, then 400–480 ms, then 800–960 ms would exceed it, so a third retry is refused.
    const failing = scripted([503, 503, 503, 503]);
    await send(axiosRetryExponentialPolicy, failing, 1_000);
    expect(failing.calls).toHaveLength(3);
  });
});

describe('p-retry defaults', () => {
  it('retries a timeout, after 1 s, then 2 s', async () => {
    const server = scripted(['hang', 'hang', 200]);
    const outcome = await send(pRetryDefaultsPolicy, server, 1_000);
    // Timeouts at 1 s and 3 s; waits of 1 s and 2 s.
    expect(server.calls).toEqual([0, 2_000, 5_000]);
    expect((outcome as { value: Response }).value.status).toBe(200);
  });

  it('throws on any non-2xx and retries it 10 times, 1 s × 2 ** n apart, without jitter', async () => {
    const server = scripted([404]);
    const outcome = await send(pRetryDefaultsPolicy, server);
    expect(server.calls).toEqual([0, 1, 3, 7, 15, 31, 63, 127, 255, 511, 1_023].map((s) => s * 1_000));
    expect(outcome).toMatchObject({ error: { name: 'Error' } });
  });
});

describe('no retries', () => {
  it('sends once: a timeout is its error, any response its result', async () => {
    const hang = scripted(['hang']);
    expect(await send(noRetriesPolicy, hang)).toMatchObject({ error: { name: 'TimeoutError' } });
    expect(hang.calls).toEqual([0]);
    expect(hang.clock.now()).toBe(1_000);
    const unavailable = scripted([503, 200]);
    const outcome = await send(noRetriesPolicy, unavailable);
    expect(unavailable.calls).toEqual([0]);
    expect((outcome as { value: Response }).value.status).toBe(503);
  });
});

describe('CLOSED_STORM_POLICIES', () => {
  it("adds no retries, axios-retry with exponentialDelay and p-retry to the open loop's policies", () => {
    expect(CLOSED_STORM_POLICIES.map((policy) => policy.name)).toEqual([
      'no retries',
      'immediate retries ×3',
      'axios-retry defaults',
      'axios-retry exponentialDelay',
      'ky defaults',
      'p-retry defaults',
      'Retryline defaults',
      'Retryline + breaker',
      'Retryline + throttle',
    ]);
    for (const policy of STORM_POLICIES) expect(CLOSED_STORM_POLICIES).toContain(policy);
  });
});

describe('OVERLOAD_POLICIES', () => {
  it("compares no retries, Retryline's defaults and the same with adaptive throttling", () => {
    expect(OVERLOAD_POLICIES).toEqual([
      noRetriesPolicy,
      retrylineDefaultsPolicy,
      retrylineWithThrottlePolicy,
    ]);
  });
});
