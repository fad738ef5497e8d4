/**
 * What every guard value shares (guards are values the caller owns): how it is bound to
 * a client, how it keys a request, where it keeps its state, and the hooks one request runs. Each
 * guard factory (`circuitBreaker()`, `rateLimiter()` …) lives in its own module and brings its own
 * rules, so a bundle carries only the guards it imports; this module is all they have in common.
 */

import type { GuardWaitReason, Health, LoopAttempt, Refusal } from '../engine/attempt-loop';
import type { RetrylineErrorDetails } from '../errors';
import type { Emit } from '../events/emitter';
import { originOf } from '../http/origin';
import { invalid, optionalFunction, own } from '../policy/normalize';
import type { ResolvedPolicy } from '../policy/options';
import {
  expectStore,
  type GuardStore,
  type IdleRule,
  isClientOwned,
  type MemoryStoreSize,
  memoryOf,
  memoryStore,
  type Slot,
} from './store';

/** The request a guard keys its state by. */
export interface GuardRequest {
  readonly method: string;
  readonly url: string;
}

/** Picks the key a request's guard state is kept under. */
export type GuardKeyFunction = (request: GuardRequest) => string;

/**
 * The key guard state is kept under: a string names one dependency for every request (`'payments'`),
 * a function picks one per request. The same shape for a guard's `key` and a client's `guardKey`.
 */
export type GuardKey = string | GuardKeyFunction;

/** Reads a {@link GuardKey} option into a key function (a string becomes a constant one). */
export function guardKeyOption(name: string, value: unknown): GuardKeyFunction | undefined {
  if (typeof value === 'string' && value !== '') return () => value;
  return optionalFunction<GuardKeyFunction>(name, value, 'a non-empty string or a function');
}

/** What every guard factory takes besides its own options. */
export interface GuardValueOptions {
  /**
   * Where the guard keeps its state. Without one, it settles at the guard's first use: the store
   * given to the first client it is given to, if that client was given one (so with a `redisStore`
   * the guard is shared across a fleet), else a memory store of the guard's own. Either way one
   * guard value is one guard: every client it is given to shares its state.
   */
  readonly store?: GuardStore;
  /**
   * The key a request's state is kept under. Applies to HTTP requests; `retry()` keys by its
   * `guardKey`.
   * @default the request's origin (`https://api.example`); for pacing, origin and first path segment
   */
  readonly key?: GuardKey;
}

/** The kinds of guard, in the order they admit an attempt. */
export type GuardKind = 'throttle' | 'gate' | 'pacing' | 'limiter' | 'bulkhead' | 'budget' | 'breaker';

/** What one request's hooks need to know about it. */
export interface SessionContext {
  /** The guard's key for this request. */
  readonly key: string;
  readonly policy: ResolvedPolicy;
  readonly emit: Emit;
  /** Names the request in messages: `GET https://api.example/x`, `Operation`. */
  readonly label: string;
  /**
   * Reports a wait the guard made the attempt sit out (counted like any other wait); `quiet`: the
   * guard tells of it in events of its own, so no `guard-wait` event is sent.
   */
  waited(attempt: number, guard: GuardWaitReason, since: number, quiet?: boolean): void;
}

/** One guard as one request runs it; every hook is optional. */
export interface GuardSession {
  /**
   * Before each attempt: `undefined` to let it through (after a wait, perhaps), or a refusal.
   * `deadlineAt`: when the request's deadline falls, measured as admission began.
   */
  admit?(attempt: LoopAttempt, deadlineAt: number): Refusal | undefined | Promise<Refusal | undefined>;
  /** How the admitted attempt ended. */
  record?(health: Health): Promise<void> | undefined;
  /** The admitted attempt ended with no outcome to count (an abort): frees what it holds. */
  abandon?(): Promise<void> | undefined;
  /** The attempt this guard admitted is not sent after all (a later guard refused it, or admission failed). */
  unsent?(): Promise<void> | undefined;
  /** Frees the attempt's place (a bulkhead's). */
  release?(): Promise<void> | undefined;
  /** Before a retry is scheduled: `undefined` to allow it, or a refusal. */
  allowRetry?(failed: {
    readonly details: RetrylineErrorDetails;
    readonly summary: string;
  }): Promise<Refusal | undefined>;
  /** The server said the quota is spent until `until`. */
  pace?(until: number): Promise<void>;
  /** The retry budget: whether a hedge may go, counted as a retry (`true`) or not. */
  allowHedge?(summary: string): Promise<boolean>;
}

/** A guard value bound to one client: its store and key function settled. */
export interface BoundGuard {
  readonly kind: GuardKind;
  keyOf(request: GuardRequest): string;
  session(context: SessionContext): GuardSession;
}

/** What a client gives the guards it is handed. */
export interface Binding {
  /** The client's store: given by its caller, or its own (see `withOwnStore`). */
  readonly store: GuardStore | undefined;
  /** The client's `guardKey`, used by guards that have no `key` of their own. */
  readonly key: GuardKeyFunction | undefined;
}

// Where a guard value keeps its binding function: internal, never part of the public shape. A
// registered symbol, so that a guard value made by one copy of this package (ESM, CJS) binds to a
// client of another: the binding is structural.
const BIND = Symbol.for('retryline.guard');

const TAGS: Readonly<Record<GuardKind, string>> = {
  gate: 'RecoveryGate',
  pacing: 'Pacing',
  throttle: 'AdaptiveThrottle',
  limiter: 'RateLimiter',
  bulkhead: 'Bulkhead',
  budget: 'RetryBudget',
  breaker: 'CircuitBreaker',
};

/** Every guard value: its kind, and (internally) how a client binds it. */
export interface GuardValue<K extends GuardKind = GuardKind> {
  readonly kind: K;
}

/** Makes a guard value: `bind` settles the store and key function for one client. */
export function guardValue<K extends GuardKind, V extends GuardValue<K>>(
  value: V,
  bind: (binding: Binding) => BoundGuard,
): V {
  Object.defineProperty(value, BIND, { value: bind });
  // Not a plain object: option mergers that deep-copy plain objects (axios's mergeConfig, for an
  // instance's defaults or a request's config) keep the value itself, and so its state.
  Object.defineProperty(value, Symbol.toStringTag, { value: TAGS[value.kind] });
  return Object.freeze(value);
}

/**
 * The guard value of `kind` given as option `name`, bound to a client; a clear error for anything
 * else (`breaker: true` from before guards were values included).
 */
export function bindGuard(name: string, kind: GuardKind, factory: string, value: unknown, binding: Binding) {
  const bind =
    typeof value === 'object' && value !== null && (value as GuardValue).kind === kind
      ? (value as Record<symbol, ((binding: Binding) => BoundGuard) | undefined>)[BIND]
      : undefined;
  if (!bind)
    throw invalid(
      name,
      `${/^[aeiou]/.test(factory) ? 'an' : 'a'} ${factory}() value (guards are made by their factory: ${factory}({ … }))`,
      value,
    );
  return bind(binding);
}

/**
 * What a guard value keeps of its `store` and `key` options, checked when it is made. Its state
 * is settled once, so that one value is one guard wherever it is given: the store it was made
 * with; else, at its first binding, the store that client was given, or a memory store of its own.
 * Every later client shares that state, whatever store it has.
 */
export function guardHome(guard: string, options: GuardValueOptions) {
  const given = own(options, 'store');
  let home: GuardStore | undefined = given === undefined ? undefined : expectStore('store', given);
  const ownKey = guardKeyOption('key', own(options, 'key'));
  return {
    /** The store for a client bound with `binding`: the guard's home, settled on first use. */
    forClient(binding: Binding): GuardStore {
      home ??= binding.store !== undefined && !isClientOwned(binding.store) ? binding.store : memoryStore();
      return home;
    },
    /** The guard's store once a client has used it: `undefined` before. */
    settled: (): GuardStore | undefined => home,
    /** The guard's key function for a client (`path`: with the first path segment, for pacing). */
    keyFor: (binding: Binding, path = false) => keyFunction(ownKey, binding, path),
    /**
     * The memory table `state()` reads: `undefined` while no client has used the guard (it holds
     * nothing yet); a clear error for a guard whose state is in a shared store.
     */
    table<S, C>(name: keyof MemoryStoreSize, idle: IdleRule<S, C>): Map<string, Slot<S, C>> | undefined {
      if (home === undefined) return undefined;
      const memory = memoryOf(home);
      if (!memory) {
        throw new TypeError(
          `${guard}.state() reads state kept in this process's memory; this ${guard} keeps its state in a shared store: inspect the store instead`,
        );
      }
      return memory.table(name, idle);
    },
  };
}

/**
 * A guard's key function for a client: its own `key`, else the client's `guardKey`, else the
 * request's origin (with `path` the first path segment too, for pacing). Origins are cached for
 * the last URL: a client mostly calls the same URLs.
 */
export function keyFunction(
  own: GuardKeyFunction | undefined,
  binding: Binding,
  path = false,
): (request: GuardRequest) => string {
  const chosen = own ?? binding.key;
  if (chosen) {
    return (request) => {
      const key = chosen(request);
      if (typeof key !== 'string' || key === '') {
        throw invalid('guardKey', 'a function returning a non-empty string', key);
      }
      return key;
    };
  }
  let lastUrl: string | undefined;
  let lastKey = '';
  return ({ url }) => {
    if (url !== lastUrl) {
      lastKey = path ? withSegment(url) : originOf(url);
      lastUrl = url;
    }
    return lastKey;
  };
}

/**
 * `https://api.example/v1` of `https://api.example/v1/orders?x`: the origin and the first path
 * segment (no query, no path parameters); a relative URL off any page keys by its first segment.
 */
function withSegment(url: string): string {
  const origin = originOf(url);
  const segment = /^(?:[a-z][a-z0-9+.-]*:\/\/[^/?#\\]*)?(\/[^/?#;]*)/i.exec(url)?.[1] ?? '';
  return origin.includes('://') ? origin + segment : segment || origin;
}

/** What a guard's refusal says of the request it stopped before `attempt` was sent. */
export const unsent = (attempt: LoopAttempt) => ({
  attempts: attempt.attempt - 1,
  totalDelay: attempt.totalDelay,
  cause: attempt.previousError,
});

export const iso = (ms: number) => new Date(ms).toISOString();

/** A guard option given as its factory's options object rather than its value. */
export function checkObject(name: string, input: unknown, expected: string): void {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    throw invalid(name, expected, input);
}
