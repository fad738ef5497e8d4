import { getRetryInfo } from '@retryline/axios';
import axiosRetry, { type AxiosRetryCompatConfig } from '@retryline/axios/compat';
import { isRetrylineError, type RetrylineEvent } from '@retryline/core';
import { GATE_DEFAULTS } from '@retryline/core/store';
import axios, { type AxiosAdapter, AxiosError, type AxiosInstance } from 'axios';
import original, { type IAxiosRetryConfig } from 'axios-retry';
import { describe, expect, it, vi } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

// Side by side with axios-retry 4.5.0: the same instance set-up, once with axios-retry and once
// with the compat layer, and the same question asked of both.

const server = useFaultServer();

type Library = 'axios-retry' | 'compat';
const LIBRARIES: readonly Library[] = ['axios-retry', 'compat'];

function install(library: Library, instance: AxiosInstance, config: AxiosRetryCompatConfig = {}): void {
  if (library === 'compat') axiosRetry(instance, config);
  else original(instance, config as IAxiosRetryConfig);
}

/**
 * Fails as axios's Node adapter fails on a socket error (lib/adapters/http.js wraps it with
 * `AxiosError.from`): with `code`, or without one (`undefined`) as for an error that has none.
 * A loopback server cannot make a host or network go down; this adapter can, for both libraries.
 */
function socketError(code: string | undefined, config: Parameters<AxiosAdapter>[0]): AxiosError {
  const cause = Object.assign(
    new Error(code ? `connect ${code} 10.0.0.1:80` : 'socket closed'),
    code ? { code } : {},
  );
  return AxiosError.from(cause, code, config);
}

/** An adapter that fails every attempt with a socket error `code`, counting them. */
function alwaysFailing(code: string | undefined): { adapter: AxiosAdapter; readonly attempts: number } {
  let attempts = 0;
  return {
    adapter: async (config) => {
      attempts++;
      throw socketError(code, config);
    },
    get attempts() {
      return attempts;
    },
  };
}

const UNRECOGNISED = [
  ['EHOSTDOWN', 'EHOSTDOWN'],
  ['ENETDOWN', 'ENETDOWN'],
  ['EPROTO', 'EPROTO'],
  ['ERR_SOCKET_CONNECTION_TIMEOUT', 'ERR_SOCKET_CONNECTION_TIMEOUT'],
  ['a network error without a code', undefined],
] as const;

describe('compat and axios-retry: network errors axios-retry retries by default', () => {
  it.each(UNRECOGNISED)('%s on a GET: the same 4 attempts from both', async (_, code) => {
    const attempts: Record<string, number> = {};
    const rejected: Record<string, unknown> = {};
    for (const library of LIBRARIES) {
      const failing = alwaysFailing(code);
      const instance = axios.create({ baseURL: 'http://retryline.invalid', adapter: failing.adapter });
      install(library, instance);
      const { error } = await settle(instance.get('/items'));
      attempts[library] = failing.attempts;
      rejected[library] = (error as AxiosError).code;
    }
    expect(attempts).toEqual({ 'axios-retry': 4, compat: 4 });
    // Both reject with the last attempt's own error.
    expect(rejected).toEqual({ 'axios-retry': code, compat: code });
  });

  it('compat rejects with the very error the adapter threw, and getRetryInfo answers for it', async () => {
    let last: unknown;
    const instance = axios.create({
      baseURL: 'http://retryline.invalid',
      adapter: async (config) => {
        last = socketError('EHOSTDOWN', config);
        throw last;
      },
    });
    const events: RetrylineEvent[] = [];
    axiosRetry(instance, { retries: 1, retryline: { onEvent: (event) => events.push(event) } });
    const { error } = await settle(instance.get('/items'));
    expect(error).toBe(last);
    expect((error as AxiosError).cause).toMatchObject({ code: 'EHOSTDOWN' });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 2, outcome: 'exhausted' });
    // Judged as a failure that may have reached the server; events name the error as it was.
    const ends = events.filter((event) => event.type === 'attempt-end');
    expect(ends).toHaveLength(2);
    for (const end of ends) {
      expect(end).toMatchObject({ phase: 'unknown', error: { message: /EHOSTDOWN/, code: 'EHOSTDOWN' } });
    }
  });

  it('a retryCondition that refuses: one call and one attempt in both, the adapter’s own error', async () => {
    for (const library of LIBRARIES) {
      let thrown: unknown;
      const instance = axios.create({
        baseURL: 'http://retryline.invalid',
        adapter: async (config) => {
          thrown = socketError('EPROTO', config);
          throw thrown;
        },
      });
      const retryCondition = vi.fn((_error: AxiosError) => false);
      install(library, instance, { retryCondition });
      const { error } = await settle(instance.get('/items'));
      expect(error, library).toBe(thrown);
      expect(retryCondition, library).toHaveBeenCalledExactlyOnceWith(thrown);
    }
  });
});

describe('compat: what the callbacks and the caller see of such an error', () => {
  it('retryCondition, retryDelay, onRetry and onMaxRetryTimesExceeded get the adapter’s own error', async () => {
    const thrown: unknown[] = [];
    const instance = axios.create({
      baseURL: 'http://retryline.invalid',
      adapter: async (config) => {
        thrown.push(socketError('ENETDOWN', config));
        throw thrown.at(-1);
      },
    });
    const seen: [string, unknown][] = [];
    axiosRetry(instance, {
      retries: 1,
      retryCondition: (error) => seen.push(['retryCondition', error]) > 0,
      retryDelay: (_count, error) => (seen.push(['retryDelay', error]) > 0 ? 0 : 0),
      onRetry: (_count, error) => void seen.push(['onRetry', error]),
      onMaxRetryTimesExceeded: (error) => void seen.push(['onMaxRetryTimesExceeded', error]),
    });
    const { error } = await settle(instance.get('/items'));
    expect(error).toBe(thrown[1]);
    expect(seen).toEqual([
      ['retryCondition', thrown[0]],
      ['retryDelay', thrown[0]],
      ['onRetry', thrown[0]],
      ['onMaxRetryTimesExceeded', thrown[1]],
    ]);
    for (const [name, value] of seen)
      expect(value, name).toBe(thrown[name === 'onMaxRetryTimesExceeded' ? 1 : 0]);
  });

  it('a stop of Retryline’s own (a retryline deadline) is an AxiosError; its cause keeps the adapter’s error', async () => {
    let thrown: unknown;
    const instance = axios.create({
      baseURL: 'http://retryline.invalid',
      adapter: async (config) => {
        thrown = socketError('EHOSTDOWN', config);
        throw thrown;
      },
    });
    axiosRetry(instance, { retryDelay: () => 5000, retryline: { deadline: 1000 } });
    const { error } = await settle(instance.get('/items'));
    // Every rejection through axios is an AxiosError, compat's too.
    expect(axios.isAxiosError(error)).toBe(true);
    expect((error as AxiosError).code).toBe('ERR_DEADLINE');
    const stop = (error as Error).cause;
    expect(isRetrylineError(stop, 'DeadlineExceededError')).toBe(true);
    expect((stop as Error).cause).toBe(thrown);
  });
});

describe('compat and axios-retry: an error without a request config', () => {
  it('is not retried by either, nor shown to retryCondition: nothing says how to repeat it', async () => {
    for (const library of LIBRARIES) {
      let attempts = 0;
      const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
      const instance = axios.create({
        baseURL: 'http://retryline.invalid',
        adapter: async () => {
          attempts++;
          throw reset;
        },
      });
      const retryCondition = vi.fn((_error: AxiosError) => true);
      install(library, instance, { retryCondition });
      const { error } = await settle(instance.get('/items'));
      expect(error, library).toBe(reset);
      expect(attempts, library).toBe(1);
      expect(retryCondition, library).not.toHaveBeenCalled();
    }
  });
});

describe('compat and axios-retry: retryCondition is asked about every error', () => {
  // Attempt by attempt: socket errors Retryline's engine knows and does not know, errors of
  // axios's own (too many redirects), statuses from a real server, then a success.
  const STEPS = [
    'EHOSTDOWN',
    'ENETDOWN',
    'EPROTO',
    'ERR_SOCKET_CONNECTION_TIMEOUT',
    'no code',
    'ECONNRESET',
    'ERR_FR_TOO_MANY_REDIRECTS',
    503,
    404,
    200,
  ] as const;
  const FAILURES = STEPS.length - 1;

  function scripted(path: string): AxiosAdapter {
    const http = axios.getAdapter('http');
    let attempt = 0;
    return async (config) => {
      const step = STEPS[attempt++];
      if (typeof step === 'number') {
        server.script(path, [{ status: step, body: String(step) }]);
        return http(config);
      }
      throw socketError(step === 'no code' ? undefined : step, config);
    };
  }

  it.each(['get', 'post'] as const)(
    'a %s: the same calls, with the same errors, in both; a condition that says yes retries each',
    async (method) => {
      const seen: Record<string, unknown[]> = {};
      for (const library of LIBRARIES) {
        const path = `/every-${library}-${method}`;
        const instance = axios.create({ baseURL: server.url, adapter: scripted(path) });
        const retryCondition = vi.fn((_error: AxiosError) => true);
        install(library, instance, { retries: FAILURES, retryCondition });
        const response = await instance.request({ method, url: path, data: 'body' });
        expect(response.status, library).toBe(200);
        seen[library] = retryCondition.mock.calls.map(([error]) => error.response?.status ?? error.code);
      }
      expect(seen.compat).toHaveLength(FAILURES);
      expect(seen.compat).toEqual(seen['axios-retry']);
    },
  );
});

describe('compat and axios-retry: the one deliberate difference', () => {
  it.each(UNRECOGNISED)(
    '%s on a POST: axios-retry resends it 3 times, compat’s default condition does not',
    async (_, code) => {
      const attempts: Record<string, number> = {};
      for (const library of LIBRARIES) {
        const failing = alwaysFailing(code);
        const instance = axios.create({ baseURL: 'http://retryline.invalid', adapter: failing.adapter });
        install(library, instance);
        await settle(instance.post('/orders', { sku: 1 }));
        attempts[library] = failing.attempts;
      }
      // axios-retry's default asks only whether it was a network error; for a method that is not
      // idempotent it may have reached the server, and only an idempotency key makes a resend safe.
      expect(attempts).toEqual({ 'axios-retry': code === undefined ? 1 : 4, compat: 1 });
    },
  );

  it('a POST whose connection was reset: axios-retry sends it twice, compat once', async () => {
    const sent: Record<string, number> = {};
    for (const library of LIBRARIES) {
      const path = `/orders-${library}`;
      server.script(path, [{ fault: 'reset-before-headers' }, { status: 201 }]);
      const instance = axios.create({ baseURL: server.url });
      install(library, instance);
      await settle(instance.post(path, { sku: 1 }));
      sent[library] = server.requests(path).length;
    }
    expect(sent).toEqual({ 'axios-retry': 2, compat: 1 });
  });

  it('a refused POST, provably never sent, is resent by both', async () => {
    const baseURL = await server.refusedUrl();
    const failures: Record<string, unknown> = {};
    for (const library of LIBRARIES) {
      const instance = axios.create({ baseURL });
      const retryCondition = vi.fn(original.isNetworkOrIdempotentRequestError);
      install(library, instance, library === 'compat' ? {} : { retryCondition });
      const { error } = await settle(instance.post('/orders', { sku: 1 }));
      failures[library] = (error as AxiosError).code;
      if (library === 'axios-retry') expect(retryCondition).toHaveBeenCalledTimes(3);
      else expect(getRetryInfo(error)).toMatchObject({ attempts: 4 });
    }
    expect(failures).toEqual({ 'axios-retry': 'ECONNREFUSED', compat: 'ECONNREFUSED' });
  });

  it('with an idempotency key, or a retryCondition of the caller’s own, compat resends the POST too', async () => {
    const keyed = alwaysFailing('EHOSTDOWN');
    const withKey = axios.create({ baseURL: 'http://retryline.invalid', adapter: keyed.adapter });
    axiosRetry(withKey, { retryline: { idempotencyKey: true } });
    await settle(withKey.post('/orders', { sku: 1 }));
    expect(keyed.attempts).toBe(4);

    const decided = alwaysFailing('EHOSTDOWN');
    const own = axios.create({ baseURL: 'http://retryline.invalid', adapter: decided.adapter });
    axiosRetry(own, { retryCondition: (error) => axiosRetry.isNetworkError(error) });
    await settle(own.post('/orders', { sku: 1 }));
    expect(decided.attempts).toBe(4);
  });
});

describe('compat and axios-retry in an outage: the retry budget and the recovery gate never change what the caller gets', () => {
  it('60 concurrent GETs against an always-503 server: every rejection is the AxiosError with its 503, from both', async () => {
    server.script('/outage', [{ status: 503, body: 'down' }]);
    const seen: Record<string, { sent: number; shapes: string[]; stoppedBy: string[] }> = {};
    for (const library of LIBRARIES) {
      server.clear();
      server.script('/outage', [{ status: 503, body: 'down' }]);
      // One instance per library, made once, as an app makes it; the defaults of each.
      const instance = axios.create({ baseURL: server.url });
      install(library, instance);
      const results = await Promise.all(Array.from({ length: 60 }, () => settle(instance.get('/outage'))));
      seen[library] = {
        sent: server.requests('/outage').length,
        shapes: [
          ...new Set(
            results.map(({ value, error }) =>
              value !== undefined
                ? 'resolved'
                : `${axios.isAxiosError(error)} ${(error as AxiosError).response?.status} ${(error as AxiosError).response?.data}`,
            ),
          ),
        ],
        stoppedBy: [...new Set(results.map(({ error }) => getRetryInfo(error)?.stoppedBy ?? '-'))].sort(),
      };
    }
    // The same error type from both, for every caller: an AxiosError holding the last 503 and its body.
    expect(seen['axios-retry']?.shapes).toEqual(['true 503 down']);
    expect(seen.compat?.shapes).toEqual(['true 503 down']);
    // axios-retry retries every request 3 times at once. compat has Retryline's defaults: after three
    // failures in a row its recovery gate parks the retries and lets one probe through at a time
    // (at most one per half probe interval, for the 5 s a retry may stay parked), and its budget
    // would allow 0.1 × 60 requests + 10/s × 10 s = 106 retries at most; getRetryInfo says which
    // stopped each request.
    expect(seen['axios-retry']?.sent).toBe(240);
    const { probeMs, maxParkMs } = GATE_DEFAULTS;
    const retries = (seen.compat?.sent ?? 0) - 60;
    expect(retries).toBeGreaterThan(0);
    expect(retries).toBeLessThanOrEqual(Math.min(106, 1 + Math.ceil((2 * maxParkMs) / (probeMs / 2))));
    expect(seen.compat?.stoppedBy).toContain('gate');
    for (const stoppedBy of seen.compat?.stoppedBy ?? [])
      expect(['budget', 'exhausted', 'gate']).toContain(stoppedBy);
  });
});
