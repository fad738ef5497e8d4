/**
 * The guards as the attempt loop sees them: the guard values a client was given,
 * bound to it once, then run around each attempt in a fixed order — pacing, rate limiter,
 * bulkhead, the budget's count, breaker before the send; the breaker told the attempt's health
 * after it; the budget asked before a retry. This module knows no guard's rules: each guard value
 * brings its own, so a bundle carries only the guards it imports (the budget, on by default for
 * HTTP clients, is the one every client carries). Both `retry()` and the HTTP engine use it.
 */

import type { GuardWaitReason, Health, LoopAttempt, Refusal } from '../engine/attempt-loop';
import type { RetrylineErrorDetails } from '../errors';
import type { Emit } from '../events/emitter';
import { invalid, own } from '../policy/normalize';
import type { ResolvedPolicy } from '../policy/options';
import type { AdaptiveThrottle } from './adaptive-throttle';
import type { CircuitBreaker } from './breaker';
import type { Bulkhead } from './bulkhead';
import {
  type Binding,
  type BoundGuard,
  bindGuard,
  type GuardKeyFunction,
  type GuardRequest,
  type GuardSession,
} from './guard';
import type { BoundPacing, Pacing } from './pacing';
import type { RateLimiter } from './rate-limiter';
import { type BoundGate, clientGate, type RecoveryGate } from './recovery-gate';
import { type BoundBudget, clientBudget, type RetryBudget } from './retry-budget';
import { clientStore, expectStore, type GuardStore } from './store';

/** The guard options every entry point takes: guard values, and where state lives. */
export interface GuardOptions {
  /**
   * A circuit breaker: once a key (by default an origin) keeps failing, calls fail fast with
   * `CircuitOpenError` (nothing sent) until a trial call succeeds.
   * @default none
   * @example
   * ```ts
   * retryFetch(fetch, { breaker: circuitBreaker({ consecutiveFailures: 5, openMs: 10_000 }) });
   * ```
   */
  breaker?: CircuitBreaker;
  /**
   * The retry budget: retries stay within a share of requests, so a failing dependency is not hit
   * by a retry storm. A spent budget stops retrying (`stoppedBy: 'budget'`); the first attempt is
   * never refused. `false` turns it off; a `retryBudget()` value tunes or shares it.
   * @default HTTP clients: a budget of the client's own (ratio 0.1, windowMs 10 000, minPerSecond 10); `retry()`: none
   * @example
   * ```ts
   * retryFetch(fetch, { budget: retryBudget({ ratio: 0.2 }) });
   * ```
   */
  budget?: false | RetryBudget;
  /**
   * The recovery gate: while an origin keeps failing, retries are parked instead of fired blind,
   * one probe at a time goes ahead, and parked retries are released as successes come back (see
   * `recoveryGate()`). First attempts are never held. `false` turns it off.
   * @default HTTP clients: a gate of the client's own (holdAfter 3, probeMs 250, maxParkMs 5 000, releasePace 0.8); `retry()`: none
   * @example
   * ```ts
   * retryFetch(fetch, { gate: recoveryGate({ probeMs: 500 }) });
   * ```
   */
  gate?: false | RecoveryGate;
  /**
   * Adaptive client-side throttling: once a key's server rejects more than it accepts, the client
   * refuses part of its attempts itself (nothing sent), with probability
   * `max(0, (requests − k × accepts) / (requests + 1))` (see `adaptiveThrottle()`).
   * @default none
   * @example
   * ```ts
   * retryFetch(fetch, { throttle: adaptiveThrottle({ k: 2 }) });
   * ```
   */
  throttle?: AdaptiveThrottle;
  /**
   * A client-side rate limiter (a token bucket per key): nothing is sent without a token.
   * @default none
   * @example
   * ```ts
   * retryFetch(fetch, { limiter: rateLimiter({ capacity: 50, refillPerSecond: 100 }) });
   * ```
   */
  limiter?: RateLimiter;
  /**
   * A bulkhead: at most `maxConcurrent` attempts in flight per key and `maxQueue` waiting.
   * @default none
   * @example
   * ```ts
   * retryFetch(fetch, { bulkhead: bulkhead({ maxConcurrent: 10, maxQueue: 50 }) });
   * ```
   */
  bulkhead?: Bulkhead;
  /**
   * Where the client keeps its guards' state: its budget's, and that of every guard value given
   * no store of its own. Pass the same store to several clients to share; a `redisStore` shares
   * across a fleet.
   * @default a memory store of the client's own: no two clients share state unless given one store or one guard value
   */
  store?: GuardStore;
}

/** The guards of one client, bound: in admission order, with the budget and pacing at hand. */
export interface ResolvedGuards {
  /** Every guard, in admission order: throttle, gate, pacing, limiter, bulkhead, budget, breaker. */
  readonly list: readonly BoundGuard[];
  /** The retry budget, for the happy path's count. */
  readonly budget: (BoundGuard & BoundBudget) | undefined;
  /** The recovery gate, for the happy path's success. */
  readonly gate: (BoundGuard & BoundGate) | undefined;
  /** Pacing, for what responses say of the quota (HTTP only). */
  readonly pacing: BoundPacing | undefined;
}

// The throttle first: an attempt it refuses is refused before it waits for anything (a parked
// retry released only to be refused would have waited for nothing).
const ORDER = ['throttle', 'gate', 'pacing', 'limiter', 'bulkhead', 'budget', 'breaker'] as const;

/** The option name, guard kind and factory of each guard, in {@link ORDER}. */
const GUARDS = {
  throttle: 'adaptiveThrottle',
  gate: 'recoveryGate',
  pacing: 'pacing',
  limiter: 'rateLimiter',
  bulkhead: 'bulkhead',
  budget: 'retryBudget',
  breaker: 'circuitBreaker',
} as const;

/** The guards a client has of its own unless told otherwise (HTTP clients): a budget and a gate. */
export interface OwnGuards {
  readonly budget: typeof clientBudget;
  readonly gate: typeof clientGate;
}

/** What HTTP clients pass as `defaults.own`: passed in, so `retry()`'s bundle carries neither. */
export const HTTP_OWN_GUARDS: OwnGuards = { budget: clientBudget, gate: clientGate };

/**
 * Validates guard options once and binds the guard values to the client: `defaults.own`, the
 * factories of the budget and gate an absent `budget` and `gate` mean (HTTP clients), or `false`
 * for none; `defaults.pacing` whether pacing applies (HTTP only). Only `undefined` is absent: `null`, `true` or an options object (guards were options
 * objects before they were values) is refused with the factory to use.
 */
export function resolveGuards(
  options: GuardOptions & { pacing?: Pacing },
  defaults: { own: OwnGuards | false; pacing: boolean },
  key?: GuardKeyFunction,
): ResolvedGuards {
  const given = own(options, 'store');
  // A client passes its own (withOwnStore); a bare call without one has a store of its own too,
  // where its default budget counts, and never a guard value's home.
  const store = given === undefined ? clientStore() : expectStore('store', given);
  const binding: Binding = { store, key };
  const list: BoundGuard[] = [];
  let budget: (BoundGuard & BoundBudget) | undefined;
  let gate: (BoundGuard & BoundGate) | undefined;
  let pacing: BoundPacing | undefined;
  for (const kind of ORDER) {
    const value = own(options, kind);
    if (kind === 'pacing' && !defaults.pacing) {
      if (value !== undefined)
        throw invalid('pacing', 'absent: pacing reads HTTP responses, retry() has none', value);
      continue;
    }
    // The budget and the gate: a client's own by default (HTTP), `false` for none.
    const ownByDefault = kind === 'budget' || kind === 'gate';
    if (ownByDefault && (value === false || (value === undefined && !defaults.own))) continue;
    if (value === undefined && !ownByDefault) continue;
    const owned = defaults.own as OwnGuards;
    const bound =
      value !== undefined
        ? bindGuard(kind, kind, GUARDS[kind], value, binding)
        : kind === 'budget'
          ? owned.budget({ store, key })
          : owned.gate({ store, key });
    if (kind === 'budget') budget = bound as BoundGuard & BoundBudget;
    if (kind === 'gate') gate = bound as BoundGuard & BoundGate;
    if (kind === 'pacing') pacing = bound as BoundPacing;
    list.push(bound);
  }
  return { list, budget, gate, pacing };
}

/**
 * Admits a request's first attempt at once when nothing can make it wait or refuse it: no guard
 * but the budget (kept in a store that answers at once) and a gate with no key failing (it never
 * holds a first attempt, and then has no outcome to count). The budget then counts the request, and
 * the answer is `true`. `false`, with nothing counted, leaves the admission to {@link guardHooks}.
 */
export function admitFirstAtOnce(guards: ResolvedGuards, request: GuardRequest, now: number): boolean {
  const { list, budget, gate } = guards;
  const others = list.length - (gate ? 1 : 0);
  if (gate && !gate.quiet()) return false;
  if (others === 0) return true;
  return others === 1 && budget !== undefined && budget.countAtOnce(request, now);
}

/** Whether any guard needs a key and store calls. */
export const anyGuard = (guards: ResolvedGuards): boolean => guards.list.length > 0;

/** What the hooks need to know about the request they guard. */
export interface GuardContext {
  /** The HTTP request, each guard keying it its own way; or `key`, one key for every guard (`retry()`). */
  readonly request?: GuardRequest;
  readonly key?: string;
  readonly policy: ResolvedPolicy;
  readonly emit: Emit;
  /** Names the request in messages: `GET https://api.example/x`, `Operation`. */
  readonly label: string;
}

/** The attempt-loop hooks of a guarded request, plus `pace` for what a response says of the quota. */
export interface GuardHooks {
  /** A promise only when a guard waits or the store answers through one. */
  admit(attempt: LoopAttempt): Refusal | undefined | Promise<Refusal | undefined>;
  /** `undefined` when there was nothing to release. */
  release(): Promise<void> | undefined;
  /**
   * The attempt the guards admitted is not sent after all (an endpoint pick that followed them
   * refused it): what they hold for a sent attempt goes (the loop then releases their places).
   */
  unsent(): Promise<void> | undefined;
  /** `undefined` when no guard counts outcomes (no breaker). */
  record(health: Health): Promise<void> | undefined;
  /**
   * The admitted attempt ends with no outcome to count (an abort, a judge that threw): frees its
   * half-open trial place, if it holds one. `undefined` when there is nothing to free.
   */
  abandon(): Promise<void> | undefined;
  allowRetry(failed: {
    readonly details: RetrylineErrorDetails;
    readonly summary: string;
  }): Promise<Refusal | undefined>;
  /** The server said the quota is spent until `until`: later requests to the key wait for it. */
  pace(until: number): Promise<void>;
  /** What the guards held the last admitted attempt for, once: the loop counts it as a wait. */
  takeWaits(): readonly { readonly guard: GuardWaitReason; readonly ms: number }[] | undefined;
  /**
   * Whether a hedge may be sent beside the attempt in flight: it takes a retry from the retry
   * budget, if there is one (asking no other guard: a hedge is not a retry the gate may park).
   */
  allowHedge(summary: string): Promise<boolean>;
}

/** Lets a guard's bookkeeping finish on its own: its failure matters to nobody now. */
function forget(pending: Promise<unknown> | undefined): void {
  pending?.catch(() => {});
}

/** Runs `each` over `sessions`, and waits for what it started: `undefined` when nothing was. */
function all(
  sessions: readonly GuardSession[],
  each: (session: GuardSession) => Promise<void> | undefined,
): Promise<void> | undefined {
  let pending: Promise<void>[] | undefined;
  for (const session of sessions) {
    const started = each(session);
    if (!started) continue;
    pending ??= [];
    pending.push(started);
  }
  return pending && Promise.all(pending).then(() => undefined);
}

/**
 * Each guard from `from` on, in order; at once while every one answers at once. A refusal goes
 * through `refuse`; an admission that throws first tells the guards the attempt is not sent.
 */
function admitFrom(
  sessions: readonly GuardSession[],
  refuse: (refusal: Refusal) => Refusal | Promise<Refusal>,
  unsent: () => Promise<void> | undefined,
  from: number,
  attempt: LoopAttempt,
  deadlineAt: number,
): Refusal | undefined | Promise<Refusal | undefined> {
  for (let i = from; i < sessions.length; i++) {
    let answer: ReturnType<NonNullable<GuardSession['admit']>>;
    try {
      answer = sessions[i]?.admit?.(attempt, deadlineAt);
    } catch (error) {
      forget(unsent());
      throw error;
    }
    if (answer instanceof Promise) {
      return answer.then(
        (refused) =>
          refused ? refuse(refused) : admitFrom(sessions, refuse, unsent, i + 1, attempt, deadlineAt),
        (error: unknown) => {
          forget(unsent());
          throw error;
        },
      );
    }
    if (answer) return refuse(answer);
  }
  return undefined;
}

/** The hooks that run a request's guards in the attempt loop. */
export function guardHooks(guards: ResolvedGuards, context: GuardContext): GuardHooks {
  const { policy, emit, label, request } = context;
  const { clock } = policy;
  /** The waits a guard made the attempt sit out (a store that merely took time to answer is none). */
  let waits: Array<{ guard: GuardWaitReason; ms: number }> | undefined;
  const sessions = guards.list.map((guard) => {
    const key = context.key ?? guard.keyOf(request as GuardRequest);
    return guard.session({
      key,
      policy,
      emit,
      label,
      waited(attempt, reason, since, quiet) {
        const ms = clock.now() - since;
        if (ms <= 0) return;
        if (!quiet) emit({ type: 'guard-wait', attempt, guard: reason, key, waited: ms });
        waits ??= [];
        waits.push({ guard: reason, ms });
      },
    });
  });

  const release = () => all(sessions, (session) => session.release?.());

  /** The attempt is not sent: what the guards that admitted it hold for a sent attempt goes. */
  const unsent = () => all(sessions, (session) => session.unsent?.());

  /** A guard's refusal stops the attempt: the places earlier guards gave it are freed first. */
  const refuse = (refusal: Refusal) => {
    forget(unsent());
    const released = release();
    return released ? released.then(() => refusal) : refusal;
  };

  return {
    // In order: pacing and limiter, bulkhead, then breaker. Nothing is sent without a pass.
    // With a store that answers at once (the memory store), admission takes no turn of the event
    // loop unless a guard waits: the happy path's most frequent cost.
    admit: (attempt) => admitFrom(sessions, refuse, unsent, 0, attempt, clock.now() + attempt.remaining),
    release,
    unsent,
    record: (health) => all(sessions, (session) => session.record?.(health)),
    abandon: () => all(sessions, (session) => session.abandon?.()),
    async allowRetry(failed) {
      for (const session of sessions) {
        const refused = await session.allowRetry?.(failed);
        if (refused) return refused;
      }
      return undefined;
    },
    pace: (until) => all(sessions, (session) => session.pace?.(until)) ?? Promise.resolve(),
    async allowHedge(summary) {
      const budget = sessions[guards.list.findIndex((guard) => guard.kind === 'budget')];
      return budget?.allowHedge ? budget.allowHedge(summary) : true;
    },
    takeWaits() {
      const taken = waits;
      waits = undefined;
      return taken;
    },
  };
}
