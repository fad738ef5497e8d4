/**
 * Every guard's operations on one memory store, as one {@link Store}: what a shared store answers
 * from while its backend is out of reach (guards degrade to per process, never off), and
 * what the shared store test suite holds a store to. Applications never need it: their clients keep
 * state in a memory store, each guard bringing its own rules.
 */

import { breakerOps } from './breaker';
import { bulkheadOps } from './bulkhead';
import { pacingOps } from './pacing';
import { limiterOps } from './rate-limiter';
import { gateStoreOps } from './recovery-gate';
import { budgetOps } from './retry-budget';
import { type MemoryStore, memoryStore, type Store } from './store';

/** A {@link Store} of every guard's operations, its state in `memory` (by default a new memory store). */
export function localStore(
  memory: MemoryStore = memoryStore(),
): Store & Required<Pick<Store, 'gateAdmit' | 'gateRecord'>> & MemoryStore {
  const { budgetRequest, budgetRetry } = budgetOps(memory);
  return {
    ...breakerOps(memory),
    budgetRequest,
    budgetRetry,
    ...limiterOps(memory),
    ...bulkheadOps(memory),
    ...pacingOps(memory),
    ...gateStoreOps(memory),
    size: memory.size,
  };
}
