import { describe, expect, it, vi } from 'vitest';
import { observe } from '../../../test/support/observe';
import { trackTimers } from '../../../test/support/track-timers';
import {
  AttemptTimeoutError,
  DeadlineExceededError,
  InvalidOptionsError,
  isRetrylineError,
  RetriesExhaustedError,
} from './errors';
import type { RetrylineEvent } from './events/types';
import { type AttemptContext, createRetry, RETRY, type RetryOptions, retry } from './retry';
import { systemClock } from './time/clock';
import { seededRandom } from './time/random';
import { virtualClock } from './time/virtual-clock';

/** A policy on virtual time with fixed, visible delays: 1 s, 1 s, 1 s … */
function setup(options: RetryOptions = {}) {
  const clock = virtualClock(1_000_000);
  const base: RetryOptions = {
    clock,
    random: seededRandom(1),
    backoff: { strategy: 'constant', base: 1000 },
    jitter: 'none',
  };
  return { clock, options: { ...base, ...options } };
}

const failing = (message = 'boom') => {
  const calls: AttemptContext[] = [];
  const fn = vi.fn(async (context: AttemptContext) => {
    calls.push(context);
    throw new Error(`${message} ${context.attempt}`);
  });
  return { fn, calls };
};

describe('retry()', () => {
  it('succeeds after the operation returns RETRY, waiting the backoff before each attempt', async () => {
    const { clock, options } = setup();
    const times: number[] = [];
    const fn = vi.fn(({ attempt }: AttemptContext) => {
      times.push(clock.now());
      return attempt < 3 ? RETRY : `leader-${attempt}`;
    });
    const run = observe(retry(fn, options));
    await clock.runAll();
    await run.done;
    expect(run.state.value).toBe('leader-3');
    expect(fn).toHaveBeenCalledTimes(3);
    expect(times).toEqual([1_000_000, 1_001_000, 1_002_000]);
  });

  it('succeeds after thrown errors and passes each attempt its number, retries left and previous error', async () => {
    const { clock, options } = setup({ retries: 3 });
    const seen: Array<Pick<AttemptContext, 'attempt' | 'retriesLeft' | 'elapsed'> & { previous: unknown }> =
      [];
    const run = observe(
      retry(async (context) => {
        seen.push({
          attempt: context.attempt,
          retriesLeft: context.retriesLeft,
          elapsed: context.elapsed,
          previous: (context.previousError as Error | undefined)?.message,
        });
        if (context.attempt < 3) throw new Error(`fail ${context.attempt}`);
        return 'ok';
      }, options),
    );
    await clock.runAll();
    await run.done;
    expect(run.state.value).toBe('ok');
    expect(seen).toEqual([
      { attempt: 1, retriesLeft: 3, elapsed: 0, previous: undefined },
      { attempt: 2, retriesLeft: 2, elapsed: 1000, previous: 'fail 1' },
      { attempt: 3, retriesLeft: 1, elapsed: 2000, previous: 'fail 2' },
    ]);
  });

  it('throws RetriesExhaustedError with the last error as cause, the attempts and the total delay', async () => {
    const { clock, options } = setup({ retries: 2 });
    const { fn } = failing();
    const run = observe(retry(fn, options));
    await clock.runAll();
    await run.done;
    const error = run.state.error as RetriesExhaustedError;
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect(error.name).toBe('RetriesExhaustedError');
    expect(error.message).toBe('Operation failed after 3 attempts: boom 3');
    expect((error.cause as Error).message).toBe('boom 3');
    expect(error.attempts).toBe(3);
    expect(error.totalDelay).toBe(2000);
    expect(error.reason).toBe('retries');
    expect(fn).toHaveBeenCalledTimes(3);
    expect(clock.pending()).toBe(0);
  });

  it('names the operation in its messages and says when the operation kept returning RETRY', async () => {
    const { clock, options } = setup({ retries: 1, operation: 'find leader' });
    const run = observe(retry(() => RETRY, options));
    await clock.runAll();
    await run.done;
    expect((run.state.error as Error).message).toBe(
      'find leader failed after 2 attempts: the operation returned RETRY',
    );
    expect((run.state.error as Error).cause).toBeUndefined();
  });

  it('fails fast with retries: 0 or retry: false — one attempt, no wait', async () => {
    for (const override of [{ retries: 0 }, { retry: false }] as const) {
      const { clock, options } = setup(override);
      const { fn } = failing();
      const run = observe(retry(fn, options));
      await run.done;
      expect(fn).toHaveBeenCalledTimes(1);
      expect(run.state.error).toBeInstanceOf(RetriesExhaustedError);
      expect((run.state.error as RetriesExhaustedError).attempts).toBe(1);
      expect(clock.now()).toBe(1_000_000);
    }
  });

  it('rethrows an error that retryOn refuses, after one attempt', async () => {
    const { options } = setup({ retryOn: (error: unknown) => !(error instanceof TypeError) });
    const original = new TypeError('bad input');
    const fn = vi.fn(async () => {
      throw original;
    });
    await expect(retry(fn, options)).rejects.toBe(original);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('awaits an async retryOn and tells it the attempt', async () => {
    const { clock, options } = setup({ retries: 5, retryOn: async (_error, { attempt }) => attempt < 2 });
    const { fn } = failing();
    const run = observe(retry(fn, options));
    await clock.runAll();
    await run.done;
    expect(fn).toHaveBeenCalledTimes(2);
    expect((run.state.error as Error).message).toBe('boom 2');
  });

  it('does not retry errors named AbortError by default', async () => {
    const { options } = setup();
    const abort = new DOMException('stopped', 'AbortError');
    const fn = vi.fn(async () => {
      throw abort;
    });
    await expect(retry(fn, options)).rejects.toBe(abort);
    expect(fn).toHaveBeenCalledTimes(1);
  });

  it('retries: Infinity stops at the deadline, never starting a wait that would end past it', async () => {
    const { clock, options } = setup({ retries: Number.POSITIVE_INFINITY, deadline: 10_000 });
    const { fn } = failing();
    const run = observe(retry(fn, options));
    await clock.runAll();
    await run.done;
    const error = run.state.error as DeadlineExceededError;
    expect(error).toBeInstanceOf(DeadlineExceededError);
    // Attempts at t = 0, 1 s … 9 s; the wait after the 10th would end at exactly 10 s.
    expect(fn).toHaveBeenCalledTimes(10);
    expect(error.attempts).toBe(10);
    expect(error.totalDelay).toBe(9000);
    expect(error.deadline).toBe(10_000);
    expect(clock.now()).toBe(1_009_000);
    expect(error.message).toMatch(
      /^Operation stopped after 10 attempts: waiting 1000 ms for the next one would pass its 10000 ms deadline \(boom 10\)$/,
    );
    expect((error.cause as Error).message).toBe('boom 10');
    expect(clock.pending()).toBe(0);
  });

  it('aborts an attempt still running at the deadline and rejects at the deadline', async () => {
    const { clock, options } = setup({ deadline: 2500 });
    const signals: AbortSignal[] = [];
    const run = observe(
      retry(({ signal, attempt }) => {
        signals.push(signal);
        if (attempt === 1) throw new Error('first');
        return new Promise<never>(() => {}); // a hung attempt that ignores its signal
      }, options),
    );
    await clock.advance(2499);
    expect(run.state.settled).toBe(false);
    await clock.advance(1);
    expect(run.state.settled).toBe(true);
    expect(run.state.error).toBeInstanceOf(DeadlineExceededError);
    expect(signals[1]?.aborted).toBe(true);
    expect(signals[1]?.reason).toBe(run.state.error);
    expect(clock.pending()).toBe(0);
  });

  it('abandons an attempt after `timeout`, aborting its signal, and retries it', async () => {
    const { clock, options } = setup({ timeout: 500, retries: 1 });
    const signals: AbortSignal[] = [];
    const events: RetrylineEvent[] = [];
    const run = observe(
      retry(
        ({ signal }) => {
          signals.push(signal);
          return new Promise<never>(() => {});
        },
        { ...options, onEvent: (event) => events.push(event) },
      ),
    );
    await clock.runAll();
    await run.done;
    const error = run.state.error as RetriesExhaustedError;
    expect(error).toBeInstanceOf(RetriesExhaustedError);
    expect(error.cause).toBeInstanceOf(AttemptTimeoutError);
    expect((error.cause as Error).message).toBe('Operation attempt 2 timed out after 500 ms');
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
    expect(
      events.filter((e) => e.type === 'attempt-end').map((e) => e.type === 'attempt-end' && e.outcome),
    ).toEqual(['timeout', 'timeout']);
    expect(clock.now()).toBe(1_000_000 + 500 + 1000 + 500);
  });

  it("stops with reason 'max-delay' when onMaxDelay is 'give-up' and the backoff passes the cap", async () => {
    const { clock, options } = setup({
      retries: 10,
      backoff: { strategy: 'exponential', base: 1000 },
      maxDelay: 4000,
      onMaxDelay: 'give-up',
    });
    const { fn } = failing();
    const run = observe(retry(fn, options));
    await clock.runAll();
    await run.done;
    const error = run.state.error as RetriesExhaustedError;
    expect(error.reason).toBe('max-delay');
    expect(fn).toHaveBeenCalledTimes(3); // waits of 2 s and 4 s; the next backoff, 8 s, passes the cap
    expect(error.message).toBe(
      'Operation gave up after 3 attempts: the next backoff (8000 ms) passes maxDelay (4000 ms): boom 3',
    );
  });

  it('passes a custom backoff function the retry number and the error', async () => {
    const seen: Array<[number, string]> = [];
    const { clock, options } = setup({
      retries: 2,
      backoff: (n, { error }) => {
        seen.push([n, (error as Error).message]);
        return n * 300;
      },
    });
    const { fn } = failing();
    const run = observe(retry(fn, options));
    await clock.runAll();
    await run.done;
    expect(seen).toEqual([
      [1, 'boom 1'],
      [2, 'boom 2'],
    ]);
    expect((run.state.error as RetriesExhaustedError).totalDelay).toBe(900);
  });

  it('rejects a custom backoff that returns NaN instead of waiting NaN', async () => {
    const { clock, options } = setup({ backoff: () => Number.NaN });
    const { fn } = failing();
    const run = observe(retry(fn, options));
    await clock.runAll();
    await run.done;
    expect(run.state.error).toBeInstanceOf(InvalidOptionsError);
    expect((run.state.error as Error).message).toBe(
      'Expected the backoff function to be returning a number of milliseconds ≥ 0, got NaN',
    );
  });

  describe('per-call overrides of shared defaults (createRetry)', () => {
    it('lets a call override the defaults and leaves other calls on them', async () => {
      const clock = virtualClock();
      const shared = createRetry({
        clock,
        retries: 5,
        backoff: { strategy: 'constant', base: 100 },
        jitter: 'none',
      });
      const a = failing();
      const one = observe(shared(a.fn, { retries: 1 }));
      await clock.runAll();
      await one.done;
      expect(a.fn).toHaveBeenCalledTimes(2);

      const b = failing();
      const two = observe(shared(b.fn));
      await clock.runAll();
      await two.done;
      expect(b.fn).toHaveBeenCalledTimes(6);

      const c = failing();
      const three = observe(shared(c.fn, { backoff: { base: 1000 }, retry: false }));
      await clock.runAll();
      await three.done;
      expect(c.fn).toHaveBeenCalledTimes(1);
      expect(shared.defaults.retries).toBe(5);
    });

    it('validates the defaults once, when created', () => {
      expect(() => createRetry({ retries: -1 })).toThrow(
        'Expected retries to be a non-negative integer or Infinity, got -1',
      );
      expect(() => createRetry({ onRetry: 'log' as never })).toThrow(
        "Expected onRetry to be a function, got 'log'",
      );
    });
  });

  describe('aborts', () => {
    it('rejects at once with signal.reason when aborted during a wait, and calls fn no more', async () => {
      const { clock, options } = setup({ backoff: { strategy: 'constant', base: 60_000 } });
      const controller = new AbortController();
      const { fn } = failing();
      const run = observe(retry(fn, { ...options, signal: controller.signal }));
      await clock.advance(1000);
      expect(clock.pending()).toBe(1); // the 60 s wait
      const reason = new Error('user navigated away');
      controller.abort(reason);
      await run.done;
      expect(run.state.error).toBe(reason);
      expect(clock.now()).toBe(1_001_000);
      expect(clock.pending()).toBe(0);
      await clock.advance(600_000);
      expect(fn).toHaveBeenCalledTimes(1);
    });

    it('leaves no real timer pending after an abort during a wait on the system clock', async () => {
      const timers = trackTimers();
      const controller = new AbortController();
      let onScheduled = () => {};
      const scheduled = new Promise<void>((resolve) => {
        onScheduled = resolve;
      });
      const fn = vi.fn(async () => {
        throw new Error('down');
      });
      const started = systemClock.now();
      const run = observe(
        retry(fn, {
          clock: systemClock,
          backoff: { strategy: 'constant', base: 600_000 },
          jitter: 'none',
          deadline: 3_600_000,
          signal: controller.signal,
          onRetry: () => onScheduled(),
        }),
      );
      await scheduled;
      await new Promise((resolve) => setImmediate(resolve));
      expect(timers.active()).toBe(2); // the wait and the deadline are armed
      controller.abort(new Error('stop'));
      await run.done;
      expect((run.state.error as Error).message).toBe('stop');
      expect(systemClock.now() - started).toBeLessThan(60_000);
      expect(timers.active()).toBe(0);
      expect(fn).toHaveBeenCalledTimes(1);
      timers.restore();
    });

    it('on the system clock, a timeout and a deadline leave no timer once an attempt settles, ends or is aborted', async () => {
      const timers = trackTimers();
      try {
        const policy = {
          clock: systemClock,
          timeout: 60_000,
          deadline: 120_000,
          backoff: 1,
          jitter: 'none',
        } as const;
        // Succeeds: the attempt's timer and the deadline's are both cleared.
        expect(await retry(async () => 'ok', policy)).toBe('ok');
        expect(timers.active()).toBe(0);
        // Times out for real (20 ms), twice, then succeeds: each attempt's timer fired or was cleared.
        let calls = 0;
        const slow = retry(
          ({ signal }: AttemptContext) =>
            ++calls < 3
              ? new Promise<never>((_resolve, reject) =>
                  signal?.addEventListener('abort', () => reject(signal.reason)),
                )
              : 'late',
          { ...policy, timeout: 20 },
        );
        expect(await slow).toBe('late');
        expect(calls).toBe(3);
        expect(timers.active()).toBe(0);
        // The caller aborts an attempt that ignores its signal: it ends at once, nothing left armed.
        const controller = new AbortController();
        const hanging = observe(
          retry(() => new Promise<never>(() => {}), { ...policy, signal: controller.signal }),
        );
        await new Promise((resolve) => setImmediate(resolve));
        expect(timers.active()).toBe(2);
        controller.abort(new Error('stop'));
        await hanging.done;
        expect((hanging.state.error as Error).message).toBe('stop');
        expect(timers.active()).toBe(0);
      } finally {
        timers.restore();
      }
    });

    it('rejects at once when aborted during an attempt that ignores its signal', async () => {
      const { clock, options } = setup();
      const controller = new AbortController();
      let attemptSignal: AbortSignal | undefined;
      const fn = vi.fn(({ signal }: AttemptContext) => {
        attemptSignal = signal;
        return new Promise<never>(() => {});
      });
      const run = observe(retry(fn, { ...options, signal: controller.signal }));
      await clock.advance(10);
      const reason = new DOMException('cancelled', 'AbortError');
      controller.abort(reason);
      await run.done;
      expect(run.state.error).toBe(reason);
      expect(attemptSignal?.aborted).toBe(true);
      await clock.runAll();
      expect(fn).toHaveBeenCalledTimes(1);
      expect(clock.pending()).toBe(0);
    });

    it('never calls fn when the signal is already aborted', async () => {
      const { options } = setup();
      const fn = vi.fn();
      const reason = new Error('already');
      await expect(retry(fn, { ...options, signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
      expect(fn).not.toHaveBeenCalled();
    });
  });

  describe('onRetry', () => {
    it('fires before each wait with the failed attempt, the delay and the error', async () => {
      const { clock, options } = setup({
        retries: 2,
        backoff: { strategy: 'linear', base: 1000, step: 500 },
      });
      const calls: Array<{
        at: number;
        attempt: number;
        nextAttempt: number;
        retry: number;
        delay: number;
        error: string;
      }> = [];
      const attemptTimes: number[] = [];
      const run = observe(
        retry(
          async ({ attempt }) => {
            attemptTimes.push(clock.now());
            throw new Error(`e${attempt}`);
          },
          {
            ...options,
            onRetry: ({ attempt, nextAttempt, retry: n, delay, error }) => {
              calls.push({
                at: clock.now(),
                attempt,
                nextAttempt,
                retry: n,
                delay,
                error: (error as Error).message,
              });
            },
          },
        ),
      );
      await clock.runAll();
      await run.done;
      expect(calls).toEqual([
        { at: 1_000_000, attempt: 1, nextAttempt: 2, retry: 1, delay: 1500, error: 'e1' },
        { at: 1_001_500, attempt: 2, nextAttempt: 3, retry: 2, delay: 2000, error: 'e2' },
      ]);
      expect(attemptTimes).toEqual([1_000_000, 1_001_500, 1_003_500]);
    });

    it('is awaited, and throwing from it stops retrying with what it threw', async () => {
      const { clock, options } = setup({ retries: 3 });
      const order: string[] = [];
      const veto = new Error('veto');
      const run = observe(
        retry(
          async ({ attempt }) => {
            order.push(`attempt ${attempt}`);
            throw new Error('x');
          },
          {
            ...options,
            onRetry: async ({ attempt }) => {
              await Promise.resolve();
              order.push(`onRetry ${attempt}`);
              if (attempt === 2) throw veto;
            },
          },
        ),
      );
      await clock.runAll();
      await run.done;
      expect(order).toEqual(['attempt 1', 'onRetry 1', 'attempt 2', 'onRetry 2']);
      expect(run.state.error).toBe(veto);
    });
  });

  describe('events', () => {
    it('emits request-start, attempt-start/-end, retry-scheduled before the wait, and request-end', async () => {
      const { clock, options } = setup({ retries: 2, requestId: 'req-1', operation: 'sync' });
      const events: RetrylineEvent[] = [];
      const run = observe(
        retry(({ attempt }) => (attempt === 1 ? Promise.reject(new Error('flaky')) : 'done'), {
          ...options,
          onEvent: (event) => events.push(event),
        }),
      );
      await clock.runAll();
      await run.done;
      expect(events).toEqual([
        { v: 1, type: 'request-start', requestId: 'req-1', t: 1_000_000, client: 'retry', operation: 'sync' },
        { v: 1, type: 'attempt-start', requestId: 'req-1', t: 1_000_000, attempt: 1 },
        {
          v: 1,
          type: 'attempt-end',
          requestId: 'req-1',
          t: 1_000_000,
          attempt: 1,
          outcome: 'error',
          duration: 0,
          error: { name: 'Error', message: 'flaky' },
        },
        {
          v: 1,
          type: 'retry-scheduled',
          requestId: 'req-1',
          t: 1_000_000,
          attempt: 2,
          retry: 1,
          delay: 1000,
          reason: 'backoff',
          strategy: 'constant',
          jitter: 'none',
          raw: 1000,
          capped: 1000,
        },
        { v: 1, type: 'attempt-start', requestId: 'req-1', t: 1_001_000, attempt: 2 },
        {
          v: 1,
          type: 'attempt-end',
          requestId: 'req-1',
          t: 1_001_000,
          attempt: 2,
          outcome: 'success',
          duration: 0,
        },
        {
          v: 1,
          type: 'request-end',
          requestId: 'req-1',
          t: 1_001_000,
          outcome: 'success',
          attempts: 2,
          totalDelay: 1000,
          duration: 1000,
        },
      ]);
      expect(JSON.parse(JSON.stringify(events))).toEqual(events);
    });

    it('ends with the outcome that stopped the request', async () => {
      const outcomes: string[] = [];
      const onEvent = (event: RetrylineEvent) => {
        if (event.type === 'request-end') outcomes.push(event.outcome);
      };
      const { clock, options } = setup({ retries: 1, onEvent });
      const runs = [
        observe(retry(() => Promise.reject(new Error('x')), options)),
        observe(retry(() => Promise.reject(new Error('x')), { ...options, retryOn: () => false })),
        observe(retry(() => Promise.reject(new Error('x')), { ...options, retries: 5, deadline: 1500 })),
      ];
      await clock.runAll();
      await Promise.all(runs.map((run) => run.done));
      expect(outcomes.sort()).toEqual(['deadline', 'exhausted', 'not-retryable']);
    });

    it('gives every request its own id, the same on every attempt', async () => {
      const { clock, options } = setup({ retries: 1 });
      const ids = new Map<string, string[]>();
      const attemptIds: string[] = [];
      const onEvent = (event: RetrylineEvent) =>
        ids.set(event.requestId, [...(ids.get(event.requestId) ?? []), event.type]);
      const runs = [1, 2].map(() =>
        observe(
          retry(
            ({ requestId, attempt }) => {
              attemptIds.push(requestId);
              return attempt === 1 ? RETRY : 'ok';
            },
            { ...options, onEvent },
          ),
        ),
      );
      await clock.runAll();
      await Promise.all(runs.map((run) => run.done));
      expect(ids.size).toBe(2);
      for (const [id] of ids) expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(new Set(attemptIds)).toEqual(new Set(ids.keys()));
    });

    it('is not disturbed by a listener that throws', async () => {
      const { clock, options } = setup();
      const run = observe(
        retry(({ attempt }) => (attempt < 2 ? RETRY : 'fine'), {
          ...options,
          onEvent: () => {
            throw new Error('broken listener');
          },
        }),
      );
      await clock.runAll();
      await run.done;
      expect(run.state.value).toBe('fine');
    });
  });

  describe('bad input', () => {
    it('rejects (never throws synchronously) on invalid options', async () => {
      const promise = retry(async () => 1, { retries: -1 });
      await expect(promise).rejects.toThrow(InvalidOptionsError);
      await expect(retry(async () => 1, 'fast' as never)).rejects.toThrow(
        "Expected options to be an object, got 'fast'",
      );
      await expect(retry('op' as never)).rejects.toThrow("Expected the operation to be a function, got 'op'");
      await expect(retry(async () => 1, { signal: {} as AbortSignal })).rejects.toThrow(
        'Expected signal to be an AbortSignal, got an object',
      );
      // The predicate's other names fail before the operation runs, rather than being ignored.
      for (const name of ['retryIf', 'shouldRetry']) {
        const fn = vi.fn(async () => 1);
        await expect(retry(fn, { [name]: () => true } as never)).rejects.toThrow(
          `Expected retryOn, got ${name}: the predicate's one name is retryOn`,
        );
        expect(fn).not.toHaveBeenCalled();
      }
    });

    it('marks its errors so they are recognised across realms', () => {
      const foreign = Object.assign(Object.create(null), { name: 'DeadlineExceededError' });
      expect(isRetrylineError(foreign)).toBe(false);
      const error = new DeadlineExceededError('late', { deadline: 1 });
      expect(isRetrylineError(error)).toBe(true);
      expect(isRetrylineError(error, 'DeadlineExceededError')).toBe(true);
      expect(isRetrylineError(error, 'CircuitOpenError')).toBe(false);
      // A copy whose prototype chain is foreign still carries the brand.
      const clone = Object.assign(Object.create(Error.prototype), error);
      Object.defineProperty(clone, Symbol.for('retryline.error'), { value: true });
      expect(isRetrylineError(clone, 'RetrylineError')).toBe(true);
    });
  });
});
