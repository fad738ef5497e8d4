import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEVTOOLS_HOOK } from '../events/emitter';
import type { RetrylineEvent } from '../events/types';
import { virtualClock } from '../time/virtual-clock';
import { type FaultAnswer, type FaultAttempt, type FaultQuery, faultFor } from './fault';
import { type HttpAttempt, type HttpExchange, runHttpRequest } from './request-engine';

const QUERY: FaultQuery = {
  client: 'test',
  method: 'GET',
  url: 'https://api.example/items?page=***',
  attempt: 1,
  requestId: 'r1',
};
const SENT: HttpAttempt = { attempt: 1, signal: undefined, headers: {} };

type Answer = { readonly from: 'server' } | { readonly from: 'fault'; readonly step: FaultAnswer };

/** An exchange whose send answers `server` and whose inject answers with the step it was given. */
function exchange(options: { inject?: boolean } = {}) {
  const sent: HttpAttempt[] = [];
  const injected: FaultAnswer[] = [];
  const value: HttpExchange<Answer> = {
    client: 'test',
    method: 'GET',
    url: 'https://api.example/items?page=2',
    headers: undefined,
    replayable: true,
    options: {},
    send(attempt) {
      sent.push(attempt);
      return Promise.resolve({ from: 'server' });
    },
    inspect: () => ({ status: 200, headers: new Headers() }),
    discard() {},
    ...(options.inject === false
      ? {}
      : {
          inject(step: FaultAnswer) {
            injected.push(step);
            return step.step === 'networkError'
              ? Promise.reject(new TypeError('Failed to fetch'))
              : Promise.resolve({ from: 'fault', step } as const);
          },
        }),
  };
  return { value, sent, injected };
}

function installHook(hook: unknown): void {
  Object.defineProperty(globalThis, DEVTOOLS_HOOK, { value: hook, configurable: true, writable: true });
}

afterEach(() => {
  delete (globalThis as Record<symbol, unknown>)[DEVTOOLS_HOOK];
  vi.unstubAllEnvs();
});

/** faultFor for the one attempt of QUERY, with `fault` as the hook's. */
function ask(fault: unknown, given = exchange(), clock = virtualClock()) {
  installHook({ push() {}, fault });
  const attempt = vi.fn((): FaultAttempt<Answer> => ({ exchange: given.value, clock, query: QUERY }));
  const answers = faultFor(attempt);
  // Sent as usual: what the request engine would do (here, the exchange's own send).
  const answer = answers && ((sent: HttpAttempt) => answers(sent, (again) => given.value.send(again)));
  return { answer, answers, attempt, given, clock };
}

describe('faultFor: what the devtools hook asks for', () => {
  it('asks the hook about the attempt, with the request it belongs to', () => {
    const fault = vi.fn(() => ({ step: 'status', status: 503 }));
    const { answer } = ask(fault);
    expect(answer).toBeTypeOf('function');
    expect(fault).toHaveBeenCalledWith(QUERY);
  });

  it('answers a status step through the exchange, without sending', async () => {
    const { answer, given } = ask(() => ({ step: 'status', status: 503, headers: { 'retry-after': '2' } }));
    await expect(answer?.(SENT)).resolves.toEqual({
      from: 'fault',
      step: { step: 'status', status: 503, headers: { 'retry-after': '2' } },
    });
    expect(given.sent).toEqual([]);
  });

  it('fails a network error step as the exchange does', async () => {
    const { answer, given } = ask(() => ({ step: 'networkError' }));
    await expect(answer?.(SENT)).rejects.toThrow(new TypeError('Failed to fetch'));
    expect(given.sent).toEqual([]);
  });

  it('waits a slow step on the clock, then sends to the server when it names no answer', async () => {
    const { answer, given, clock } = ask(() => ({ step: 'slow', ms: 5000 }));
    const settled = answer?.(SENT);
    await clock.advance(4999);
    expect(given.sent).toEqual([]);
    await clock.advance(1);
    await expect(settled).resolves.toEqual({ from: 'server' });
    expect(given.sent).toEqual([SENT]);
  });

  it('waits a slow step, then gives its answer', async () => {
    const { answer, given, clock } = ask(() => ({
      step: 'slow',
      ms: 100,
      answer: { step: 'status', status: 504 },
    }));
    const settled = answer?.(SENT);
    await clock.advance(100);
    await expect(settled).resolves.toEqual({ from: 'fault', step: { step: 'status', status: 504 } });
    expect(given.sent).toEqual([]);
  });

  it("ends a slow step's wait when the attempt is aborted, leaving no sleep behind", async () => {
    const { answer, clock } = ask(() => ({ step: 'slow', ms: 60_000 }));
    const controller = new AbortController();
    const settled = answer?.({ ...SENT, signal: controller.signal });
    controller.abort(new Error('timed out'));
    await expect(settled).rejects.toThrow('timed out');
    expect(clock.pending()).toBe(0);
  });

  it("ends a slow step's wait when the hook's signal aborts (its rules gone): sent as usual at once, its answer unused, no sleep left", async () => {
    const hook = new AbortController();
    const { answer, given, clock } = ask(() => ({
      step: 'slow',
      ms: 600_000,
      answer: { step: 'status', status: 503 },
      signal: hook.signal,
    }));
    const settled = answer?.(SENT);
    await clock.advance(1000);
    expect(given.sent).toEqual([]);
    hook.abort();
    await expect(settled).resolves.toEqual({ from: 'server' });
    expect(given.sent).toEqual([SENT]);
    expect(clock.pending()).toBe(0);
  });

  it("sends at once a slow step whose hook signal had already aborted; still ends on the attempt's own abort", async () => {
    const gone = new AbortController();
    gone.abort();
    const early = ask(() => ({ step: 'slow', ms: 5000, signal: gone.signal }));
    await expect(early.answer?.(SENT)).resolves.toEqual({ from: 'server' });
    const hook = new AbortController();
    const { answer, clock } = ask(() => ({ step: 'slow', ms: 60_000, signal: hook.signal }));
    const controller = new AbortController();
    const settled = answer?.({ ...SENT, signal: controller.signal });
    controller.abort(new Error('timed out'));
    await expect(settled).rejects.toThrow('timed out');
    expect(clock.pending()).toBe(0);
  });

  it('takes only a real AbortSignal as the hook’s end to a wait', async () => {
    const { answer, clock } = ask(() => ({ step: 'slow', ms: 100, signal: { aborted: true } }));
    const settled = answer?.(SENT);
    await clock.advance(99);
    expect(clock.pending()).toBe(1);
    await clock.advance(1);
    await expect(settled).resolves.toEqual({ from: 'server' });
  });

  it('sends a slow step with no answer the way the request sends as usual (its plan’s endpoint), not past it', async () => {
    const { answers, given, clock } = ask(() => ({ step: 'slow', ms: 10 }));
    const planned = vi.fn(async () => ({ from: 'planned endpoint' }) as unknown as Answer);
    const settled = answers?.(SENT, planned);
    await clock.advance(10);
    await expect(settled).resolves.toEqual({ from: 'planned endpoint' });
    expect(planned).toHaveBeenCalledWith(SENT);
    expect(given.sent).toEqual([]);
  });

  it('reads the attempt only once a hook with fault is there: no request id is drawn otherwise', () => {
    installHook({ push() {} });
    const attempt = vi.fn();
    expect(faultFor(attempt)).toBeUndefined();
    expect(attempt).not.toHaveBeenCalled();
  });

  it('injects nothing for an exchange that cannot (an adapter without inject)', () => {
    const fault = vi.fn(() => ({ step: 'status', status: 503 }));
    const { answer } = ask(fault, exchange({ inject: false }));
    expect(answer).toBeUndefined();
  });

  it('injects nothing in a production build (process.env.NODE_ENV, as bundlers replace it)', () => {
    vi.stubEnv('NODE_ENV', 'production');
    const fault = vi.fn(() => ({ step: 'status', status: 503 }));
    const { answer, attempt } = ask(fault);
    expect(answer).toBeUndefined();
    expect(fault).not.toHaveBeenCalled();
    expect(attempt).not.toHaveBeenCalled();
  });

  it('copies the step it was given: changing it afterwards changes nothing', async () => {
    const step = { step: 'status', status: 503, headers: { 'retry-after': '1' } };
    const { answer } = ask(() => step);
    step.status = 200;
    step.headers['retry-after'] = '999';
    await expect(answer?.(SENT)).resolves.toEqual({
      from: 'fault',
      step: { step: 'status', status: 503, headers: { 'retry-after': '1' } },
    });
  });

  it('drops header fields and reason phrases fetch would refuse, and the body of a null-body status', async () => {
    const { answer } = ask(() => ({
      step: 'status',
      status: 204,
      statusText: 'No\nContent',
      body: 'never',
      headers: {
        'bad name': 'x',
        'x-ok': 'yes',
        'x-split': 'a\r\nb',
        'x-number': 1,
        'x-euro': '1 €',
        'x-latin': 'caf\u00e9',
      },
    }));
    await expect(answer?.(SENT)).resolves.toEqual({
      from: 'fault',
      step: { step: 'status', status: 204, headers: { 'x-ok': 'yes', 'x-latin': 'caf\u00e9' } },
    });
  });
});

describe('faultFor: a hook can never fail a request', () => {
  const getterThatThrows = {
    get step(): string {
      throw new Error('boom');
    },
  };
  it.each([
    [
      'a fault that throws',
      () => {
        throw new Error('hostile');
      },
    ],
    ['a step whose getter throws', () => getterThatThrows],
    ['no object', () => 'status 503'],
    ['a promise', () => Promise.resolve({ step: 'status', status: 503 })],
    ['an unknown step', () => ({ step: 'teapot' })],
    ['a status below 200', () => ({ step: 'status', status: 101 })],
    ['a status above 599', () => ({ step: 'status', status: 600 })],
    ['a status that is no integer', () => ({ step: 'status', status: 503.5 })],
    ['a slow step of NaN ms', () => ({ step: 'slow', ms: Number.NaN })],
    ['a slow step of Infinity ms', () => ({ step: 'slow', ms: Number.POSITIVE_INFINITY })],
    ['a slow step of negative ms', () => ({ step: 'slow', ms: -1 })],
    ['a slow step that waits again', () => ({ step: 'slow', ms: 1, answer: { step: 'slow', ms: 1 } })],
    [
      'a slow step with a bad answer',
      () => ({ step: 'slow', ms: 1, answer: { step: 'status', status: 99 } }),
    ],
  ])('%s is no fault', (_name, fault) => {
    expect(ask(fault).answer).toBeUndefined();
  });

  it.each([
    ['a hook whose fault is no function', { push() {}, fault: 'yes' }],
    ['a hook without push', { fault: () => ({ step: 'status', status: 503 }) }],
    [
      'a hook whose fault getter throws',
      {
        push() {},
        get fault() {
          throw new Error('boom');
        },
      },
    ],
  ])('%s is no fault', (_name, hook) => {
    installHook(hook);
    expect(
      faultFor(() => ({ exchange: exchange().value, clock: virtualClock(), query: QUERY })),
    ).toBeUndefined();
  });

  it('a global whose getter throws is no hook', () => {
    Object.defineProperty(globalThis, DEVTOOLS_HOOK, {
      get() {
        throw new Error('boom');
      },
      configurable: true,
    });
    expect(
      faultFor(() => ({ exchange: exchange().value, clock: virtualClock(), query: QUERY })),
    ).toBeUndefined();
  });

  it('an exchange that cannot build the answer sends the attempt as usual', async () => {
    const given = exchange();
    given.value.inject = () => {
      throw new TypeError('cannot build');
    };
    const { answer } = ask(() => ({ step: 'status', status: 503 }), given);
    await expect(answer?.(SENT)).resolves.toEqual({ from: 'server' });
    expect(given.sent).toEqual([SENT]);
  });
});

describe('an attempt whose fault the client cannot build', () => {
  it.each([
    ['a status step', { step: 'status', status: 503 }],
    ['a slow step’s answer', { step: 'slow', ms: 0, answer: { step: 'status', status: 503 } }],
  ])('%s: sent as usual, and its attempt-end not marked injected', async (_name, step) => {
    const given = exchange();
    given.value.inject = () => {
      throw new TypeError('cannot build');
    };
    installHook({ push() {}, fault: () => step });
    const events: RetrylineEvent[] = [];
    const { response, info } = await runHttpRequest({
      ...given.value,
      options: { onEvent: (event: RetrylineEvent) => events.push(event) },
    });
    expect(response).toEqual({ from: 'server' });
    expect(info.attempts).toBe(1);
    expect(given.sent).toHaveLength(1);
    const end = events.find((event) => event.type === 'attempt-end');
    expect(end).toMatchObject({ attempt: 1, status: 200 });
    expect(end).not.toHaveProperty('injected');
  });
});
