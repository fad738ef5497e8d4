// The simulations the playground runs, straight from the CLI's source (`retryline simulate herd`
// and `retryline simulate storm` run the same functions): @retryline/cli publishes no subpath for
// them, and its root also carries the command line and the viewer's HTTP server, so the modules are
// imported by path. They use only core, the fetch adapter and web APIs (Response, AbortController),
// and one Node API, `setImmediate`, which `immediate.ts` supplies in the browser.
import './immediate';
import type { PolicyOptions } from '@retryline/core';
import { noRetriesPolicy } from '../../../../packages/cli/src/simulate/peers';
import { immediateRetryPolicy, type StormPolicy } from '../../../../packages/cli/src/simulate/storm';

export { HERD_STRATEGIES, type HerdResult, simulateHerd } from '../../../../packages/cli/src/simulate/herd';
export { STORM_DEFAULTS, type StormPolicy, simulateStorm } from '../../../../packages/cli/src/simulate/storm';

/**
 * The storm's contenders: the visitor's policy with Retryline's default guards (recovery gate and
 * retry budget) and without them, beside two baselines: clients that retry three times at once,
 * and clients that do not retry.
 */
export function stormPolicies(options: PolicyOptions): StormPolicy[] {
  return [
    { name: 'your policy (default guards)', options },
    { name: 'your policy, guards off', options: { ...options, budget: false, gate: false } },
    immediateRetryPolicy(3),
    noRetriesPolicy,
  ];
}
