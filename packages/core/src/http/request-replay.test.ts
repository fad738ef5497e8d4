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

/** What core names an offered request by, besides its id: as its `request-start` does. */
interface OfferedRequest {
  readonly client: string;
  readonly method: string;
  readonly url: string;
}

/**
 * A devtools hook that keeps the replays it is offered, by request id (the latest), every offer in
 * order (id, request and replay), and every event pushed.
 */
type Replay = (signal?: AbortSignal) => Promise<void>;

function installHook(replayable?: (id: string, replay: Replay, request: OfferedRequest) => unknown) {
  const replays = new Map<string, Replay>();
  const offers: { id: string; request: OfferedRequest; replay: Replay }[] = [];
  const events: RetrylineEvent[] = [];
  const hook = {
    push: (event: RetrylineEvent) => events.push(event),
    replayable:
      replayable ??
      ((id: string, replay: Replay, request: OfferedRequest) => {
        replays.set(id, replay);
        offers.push({ id, request, replay });
      }),
  };
  Object.defineProperty(globalThis, DEVTOOLS_HOOK, { value: hook, configurable: true, writable: true });
  /** The ids of the requests whose events were pushed, in the order they started. */
  const started = () => events.flatMap((event) => (event.type === 'request-start' ? [event.requestId] : []));
  const ended = (id: string) =>
    events.find((event) => event.type === 'request-end' && event.requestId === id);
  return { replays, offers, events, started, ended };
}

type Hook = ReturnType<typeof installHook>;

/**
 * Runs the replay `hook` holds for `id` (or the one given), and waits (on virtual time) for it to
 * end: its id and end.
 */
async function replay(hook: Hook, clock: { runAll(): Promise<void> }, id: string | (() => void)) {
  const before = hook.started().length;
  const run = typeof id === 'function' ? id : hook.replays.get(id);
  if (!run) throw new Error(`no replay for ${String(id)}`);
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
  url?: string;
  headers?: Record<string, string>;
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
    url: init.url ?? URL_,
    headers: init.headers,
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

  it('stops when the signal the hook gives it aborts, and its promise then settles', async () => {
    const hook = installHook();
    const { clock, sends, run } = client([res(200), res(503), res(503), res(503)], {
      options: { retries: Number.POSITIVE_INFINITY },
    });
    const first = await run();
    const id = first.value?.info.requestId as string;
    const stop = new AbortController();
    const settled = (hook.replays.get(id) as Replay)(stop.signal);
    // Its first attempt answered 503, then a second after 1 s: it waits to send its third when
    // the panel goes.
    await clock.advance(1_000);
    await vi.waitFor(() => expect(sends).toHaveLength(3));
    stop.abort();
    await clock.runAll();
    await expect(settled).resolves.toBeUndefined();
    const replayId = hook.started()[1] as string;
    expect(hook.ended(replayId)).toMatchObject({ outcome: 'aborted' });
    // Nothing more was sent after the abort.
    expect(sends).toHaveLength(3);
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
    const { clock, sends, run } = client([res(503)], { options: { retries: 1, breaker } });
    await run();
    const [id] = hook.started();
    expect(hook.ended(id as string)).toMatchObject({ outcome: 'breaker-open', attempts: 1 });
    const again = await replay(hook, clock, id as string);
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

describe('which requests are offered for replay: those their client would send again itself', () => {
  it('is offered as its request-start names it: client, method, URL redacted', async () => {
    const hook = installHook();
    await client([res(200)], { method: 'head' }).run();
    const start = hook.events.find((event) => event.type === 'request-start');
    expect(hook.offers.map((offer) => offer.request)).toEqual([
      { client: 'test', method: 'HEAD', url: 'https://api.example/items?page=***' },
    ]);
    expect(start).toMatchObject({
      client: 'test',
      method: 'HEAD',
      url: 'https://api.example/items?page=***',
    });
  });

  it.each([
    ['GET', ['HEAD']],
    ['OPTIONS', ['get', 'head']],
  ])('is not offered for a %s that retryOn.methods %j leaves out', async (method, methods) => {
    const hook = installHook();
    await client([res(200)], { method, options: { retryOn: { methods } } }).run();
    expect(hook.replays.size).toBe(0);
    expect(hook.started()).toHaveLength(1);
  });

  it.each([
    ['HEAD', ['HEAD']],
    ['GET', ['get', 'post']],
  ])('is offered for a %s that retryOn.methods %j names', async (method, methods) => {
    const hook = installHook();
    await client([res(200)], { method, options: { retryOn: { methods } } }).run();
    expect(hook.replays.size).toBe(1);
  });

  it('takes the default methods, whatever a retryOn predicate decides', async () => {
    const hook = installHook();
    await client([res(200)], { options: { retryOn: () => false } }).run();
    expect(hook.replays.size).toBe(1);
  });

  it.each<[string, HttpRetryOptions]>([
    ['retry: false', { retry: false }],
    ['retry: 0', { retry: 0 }],
    ['retries: 0', { retries: 0 }],
  ])('is not offered for a request allowed no retries (%s): it is sent once', async (_name, options) => {
    const hook = installHook();
    const result = await client([res(503)], { options }).run();
    expect(result).toMatchObject({ value: { response: { status: 503 }, info: { attempts: 1 } } });
    expect(hook.started()).toHaveLength(1);
    expect(hook.replays.size).toBe(0);
  });

  it('is offered for a request allowed one retry', async () => {
    const hook = installHook();
    await client([res(200)], { options: { retry: 1 } }).run();
    expect(hook.replays.size).toBe(1);
  });
});

describe('a replay of a request whose id the caller chose', () => {
  /** A request with the caller's own `X-Request-Id: abc`, named by `requestIdHeader`. */
  const withCallerId = (script: ReadonlyArray<FakeResponse>, url = URL_) =>
    client(script, {
      url,
      headers: { 'X-Request-Id': 'abc' },
      options: { requestIdHeader: 'x-request-id' },
    });

  it('is recorded under an id of its own, the original keeping its attempts, the caller’s header sent as it was', async () => {
    const hook = installHook();
    const { clock, sends, run } = withCallerId([res(503), res(200), res(200)]);
    await run();
    expect(hook.started()).toEqual(['abc']);

    const again = await replay(hook, clock, 'abc');
    expect(again.id).not.toBe('abc');
    expect(again.id).not.toMatch(/^abc/);
    expect(again.end).toMatchObject({ outcome: 'success', attempts: 1 });
    // The original's row still says 503 then 200: the replay's attempt went to a row of its own.
    const statuses = (id: string) =>
      hook.events.flatMap((event) =>
        event.type === 'attempt-end' && event.requestId === id ? [event.status] : [],
      );
    expect(statuses('abc')).toEqual([503, 200]);
    expect(statuses(again.id)).toEqual([200]);
    expect(hook.ended('abc')).toMatchObject({ outcome: 'success', attempts: 2 });
    // The caller's header goes out among the caller's own headers, as it was: Retryline adds no
    // other id to the replay's attempt, and its event shows the caller's.
    expect(sends[2]?.headers).toEqual({});
    const replayStart = hook.events.find(
      (event) => event.type === 'attempt-start' && event.requestId === again.id,
    );
    expect(replayStart).toMatchObject({ headers: { 'x-request-id': 'abc' } });
  });

  it('gets a fresh id each time it is replayed', async () => {
    const hook = installHook();
    const { clock, run } = withCallerId([res(200), res(200), res(200)]);
    await run();
    const first = await replay(hook, clock, 'abc');
    const second = await replay(hook, clock, 'abc');
    expect(new Set(['abc', first.id, second.id]).size).toBe(3);
  });

  it('is recorded under a fresh id that its header carries, when the caller set none', async () => {
    const hook = installHook();
    const { clock, sends, run } = client([res(200), res(200)], {
      options: { requestIdHeader: 'X-Request-Id', requestId: 'order-7' },
    });
    await run();
    expect(sends[0]?.headers).toEqual({ 'X-Request-Id': 'order-7' });
    const again = await replay(hook, clock, 'order-7');
    expect(again.id).not.toBe('order-7');
    expect(sends[1]?.headers).toEqual({ 'X-Request-Id': again.id });
  });

  it('names its request: a caller id reused across requests is offered once for each, with its URL', async () => {
    // A session-wide correlation id, sent on one request after another: a request id is unique
    // only among the requests in flight, so both are recorded, and offered, as `abc`.
    const hook = installHook();
    const a = withCallerId([res(200), res(200)], 'https://api.example/a');
    const b = withCallerId([res(200)], 'https://api.example/b');
    await a.run();
    await b.run();
    expect(hook.offers.map((offer) => [offer.id, offer.request.url])).toEqual([
      ['abc', 'https://api.example/a'],
      ['abc', 'https://api.example/b'],
    ]);
    // A hook that finds the offer by id and request runs the request the row shows.
    const offerOfA = hook.offers.find(
      (offer) => offer.id === 'abc' && offer.request.method === 'GET' && offer.request.url.endsWith('/a'),
    );
    const again = await replay(hook, a.clock, offerOfA?.replay as () => void);
    const start = hook.events.find((event) => event.type === 'request-start' && event.requestId === again.id);
    expect(start).toMatchObject({ url: 'https://api.example/a' });
    expect(a.sends).toHaveLength(2);
    expect(b.sends).toHaveLength(1);
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
    // `process` is read synchronously when the request starts; it is put back before anything is
    // awaited, since the test runner itself needs it between ticks.
    vi.stubGlobal('process', undefined);
    let pending: Promise<unknown>;
    try {
      pending = client([res(200)]).run();
    } finally {
      vi.unstubAllGlobals();
    }
    const result = await pending;
    expect(result).toMatchObject({ value: { response: { status: 200 } } });
    expect(hook.replays.size).toBe(0);
  });
});
