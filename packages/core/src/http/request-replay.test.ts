import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEVTOOLS_HOOK } from '../events/emitter';
import type { RetrylineEvent } from '../events/types';
import { circuitBreaker } from '../guard/breaker';
import { memoryStore } from '../guard/store';
import { seededRandom } from '../time/random';
import { virtualClock } from '../time/virtual-clock';
import { type HttpAttempt, type HttpExchange, type HttpRetryOptions, runHttpRequest } from './request-engine';

// Replay (request-engine.ts, `offerReplay`): as a request starts, a devtools hook that takes
// offers (`replayable`) is given a function that sends the request again through the same
// exchange and options, in development builds, for requests safe to send without their caller.

interface FakeResponse {
  readonly status: number;
  readonly headers: Headers;
}

const res = (status: number): FakeResponse => ({ status, headers: new Headers() });
const URL_ = 'https://api.example/items?page=2';

afterEach(() => {
  delete (globalThis as Record<symbol, unknown>)[DEVTOOLS_HOOK];
  vi.unstubAllEnvs();
});

/** A devtools hook that keeps the replays it is offered, by request id, and every event pushed. */
function installHook(replayable?: (id: string, replay: () => void) => unknown) {
  const replays = new Map<string, () => void>();
  const events: RetrylineEvent[] = [];
  const hook = {
    push: (event: RetrylineEvent) => events.push(event),
    replayable:
      replayable ??
      ((id: string, replay: () => void) => {
        replays.set(id, replay);
      }),
  };
  Object.defineProperty(globalThis, DEVTOOLS_HOOK, { value: hook, configurable: true, writable: true });
  /** The ids of the requests whose events were pushed, in the order they started. */
  const started = () => events.flatMap((event) => (event.type === 'request-start' ? [event.requestId] : []));
  const ended = (id: string) =>
    events.find((event) => event.type === 'request-end' && event.requestId === id);
  return { replays, events, started, ended };
}

type Hook = ReturnType<typeof installHook>;

/** Runs the replay `hook` holds for `id`, and waits (on virtual time) for it to end: its id and end. */
async function replay(hook: Hook, clock: { runAll(): Promise<void> }, id: string) {
  const before = hook.started().length;
  const run = hook.replays.get(id);
  if (!run) throw new Error(`no replay for ${id}`);
  run();
  return vi.waitFor(async () => {
    await clock.runAll();
    const replayId = hook.started()[before];
    const end = replayId === undefined ? undefined : hook.ended(replayId);
    if (!end) throw new Error('the replay has not ended');
    return { id: replayId as string, end };
  });
}

interface Init {
  method?: string;
  replayable?: boolean;
  options?: HttpRetryOptions;
  signal?: AbortSignal;
}

/**
 * One exchange whose sends answer from `script` in turn, whoever sends (the caller's request or a
 * replay): constant 1 s backoff, no jitter, on virtual time.
 */
function client(script: ReadonlyArray<FakeResponse | Error>, init: Init = {}) {
  const clock = virtualClock(1_000_000);
  const sends: HttpAttempt[] = [];
  const discarded: FakeResponse[] = [];
  const exchange: HttpExchange<FakeResponse> = {
    client: 'test',
    method: init.method ?? 'GET',
    url: URL_,
    headers: undefined,
    replayable: init.replayable ?? true,
    signal: init.signal,
    options: {
      clock,
      random: seededRandom(1),
      backoff: { strategy: 'constant', base: 1000 },
      jitter: 'none',
      store: memoryStore(),
      ...init.options,
    },
    send(attempt) {
      const step = script[sends.length];
      sends.push(attempt);
      if (step === undefined) return Promise.reject(new Error(`no step for send ${sends.length}`));
      return step instanceof Error ? Promise.reject(step) : Promise.resolve(step);
    },
    inspect: (response) => response,
    discard: (response) => {
      discarded.push(response);
    },
  };
  const run = async () => {
    const settled = runHttpRequest(exchange).then(
      (value) => ({ value, error: undefined }),
      (error: unknown) => ({ value: undefined, error }),
    );
    await clock.runAll();
    return settled;
  };
  return { clock, exchange, sends, discarded, run };
}

describe('a request offered to the devtools hook for replay', () => {
  it('is offered under its id, and a replay sends it again through the same exchange, retries included', async () => {
    const hook = installHook();
    const { clock, sends, discarded, run } = client([res(503), res(200), res(503), res(503), res(200)]);
    const first = await run();
    expect(first).toMatchObject({ value: { response: { status: 200 }, info: { attempts: 2 } } });
    const id = first.value?.info.requestId as string;
    expect([...hook.replays.keys()]).toEqual([id]);
    expect(hook.started()).toEqual([id]);

    const again = await replay(hook, clock, id);
    const replayId = again.id;
    // A request of its own: a fresh id, its own events, the policy's retries, the waits between.
    expect(replayId).not.toBe(id);
    expect(again.end).toMatchObject({ outcome: 'success', attempts: 3 });
    expect(
      hook.events.filter((event) => event.type === 'retry-scheduled' && event.requestId === replayId),
    ).toHaveLength(2);
    expect(sends.map((sent) => sent.attempt)).toEqual([1, 2, 1, 2, 3]);
    // Its response is freed, unread: nobody waits for it.
    expect(discarded.at(-1)).toMatchObject({ status: 200 });
    // And it may be replayed in turn.
    expect([...hook.replays.keys()]).toEqual([id, replayId]);
  });

  it.each(['GET', 'HEAD', 'OPTIONS', 'get'])('is offered for %s', async (method) => {
    const hook = installHook();
    await client([res(200)], { method }).run();
    expect(hook.replays.size).toBe(1);
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE', 'TRACE'])(
    'is not offered for %s, even keyed',
    async (method) => {
      const hook = installHook();
      await client([res(200)], { method, options: { idempotencyKey: true } }).run();
      expect(hook.replays.size).toBe(0);
      // The request itself is recorded as ever.
      expect(hook.started()).toHaveLength(1);
    },
  );

  it('is not offered for a body that cannot be sent again (a one-shot stream)', async () => {
    const hook = installHook();
    await client([res(200)], { replayable: false }).run();
    expect(hook.replays.size).toBe(0);
  });

  it('is not offered in a production build (process.env.NODE_ENV, as bundlers replace it)', async () => {
    vi.stubEnv('NODE_ENV', 'production');
    const hook = installHook();
    await client([res(200)]).run();
    expect(hook.replays.size).toBe(0);
    expect(hook.started()).toHaveLength(1);
  });

  it('is offered whatever the caller chose as its id, and replayed under a fresh one', async () => {
    const hook = installHook();
    const { clock, run } = client([res(200), res(200)], { options: { requestId: 'order-7' } });
    await run();
    expect([...hook.replays.keys()]).toEqual(['order-7']);
    expect((await replay(hook, clock, 'order-7')).id).not.toBe('order-7');
  });

  it('replays without the caller’s abort signal, aborted since', async () => {
    const hook = installHook();
    const caller = new AbortController();
    const { clock, sends, run } = client([res(200), res(503), res(200)], { signal: caller.signal });
    const first = await run();
    caller.abort(new Error('the caller left'));
    const again = await replay(hook, clock, first.value?.info.requestId as string);
    expect(again.end).toMatchObject({ outcome: 'success', attempts: 2 });
    // Every attempt of the replay goes with a signal of its own (over the one the caller's request
    // carries), which nothing has aborted.
    for (const sent of sends.slice(1)) {
      expect(sent.signal).toBeInstanceOf(AbortSignal);
      expect(sent.signal).not.toBe(caller.signal);
      expect(sent.signal?.aborted).toBe(false);
    }
  });

  it('replays a request the caller aborted while it was being retried', async () => {
    const hook = installHook();
    const caller = new AbortController();
    const { clock, exchange, sends } = client([res(503), res(200)], { signal: caller.signal });
    const settled = runHttpRequest(exchange).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await vi.waitFor(() => expect(clock.pending()).toBe(1));
    const reason = new Error('the caller left');
    caller.abort(reason);
    await expect(settled).resolves.toBe(reason);
    const [id] = hook.started();
    expect(hook.ended(id as string)).toMatchObject({ outcome: 'aborted' });
    expect((await replay(hook, clock, id as string)).end).toMatchObject({ outcome: 'success', attempts: 1 });
    expect(sends).toHaveLength(2);
  });

  it('goes through the same guards: a breaker the request opened refuses its replay', async () => {
    const hook = installHook();
    const breaker = circuitBreaker({ consecutiveFailures: 1, openMs: 60_000 });
    const { clock, sends, run } = client([res(503)], { options: { retries: 0, breaker } });
    const first = await run();
    const again = await replay(hook, clock, first.value?.info.requestId as string);
    expect(again.end).toMatchObject({ outcome: 'breaker-open' });
    expect(sends).toHaveLength(1);
  });

  it('fails nowhere: a replay that fails leaves no rejection behind', async () => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      const hook = installHook();
      const { clock, run, sends } = client([res(200), new Error('a bug in the client')]);
      const first = await run();
      const again = await replay(hook, clock, first.value?.info.requestId as string);
      expect(again.end).toMatchObject({ outcome: 'not-retryable' });
      expect(sends).toHaveLength(2);
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });
});

describe('a devtools hook that takes replays badly', () => {
  it.each([
    [
      'throws',
      () =>
        installHook(() => {
          throw new Error('hostile hook');
        }),
    ],
    ['rejects', () => installHook(() => Promise.reject(new Error('hostile hook')))],
    [
      'hides a getter that throws',
      () =>
        Object.defineProperty(globalThis, DEVTOOLS_HOOK, {
          value: Object.defineProperty({ push() {} }, 'replayable', {
            get() {
              throw new Error('hostile getter');
            },
          }),
          configurable: true,
        }),
    ],
  ])('never fails the request when it %s', async (_name, install) => {
    const unhandled = vi.fn();
    process.on('unhandledRejection', unhandled);
    try {
      install();
      const result = await client([res(503), res(200)]).run();
      expect(result).toMatchObject({ value: { response: { status: 200 }, info: { attempts: 2 } } });
      await new Promise((resolve) => setTimeout(resolve, 0));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it('is not offered where there is no `process` (a module loaded as it is): the request goes on', async () => {
    const hook = installHook();
    vi.stubGlobal('process', undefined);
    try {
      const result = await client([res(200)]).run();
      expect(result).toMatchObject({ value: { response: { status: 200 } } });
    } finally {
      vi.unstubAllGlobals();
    }
    expect(hook.replays.size).toBe(0);
  });
});
