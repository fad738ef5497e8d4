import { afterEach, describe, expect, it, vi } from 'vitest';
import { CircuitOpenError, DeadlineExceededError, InvalidOptionsError, RateLimitedError } from '../errors';
import type { RetrylineEvent } from '../events/types';
import { circuitBreaker } from '../guard/breaker';
import { bulkhead } from '../guard/bulkhead';
import { localStore } from '../guard/local-store';
import { rateLimiter } from '../guard/rate-limiter';
import type { Store } from '../guard/store';
import { backoffSchedule } from '../policy/schedule';
import { createRetry, type RetryOptions, retry } from '../retry';
import { seededRandom } from '../time/random';
import { virtualClock } from '../time/virtual-clock';

// The attempt loop's edges, through retry(): aborts that race a failure or a guard, a breaker's
// trial place, store failures, guard waits and the deadline after slow hooks.

const fixed = (options: RetryOptions = {}) => {
  const clock = virtualClock(0);
  return {
    clock,
    options: {
      clock,
      random: seededRandom(1),
      backoff: { strategy: 'constant', base: 1000 },
      jitter: 'none',
      ...options,
    } satisfies RetryOptions,
  };
};

const settle = <T>(promise: Promise<T>) =>
  promise.then(
    (value) => ({ value, error: undefined as unknown }),
    (error: unknown) => ({ value: undefined, error }),
  );

const types = (events: RetrylineEvent[]) => events.map((event) => event.type);

describe('an abort that comes with a failure', () => {
  const unhandled = vi.fn();
  afterEach(() => {
    process.off('unhandledRejection', unhandled);
    unhandled.mockClear();
  });

  it('rejects with the abort reason and leaves no rejection unhandled', async () => {
    process.on('unhandledRejection', unhandled);
    const controller = new AbortController();
    const reason = new Error('group cancelled');
    const { error } = await settle(
      retry(
        async () => {
          controller.abort(reason);
          throw new Error('fatal');
        },
        { signal: controller.signal },
      ),
    );
    expect(error).toBe(reason);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).not.toHaveBeenCalled();
  });

  it('from onRetry: the same', async () => {
    process.on('unhandledRejection', unhandled);
    const controller = new AbortController();
    const reason = new Error('stop');
    const { error } = await settle(
      retry(
        () => {
          throw new Error('down');
        },
        {
          signal: controller.signal,
          onRetry: async () => {
            controller.abort(reason);
            throw new Error('hook failed');
          },
        },
      ),
    );
    expect(error).toBe(reason);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(unhandled).not.toHaveBeenCalled();
  });
});

/** A memory store whose bulkhead and limiter answer only when `answer()` is called. */
function slowStore() {
  const inner = localStore();
  const waiting: Array<() => void> = [];
  const later =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A) =>
      new Promise<R>((resolve, reject) => waiting.push(() => call(...args).then(resolve, reject)));
  const store: Store = {
    ...inner,
    bulkheadAcquire: later(inner.bulkheadAcquire.bind(inner)),
    limiterTake: later(inner.limiterTake.bind(inner)),
  };
  const answer = () => {
    for (const go of waiting.splice(0)) go();
  };
  return { store, inner, answer };
}

describe('an abort while a guard admits the attempt', () => {
  it('sends nothing, rejects with the reason, and frees the bulkhead place the store gave', async () => {
    const { store, inner, answer } = slowStore();
    const controller = new AbortController();
    const reason = new Error('cancelled');
    const fn = vi.fn(() => 'sent');
    const run = settle(
      retry(fn, {
        store,
        guardKey: 'k',
        signal: controller.signal,
        bulkhead: bulkhead({ maxConcurrent: 1 }),
      }),
    );
    await Promise.resolve();
    controller.abort(reason);
    answer(); // the store grants the place after the abort
    expect((await run).error).toBe(reason);
    expect(fn).not.toHaveBeenCalled();
    // The place was given back: another call gets it at once.
    expect(
      await retry(() => 'next', { store: inner, guardKey: 'k', bulkhead: bulkhead({ maxConcurrent: 1 }) }),
    ).toBe('next');
  });
});

describe("a breaker's half-open trial", () => {
  const breakerOptions = (clock: ReturnType<typeof virtualClock>, store: Store) =>
    ({
      clock,
      store,
      guardKey: 'svc',
      retries: 0,
      breaker: circuitBreaker({ consecutiveFailures: 1, openMs: 100 }),
    }) satisfies RetryOptions;

  /** A breaker opened by one failure, then half-open: the next call is its one trial. */
  async function halfOpen() {
    const clock = virtualClock(0);
    const options = breakerOptions(clock, localStore());
    await settle(
      retry(() => {
        throw new Error('down');
      }, options),
    );
    await clock.advance(150); // open → half-open
    return { clock, options };
  }

  it('is freed when the trial is aborted: the next call is the trial, not refused for another openMs', async () => {
    const { clock, options } = await halfOpen();
    const controller = new AbortController();
    const trial = settle(
      retry(
        ({ signal }) =>
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
        { ...options, signal: controller.signal },
      ),
    );
    await clock.advance(10);
    controller.abort(new Error('user cancelled'));
    await trial;
    expect(await retry(() => 'healthy', options)).toBe('healthy');
  });

  it("is not freed by an aborted call that was no trial: the trial in flight stays the breaker's only one", async () => {
    const clock = virtualClock(0);
    const options = breakerOptions(clock, localStore());
    const hang = ({ signal }: { signal: AbortSignal }) =>
      new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    const early = new AbortController();
    const a = settle(retry(hang, { ...options, signal: early.signal })); // admitted while closed
    await clock.advance(1);
    await settle(
      retry(() => {
        throw new Error('down');
      }, options),
    ); // opens the breaker
    await clock.advance(150);
    const b = settle(retry(hang, { ...options, signal: new AbortController().signal })); // the trial
    await clock.advance(1);
    early.abort(new Error('gave up'));
    await a;
    const c = await settle(retry(() => 'sent', options));
    expect(c.error).toBeInstanceOf(CircuitOpenError);
    void b;
  });

  it('is freed when retryOn throws on the trial', async () => {
    const { options } = await halfOpen();
    const judged = await settle(
      retry(
        () => {
          throw new Error('again');
        },
        {
          ...options,
          retryOn: () => {
            throw new Error('predicate bug');
          },
        },
      ),
    );
    expect((judged.error as Error).message).toBe('predicate bug');
    expect(await retry(() => 'healthy', options)).toBe('healthy');
  });
});

describe('a store that fails', () => {
  it('still ends the request with a request-end, the store’s error its error', async () => {
    const inner = localStore();
    const store: Store = {
      ...inner,
      breakerRecord: () => Promise.reject(new Error('store down')),
    };
    const events: RetrylineEvent[] = [];
    const { error } = await settle(
      retry(() => 'ok', {
        store,
        guardKey: 'k',
        breaker: circuitBreaker(),
        onEvent: (event) => events.push(event),
      }),
    );
    expect((error as Error).message).toBe('store down');
    expect(types(events)).toEqual(['request-start', 'attempt-start', 'attempt-end', 'request-end']);
    expect(events.at(-1)).toMatchObject({ outcome: 'not-retryable', error: { message: 'store down' } });
  });
});

describe('what the operation and the events are told', () => {
  it('an attempt held by the limiter starts, and is timed, when it goes out', async () => {
    const { clock, options } = fixed({
      store: localStore(),
      guardKey: 'api',
      limiter: rateLimiter({ capacity: 1, refillPerSecond: 1 }),
    });
    await retry(() => 1, options);
    const events: RetrylineEvent[] = [];
    const run = retry(({ elapsed }) => elapsed, { ...options, onEvent: (event) => events.push(event) });
    await clock.runAll();
    expect(await run).toBe(1000);
    const ended = events.find((event) => event.type === 'attempt-end');
    expect(ended).toMatchObject({ t: 1000, duration: 0 });
  });

  it('a thrown object without a toString is retried like any error, and named in the message', async () => {
    const { clock, options } = fixed({ retries: 1 });
    let calls = 0;
    const run = settle(
      retry(() => {
        calls++;
        throw Object.create(null);
      }, options),
    );
    await clock.runAll();
    const { error } = await run;
    expect(calls).toBe(2);
    expect((error as Error).message).toBe('Operation failed after 2 attempts: [object Object]');
  });

  it('a thrown undefined is named as what happened', async () => {
    const { clock, options } = fixed({ retries: 1 });
    const run = settle(
      retry(() => {
        throw undefined;
      }, options),
    );
    await clock.runAll();
    expect(((await run).error as Error).message).toBe(
      'Operation failed after 2 attempts: the operation threw undefined',
    );
  });

  it('a backoff function that returns NaN fails clearly, and the request still ends', async () => {
    const events: RetrylineEvent[] = [];
    const { error } = await settle(
      retry(
        () => {
          throw new Error('boom');
        },
        { backoff: () => Number.NaN, onEvent: (event) => events.push(event) },
      ),
    );
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect(types(events).at(-1)).toBe('request-end');
  });

  it('retryOn is asked about a timed-out attempt too', async () => {
    const { clock, options } = fixed({ timeout: 50 });
    let calls = 0;
    const asked: unknown[] = [];
    const run = settle(
      retry(
        () => {
          calls++;
          return new Promise(() => {});
        },
        {
          ...options,
          retryOn: (error) => {
            asked.push((error as Error).name);
            return false;
          },
        },
      ),
    );
    await clock.runAll();
    expect(((await run).error as Error).name).toBe('AttemptTimeoutError');
    expect(calls).toBe(1);
    expect(asked).toEqual(['AttemptTimeoutError']);
  });

  it('a guard’s refusal carries the time already waited', async () => {
    const { clock, options } = fixed({
      store: localStore(),
      guardKey: 'db',
      retries: 5,
      breaker: circuitBreaker({ consecutiveFailures: 3, openMs: 60_000 }),
    });
    const run = settle(
      retry(() => {
        throw new Error('down');
      }, options),
    );
    await clock.runAll();
    const { error } = await run;
    expect(error).toBeInstanceOf(CircuitOpenError);
    expect(error).toMatchObject({ attempts: 3, totalDelay: 3000 });
  });
});

describe('the deadline, checked again right before a wait', () => {
  it('after a slow onRetry: stops at once instead of waiting past it', async () => {
    const { clock, options } = fixed({
      deadline: 1000,
      backoff: { strategy: 'constant', base: 400 },
      onRetry: () => clock.sleep(800),
    });
    let endedAt: number | undefined;
    const run = settle(
      retry(() => {
        throw new Error('boom');
      }, options),
    ).then((result) => {
      endedAt = clock.now();
      return result;
    });
    await clock.runAll();
    const { error } = await run;
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect((error as Error).message).toMatch(
      /waiting 400 ms for the next one would pass its 1000 ms deadline/,
    );
    expect(endedAt).toBe(800);
  });

  it('a limiter that loses its token to another caller refuses once the next token is past the deadline', async () => {
    const clock = virtualClock(0);
    const shared = {
      clock,
      store: localStore(),
      guardKey: 'L',
      retries: 0,
      limiter: rateLimiter({ capacity: 1, refillPerSecond: 1 }),
    } satisfies RetryOptions;
    await retry(() => 0, shared);
    let b: { at: number; error: unknown } | undefined;
    const a = retry(() => 'A', { ...shared, deadline: 10_000 });
    void retry(() => 'B', { ...shared, deadline: 1500 }).catch((error: unknown) => {
      b = { at: clock.now(), error };
    });
    await clock.runAll();
    expect(await a).toBe('A');
    expect(b?.error).toBeInstanceOf(RateLimitedError);
    expect(b?.at).toBe(1000);
  });
});

describe('validation at creation and in previews', () => {
  it('createRetry refuses bad guard options at once', () => {
    expect(() => createRetry({ breaker: 'yes' as never })).toThrow(InvalidOptionsError);
    expect(() => createRetry({ limiter: { capacity: -1 } as never })).toThrow(InvalidOptionsError);
  });

  it('backoffSchedule checks its preview options and reads only their own keys', () => {
    expect(() => backoffSchedule({}, { random: 'x' as never })).toThrow(
      "Expected random to be a function returning a number in [0, 1), got 'x'",
    );
    expect(() => backoffSchedule({}, 3 as never)).toThrow(InvalidOptionsError);
    const proto = Object.prototype as { retries?: number };
    proto.retries = 9;
    try {
      expect(backoffSchedule({ jitter: 'none' }, {}).rows).toHaveLength(2);
    } finally {
      delete proto.retries;
    }
  });
});
