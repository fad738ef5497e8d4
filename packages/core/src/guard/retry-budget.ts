/**
 * The retry budget (after Finagle's RetryBudget): retries may be at most `ratio` of the
 * requests seen over a sliding window, plus a floor of `minPerSecond` so a quiet client can still
 * retry. A pure state machine — every operation is (state, config, now) → { …result, state } — so
 * the memory store and the Redis store run the same code, and tests pass time in.
 *
 * Sliding-window approximation: the window is cut into {@link BUDGET_BUCKETS} fixed buckets of
 * `windowMs / BUDGET_BUCKETS` each, and a decision counts the current bucket and the ones before it
 * (BUDGET_BUCKETS in all). The window therefore reaches back between `windowMs − windowMs/10` and
 * `windowMs`, depending on where `now` falls in its bucket, and the state holds at most
 * BUDGET_BUCKETS counters however heavy the traffic. A request then backs retries for as long as
 * its bucket stays in the window, so any BUDGET_BUCKETS consecutive buckets hold at most
 * `ratio × (their requests and those of the BUDGET_BUCKETS − 1 buckets before) + floor` retries.
 */

import { RetryBudgetExhaustedError } from '../errors';
import { finiteNumber, own } from '../policy/normalize';
import { systemClock } from '../time/clock';
import {
  type Binding,
  type BoundGuard,
  checkObject,
  type GuardRequest,
  type GuardValue,
  type GuardValueOptions,
  guardHome,
  guardValue,
  keyFunction,
} from './guard';
import { type GuardStore, IDLE_MS, keep, memoryOf, type Slot, type Store, step } from './store';

/** Retry-budget rules: the share of requests that may be retried, and over how long. */
export interface RetryBudgetOptions {
  /**
   * The share of requests that may be retried over the window, on top of the floor. `0` leaves
   * only the floor; above `1` allows several retries per request.
   * @default 0.1
   * @example
   * ```ts
   * normalizeBudget({ ratio: 0.2 });
   * ```
   */
  readonly ratio?: number;
  /**
   * Milliseconds of history the budget counts requests and retries over.
   * @default 10_000
   * @example
   * ```ts
   * normalizeBudget({ windowMs: 60_000 });
   * ```
   */
  readonly windowMs?: number;
  /**
   * Retries per second allowed whatever the traffic, so a client that sends little can still
   * retry: the window allows `minPerSecond × windowMs / 1000` of them on top of the ratio.
   * @default 10
   * @example
   * ```ts
   * normalizeBudget({ minPerSecond: 0 }); // only the ratio
   * ```
   */
  readonly minPerSecond?: number;
}

/** Retry-budget options with every default filled in. */
export interface RetryBudgetConfig {
  readonly ratio: number;
  readonly windowMs: number;
  readonly minPerSecond: number;
}

/** The budget's defaults: retries up to 10 % of requests plus 10 a second, over 10 s. */
// Frozen: every client's own budget runs on this very object.
export const BUDGET_DEFAULTS = /* @__PURE__ */ Object.freeze({
  ratio: 0.1,
  windowMs: 10_000,
  minPerSecond: 10,
} as const);

/** How many buckets the window is cut into: the most counters a budget state ever holds. */
export const BUDGET_BUCKETS = 10;

/** Counts for one bucket of `windowMs / BUDGET_BUCKETS` milliseconds. */
export interface BudgetBucket {
  /** `floor(now / bucketMs)`: which bucket of time since the epoch this is. */
  readonly slot: number;
  readonly requests: number;
  readonly retries: number;
}

/** A budget's state: plain JSON, the same after `JSON.parse(JSON.stringify(state))`. */
export interface BudgetState {
  /** At most {@link BUDGET_BUCKETS} buckets, oldest first, all within the window. */
  readonly buckets: readonly BudgetBucket[];
}

export interface BudgetRecord {
  /** Retries the budget would still grant now. */
  readonly remaining: number;
  readonly state: BudgetState;
}

export interface BudgetDecision extends BudgetRecord {
  /** Whether this retry may go ahead; an allowed retry is already counted in `state`. */
  readonly allowed: boolean;
}

/** Validates options once, at the boundary. */
export function normalizeBudget(input: RetryBudgetOptions = {}): RetryBudgetConfig {
  checkObject('budget', input, 'an object of budget options');
  const options = input;
  return {
    ratio: finiteNumber('budget.ratio', own(options, 'ratio'), BUDGET_DEFAULTS.ratio),
    // At least 1 ms, so a bucket (windowMs / 10) is never empty of time.
    windowMs: finiteNumber('budget.windowMs', own(options, 'windowMs'), BUDGET_DEFAULTS.windowMs, 1),
    minPerSecond: finiteNumber(
      'budget.minPerSecond',
      own(options, 'minPerSecond'),
      BUDGET_DEFAULTS.minPerSecond,
    ),
  };
}

/** A budget that has seen nothing: it grants the floor. */
export function budgetInit(): BudgetState {
  return { buckets: [] };
}

/**
 * Counts a first attempt into `state` itself, when its newest bucket is the one `now` falls in;
 * `false` (and `state` untouched) when counting needs a new bucket: then use
 * {@link budgetRecordRequest}. Only for a store that owns `state` and has handed it out to nobody
 * since that bucket was made (the memory store, on every request): it allocates nothing.
 */
export function budgetCountInPlace(state: BudgetState, config: RetryBudgetConfig, now: number): boolean {
  const last = state.buckets.at(-1);
  if (last === undefined || slotAt(state, config, now) !== last.slot) return false;
  (last as { requests: number }).requests += 1;
  return true;
}

/** Counts a first attempt. Never refused: the budget only limits retries. */
export function budgetRecordRequest(
  state: BudgetState,
  config: RetryBudgetConfig,
  now: number,
): BudgetRecord {
  const buckets = count(state, config, now, 'requests');
  return { remaining: remaining(config, buckets), state: { buckets } };
}

/**
 * Asks for one retry: allowed while the retries in the window, this one included, stay within
 * `ratio × requests + minPerSecond × windowMs / 1000`. Allowed retries are counted; refused ones
 * are not, so refusals never eat into the budget.
 */
export function budgetTryRetry(state: BudgetState, config: RetryBudgetConfig, now: number): BudgetDecision {
  const current = prune(state, config, now);
  const { requests, retries } = totals(current.buckets);
  // `retries + 1 ≤ limit` rather than `retries < limit`: with a fractional limit the latter would
  // let the window end one retry above it.
  if (retries + 1 > limit(config, requests)) {
    return { allowed: false, remaining: 0, state: { buckets: current.buckets } };
  }
  const buckets = bump(current.buckets, current.slot, 'retries');
  return { allowed: true, remaining: remaining(config, buckets), state: { buckets } };
}

/** What events and the devtools panel show of a budget: the counts in its window at `now`. */
export function budgetSnapshot(
  state: BudgetState,
  config: RetryBudgetConfig,
  now: number,
): { readonly requests: number; readonly retries: number; readonly remaining: number } {
  const { buckets } = prune(state, config, now);
  return { ...totals(buckets), remaining: remaining(config, buckets) };
}

function limit(config: RetryBudgetConfig, requests: number): number {
  return config.ratio * requests + (config.minPerSecond * config.windowMs) / 1000;
}

function remaining(config: RetryBudgetConfig, buckets: readonly BudgetBucket[]): number {
  const { requests, retries } = totals(buckets);
  return Math.max(0, Math.floor(limit(config, requests) - retries));
}

function totals(buckets: readonly BudgetBucket[]): { requests: number; retries: number } {
  let requests = 0;
  let retries = 0;
  for (const bucket of buckets) {
    requests += bucket.requests;
    retries += bucket.retries;
  }
  return { requests, retries };
}

/**
 * Drops the buckets that have left the window. A `now` behind the newest bucket (clocks of a fleet
 * sharing one Redis budget disagree a little) counts in the newest bucket: time never runs back.
 */
function prune(
  state: BudgetState,
  config: RetryBudgetConfig,
  now: number,
): { slot: number; buckets: readonly BudgetBucket[] } {
  const slot = slotAt(state, config, now);
  const oldest = slot - BUDGET_BUCKETS + 1;
  // Buckets are oldest first: nothing to drop (the usual case) when the first is still in the window.
  const { buckets } = state;
  if (buckets.length === 0 || (buckets[0] as BudgetBucket).slot >= oldest) return { slot, buckets };
  return { slot, buckets: buckets.filter((bucket) => bucket.slot >= oldest) };
}

/** The bucket `now` counts in. */
function slotAt(state: BudgetState, config: RetryBudgetConfig, now: number): number {
  const newest = state.buckets.at(-1)?.slot ?? Number.NEGATIVE_INFINITY;
  // now × 10 / windowMs rather than now / (windowMs / 10): exact for whole milliseconds.
  return Math.max(Math.floor((now * BUDGET_BUCKETS) / config.windowMs), newest);
}

function count(
  state: BudgetState,
  config: RetryBudgetConfig,
  now: number,
  field: 'requests' | 'retries',
): readonly BudgetBucket[] {
  const current = prune(state, config, now);
  return bump(current.buckets, current.slot, field);
}

function bump(
  buckets: readonly BudgetBucket[],
  slot: number,
  field: 'requests' | 'retries',
): readonly BudgetBucket[] {
  const last = buckets.at(-1);
  const counted = last?.slot === slot ? last : undefined;
  const requests = (counted?.requests ?? 0) + (field === 'requests' ? 1 : 0);
  const retries = (counted?.retries ?? 0) + (field === 'retries' ? 1 : 0);
  // A new array, as the rule is pure: the newest bucket replaced or one appended.
  const next = counted ? buckets.slice(0, -1) : buckets.slice();
  next.push({ slot, requests, retries });
  return next;
}

/** `retryBudget()`'s options: the rules, and where the state lives. */
export interface RetryBudgetValueOptions extends RetryBudgetOptions, GuardValueOptions {}

/** A retry budget: every client has one of its own unless given this or `budget: false`. */
export interface RetryBudget extends GuardValue<'budget'> {
  /** The rules, defaults filled in. */
  readonly config: RetryBudgetConfig;
  /**
   * The requests and retries counted for `key` (by default an origin) in the window at `now`, and
   * how many retries it still allows. Throws for a budget whose state is in a shared store.
   */
  state(
    key: string,
    now?: number,
  ): { readonly requests: number; readonly retries: number; readonly remaining: number };
}

/** The budget operations a request makes, plus `countAtOnce` for the happy path. */
interface BudgetOps extends Pick<Store, 'budgetRequest' | 'budgetRetry'> {
  /**
   * Counts a first attempt at once, for a memory store (in place when it can: no allocation);
   * `false`, with nothing counted, for a store that answers through promises.
   */
  countAtOnce(key: string, config: RetryBudgetConfig, now: number): boolean;
}

/** Budget state idle for a minute and its whole window is forgotten. */
const idle = (slot: Slot<BudgetState, RetryBudgetConfig>, now: number) =>
  now - slot.last >= Math.max(IDLE_MS, slot.config.windowMs);

/** The budget operations of `store`: its own, or this module's rules on a memory store's table. */
export function budgetOps(store: GuardStore): BudgetOps {
  const memory = memoryOf(store);
  if (!memory) {
    const shared = store as Store;
    return {
      budgetRequest: (key, config, now) => shared.budgetRequest(key, config, now),
      budgetRetry: (key, config, now) => shared.budgetRetry(key, config, now),
      countAtOnce: () => false,
    };
  }
  const table = memory?.table('budgets', idle);
  return {
    budgetRequest: (key, config, now) =>
      step(memory, table, key, config, now, budgetInit, (state) => budgetRecordRequest(state, config, now)),
    budgetRetry: async (key, config, now) =>
      step(memory, table, key, config, now, budgetInit, (state) => budgetTryRetry(state, config, now)),
    countAtOnce(key, config, now) {
      memory.tick(now);
      const slot = table.get(key);
      if (slot && !slot.handedOut && slot.config === config && budgetCountInPlace(slot.state, config, now)) {
        slot.last = now;
        return true;
      }
      const { state } = budgetRecordRequest(slot ? slot.state : budgetInit(), config, now);
      // A fresh state, its newest bucket made just now and handed to nobody: the next request to
      // the key in the same bucket counts into it in place.
      keep(table, key, slot, state, config, now, false);
      return true;
    },
  };
}

/** A budget bound to a client, as the engine's happy path asks it. */
export interface BoundBudget {
  /** Counts the request's first attempt at once when the store allows; see {@link BudgetOps.countAtOnce}. */
  countAtOnce(request: GuardRequest, now: number): boolean;
}

/**
 * A retry budget per key (by default per origin): retries stay within `ratio` of requests over
 * `windowMs` (plus a floor of `minPerSecond`), so a failing dependency is not hit by a retry storm.
 * A spent budget stops retrying: the caller gets the last attempt's result, and its retry info says
 * `stoppedBy: 'budget'`. The first attempt is never refused. Every HTTP client has a budget of its
 * own by default; give one value to several clients to share it, or `budget: false` to go without.
 *
 * @example
 * ```ts
 * const budget = retryBudget({ ratio: 0.2 });
 * const api = retryFetch(fetch, { budget });
 * budget.state('https://api.example').remaining;
 * ```
 */
export function retryBudget(options: RetryBudgetValueOptions = {}): RetryBudget {
  const config = Object.freeze(normalizeBudget(options));
  const home = guardHome('budget', options);
  return guardValue<'budget', RetryBudget>(
    {
      kind: 'budget',
      config,
      state(key, now = systemClock.now()) {
        const slot = home.table('budgets', idle)?.get(key);
        return budgetSnapshot(slot ? slot.state : budgetInit(), config, now);
      },
    },
    (binding) => bindBudget(config, home.forClient(binding), home.keyFor(binding)),
  );
}

// The defaults, valid as they are: every client's own budget shares this config object, which
// lets the memory store count a request in place.
const DEFAULT_CONFIG: RetryBudgetConfig = BUDGET_DEFAULTS;

/** The budget a client has unless told otherwise: the defaults, its state in the client's store. */
export function clientBudget(binding: Binding & { readonly store: GuardStore }): BoundGuard & BoundBudget {
  return bindBudget(DEFAULT_CONFIG, binding.store, keyFunction(undefined, binding));
}

function bindBudget(
  config: RetryBudgetConfig,
  store: GuardStore,
  keyOf: (request: GuardRequest) => string,
): BoundGuard & BoundBudget {
  const ops = budgetOps(store);
  // Hedges stay within the ratio itself: the floor lets a quiet client retry, not copy every request.
  const hedges: RetryBudgetConfig = Object.freeze({ ...config, minPerSecond: 0 });
  return {
    kind: 'budget',
    keyOf,
    countAtOnce: (request, now) => ops.countAtOnce(keyOf(request), config, now),
    session({ key, policy, emit, label }) {
      return {
        admit(attempt) {
          if (attempt.attempt !== 1) return undefined;
          const counted = ops.budgetRequest(key, config, policy.clock.now());
          return counted instanceof Promise ? counted.then(() => undefined) : undefined;
        },
        async allowHedge() {
          const decision = await ops.budgetRetry(key, hedges, policy.clock.now());
          emit({ type: 'budget', key, remaining: decision.remaining, allowed: decision.allowed });
          return decision.allowed;
        },
        async allowRetry({ details, summary }) {
          const decision = await ops.budgetRetry(key, config, policy.clock.now());
          emit({ type: 'budget', key, remaining: decision.remaining, allowed: decision.allowed });
          if (decision.allowed) return undefined;
          return {
            outcome: 'budget-exhausted',
            error: new RetryBudgetExhaustedError(
              `${label} was not retried: the retry budget for ${key} is spent (retries are kept within ${config.ratio * 100}% of requests): ${summary}`,
              details,
            ),
          };
        },
      };
    },
  };
}
