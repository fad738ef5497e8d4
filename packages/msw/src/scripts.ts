import { type Clock, type Random, seededRandom } from '@retryline/core';
import { systemClock } from '@retryline/core/adapter';
import { HttpResponse } from 'msw';
import { createScript, type Scope, type Script } from './scope';
import { type Step, status } from './steps';
import {
  expectClock,
  expectFunction,
  expectInteger,
  expectNumber,
  expectOneOf,
  expectOptions,
  invalid,
} from './validate';

/** The header on the 500 a `sequence(…, { exhausted: 'error' })` answers once it has run out. */
export const EXHAUSTED_HEADER = 'x-retryline-msw';

/** Options shared by every script. */
export interface ScriptOptions {
  /**
   * Which attempts share one counter: the whole handler, one per value of a request header, or one
   * per key a function returns. Scope by a per-request header when tests run concurrently.
   * @default 'handler'
   * @example
   * ```ts
   * failTimes(2, status(503), status(200), { scope: { header: 'x-request-id' } });
   * ```
   */
  scope?: Scope;
}

/** Options of {@link sequence}. */
export interface SequenceOptions extends ScriptOptions {
  /**
   * What attempts past the last step get: `'repeat'` answers with the last step again; `'error'`
   * answers 500 with `[Retryline msw] sequence exhausted: attempt 4 of a 3-step sequence` and the
   * header `x-retryline-msw: sequence-exhausted`, so a client that retries too often is caught.
   * @default 'repeat'
   * @example
   * ```ts
   * sequence([status(503), status(200)], { exhausted: 'error' });
   * ```
   */
  exhausted?: 'repeat' | 'error';
}

function expectSteps(steps: unknown): readonly Step[] {
  if (!Array.isArray(steps)) throw invalid('steps', 'a non-empty array of steps', steps);
  if (steps.length === 0) {
    throw new TypeError(
      '[Retryline msw] Expected steps to be a non-empty array of steps, got an empty array',
    );
  }
  steps.forEach((step, index) => {
    expectFunction(`steps[${index}]`, step);
  });
  return [...steps];
}

function expectStep(name: string, value: unknown, fallback: Step): Step {
  return value === undefined ? fallback : expectFunction<Step>(name, value);
}

/**
 * Answers each attempt with the next step: the first attempt with `steps[0]`, the second with
 * `steps[1]` and so on; past the end, as `exhausted` says.
 *
 * @example
 * ```ts
 * server.use(http.get('https://api.example/orders', sequence([status(503), networkError(), status(200)])));
 * ```
 */
export function sequence(steps: readonly Step[], options?: SequenceOptions): Script {
  const list = expectSteps(steps);
  const input = expectOptions('options', options);
  const exhausted = expectOneOf('exhausted', input.exhausted, ['repeat', 'error'] as const, 'repeat');
  const last = list[list.length - 1] as Step;
  return createScript(
    input.scope,
    () => undefined,
    (_state, attempt, info) => {
      const step = list[attempt - 1];
      if (step) return step(info);
      if (exhausted === 'repeat') return last(info);
      return HttpResponse.text(
        `[Retryline msw] sequence exhausted: attempt ${attempt} of a ${list.length}-step sequence`,
        { status: 500, headers: { [EXHAUSTED_HEADER]: 'sequence-exhausted' } },
      );
    },
  );
}

/**
 * Fails the first `n` attempts with `failure`, then answers every later one with `success`.
 *
 * @example
 * ```ts
 * server.use(http.get('https://api.example/orders', failTimes(2)));
 * ```
 */
export function failTimes(
  n: number,
  failure: Step = status(503),
  success: Step = status(200),
  options?: ScriptOptions,
): Script {
  const count = expectInteger('n', n, 0);
  const fail = expectFunction<Step>('failure', failure);
  const ok = expectFunction<Step>('success', success);
  const input = expectOptions('options', options);
  return sequence([...Array.from({ length: count }, () => fail), ok], {
    ...(input.scope === undefined ? {} : { scope: input.scope as Scope }),
  });
}

/** Options of {@link outage}. */
export interface OutageOptions extends ScriptOptions {
  /**
   * How long the outage lasts, in milliseconds.
   * @example
   * ```ts
   * outage({ for: 2_000 });
   * ```
   */
  for: number;
  /**
   * The answer during the outage.
   * @default status(503)
   * @example
   * ```ts
   * outage({ for: 2_000, failure: networkError() });
   * ```
   */
  failure?: Step;
  /**
   * The answer once the outage is over.
   * @default status(200)
   * @example
   * ```ts
   * outage({ for: 2_000, success: status(200, { json: { ok: true } }) });
   * ```
   */
  success?: Step;
  /**
   * The clock the outage is timed by. Pass the client's `virtualClock()` to test in virtual time.
   * @default systemClock
   * @example
   * ```ts
   * outage({ for: 2_000, clock: virtualClock() });
   * ```
   */
  clock?: Clock;
  /**
   * When the outage starts, in epoch milliseconds (on `clock`).
   * @default the time of the first request (of each scope key)
   * @example
   * ```ts
   * outage({ for: 2_000, from: Date.UTC(2026, 0, 1) });
   * ```
   */
  from?: number;
}

/**
 * Fails every attempt while `clock.now() < start + for`, then answers with `success`: a server that is
 * down for a while, whatever the number of attempts. A client whose retries span the outage
 * succeeds; one that gives up sooner does not.
 *
 * @example
 * ```ts
 * server.use(http.get('https://api.example/orders', outage({ for: 1_000 })));
 * ```
 */
export function outage(options: OutageOptions): Script {
  if (options === undefined) throw invalid('options', 'an object with for', options);
  const input = expectOptions('options', options);
  const duration = expectNumber('for', input.for, 0);
  const failure = expectStep('failure', input.failure, status(503));
  const success = expectStep('success', input.success, status(200));
  const clock = expectClock<Clock>('clock', input.clock, systemClock);
  const from = input.from === undefined ? undefined : expectNumber('from', input.from, -Infinity);
  return createScript(
    input.scope,
    () => ({ start: from ?? clock.now() }),
    (state, _attempt, info) => (clock.now() < state.start + duration ? failure(info) : success(info)),
  );
}

/** Options of {@link flaky}. */
export interface FlakyOptions extends ScriptOptions {
  /**
   * The probability that an attempt fails, in [0, 1].
   * @example
   * ```ts
   * flaky({ rate: 0.3, seed: 42 });
   * ```
   */
  rate: number;
  /**
   * The seed of the generator (core's `seededRandom`): the same seed gives the same pattern of
   * failures on every run. Required, so a flaky test is never flaky itself.
   * @example
   * ```ts
   * flaky({ rate: 0.5, seed: 'checkout' });
   * ```
   */
  seed: number | string;
  /**
   * The answer to a failing attempt.
   * @default status(503)
   * @example
   * ```ts
   * flaky({ rate: 0.2, seed: 1, failure: networkError() });
   * ```
   */
  failure?: Step;
  /**
   * The answer to every other attempt.
   * @default status(200)
   * @example
   * ```ts
   * flaky({ rate: 0.2, seed: 1, success: status(200, { json: [] }) });
   * ```
   */
  success?: Step;
}

/**
 * Fails each attempt with probability `rate`, drawn from `seededRandom(seed)`: one generator per
 * scope key, created on the key's first attempt, so the same seed fails the same attempts every run.
 *
 * @example
 * ```ts
 * server.use(http.get('https://api.example/orders', flaky({ rate: 0.3, seed: 7 })));
 * ```
 */
export function flaky(options: FlakyOptions): Script {
  if (options === undefined) throw invalid('options', 'an object with rate and seed', options);
  const input = expectOptions('options', options);
  const rate = expectNumber('rate', input.rate, 0, 1);
  const seed = input.seed;
  if (!(typeof seed === 'string' || (typeof seed === 'number' && Number.isFinite(seed)))) {
    throw invalid('seed', 'a number or a string', seed);
  }
  const failure = expectStep('failure', input.failure, status(503));
  const success = expectStep('success', input.success, status(200));
  return createScript<Random>(
    input.scope,
    () => seededRandom(seed),
    (random, _attempt, info) => (random() < rate ? failure(info) : success(info)),
  );
}
