/**
 * Boundary checks for script options. A mistake in a test's script should fail where it was
 * written, with a message naming the option, not as a puzzling retry count later on.
 */

import { describeValue } from '@retryline/core/adapter';

// A value as a message shows it (strings quoted, objects named by kind), as core's messages do.
export { describeValue };

/** `TypeError: [Retryline msw] Expected <name> to be <expected>, got <value>`. */
export function invalid(name: string, expected: string, value: unknown): TypeError {
  return new TypeError(`[Retryline msw] Expected ${name} to be ${expected}, got ${describeValue(value)}`);
}

/** A finite number in [min, max]. */
export function expectNumber(name: string, value: unknown, min: number, max = Number.POSITIVE_INFINITY) {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    const range = max === Number.POSITIVE_INFINITY ? `≥ ${min}` : `in [${min}, ${max}]`;
    throw invalid(name, `a number ${range}`, value);
  }
  return value;
}

/** A whole number ≥ min. */
export function expectInteger(name: string, value: unknown, min: number) {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw invalid(name, `a whole number ≥ ${min}`, value);
  }
  return value;
}

/** A function: a step, a scope function. */
export function expectFunction<F>(name: string, value: unknown): F {
  if (typeof value !== 'function') throw invalid(name, 'a function (an msw resolver)', value);
  return value as F;
}

/** An options object, or nothing. */
export function expectOptions(name: string, value: unknown): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid(name, 'an object', value);
  }
  return value as Record<string, unknown>;
}

/** One of a fixed set of strings, or the fallback when absent. */
export function expectOneOf<T extends string>(
  name: string,
  value: unknown,
  allowed: readonly T[],
  fallback: T,
): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw invalid(name, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value);
}

/** A core `Clock`: anything with `now()` and `sleep()`. */
export function expectClock<C>(name: string, value: unknown, fallback: C): C {
  if (value === undefined) return fallback;
  const clock = value as { now?: unknown; sleep?: unknown };
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof clock.now !== 'function' ||
    typeof clock.sleep !== 'function'
  ) {
    throw invalid(name, 'a Clock (with now() and sleep())', value);
  }
  return value as C;
}
