/** Guard configs cannot be changed behind the guards' backs. */
import { circuitBreaker, retryBudget } from '@retryline/core';
import { BUDGET_DEFAULTS } from '@retryline/core/store';
import { expect, it } from 'vitest';

it("the config every client's default budget runs on (BUDGET_DEFAULTS, exported) and guard values' configs are frozen", () => {
  // Every HTTP client's default budget now runs on the exported BUDGET_DEFAULTS object itself (no
  // copy); a value's `config` is the live config its bound guards read. Object.freeze(value) is shallow.
  expect(Object.isFrozen(BUDGET_DEFAULTS)).toBe(true);
  expect(Object.isFrozen(retryBudget().config)).toBe(true);
  expect(Object.isFrozen(circuitBreaker().config)).toBe(true);
});
