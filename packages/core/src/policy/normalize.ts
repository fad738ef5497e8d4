import { InvalidOptionsError } from '../errors';
import { type Clock, systemClock } from '../time/clock';
import { type Random, systemRandom } from '../time/random';
import { JITTER_TYPES } from './jitter';
import type {
  BackoffStrategy,
  JitterType,
  OnMaxDelay,
  OnRetryAfterTooLong,
  PolicyOptions,
  ResolvedBackoff,
  ResolvedJitter,
  ResolvedPolicy,
} from './options';

/** Every option's default, in one place (the README's defaults table lists them). */
export const DEFAULTS = {
  retries: 2,
  strategy: 'exponential',
  base: 100,
  factor: 2,
  exponent: 2,
  maxDelay: 20_000,
  onMaxDelay: 'clamp',
  jitter: 'full',
  spread: 1000,
  ratio: 0.2,
  maxRetryAfter: 60_000,
  onRetryAfterTooLong: 'fail',
} as const;

/** The longest delay a timer can hold: 2^31 − 1 ms. */
export const MAX_DELAY_LIMIT = 2_147_483_647;

const STRATEGIES: readonly BackoffStrategy[] = ['constant', 'linear', 'polynomial', 'exponential'];
const ON_MAX_DELAY: readonly OnMaxDelay[] = ['clamp', 'give-up'];
const ON_RETRY_AFTER_TOO_LONG: readonly OnRetryAfterTooLong[] = ['fail', 'clamp'];

// Keys that must never be read from, or copied between, option objects (prototype pollution).
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Reads an option only if the object itself holds it: a polluted `Object.prototype` or a
 * `__proto__`/`constructor` key in parsed JSON never changes a policy.
 */
export function own<T extends object, K extends keyof T & string>(options: T, key: K): T[K] | undefined {
  if (UNSAFE_KEYS.has(key) || !Object.hasOwn(options, key)) return undefined;
  return options[key];
}

/** Describes a value for an error message: `-1`, `NaN`, `'fast'`, `an object`. */
export function describe(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  return 'an object';
}

/**
 * `InvalidOptionsError: Expected <name> to be <expected>, got <value>`, with `option` set to the
 * option's path (`option` defaults to `name`, for messages that name it in words).
 */
export function invalid(name: string, expected: string, value: unknown, option = name): InvalidOptionsError {
  return new InvalidOptionsError(`Expected ${name} to be ${expected}, got ${describe(value)}`, { option });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Checks that `options` (if given) is an object, so later reads cannot throw. */
export function expectObject(name: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (!isPlainObject(value)) throw invalid(name, 'an object', value);
  return value;
}

function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw invalid(name, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value);
}

/** A finite number within [min, max], or the fallback when absent. */
export function finiteNumber(
  name: string,
  value: unknown,
  fallback: number,
  min = 0,
  max = Number.MAX_VALUE,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    const range = max === Number.MAX_VALUE ? `≥ ${min}` : `between ${min} and ${max}`;
    throw invalid(name, `a finite number ${range}`, value);
  }
  return value;
}

/** A positive duration, `undefined` when absent; `Infinity` also means "none". */
function optionalDuration(name: string, value: unknown): number | undefined {
  if (value === undefined || value === Number.POSITIVE_INFINITY) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw invalid(name, 'a positive number of milliseconds', value);
  }
  return value;
}

function resolveRetries(options: PolicyOptions): number {
  const retry = own(options, 'retry');
  const retries = own(options, 'retries');
  if (
    retries !== undefined &&
    !(retries === Number.POSITIVE_INFINITY || (Number.isInteger(retries) && retries >= 0))
  ) {
    throw invalid('retries', 'a non-negative integer or Infinity', retries);
  }
  if (retry === undefined || retry === true) return retries ?? DEFAULTS.retries;
  if (retry === false) return 0;
  if (typeof retry === 'number') {
    if (retries !== undefined) {
      throw new InvalidOptionsError('Expected only one of retry and retries, got both', { option: 'retry' });
    }
    if (retry === Number.POSITIVE_INFINITY || (Number.isInteger(retry) && retry >= 0)) return retry;
  }
  throw invalid('retry', 'a boolean, a non-negative integer or Infinity', retry);
}

function resolveBackoff(options: PolicyOptions): ResolvedBackoff {
  const backoff = own(options, 'backoff');
  if (typeof backoff === 'function') return { strategy: 'custom', base: DEFAULTS.base, fn: backoff };
  if (typeof backoff === 'number') {
    const base = finiteNumber('backoff', backoff, DEFAULTS.base, 0, MAX_DELAY_LIMIT);
    return { strategy: 'constant', base, step: base, factor: DEFAULTS.factor, exponent: DEFAULTS.exponent };
  }
  if (backoff === undefined || typeof backoff === 'string') {
    const strategy = oneOf('backoff', backoff, STRATEGIES, DEFAULTS.strategy);
    return {
      strategy,
      base: DEFAULTS.base,
      step: DEFAULTS.base,
      factor: DEFAULTS.factor,
      exponent: DEFAULTS.exponent,
    };
  }
  if (!isPlainObject(backoff)) {
    throw invalid('backoff', 'a strategy name, an object, a number of milliseconds or a function', backoff);
  }
  const strategy = oneOf('backoff.strategy', own(backoff, 'strategy'), STRATEGIES, DEFAULTS.strategy);
  const base = finiteNumber('backoff.base', own(backoff, 'base'), DEFAULTS.base, 0, MAX_DELAY_LIMIT);
  return {
    strategy,
    base,
    step: finiteNumber('backoff.step', own(backoff, 'step'), base),
    factor: finiteNumber('backoff.factor', own(backoff, 'factor'), DEFAULTS.factor, 1),
    exponent: finiteNumber('backoff.exponent', own(backoff, 'exponent'), DEFAULTS.exponent),
  };
}

function resolveJitter(options: PolicyOptions, backoff: ResolvedBackoff): ResolvedJitter {
  const jitter = own(options, 'jitter');
  // A custom backoff function is taken literally unless the caller asks for jitter too.
  const fallback: JitterType = backoff.strategy === 'custom' ? 'none' : DEFAULTS.jitter;
  let resolved: ResolvedJitter;
  if (jitter === undefined || typeof jitter === 'string') {
    resolved = {
      type: oneOf('jitter', jitter, JITTER_TYPES, fallback),
      spread: DEFAULTS.spread,
      ratio: DEFAULTS.ratio,
    };
  } else if (isPlainObject(jitter)) {
    resolved = {
      type: oneOf('jitter.type', own(jitter, 'type'), JITTER_TYPES, fallback),
      spread: finiteNumber('jitter.spread', own(jitter, 'spread'), DEFAULTS.spread, 0, MAX_DELAY_LIMIT),
      ratio: finiteNumber('jitter.ratio', own(jitter, 'ratio'), DEFAULTS.ratio, 0, 1),
    };
  } else {
    throw invalid('jitter', 'a jitter name or an object', jitter);
  }
  if (resolved.type === 'decorrelated' && backoff.base <= 0) {
    // U(0, 3·0) is 0 forever: every retry would be immediate.
    throw invalid('backoff.base', 'greater than 0 with decorrelated jitter', backoff.base);
  }
  return resolved;
}

function resolveClock(options: PolicyOptions): Clock {
  const clock = own(options, 'clock');
  if (clock === undefined) return systemClock;
  if (!isPlainObject(clock) || typeof clock.now !== 'function' || typeof clock.sleep !== 'function') {
    throw invalid('clock', 'an object with now() and sleep()', clock);
  }
  return clock;
}

function resolveRandom(options: PolicyOptions): Random {
  const random = own(options, 'random');
  if (random === undefined) return systemRandom;
  if (typeof random !== 'function')
    throw invalid('random', 'a function returning a number in [0, 1)', random);
  // Whether a source keeps its contract shows only in what it draws, and a draw made here to find
  // out would shift a seeded sequence. So every draw is checked where it is made (jitter, a hint's
  // spread, a pacing wait), before the wait it sets starts and before what follows it is sent.
  return () => checkedDraw(random);
}

/** One draw from a caller's random source; anything but a number in [0, 1] is refused. */
function checkedDraw(random: Random): number {
  const r = random();
  if (typeof r !== 'number' || !(r >= 0 && r <= 1)) {
    throw invalid('random()', 'a number in [0, 1)', r, 'random');
  }
  return r;
}

/**
 * Validates policy options once, at the boundary, and fills in every default. Throws
 * `InvalidOptionsError` naming the option, what was expected and what was given.
 *
 * @example
 * ```ts
 * normalizePolicy({ retries: -1 });
 * // InvalidOptionsError: Expected retries to be a non-negative integer or Infinity, got -1
 * ```
 */
export function normalizePolicy(input?: PolicyOptions): ResolvedPolicy {
  const options = expectObject('options', input) as PolicyOptions;
  const backoff = resolveBackoff(options);
  return {
    retries: resolveRetries(options),
    backoff,
    maxDelay: finiteNumber('maxDelay', own(options, 'maxDelay'), DEFAULTS.maxDelay, 0, MAX_DELAY_LIMIT),
    onMaxDelay: oneOf('onMaxDelay', own(options, 'onMaxDelay'), ON_MAX_DELAY, DEFAULTS.onMaxDelay),
    jitter: resolveJitter(options, backoff),
    deadline: optionalDuration('deadline', own(options, 'deadline')),
    timeout: optionalDuration('timeout', own(options, 'timeout')),
    maxRetryAfter: finiteNumber(
      'maxRetryAfter',
      own(options, 'maxRetryAfter'),
      DEFAULTS.maxRetryAfter,
      0,
      MAX_DELAY_LIMIT,
    ),
    onRetryAfterTooLong: oneOf(
      'onRetryAfterTooLong',
      own(options, 'onRetryAfterTooLong'),
      ON_RETRY_AFTER_TOO_LONG,
      DEFAULTS.onRetryAfterTooLong,
    ),
    clock: resolveClock(options),
    random: resolveRandom(options),
  };
}

/**
 * Lays per-call options over shared defaults (those of `createRetry` or of an adapter's client): a key
 * the call sets wins; `backoff` and `jitter` objects are merged key by key; `retry` and
 * `retries` replace each other. Unsafe keys are never copied.
 */
export function mergeOptions<T extends object>(defaults: T | undefined, overrides: T | undefined): T {
  const merged: Record<string, unknown> = {};
  for (const source of [defaults, overrides]) {
    if (source === undefined) continue;
    // Across the two, the later of retry and retries wins; one object that gives both numbers is
    // a mistake, which merging would hide (the key order would decide).
    const given = source as { retry?: unknown; retries?: unknown };
    if (typeof own(given, 'retry') === 'number' && own(given, 'retries') !== undefined) {
      throw new InvalidOptionsError('Expected only one of retry and retries, got both', { option: 'retry' });
    }
    for (const key of Object.keys(source)) {
      if (UNSAFE_KEYS.has(key)) continue;
      const value = (source as Record<string, unknown>)[key];
      if (value === undefined) continue;
      // `retry` and `retries` say the same thing: the later one replaces the earlier one.
      if (key === 'retries' || (key === 'retry' && value !== true))
        delete merged[key === 'retry' ? 'retries' : 'retry'];
      const previous = merged[key];
      merged[key] =
        (key === 'backoff' || key === 'jitter') && isPlainObject(previous) && isPlainObject(value)
          ? mergeOptions(previous, value)
          : value;
    }
  }
  return merged as T;
}

/** `value` when it is a function or absent; anything else is refused. */
export function optionalFunction<F>(name: string, value: unknown, expected = 'a function'): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw invalid(name, expected, value);
  return value as F | undefined;
}

/** A string option that, when given, must not be empty. */
export function optionalString(name: string, value: unknown): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value === ''))
    throw invalid(name, 'a non-empty string', value);
  return value as string | undefined;
}

/** An `AbortSignal` option (any object with `addEventListener`, as signals from other realms are). */
export function optionalSignal(value: unknown): AbortSignal | undefined {
  if (
    value !== undefined &&
    (typeof value !== 'object' ||
      value === null ||
      typeof (value as AbortSignal).addEventListener !== 'function')
  ) {
    throw invalid('signal', 'an AbortSignal', value);
  }
  return value as AbortSignal | undefined;
}

/**
 * The options of one call that change no policy, with their validators: `retry()` and the HTTP
 * engine read them through this one table, and a request's own values of them apply to a
 * client's resolved options as they are.
 */
export const CALL_OPTIONS = {
  signal: optionalSignal,
  requestId: (value: unknown) => optionalString('requestId', value),
  onEvent: (value: unknown) => optionalFunction('onEvent', value),
  onRetry: (value: unknown) => optionalFunction('onRetry', value),
} as const;
