import { recordAttempts, sequence, status } from '@retryline/msw';
import { http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Step } from '../support/fault-server';
import { drivers } from './drivers';
import { runScenario, type Scenario, scenarios, verify } from './scenarios';

// The client's view of the scenario table: the rows a mocked server can play, run through fetch,
// axios and ky with @retryline/msw scripting the answers — as a user's own tests would. Rows about
// the wire itself (resets, stalls, refused ports, slow bodies) need the real fault server and stay
// in conformance.test.ts only.

const ORIGIN = 'https://conformance.test';
const server = setupServer();
const recorder = recordAttempts(server);

beforeAll(() => server.listen({ onUnhandledRequest: 'error' }));
afterEach(() => {
  server.resetHandlers();
  recorder.clear();
});
afterAll(() => {
  recorder.dispose();
  server.close();
});

/** A row msw can play: every step is a plain response, sent at once, to a server that exists. */
function playable(scenario: Scenario): boolean {
  if (scenario.refused || !scenario.steps) return false;
  return scenario.steps(Date.now()).every((step) => !('fault' in step) && !step.delayMs);
}

function toScript(steps: readonly Step[]) {
  return sequence(
    steps.map((step) => {
      if ('fault' in step) throw new Error(`not playable through msw: ${step.fault}`);
      return status(step.status, {
        ...(step.headers ? { headers: step.headers } : {}),
        ...(step.body === undefined ? {} : { body: step.body }),
      });
    }),
  );
}

const rows = scenarios.map((scenario, index) => ({ ...scenario, index })).filter(playable);

it('plays most of the table: every row but those about the wire', () => {
  expect(rows.length).toBeGreaterThanOrEqual(30);
  expect(rows.length).toBeLessThan(scenarios.length);
});

describe.each(drivers)('conformance through msw: $name', (driver) => {
  it.each(rows)('$name', async (scenario) => {
    const path = `/s${scenario.index}`;
    const madeAt = Date.now();
    server.use(http.all(`${ORIGIN}${path}`, toScript(scenario.steps?.(madeAt) ?? [])));
    const context = await runScenario(
      driver,
      scenario,
      {
        url: `${ORIGIN}${path}`,
        requests: async () => {
          await recorder.flush();
          return recorder.attempts.map((attempt) => ({
            method: attempt.method,
            headers: attempt.headers,
            bodyText: attempt.body ?? '',
            receivedAt: attempt.time,
          }));
        },
      },
      madeAt,
    );
    verify(scenario, context);
  });
});
