import { createRequire } from 'node:module';
import { getRetryInfo } from '@retryline/axios';
import axiosRetry from '@retryline/axios/compat';
import axios, { AxiosError, AxiosHeaders, type AxiosInstance, type AxiosStatic, CanceledError } from 'axios';
import original from 'axios-retry';
import { afterEach, describe, expect, it } from 'vitest';
import { settle } from '../support/settle';
import { useFaultServer } from '../support/use-fault-server';

// An app can hold an axios instance of another copy of axios than the one @retryline/axios
// resolves (a monorepo with two versions, a bundle with its own). axios's CommonJS build, loaded
// beside the ES module this package imports, is such a copy: same code, classes of its own.
const second = createRequire(import.meta.url)('axios') as AxiosStatic;

const server = useFaultServer();

const json = (status: number, body: unknown) => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

it('the second copy is really another copy: none of its classes is this package’s', () => {
  expect(second.AxiosError).not.toBe(AxiosError);
  expect(second.CanceledError).not.toBe(CanceledError);
  expect(second.AxiosHeaders).not.toBe(AxiosHeaders);
  expect(second.interceptors.request.constructor).not.toBe(axios.interceptors.request.constructor);
});

const removers: (() => void)[] = [];
const removeAll = () => {
  for (const remove of removers.splice(0)) remove();
};
afterEach(removeAll);

/**
 * The second copy's default export, or an instance it made, with axios-retry or compat on it
 * (and nothing else: what the last call installed on the shared default export is removed).
 */
function secondClient(
  kind: 'create()' | 'the default export',
  library: 'compat' | 'axios-retry',
  config: Parameters<typeof axiosRetry>[1] = {},
): AxiosInstance {
  removeAll();
  const instance = kind === 'create()' ? second.create() : second;
  if (library === 'compat') {
    removers.push(axiosRetry(instance, config).detach);
  } else {
    const ids = original(instance, config as Parameters<typeof original>[1]);
    removers.push(() => {
      instance.interceptors.request.eject(ids.requestInterceptorId);
      instance.interceptors.response.eject(ids.responseInterceptorId);
    });
  }
  return instance;
}

describe.each(['create()', 'the default export'] as const)(
  'an instance of another copy of axios (%s)',
  (kind) => {
    describe.each(['compat', 'axios-retry'] as const)('with %s', (library) => {
      it('retries, and hands back that copy’s response, its body parsed once', async () => {
        server.script('/r', [{ status: 503 }, { status: 503 }, json(200, { ok: true })]);
        const response = await secondClient(kind, library).get(`${server.url}/r`);
        expect(response.data).toEqual({ ok: true });
        expect(response.headers).toBeInstanceOf(second.AxiosHeaders);
        expect(response.config['axios-retry']?.retryCount).toBe(2);
        expect(server.requests('/r')).toHaveLength(3);
      });

      it('rejects with that copy’s AxiosError, for a status and for a refused connection', async () => {
        server.script('/missing', [json(404, { error: 'missing' })]);
        const { error } = await settle(secondClient(kind, library).get(`${server.url}/missing`));
        expect(error).toBeInstanceOf(second.AxiosError);
        expect((error as AxiosError).response?.data).toEqual({ error: 'missing' });
        expect((error as AxiosError).response?.headers).toBeInstanceOf(second.AxiosHeaders);

        const refused = await settle(secondClient(kind, library).get(`${await server.refusedUrl()}/x`));
        expect(refused.error).toBeInstanceOf(second.AxiosError);
        expect((refused.error as AxiosError).code).toBe('ECONNREFUSED');
      });

      it('a cancel during a wait rejects with that copy’s CanceledError', async () => {
        server.script('/slow', [{ status: 503 }, { status: 200 }]);
        const controller = new AbortController();
        const client = secondClient(kind, library, { retryDelay: () => 200 });
        setTimeout(() => controller.abort(), 50);
        const { error } = await settle(client.get(`${server.url}/slow`, { signal: controller.signal }));
        expect(error).toBeInstanceOf(second.CanceledError);
        expect(axios.isCancel(error)).toBe(true);
      });

      it('sends the headers set by interceptors and retries, a JSON body encoded once', async () => {
        server.script('/orders', [{ status: 503 }, { status: 201 }]);
        const client = secondClient(kind, library, {
          retryCondition: () => true,
          onRetry: (retryCount, _error, config) => {
            // The instance's own AxiosHeaders, of the second copy.
            (config.headers as InstanceType<typeof second.AxiosHeaders>).set('x-retry', String(retryCount));
          },
        });
        const id = client.interceptors.request.use((config) => {
          config.headers.set('authorization', 'Bearer token');
          return config;
        });
        removers.push(() => client.interceptors.request.eject(id));
        await client.post(`${server.url}/orders`, { sku: 1 });
        const requests = server.requests('/orders');
        expect(requests.map((r) => r.headers.authorization)).toEqual(['Bearer token', 'Bearer token']);
        expect(requests[1]?.headers['x-retry']).toBe('1');
        expect(requests.map((r) => r.bodyText)).toEqual(['{"sku":1}', '{"sku":1}']);
      });
    });

    describe('with compat, the errors Retryline makes are that copy’s too', () => {
      it('a cancel during an attempt, and a CancelToken of that copy with its own message', async () => {
        server.script('/stall', [{ fault: 'stall-headers' }]);
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 50);
        const client = secondClient(kind, 'compat');
        const aborted = await settle(client.get(`${server.url}/stall`, { signal: controller.signal }));
        expect(aborted.error).toBeInstanceOf(second.CanceledError);

        server.script('/slow', [{ status: 503 }, { status: 200 }]);
        const source = second.CancelToken.source();
        setTimeout(() => source.cancel('user left'), 50);
        const cancelled = await settle(
          secondClient(kind, 'compat', { retryDelay: () => 10_000 }).get(`${server.url}/slow`, {
            cancelToken: source.token,
          }),
        );
        expect(cancelled.error).toBeInstanceOf(second.CanceledError);
        expect((cancelled.error as Error).message).toBe('user left');
      });

      it('a response validateResponse refuses, and the timeouts', async () => {
        server.script('/job', [{ status: 200, body: 'pending' }]);
        const refused = await settle(
          secondClient(kind, 'compat', { retries: 0, validateResponse: () => false }).get(
            `${server.url}/job`,
          ),
        );
        expect(refused.error).toBeInstanceOf(second.AxiosError);
        expect((refused.error as AxiosError).code).toBe('ERR_BAD_RESPONSE');

        server.script('/stall', [{ fault: 'stall-headers' }]);
        const whole = await settle(secondClient(kind, 'compat').get(`${server.url}/stall`, { timeout: 100 }));
        expect(whole.error).toBeInstanceOf(second.AxiosError);
        expect((whole.error as AxiosError).code).toBe('ECONNABORTED');

        const perAttempt = await settle(
          secondClient(kind, 'compat', { retries: 1, retryline: { timeout: 50 } }).get(`${server.url}/stall`),
        );
        expect(perAttempt.error).toBeInstanceOf(second.AxiosError);
        expect((perAttempt.error as AxiosError).code).toBe('ECONNABORTED');
        expect(getRetryInfo(perAttempt.error)).toMatchObject({ attempts: 2 });
      });

      it('retries an error of that copy Retryline’s engine does not know, as axios-retry does', async () => {
        let attempts = 0;
        const instance = second.create({
          adapter: async (config) => {
            attempts++;
            throw new second.AxiosError('connect EHOSTDOWN 10.0.0.1:80', 'EHOSTDOWN', config);
          },
        });
        axiosRetry(instance);
        const { error } = await settle(instance.get('http://retryline.invalid/x'));
        expect(error).toBeInstanceOf(second.AxiosError);
        expect(attempts).toBe(4);
      });
    });
  },
);
