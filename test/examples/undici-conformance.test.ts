import { isRetrylineError, type RetrylineEvent } from '@retryline/core';
import { request } from 'undici';
import { describe, it } from 'vitest';
import { getRetryInfo, retryUndici } from '../../examples/undici-adapter';
import type { Driver, DriverResult, Outcome } from '../conformance/drivers';
import { runScenario, scenarios, verify } from '../conformance/scenarios';
import { useFaultServer } from '../support/use-fault-server';

// The conformance table (test/conformance/scenarios.ts), every row, through the example undici
// adapter, as packages/core/ADAPTERS.md's checklist asks of a new adapter: the same scenario, the
// same behaviour as fetch, axios and ky. undici's conventions are mapped here as drivers.ts maps
// theirs: every status resolves; a transport failure rejects with undici's own error.
const server = useFaultServer();

const undiciDriver: Driver = {
  name: 'undici (examples/undici-adapter.ts)',
  httpErrors: 'resolve',
  async send({ method, url, body, headers, options, perCall, signal }) {
    const events: RetrylineEvent[] = [];
    const send = retryUndici(request, { ...options, onEvent: (event) => events.push(event) });
    try {
      const response = await send(url, {
        method,
        ...(body === undefined ? {} : { body }),
        ...(headers ? { headers } : {}),
        ...(perCall === undefined ? {} : { retry: perCall }),
        ...(signal ? { signal } : {}),
      });
      const text = await response.body.text();
      return {
        outcome: { kind: 'response', status: response.statusCode, body: text },
        events,
        info: getRetryInfo(response),
        settled: 'resolved',
      };
    } catch (error) {
      const rejected = (outcome: Outcome): DriverResult => ({
        outcome,
        events,
        info: getRetryInfo(error),
        settled: 'rejected',
      });
      if (signal?.aborted) return rejected({ kind: 'aborted', reason: signal.reason });
      // Retryline's per-attempt timeout has no undici error to stand for it: kept as Retryline's.
      if (
        isRetrylineError(error, 'RetriesExhaustedError') &&
        isRetrylineError(error.cause, 'AttemptTimeoutError')
      ) {
        return rejected({ kind: 'timeout' });
      }
      if (isRetrylineError(error)) {
        const retryAt = (error as { retryAt?: number }).retryAt;
        return rejected({
          kind: 'retryline-error',
          name: error.name,
          ...(retryAt === undefined ? {} : { retryAt }),
        });
      }
      // undici's own: a node socket error (ECONNREFUSED, ECONNRESET) or an UND_ERR_* error.
      if (typeof (error as { code?: unknown }).code === 'string') return rejected({ kind: 'network-error' });
      throw error;
    }
  },
};

describe(`conformance: ${undiciDriver.name}`, () => {
  it.each(scenarios.map((scenario, index) => ({ ...scenario, index })))('$name', async (scenario) => {
    const path = `/undici/s${scenario.index}`;
    const madeAt = Date.now();
    if (scenario.steps) server.script(path, scenario.steps(madeAt));
    const url = `${scenario.refused ? await server.refusedUrl() : server.url}${path}`;
    verify(
      scenario,
      await runScenario(undiciDriver, scenario, { url, requests: () => server.requests(path) }, madeAt),
    );
  });
});
