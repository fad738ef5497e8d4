import { describe, expect, it } from 'vitest';
import * as cli from './index';

describe('the @retryline/cli index', () => {
  it('exports the programmatic API only, so each new export is a decision', () => {
    expect(Object.keys(cli).sort()).toEqual([
      'HERD_STRATEGIES',
      'INCIDENT_TAIL_MS',
      'STORM_DEFAULTS',
      'STORM_POLICIES',
      'axiosRetryDefaultsPolicy',
      'defaultGuardsPolicy',
      'guardsOffPolicy',
      'immediateRetryPolicy',
      'kyDefaultsPolicy',
      'retrylineWithBreakerPolicy',
      'run',
      'simulateHerd',
      'simulateHerds',
      'simulateStorm',
      'simulateStorms',
      'startViewer',
    ]);
  });
});
