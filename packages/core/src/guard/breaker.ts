/**
 * The circuit breaker as a pure state machine: every operation is a function of
 * (state, config, input, now) that returns the next state, so the same code can sit behind the
 * memory store and behind Redis, and tests need no timers.
 */

import type { Health } from '../engine/outcome';
import { CircuitOpenError } from '../errors';
import { finiteNumber, invalid, MAX_DELAY_LIMIT, own } from '../policy/normalize';
import { systemClock } from '../time/clock';
import {
  checkObject,
  type GuardValue,
  type GuardValueOptions,
  guardHome,
  guardValue,
  iso,
  unsent,
} from './guard';
import { type GuardStore, IDLE_MS, memoryOf, type Slot, type Store, step } from './store';

/** Circuit-breaker rules: when it opens, and how it tries to close. */
export interface BreakerOptions {
  /**
   * The failure rate over the window that opens the breaker once it is exceeded (strictly greater).
   * `1` never opens on rate, leaving only `consecutiveFailures`.
   * @default 0.5
   * @example
   * ```ts
   * normalizeBreaker({ failureRate: 0.25 });
   * ```
   */
  readonly failureRate?: number;
  /**
   * How many of the most recent counted calls the rate is computed over (a count-based sliding window).
   * @default 20
   * @example
   * ```ts
   * normalizeBreaker({ windowSize: 50, minCalls: 10 });
   * ```
   */
  readonly windowSize?: number;
  /**
   * The fewest calls in the window before the rate can open the breaker; at most `windowSize`.
   * @default 20, or `windowSize` when that is smaller
   * @example
   * ```ts
   * normalizeBreaker({ minCalls: 5 });
   * ```
   */
  readonly minCalls?: number;
  /**
   * Opens the breaker after this many failures in a row, whatever the rate. Off when absent.
   * @default undefined
   * @example
   * ```ts
   * normalizeBreaker({ consecutiveFailures: 5 });
   * ```
   */
  readonly consecutiveFailures?: number;
  /**
   * Milliseconds the breaker stays open before it lets trial calls through. Also how long a
   * half-open trial may go unreported before it is presumed lost, so at least 1.
   * @default 30_000
   * @example
   * ```ts
   * normalizeBreaker({ openMs: 10_000 });
   * ```
   */
  readonly openMs?: number;
  /**
   * Trial calls let through while half-open; all of them must succeed to close the breaker.
   * @default 1
   * @example
   * ```ts
   * normalizeBreaker({ halfOpenCalls: 3 });
   * ```
   */
  readonly halfOpenCalls?: number;
}

/** Breaker options with every default filled in. */
export interface BreakerConfig {
  readonly failureRate: number;
  readonly windowSize: number;
  readonly minCalls: number;
  /** Absent: consecutive failures do not open the breaker by themselves. */
  readonly consecutiveFailures?: number;
  readonly openMs: number;
  readonly halfOpenCalls: number;
}

/** The breaker's defaults (the README's guards table lists them). */
export const BREAKER_DEFAULTS = /* @__PURE__ */ Object.freeze({
  failureRate: 0.5,
  windowSize: 20,
  minCalls: 20,
  openMs: 30_000,
  halfOpenCalls: 1,
} as const);

export type BreakerStateName = 'closed' | 'open' | 'half-open';

/**
 * A breaker's state: plain JSON, the same after `JSON.parse(JSON.stringify(state))`. Optional
 * fields are absent, never `undefined`, so the round trip is exact.
 */
export interface BreakerState {
  readonly state: BreakerStateName;
  /** Outcomes of the last ≤ `windowSize` counted calls, oldest first; `true` is a failure. */
  readonly window: readonly boolean[];
  /** Failures in a row, up to the latest counted call. */
  readonly consecutive: number;
  /** Open only: when the breaker opened. */
  readonly openedAt?: number;
  /** Half-open only: when the latest trial call was admitted. */
  readonly trialAt?: number;
  /** Trial calls admitted in this half-open period and not released by an `'ignored'` outcome. */
  readonly trials: number;
  /** Trial calls that have succeeded in this half-open period. */
  readonly trialSuccesses: number;
}

/** A state change, for `breaker-*` events. */
export interface BreakerTransition {
  readonly from: BreakerStateName;
  readonly to: BreakerStateName;
}

export type BreakerAdmission =
  | { readonly allowed: true; readonly state: BreakerState; readonly transition?: BreakerTransition }
  | {
      readonly allowed: false;
      readonly state: BreakerState;
      /** When `breakerAdmit` will next let a call through (unless something is recorded first). */
      readonly retryAt: number;
    };

/** How a call ended, as the breaker counts it. */
export type BreakerOutcome = Health;

export interface BreakerRecord {
  readonly state: BreakerState;
  readonly transition?: BreakerTransition;
}

/** What events and the devtools panel show of a breaker. */
export interface BreakerSnapshot {
  readonly state: BreakerStateName;
  /** Failures ÷ calls over the window; 0 with no calls. */
  readonly failureRate: number;
  /** Calls in the window. */
  readonly calls: number;
  /** When a call will next be let through, while the breaker refuses calls. */
  readonly retryAt?: number;
}

function integer(name: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `between ${min} and ${max}`;
    throw invalid(name, `an integer ${range}`, value);
  }
  return value;
}

/**
 * Validates breaker options once and fills in the defaults.
 *
 * @example
 * ```ts
 * normalizeBreaker({ failureRate: 2 });
 * // InvalidOptionsError: Expected breaker.failureRate to be a finite number between 0 and 1, got 2
 * ```
 */
export function normalizeBreaker(input: BreakerOptions = {}): BreakerConfig {
  checkObject('breaker', input, 'an object of breaker options');
  const options = input;
  const max = Number.MAX_SAFE_INTEGER;
  const windowSize = integer(
    'breaker.windowSize',
    own(options, 'windowSize'),
    BREAKER_DEFAULTS.windowSize,
    1,
    max,
  );
  // A minCalls above windowSize could never be reached: the rate would never open the breaker.
  const minCalls = integer(
    'breaker.minCalls',
    own(options, 'minCalls'),
    Math.min(BREAKER_DEFAULTS.minCalls, windowSize),
    1,
    windowSize,
  );
  const consecutive = own(options, 'consecutiveFailures');
  return {
    failureRate: finiteNumber(
      'breaker.failureRate',
      own(options, 'failureRate'),
      BREAKER_DEFAULTS.failureRate,
      0,
      1,
    ),
    windowSize,
    minCalls,
    ...(consecutive === undefined
      ? {}
      : { consecutiveFailures: integer('breaker.consecutiveFailures', consecutive, 0, 1, max) }),
    openMs: finiteNumber(
      'breaker.openMs',
      own(options, 'openMs'),
      BREAKER_DEFAULTS.openMs,
      1,
      MAX_DELAY_LIMIT,
    ),
    halfOpenCalls: integer(
      'breaker.halfOpenCalls',
      own(options, 'halfOpenCalls'),
      BREAKER_DEFAULTS.halfOpenCalls,
      1,
      max,
    ),
  };
}

/** A closed breaker with an empty window. */
export function initialBreakerState(): BreakerState {
  return { state: 'closed', window: [], consecutive: 0, trials: 0, trialSuccesses: 0 };
}

const failuresIn = (window: readonly boolean[]) => window.reduce((n, failed) => n + (failed ? 1 : 0), 0);

/**
 * A transition as its `breaker-state` event tells it: one to open says until when (the state's
 * `openedAt`, from the store that holds it, plus `openMs`).
 */
export function transitionEvent(
  transition: BreakerTransition,
  state: BreakerState,
  openMs: number,
): BreakerTransition & { readonly retryAt?: number } {
  return transition.to === 'open' && state.openedAt !== undefined
    ? { ...transition, retryAt: state.openedAt + openMs }
    : transition;
}

function opened(state: BreakerState, now: number): BreakerState {
  return {
    state: 'open',
    window: state.window,
    consecutive: state.consecutive,
    openedAt: now,
    trials: 0,
    trialSuccesses: 0,
  };
}

function halfOpen(state: BreakerState, trials: number, trialSuccesses: number, now: number): BreakerState {
  return {
    state: 'half-open',
    window: state.window,
    consecutive: state.consecutive,
    trialAt: now,
    trials,
    trialSuccesses,
  };
}

/**
 * Asks whether a call may go out now. Closed: yes. Open: no until `openedAt + openMs`, then the
 * breaker turns half-open and this call is its first trial. Half-open: up to `halfOpenCalls`
 * trials; the rest are refused with `retryAt = trialAt + openMs`, because a trial that has not
 * reported by then is presumed lost (its process died, or its outcome never reached a shared
 * store) and its slot is given to a new call — otherwise a lost trial would wedge the breaker
 * half-open for ever.
 */
export function breakerAdmit(state: BreakerState, config: BreakerConfig, now: number): BreakerAdmission {
  if (state.state === 'closed') return { allowed: true, state };
  if (state.state === 'open') {
    const openedAt = state.openedAt ?? now;
    if (now - openedAt < config.openMs) return { allowed: false, state, retryAt: openedAt + config.openMs };
    return {
      allowed: true,
      state: halfOpen(state, 1, 0, now),
      transition: { from: 'open', to: 'half-open' },
    };
  }
  const trialAt = state.trialAt ?? now;
  // Only trials still outstanding can be lost; the successes already seen stand.
  const trials = now - trialAt >= config.openMs ? state.trialSuccesses : state.trials;
  if (trials < config.halfOpenCalls) {
    return { allowed: true, state: halfOpen(state, trials + 1, state.trialSuccesses, now) };
  }
  return { allowed: false, state, retryAt: trialAt + config.openMs };
}

/**
 * Counts how an admitted call ended. The caller passes `'ignored'` for what says nothing about the
 * dependency's health (4xx, aborts): only retryable failures count.
 *
 * Closed: the outcome enters the window, and the breaker opens when, with at least `minCalls`
 * calls in it, the failure rate exceeds `failureRate`, or when `consecutiveFailures` is reached.
 * Open: nothing changes (late outcomes of calls sent before it opened). Half-open: any failure
 * re-opens it; a success counts only while a trial awaits its outcome, and `halfOpenCalls` of them
 * close it with a fresh window; `'ignored'` releases a trial's slot for another call.
 */
export function breakerRecord(
  state: BreakerState,
  config: BreakerConfig,
  outcome: BreakerOutcome,
  now: number,
): BreakerRecord {
  if (state.state === 'open') return { state };
  if (state.state === 'half-open') {
    const outstanding = state.trials > state.trialSuccesses;
    if (outcome === 'failure')
      return { state: opened(state, now), transition: { from: 'half-open', to: 'open' } };
    if (!outstanding) return { state };
    if (outcome === 'ignored') return { state: { ...state, trials: state.trials - 1 } };
    const trialSuccesses = state.trialSuccesses + 1;
    if (trialSuccesses >= config.halfOpenCalls) {
      return { state: initialBreakerState(), transition: { from: 'half-open', to: 'closed' } };
    }
    return { state: { ...state, trialSuccesses } };
  }
  if (outcome === 'ignored') return { state };
  const failed = outcome === 'failure';
  const window = [...state.window, failed].slice(-config.windowSize);
  const consecutive = failed ? state.consecutive + 1 : 0;
  const next: BreakerState = { ...state, window, consecutive };
  const byRate = window.length >= config.minCalls && failuresIn(window) / window.length > config.failureRate;
  const byCount = config.consecutiveFailures !== undefined && consecutive >= config.consecutiveFailures;
  if (byRate || byCount) return { state: opened(next, now), transition: { from: 'closed', to: 'open' } };
  return { state: next };
}

/** What the breaker looks like now, for events and devtools. */
export function breakerSnapshot(state: BreakerState, config: BreakerConfig, now: number): BreakerSnapshot {
  const calls = state.window.length;
  const base = { state: state.state, failureRate: calls === 0 ? 0 : failuresIn(state.window) / calls, calls };
  if (state.state === 'closed') return base;
  const admission = breakerAdmit(state, config, now);
  return admission.allowed ? base : { ...base, retryAt: admission.retryAt };
}

/** `circuitBreaker()`'s options: the rules, and where the state lives. */
export interface CircuitBreakerOptions extends BreakerOptions, GuardValueOptions {}

/** A circuit breaker: give it to one client or several; they share it. */
export interface CircuitBreaker extends GuardValue<'breaker'> {
  /** The rules, defaults filled in. */
  readonly config: BreakerConfig;
  /**
   * What the breaker for `key` (by default an origin, `https://api.example`) looks like at `now`:
   * closed, open until `retryAt`, or half-open, with its window's failure rate. For tests and
   * dashboards; throws for a breaker whose state is in a shared store.
   */
  state(key: string, now?: number): BreakerSnapshot;
}

/** Breaker state idle this long is forgotten: a minute, and the openMs of one that is not closed. */
const idle = (slot: Slot<BreakerState, BreakerConfig>, now: number) =>
  now - slot.last >= IDLE_MS + (slot.state.state === 'closed' ? 0 : slot.config.openMs);

/** The breaker operations of `store`: its own, or this module's rules on a memory store's table. */
export function breakerOps(store: GuardStore): Pick<Store, 'breakerAdmit' | 'breakerRecord'> {
  const memory = memoryOf(store);
  if (!memory) return store as Store;
  const table = memory?.table('breakers', idle);
  return {
    breakerAdmit: (key, config, now) =>
      step(memory, table, key, config, now, initialBreakerState, (state) => breakerAdmit(state, config, now)),
    breakerRecord: (key, config, outcome, now) =>
      step(memory, table, key, config, now, initialBreakerState, (state) =>
        breakerRecord(state, config, outcome, now),
      ),
  };
}

/**
 * A circuit breaker per key (by default per origin): once the key keeps failing, requests fail
 * fast with `CircuitOpenError`, nothing sent, until a trial request succeeds. Only failures worth
 * a retry count (not 4xx, not aborts).
 *
 * @example
 * ```ts
 * const breaker = circuitBreaker({ consecutiveFailures: 5, openMs: 10_000 });
 * const api = retryFetch(fetch, { breaker });
 * breaker.state('https://api.example').state; // 'closed'
 * ```
 */
export function circuitBreaker(options: CircuitBreakerOptions = {}): CircuitBreaker {
  const config = Object.freeze(normalizeBreaker(options));
  const home = guardHome('breaker', options);
  return guardValue<'breaker', CircuitBreaker>(
    {
      kind: 'breaker',
      config,
      state(key, now = systemClock.now()) {
        const slot = home.table('breakers', idle)?.get(key);
        return breakerSnapshot(slot ? slot.state : initialBreakerState(), config, now);
      },
    },
    (binding) => {
      const ops = breakerOps(home.forClient(binding));
      return {
        kind: 'breaker',
        keyOf: home.keyFor(binding),
        session({ key, policy, emit, label }) {
          // Whether the admitted attempt is one of the half-open trials.
          let trial = false;
          const record = (health: BreakerOutcome) => {
            const wasTrial = trial;
            trial = false;
            // 'ignored' frees a half-open trial's place: only the trial's own may, or a call let
            // through before the breaker opened would let a second trial out beside the first.
            if (health === 'ignored' && !wasTrial) return undefined;
            const report = (recorded: BreakerRecord) => {
              if (recorded.transition) {
                emit({
                  type: 'breaker-state',
                  key,
                  ...transitionEvent(recorded.transition, recorded.state, config.openMs),
                });
              }
            };
            const recorded = ops.breakerRecord(key, config, health, policy.clock.now());
            if (recorded instanceof Promise) return recorded.then(report);
            report(recorded);
            return undefined;
          };
          return {
            admit(attempt) {
              const says = (admission: BreakerAdmission) => {
                if (admission.allowed) {
                  if (admission.transition) emit({ type: 'breaker-state', key, ...admission.transition });
                  trial = admission.state.state === 'half-open';
                  return undefined;
                }
                return {
                  outcome: 'breaker-open' as const,
                  error: new CircuitOpenError(
                    `${label} was not sent: the circuit breaker for ${key} is open until ${iso(admission.retryAt)}`,
                    { retryAt: admission.retryAt, ...unsent(attempt) },
                  ),
                };
              };
              const admission = ops.breakerAdmit(key, config, policy.clock.now());
              return admission instanceof Promise ? admission.then(says) : says(admission);
            },
            record,
            abandon: () => record('ignored'),
          };
        },
      };
    },
  );
}
