import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FaultServer, startFaultServer } from '../support/fault-server';
import { type Driver, drivers, hintBlindDriver } from './drivers';
import { type Context, runScenario, type Scenario, scenarios, verify } from './scenarios';

// The scenario table (scenarios.ts), every row, against the real fault server on loopback.

let server: FaultServer;
let refused: string;
beforeAll(async () => {
  server = await startFaultServer();
  refused = await server.refusedUrl();
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => server.clear());

function run(driver: Driver, scenario: Scenario, index: number): Promise<Context> {
  const path = `/s${index}`;
  const madeAt = Date.now();
  if (scenario.steps) server.script(path, scenario.steps(madeAt));
  const url = `${scenario.refused ? refused : server.url}${path}`;
  return runScenario(driver, scenario, { url, requests: () => server.requests(path) }, madeAt);
}

it('has at least 25 scenarios', () => {
  expect(scenarios.length).toBeGreaterThanOrEqual(25);
});

describe.each(drivers)('conformance: $name', (driver) => {
  it.each(scenarios.map((scenario, index) => ({ ...scenario, index })))('$name', async (scenario) => {
    verify(scenario, await run(driver, scenario, scenario.index));
  });
});

describe('the suite has teeth', () => {
  it('fails every hint row for an adapter that ignores server hints', async () => {
    const rows = scenarios
      .map((scenario, index) => ({ scenario, index }))
      .filter(({ scenario }) => scenario.hint);
    const failed: string[] = [];
    for (const { scenario, index } of rows) {
      server.clear();
      try {
        verify(scenario, await run(hintBlindDriver, scenario, index));
      } catch {
        failed.push(scenario.name);
      }
    }
    expect(rows.length).toBeGreaterThanOrEqual(6);
    expect(failed).toEqual(rows.map(({ scenario }) => scenario.name));
  });
});
