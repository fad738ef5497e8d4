import { describe, expect, it } from 'vitest';
import { InvalidOptionsError, isRetrylineError } from '../errors';
import { systemClock } from '../time/clock';
import { seededRandom } from '../time/random';
import { decide, initialState } from './decide';
import { describe as describeValue, mergeOptions, normalizePolicy } from './normalize';
import type { PolicyOptions } from './options';

const bad = (options: unknown) => () => normalizePolicy(options as PolicyOptions);

describe('normalizePolicy', () => {
  it('fills in the documented defaults', () => {
    const policy = normalizePolicy();
    expect(policy).toMatchObject({
      retries: 2,
      backoff: { strategy: 'exponential', base: 100, step: 100, factor: 2, exponent: 2 },
      maxDelay: 20_000,
      onMaxDelay: 'clamp',
      jitter: { type: 'full', spread: 1000, ratio: 0.2 },
      deadline: undefined,
      timeout: undefined,
    });
    expect(policy.clock).toBe(systemClock);
  });

  it('expands shorthands: retry false/true/number, backoff name/number, jitter name', () => {
    expect(normalizePolicy({ retry: false }).retries).toBe(0);
    expect(normalizePolicy({ retry: true, retries: 7 }).retries).toBe(7);
    expect(normalizePolicy({ retry: 3 }).retries).toBe(3);
    expect(normalizePolicy({ retries: Number.POSITIVE_INFINITY }).retries).toBe(Number.POSITIVE_INFINITY);
    expect(normalizePolicy({ backoff: 'linear' }).backoff).toMatchObject({ strategy: 'linear', base: 100 });
    expect(normalizePolicy({ backoff: 250 }).backoff).toMatchObject({ strategy: 'constant', base: 250 });
    expect(normalizePolicy({ jitter: 'equal' }).jitter.type).toBe('equal');
    expect(normalizePolicy({ deadline: Number.POSITIVE_INFINITY }).deadline).toBeUndefined();
  });

  it('takes a custom backoff function literally: no jitter unless asked', () => {
    const fn = () => 5;
    expect(normalizePolicy({ backoff: fn }).jitter.type).toBe('none');
    expect(normalizePolicy({ backoff: fn, jitter: 'full' }).jitter.type).toBe('full');
  });

  it.each([
    [{ retries: -1 }, 'Expected retries to be a non-negative integer or Infinity, got -1'],
    [{ retries: 1.5 }, 'Expected retries to be a non-negative integer or Infinity, got 1.5'],
    [{ retries: Number.NaN }, 'Expected retries to be a non-negative integer or Infinity, got NaN'],
    [{ retries: '3' }, "Expected retries to be a non-negative integer or Infinity, got '3'"],
    [{ retry: 'yes' }, "Expected retry to be a boolean, a non-negative integer or Infinity, got 'yes'"],
    [{ retry: 2, retries: 3 }, 'Expected only one of retry and retries, got both'],
    [
      { backoff: 'expo' },
      "Expected backoff to be one of 'constant', 'linear', 'polynomial', 'exponential', got 'expo'",
    ],
    [{ backoff: -5 }, 'Expected backoff to be a finite number between 0 and 2147483647, got -5'],
    [
      { backoff: [] },
      'Expected backoff to be a strategy name, an object, a number of milliseconds or a function, got an array',
    ],
    [
      { backoff: { strategy: 'fib' } },
      "Expected backoff.strategy to be one of 'constant', 'linear', 'polynomial', 'exponential', got 'fib'",
    ],
    [
      { backoff: { base: Number.NaN } },
      'Expected backoff.base to be a finite number between 0 and 2147483647, got NaN',
    ],
    [{ backoff: { factor: 0.5 } }, 'Expected backoff.factor to be a finite number ≥ 1, got 0.5'],
    [{ backoff: { exponent: -1 } }, 'Expected backoff.exponent to be a finite number ≥ 0, got -1'],
    [
      { backoff: { step: Number.POSITIVE_INFINITY } },
      'Expected backoff.step to be a finite number ≥ 0, got Infinity',
    ],
    [
      { maxDelay: Number.POSITIVE_INFINITY },
      'Expected maxDelay to be a finite number between 0 and 2147483647, got Infinity',
    ],
    [{ maxDelay: -1 }, 'Expected maxDelay to be a finite number between 0 and 2147483647, got -1'],
    [{ onMaxDelay: 'stop' }, "Expected onMaxDelay to be one of 'clamp', 'give-up', got 'stop'"],
    [
      { jitter: 'random' },
      "Expected jitter to be one of 'none', 'constant', 'equal', 'full', 'decorrelated', 'proportional', got 'random'",
    ],
    [{ jitter: true }, 'Expected jitter to be a jitter name or an object, got true'],
    [
      { jitter: { type: 'proportional', ratio: 1.5 } },
      'Expected jitter.ratio to be a finite number between 0 and 1, got 1.5',
    ],
    [
      { jitter: { type: 'constant', spread: -1 } },
      'Expected jitter.spread to be a finite number between 0 and 2147483647, got -1',
    ],
    [
      { jitter: 'decorrelated', backoff: { base: 0 } },
      'Expected backoff.base to be greater than 0 with decorrelated jitter, got 0',
    ],
    [{ deadline: 0 }, 'Expected deadline to be a positive number of milliseconds, got 0'],
    [{ deadline: Number.NaN }, 'Expected deadline to be a positive number of milliseconds, got NaN'],
    [{ timeout: -10 }, 'Expected timeout to be a positive number of milliseconds, got -10'],
    [{ clock: {} }, 'Expected clock to be an object with now() and sleep(), got an object'],
    [{ random: 4 }, 'Expected random to be a function returning a number in [0, 1), got 4'],
  ])('rejects %o with a clear message', (options, message) => {
    expect(bad(options)).toThrow(InvalidOptionsError);
    expect(bad(options)).toThrow(message);
  });

  it('rejects options that are not an object', () => {
    expect(bad(5)).toThrow('Expected options to be an object, got 5');
    expect(bad(null)).toThrow('Expected options to be an object, got null');
  });

  it('raises errors that are Retryline errors with their name and the option at fault', () => {
    for (const [options, option] of [
      [{ retries: -1 }, 'retries'],
      [{ backoff: { factor: 0 } }, 'backoff.factor'],
      [{ jitter: { type: 'proportional', ratio: 2 } }, 'jitter.ratio'],
    ] as const) {
      try {
        normalizePolicy(options as PolicyOptions);
        expect.unreachable();
      } catch (error) {
        expect(isRetrylineError(error, 'InvalidOptionsError')).toBe(true);
        expect((error as InvalidOptionsError).name).toBe('InvalidOptionsError');
        expect((error as InvalidOptionsError).option).toBe(option);
      }
    }
  });

  it('ignores __proto__ and constructor keys from parsed JSON', () => {
    const parsed = JSON.parse(
      '{"__proto__": {"retries": 99}, "constructor": {"prototype": {"retries": 98}}, "jitter": "none"}',
    );
    const policy = normalizePolicy(parsed);
    expect(policy.retries).toBe(2);
    expect(policy.jitter.type).toBe('none');
    const merged = mergeOptions<PolicyOptions>(parsed, JSON.parse('{"__proto__": {"maxDelay": 1}}'));
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(normalizePolicy(merged).maxDelay).toBe(20_000);
    expect(({} as Record<string, unknown>).retries).toBeUndefined();
  });

  it('does not pick up options from a polluted Object.prototype', () => {
    const proto = Object.prototype as Record<string, unknown>;
    proto.retries = 1000;
    try {
      expect(normalizePolicy({}).retries).toBe(2);
    } finally {
      delete proto.retries;
    }
  });
});

describe('a random source that breaks its contract', () => {
  const T0 = 1_000_000;
  const retryAfter = { delay: 1000, source: 'retry-after' };
  // After a failed first attempt: the next decision is the one that chooses the wait.
  const decideAfterFirst = (random: () => unknown) => {
    const policy = normalizePolicy({ random: random as () => number, jitter: 'none' });
    return () => decide(policy, { ...initialState(policy, T0), attempts: 1 }, T0, undefined, retryAfter);
  };

  it.each([2, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '0.5', undefined])(
    'is refused with InvalidOptionsError when it returns %o, where the draw is made, before its wait starts',
    (value) => {
      // The hint's spread draws even without jitter: unchecked, 2 stretched the wait and -1 cut it
      // below what the server asked.
      const choose = decideAfterFirst(() => value);
      expect(choose).toThrow(InvalidOptionsError);
      expect(choose).toThrow(`Expected random() to be a number in [0, 1), got ${describeValue(value)}`);
      try {
        choose();
      } catch (error) {
        expect((error as InvalidOptionsError).option).toBe('random');
      }
    },
  );

  it('is not called to validate it: creating a policy draws nothing, so a seeded sequence is not shifted', () => {
    let calls = 0;
    const source = seededRandom(5);
    const policy = normalizePolicy({
      random: () => {
        calls++;
        return source();
      },
    });
    expect(calls).toBe(0);
    const expected = seededRandom(5);
    expect([policy.random(), policy.random(), policy.random()]).toEqual([expected(), expected(), expected()]);
  });

  it('keeps every value a source may return: 0 up to 1', () => {
    for (const value of [0, Number.MIN_VALUE, 0.5, 1 - Number.EPSILON, 1]) {
      expect(normalizePolicy({ random: () => value }).random()).toBe(value);
    }
  });
});

describe('mergeOptions', () => {
  it('lets per-call options override shared defaults, merging backoff and jitter objects', () => {
    const merged = mergeOptions<PolicyOptions>(
      {
        retries: 5,
        backoff: { strategy: 'linear', base: 1000 },
        jitter: { type: 'proportional', ratio: 0.1 },
      },
      { backoff: { base: 50 }, jitter: { type: 'proportional' } },
    );
    expect(merged).toEqual({
      retries: 5,
      backoff: { strategy: 'linear', base: 50 },
      jitter: { type: 'proportional', ratio: 0.1 },
    });
  });

  it('treats retry and retries as one setting: the later one wins', () => {
    expect(normalizePolicy(mergeOptions<PolicyOptions>({ retries: 5 }, { retry: false })).retries).toBe(0);
    expect(normalizePolicy(mergeOptions<PolicyOptions>({ retry: false }, { retries: 3 })).retries).toBe(3);
    expect(normalizePolicy(mergeOptions<PolicyOptions>({ retries: 5 }, { retry: 1 })).retries).toBe(1);
    expect(normalizePolicy(mergeOptions<PolicyOptions>({ retries: 5 }, { retry: true })).retries).toBe(5);
  });

  it('skips undefined values so they do not erase defaults', () => {
    expect(
      mergeOptions<PolicyOptions>({ retries: 5 }, { retries: undefined } as unknown as PolicyOptions).retries,
    ).toBe(5);
  });
});
