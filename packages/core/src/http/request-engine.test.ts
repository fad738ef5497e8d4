import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { observe } from '../../../../test/support/observe';
import { trackTimers } from '../../../../test/support/track-timers';
import {
  AttemptTimeoutError,
  BodyNotReplayableError,
  InvalidOptionsError,
  RetriesExhaustedError,
} from '../errors';
import type { RetrylineEvent } from '../events/types';
import { retryBudget } from '../guard/retry-budget';
import { memoryStore } from '../guard/store';
import { seededRandom } from '../time/random';
import { virtualClock } from '../time/virtual-clock';
import type { HttpOutcome } from './classify';
import type { HeaderSource } from './redact';
import {
  type HttpAttempt,
  type HttpExchange,
  type HttpRetryEvent,
  type HttpRetryOptions,
  originOf,
  prepareHttpOptions,
  resolveHttpOptions,
  runHttpRequest,
} from './request-engine';
import { keepRetryInfo, type RetryInfo, retryInfoOf } from './retry-info';

/** `info` as a caller gets it: kept with a response and read back, its id drawn. */
function revealed(info: RetryInfo | undefined): RetryInfo | undefined {
  const response = {};
  keepRetryInfo(response, info);
  return retryInfoOf(response);
}

const T0 = 1_000_000;
const URL_ = 'https://api.example/items?token=abc&page=2';
const MASKED_URL = 'https://api.example/items?token=***&page=***';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface FakeResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  404: 'Not Found',
  409: 'Conflict',
  418: "I'm a teapot",
  425: 'Too Early',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/** A response as the fake client gives it. */
const res = (status: number, headers: Record<string, string> = {}): FakeResponse => ({
  status,
  statusText: STATUS_TEXT[status] ?? '',
  headers: new Headers(headers),
});

/** An attempt whose send rejects with `error`. */
const fail = (error: unknown) => ({ reject: error });
/** An attempt whose send never settles. */
const HANG = 'hang' as const;
type Step = FakeResponse | { reject: unknown } | typeof HANG;

/** undici's shape for a transport failure, naming the port it failed on (URL_'s). */
const undici = (code: string) =>
  new TypeError('fetch failed', {
    cause: Object.assign(new Error(`connect ${code}`), { code, port: 443 }),
  });

interface Init {
  method?: string;
  url?: string;
  headers?: HeaderSource;
  replayable?: boolean;
  options?: HttpRetryOptions;
  start?: number;
  /** What the client says of redirects before a failed send (its `redirected`). @default not said */
  redirected?: boolean;
}

/**
 * Runs one request through the engine against a scripted fake client, on virtual time with
 * visible delays (constant 1 s backoff, no jitter) unless the options say otherwise.
 */
function setup(script: readonly Step[], init: Init = {}) {
  const clock = virtualClock(init.start ?? T0);
  const sends: HttpAttempt[] = [];
  const sendTimes: number[] = [];
  const discarded: FakeResponse[] = [];
  const exchange: HttpExchange<FakeResponse> = {
    client: 'test',
    method: init.method ?? 'GET',
    url: init.url ?? URL_,
    headers: init.headers,
    replayable: init.replayable ?? true,
    options: {
      clock,
      random: seededRandom(1),
      backoff: { strategy: 'constant', base: 1000 },
      jitter: 'none',
      // A store per test: the default one is shared, and one test's 429 would pace the next.
      store: memoryStore(),
      ...init.options,
    },
    send(attempt) {
      sends.push(attempt);
      sendTimes.push(clock.now());
      const step = script[attempt.attempt - 1];
      if (step === undefined) return Promise.reject(new Error(`no step for attempt ${attempt.attempt}`));
      if (step === HANG) return new Promise<never>(() => {});
      if ('reject' in step) return Promise.reject(step.reject);
      return Promise.resolve(step);
    },
    inspect: (response) => response,
    discard: (response) => {
      discarded.push(response);
    },
    ...(init.redirected === undefined ? {} : { redirected: () => init.redirected }),
  };
  const run = observe(runHttpRequest(exchange));
  const finish = async () => {
    await clock.runAll();
    await run.done;
    return run.state;
  };
  return { clock, sends, sendTimes, discarded, run, finish };
}

describe('runHttpRequest: a first attempt made before the loop (nobody listening)', () => {
  const exchange = (
    send: () => Promise<{ status: number; headers: Record<string, string> }>,
    controller: { signal: AbortSignal } = new AbortController(),
  ) => {
    const discarded: unknown[] = [];
    return {
      discarded,
      run: () =>
        runHttpRequest({
          client: 'test',
          method: 'GET',
          url: URL_,
          headers: undefined,
          replayable: true,
          options: { store: memoryStore(), backoff: { strategy: 'constant', base: 1 }, jitter: 'none' },
          signal: controller.signal,
          ownSignal: true,
          send,
          inspect: (response) => response,
          discard: (response) => discarded.push(response),
        }),
    };
  };

  it('frees a response that arrives as the request is aborted, and rejects with the reason', async () => {
    // The signal turns aborted just as the response is in (its abort event not yet delivered).
    const reason = new Error('user left');
    let aborted = false;
    const signal = {
      get aborted() {
        return aborted;
      },
      reason,
      addEventListener() {},
      removeEventListener() {},
    } as unknown as AbortSignal;
    const response = { status: 200, headers: {} };
    const { discarded, run } = exchange(
      async () => {
        await Promise.resolve();
        aborted = true;
        return response;
      },
      { signal },
    );
    await expect(run()).rejects.toBe(reason);
    expect(discarded).toEqual([response]);
  });

  it('times a first attempt on its own signal: a shared caller signal aborts it at once, keeps one listener, leaves no timer', async () => {
    const timers = trackTimers();
    try {
      const controller = new AbortController();
      const sent: (AbortSignal | undefined)[] = [];
      const run = () =>
        runHttpRequest<{ status: number; headers: Record<string, string> }>({
          client: 'test',
          method: 'GET',
          url: URL_,
          headers: undefined,
          replayable: true,
          options: { store: memoryStore(), timeout: 60_000 },
          // A signal the caller may share between requests: never handed to the send itself.
          signal: controller.signal,
          send: ({ signal }) => {
            sent.push(signal);
            return sent.length <= 3
              ? Promise.resolve({ status: 200, headers: {} })
              : new Promise<never>(() => {});
          },
          inspect: (response) => response,
          discard: () => {},
        });
      for (let i = 0; i < 3; i++) expect((await run()).info.attempts).toBe(1);
      expect(timers.active()).toBe(0);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      expect(sent.some((signal) => signal === controller.signal || signal === undefined)).toBe(false);
      const hanging = run();
      const reason = new Error('user left');
      controller.abort(reason);
      await expect(hanging).rejects.toBe(reason);
      expect(sent[3]?.aborted).toBe(true);
      expect(timers.active()).toBe(0);
    } finally {
      timers.restore();
    }
  });

  it('hands a 503 to the loop, which sends only the attempts after it', async () => {
    const script = [
      { status: 503, headers: {} },
      { status: 200, headers: {} },
    ];
    let sends = 0;
    const { discarded, run } = exchange(async () => script[sends++] as (typeof script)[number]);
    const { response, info } = await run();
    expect(response).toBe(script[1]);
    expect(sends).toBe(2);
    expect(discarded).toEqual([script[0]]);
    expect(info).toMatchObject({ attempts: 2, outcome: 'success' });
  });
});

describe('runHttpRequest', () => {
  it('retries 503, 503 and returns the 200 with what happened', async () => {
    const script = [res(503), res(503), res(200)];
    const { sends, sendTimes, discarded, finish, clock } = setup(script);
    const state = await finish();
    expect(sends).toHaveLength(3);
    expect(state.value?.response).toBe(script[2]);
    expect(revealed(state.value?.info)).toEqual({
      requestId: expect.stringMatching(UUID_V4),
      attempts: 3,
      totalDelay: 2000,
      delays: [
        { retry: 1, delay: 1000, reason: 'backoff' },
        { retry: 2, delay: 1000, reason: 'backoff' },
      ],
      outcome: 'success',
    });
    expect(sendTimes).toEqual([T0, T0 + 1000, T0 + 2000]);
    expect(discarded).toHaveLength(2);
    expect(discarded[0]).toBe(script[0]);
    expect(discarded[1]).toBe(script[1]);
    expect(clock.pending()).toBe(0);
  });

  it('adds no header to any attempt by default, and numbers the attempts', async () => {
    const { sends, finish } = setup([res(503), fail(undici('ECONNRESET')), res(200)]);
    await finish();
    expect(sends.map((s) => s.attempt)).toEqual([1, 2, 3]);
    for (const send of sends) {
      expect(send.headers).toEqual({});
      // Nothing can abort these attempts (no signal, deadline or timeout): no signal is made.
      expect(send.signal).toBeUndefined();
    }
  });

  it("never hands the caller's signal on, and keeps one listener on it however many requests share it", async () => {
    const caller = new AbortController();
    const { sends, finish } = setup([res(503), res(200)], { options: { signal: caller.signal } });
    await finish();
    const [first, second] = sends.map((s) => s.signal);
    expect(first).toBeInstanceOf(AbortSignal);
    expect(first).not.toBe(caller.signal);
    expect(second).toBe(first); // the request's own signal, for every attempt
    const many = Array.from({ length: 20 }, () => setup([HANG], { options: { signal: caller.signal } }));
    await vi.waitFor(() => expect(many.every((r) => r.sends.length === 1)).toBe(true));
    // A client that keeps listeners on the signal it was given keeps them on the request's.
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    caller.abort(new Error('all gone'));
    for (const request of many) expect((await request.finish()).error).toMatchObject({ message: 'all gone' });
    expect(many.every((r) => r.sends[0]?.signal?.aborted)).toBe(true);
  });

  it('returns a 3xx or 2xx at once', async () => {
    for (const status of [200, 204, 304]) {
      const { sends, finish } = setup([res(status)]);
      const state = await finish();
      expect(sends).toHaveLength(1);
      expect(state.value?.response.status).toBe(status);
      expect(state.value?.info.outcome).toBe('success');
    }
  });

  it("returns a 404 at once with outcome 'not-retryable', never discarding it", async () => {
    const script = [res(404), res(200)];
    const { sends, discarded, finish } = setup(script);
    const state = await finish();
    expect(sends).toHaveLength(1);
    expect(state.value?.response).toBe(script[0]);
    expect(state.value?.info).toMatchObject({
      attempts: 1,
      totalDelay: 0,
      delays: [],
      outcome: 'not-retryable',
    });
    expect(discarded).toEqual([]);
  });

  it("returns the last 503 with outcome 'exhausted' when retries run out, discarding the others", async () => {
    const script = [res(503), res(503), res(503), res(200)];
    const { sends, discarded, finish } = setup(script, { options: { retries: 2 } });
    const state = await finish();
    expect(sends).toHaveLength(3);
    expect(state.value?.response).toBe(script[2]);
    expect(state.value?.info).toMatchObject({ attempts: 3, totalDelay: 2000, outcome: 'exhausted' });
    expect(discarded).toHaveLength(2);
    expect(discarded).not.toContain(script[2]);
  });

  describe('idempotency keys', () => {
    it('sends the same generated key on every attempt of a POST, which makes it retryable', async () => {
      const { sends, finish } = setup([res(503), res(503), res(200)], {
        method: 'POST',
        options: { idempotencyKey: true },
      });
      const state = await finish();
      expect(sends).toHaveLength(3);
      const key = sends[0]?.headers['Idempotency-Key'];
      expect(key).toMatch(UUID_V4);
      expect(sends.map((s) => s.headers)).toEqual([
        { 'Idempotency-Key': key },
        { 'Idempotency-Key': key },
        { 'Idempotency-Key': key },
      ]);
      expect(state.value?.info.outcome).toBe('success');
    });

    it.each([
      ['undefined', undefined],
      ['an empty string', ''],
      ['a line break', 'a\r\nX-Injected: 1'],
      ['a number', 42],
    ])('refuses a generator that returns %s, before anything is sent', async (_name, returned) => {
      const { sends, finish } = setup([res(200)], {
        method: 'POST',
        options: { idempotencyKey: () => returned as string },
      });
      const state = await finish();
      expect(sends).toHaveLength(0);
      expect(state.error).toBeInstanceOf(InvalidOptionsError);
      expect((state.error as Error).message).toMatch(
        /^Expected idempotencyKey's generator result to be a non-empty string on one line, got /,
      );
    });

    it('keys PATCH and lower-case methods too', async () => {
      for (const method of ['PATCH', 'post']) {
        const { sends, finish } = setup([res(503), res(200)], { method, options: { idempotencyKey: true } });
        await finish();
        expect(sends).toHaveLength(2);
        expect(sends[0]?.headers['Idempotency-Key']).toMatch(UUID_V4);
        expect(sends[1]?.headers['Idempotency-Key']).toBe(sends[0]?.headers['Idempotency-Key']);
      }
    });

    it('never retries a POST without a key once it may have been sent', async () => {
      const script = [res(503), res(200)];
      const { sends, discarded, finish } = setup(script, { method: 'POST' });
      const state = await finish();
      expect(sends).toHaveLength(1);
      expect(state.value?.response).toBe(script[0]);
      expect(state.value?.info.outcome).toBe('not-retryable');
      expect(discarded).toEqual([]);
    });

    it('adds no key to GET or PUT', async () => {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const { sends, finish } = setup([res(503), res(200)], { method, options: { idempotencyKey: true } });
        await finish();
        expect(sends).toHaveLength(2);
        expect(sends.map((s) => s.headers)).toEqual([{}, {}]);
      }
    });

    it("keeps the caller's key instead of adding one", async () => {
      const { sends, finish } = setup([res(503), res(200)], {
        method: 'POST',
        headers: { 'Idempotency-Key': 'mine' },
        options: { idempotencyKey: true },
      });
      await finish();
      expect(sends).toHaveLength(2);
      expect(sends.map((s) => s.headers)).toEqual([{}, {}]);
    });

    it("keeps the caller's key under a configured header name, whatever its case", async () => {
      const { sends, finish } = setup([res(503), res(200)], {
        method: 'POST',
        headers: new Headers({ 'x-idem': 'mine' }),
        options: { idempotencyKey: { header: 'X-Idem' } },
      });
      await finish();
      expect(sends).toHaveLength(2);
      expect(sends.map((s) => s.headers)).toEqual([{}, {}]);
    });

    it("retries a POST that carries the caller's Idempotency-Key even without the option", async () => {
      const seen: HttpOutcome[] = [];
      const { sends, finish } = setup([res(503), res(200)], {
        method: 'POST',
        headers: { 'idempotency-key': 'mine' },
        options: {
          retryOn: (outcome) => {
            seen.push(outcome);
            return outcome.retryable;
          },
        },
      });
      const state = await finish();
      expect(sends).toHaveLength(2);
      expect(sends.map((s) => s.headers)).toEqual([{}, {}]);
      expect(state.value?.response.status).toBe(200);
      expect(seen[0]).toMatchObject({ keyed: true, idempotent: true, retryable: true });
    });

    it('writes a generated key as an sf-string, generated once with the method and the URL', async () => {
      const calls: unknown[] = [];
      const { sends, finish } = setup([res(503), res(200)], {
        method: 'POST',
        options: {
          idempotencyKey: {
            format: 'sf-string',
            generate: (request) => {
              calls.push(request);
              return 'order-"7"';
            },
          },
        },
      });
      await finish();
      expect(calls).toEqual([{ method: 'POST', url: URL_ }]);
      expect(sends.map((s) => s.headers['Idempotency-Key'])).toEqual(['"order-\\"7\\""', '"order-\\"7\\""']);
    });
  });

  describe('correlation and deadline headers', () => {
    it('sends one request id on every attempt, the one info reports', async () => {
      const { sends, finish } = setup([res(503), res(503), res(200)], {
        options: { requestIdHeader: 'X-Request-Id' },
      });
      const state = await finish();
      const id = state.value?.info.requestId;
      expect(id).toMatch(UUID_V4);
      expect(sends.map((s) => s.headers)).toEqual([
        { 'X-Request-Id': id },
        { 'X-Request-Id': id },
        { 'X-Request-Id': id },
      ]);
    });

    it('draws the id only when it is read, then keeps it as a plain field', async () => {
      const draw = vi.spyOn(globalThis.crypto, 'randomUUID');
      try {
        const { finish } = setup([res(200)]);
        const info = (await finish()).value?.info;
        expect(draw).not.toHaveBeenCalled();
        const id = info?.requestId;
        expect(id).toMatch(UUID_V4);
        expect(info?.requestId).toBe(id);
        expect(draw).toHaveBeenCalledTimes(1);
        expect(Object.keys(info ?? {})).toContain('requestId');
        expect(JSON.parse(JSON.stringify(info)).requestId).toBe(id);
        // retryInfoOf draws it for a caller that will copy the object.
        const other = (await setup([res(200)]).finish()).value?.info;
        expect({ ...revealed(other) }.requestId).toMatch(UUID_V4);
        expect(draw).toHaveBeenCalledTimes(2);
      } finally {
        draw.mockRestore();
      }
    });

    it('uses the requestId option as the id', async () => {
      const { sends, finish } = setup([res(200)], {
        options: { requestIdHeader: 'X-Request-Id', requestId: 'given-1' },
      });
      const state = await finish();
      expect(state.value?.info.requestId).toBe('given-1');
      expect(sends[0]?.headers).toEqual({ 'X-Request-Id': 'given-1' });
    });

    it("reuses the caller's request id header instead of adding one", async () => {
      const events: RetrylineEvent[] = [];
      const { sends, finish } = setup([res(503), res(200)], {
        headers: { 'X-REQUEST-ID': 'from-caller' },
        options: {
          requestIdHeader: 'X-Request-Id',
          requestId: 'ignored',
          onEvent: (event) => events.push(event),
        },
      });
      const state = await finish();
      expect(sends.map((s) => s.headers)).toEqual([{}, {}]);
      expect(state.value?.info.requestId).toBe('from-caller');
      expect(new Set(events.map((e) => e.requestId))).toEqual(new Set(['from-caller']));
    });

    it('sends attempt=n; max=m in the attempt header', async () => {
      const { sends, finish } = setup([res(503), res(503), res(200)], {
        options: { attemptHeader: 'Retry-Attempt', retries: 2 },
      });
      await finish();
      expect(sends.map((s) => s.headers)).toEqual([
        { 'Retry-Attempt': 'attempt=1; max=3' },
        { 'Retry-Attempt': 'attempt=2; max=3' },
        { 'Retry-Attempt': 'attempt=3; max=3' },
      ]);
    });

    it('leaves out max with retries: Infinity', async () => {
      const { sends, finish } = setup([res(503), res(503), res(200)], {
        options: { attemptHeader: 'Retry-Attempt', retries: Number.POSITIVE_INFINITY, deadline: 60_000 },
      });
      await finish();
      expect(sends.map((s) => s.headers['Retry-Attempt'])).toEqual(['attempt=1', 'attempt=2', 'attempt=3']);
    });

    it('counts the deadline header down, and sends none without a deadline', async () => {
      const withDeadline = setup([res(503), res(503), res(200)], {
        options: { deadlineHeader: 'X-Deadline-Ms', deadline: 10_000 },
      });
      await withDeadline.finish();
      expect(withDeadline.sends.map((s) => s.headers)).toEqual([
        { 'X-Deadline-Ms': '10000' },
        { 'X-Deadline-Ms': '9000' },
        { 'X-Deadline-Ms': '8000' },
      ]);

      const without = setup([res(503), res(200)], { options: { deadlineHeader: 'X-Deadline-Ms' } });
      await without.finish();
      expect(without.sends.map((s) => s.headers)).toEqual([{}, {}]);
    });

    it('combines every configured header on a keyed POST', async () => {
      const { sends, finish } = setup([res(503), res(200)], {
        method: 'POST',
        options: {
          idempotencyKey: () => 'k-1',
          requestIdHeader: 'X-Request-Id',
          requestId: 'r-1',
          attemptHeader: 'Retry-Attempt',
          deadlineHeader: 'X-Deadline-Ms',
          deadline: 5000,
        },
      });
      await finish();
      expect(sends.map((s) => s.headers)).toEqual([
        {
          'Idempotency-Key': 'k-1',
          'X-Request-Id': 'r-1',
          'Retry-Attempt': 'attempt=1; max=3',
          'X-Deadline-Ms': '5000',
        },
        {
          'Idempotency-Key': 'k-1',
          'X-Request-Id': 'r-1',
          'Retry-Attempt': 'attempt=2; max=3',
          'X-Deadline-Ms': '4000',
        },
      ]);
    });
  });

  describe('transport failures', () => {
    it('rethrows an error that is not a transport failure after one attempt', async () => {
      for (const error of [new Error('bug'), new TypeError('Failed to parse URL from x')]) {
        const events: RetrylineEvent[] = [];
        const { sends, finish } = setup([fail(error), res(200)], {
          options: { onEvent: (e) => events.push(e) },
        });
        const state = await finish();
        expect(state.error).toBe(error);
        expect(sends).toHaveLength(1);
        // Not a transport failure, so the event claims no phase for it.
        const end = events.find((event) => event.type === 'attempt-end');
        expect(end).toMatchObject({ outcome: 'error', error: { message: error.message } });
        expect(end).not.toHaveProperty('phase');
      }
    });

    it.each([
      ['POST', 'ECONNREFUSED on its first hop (not-sent)', 2, undici('ECONNREFUSED')],
      ['POST', 'ENOTFOUND on its first hop (not-sent)', 2, undici('ENOTFOUND')],
      ['GET', 'ECONNRESET (unknown)', 2, undici('ECONNRESET')],
      ['PUT', 'UND_ERR_SOCKET (unknown)', 2, undici('UND_ERR_SOCKET')],
      ['GET', "Chromium's opaque TypeError (unknown)", 2, new TypeError('Failed to fetch')],
      ['POST', 'ECONNRESET (unknown)', 1, undici('ECONNRESET')],
      ['PATCH', "Safari's opaque TypeError (unknown)", 1, new TypeError('Load failed')],
    ])('%s after %s: %d send(s)', async (method, _what, expectedSends, error) => {
      const script = [fail(error), res(200)];
      const { sends, finish } = setup(script, { method, redirected: false });
      const state = await finish();
      expect(sends).toHaveLength(expectedSends);
      if (expectedSends === 1) expect(state.error).toBe(error);
      else expect(state.value?.response).toBe(script[1]);
    });

    it('does not retry a POST refused after a redirect, or where the client cannot tell (unknown)', async () => {
      for (const redirected of [true, undefined]) {
        const error = undici('ECONNREFUSED');
        const { sends, finish } = setup([fail(error), res(200)], {
          method: 'POST',
          ...(redirected === undefined ? {} : { redirected }),
        });
        expect((await finish()).error).toBe(error);
        expect(sends).toHaveLength(1);
      }
    });

    it('retries an unknown-phase failure of a keyed POST', async () => {
      const { sends, finish } = setup([fail(undici('ECONNRESET')), res(200)], {
        method: 'POST',
        options: { idempotencyKey: true },
      });
      const state = await finish();
      expect(sends).toHaveLength(2);
      expect(state.value?.response.status).toBe(200);
    });

    it('rejects with RetriesExhaustedError naming method, masked URL and the last error', async () => {
      const last = undici('ECONNRESET');
      const { sends, finish } = setup([fail(undici('ECONNRESET')), fail(undici('ECONNRESET')), fail(last)]);
      const state = await finish();
      expect(sends).toHaveLength(3);
      const error = state.error as RetriesExhaustedError;
      expect(error).toBeInstanceOf(RetriesExhaustedError);
      expect(error.message).toBe(`GET ${MASKED_URL} failed after 3 attempts: fetch failed`);
      expect(error.cause).toBe(last);
      expect(error.attempts).toBe(3);
      expect(error.totalDelay).toBe(2000);
    });

    it('retries a GET whose attempt timed out, but not a POST (it may have been processed)', async () => {
      const get = setup([HANG, res(200)], { options: { timeout: 500 } });
      const got = await get.finish();
      expect(get.sends).toHaveLength(2);
      expect(get.sendTimes).toEqual([T0, T0 + 500 + 1000]);
      expect(got.value?.response.status).toBe(200);
      expect(get.sends[0]?.signal?.aborted).toBe(true);

      const post = setup([HANG, res(200)], { method: 'POST', options: { timeout: 500 } });
      const posted = await post.finish();
      expect(post.sends).toHaveLength(1);
      expect(posted.error).toBeInstanceOf(AttemptTimeoutError);
    });
  });

  describe('one-shot bodies', () => {
    it('stops with BodyNotReplayableError instead of retrying, and discards the response', async () => {
      const script = [res(503), res(200)];
      const { sends, discarded, finish } = setup(script, { replayable: false });
      const state = await finish();
      expect(sends).toHaveLength(1);
      const error = state.error as BodyNotReplayableError;
      expect(error).toBeInstanceOf(BodyNotReplayableError);
      expect(error.message).toMatch(new RegExp(`^GET ${MASKED_URL.replace(/[?*]/g, '\\$&')} needs a retry`));
      expect(error.message).not.toContain('abc');
      expect(discarded).toHaveLength(1);
      expect(discarded[0]).toBe(script[0]);
    });

    it('returns the 503 when no retry is allowed anyway (retries: 0)', async () => {
      const script = [res(503)];
      const { sends, discarded, finish } = setup(script, { replayable: false, options: { retries: 0 } });
      const state = await finish();
      expect(sends).toHaveLength(1);
      expect(state.value?.response).toBe(script[0]);
      expect(state.value?.info.outcome).toBe('exhausted');
      expect(discarded).toEqual([]);
    });

    it('succeeds on the first attempt as usual', async () => {
      const { finish } = setup([res(200)], { replayable: false });
      expect((await finish()).value?.response.status).toBe(200);
    });
  });

  describe('server hints', () => {
    it('waits at least the Retry-After seconds before the next attempt, and says so', async () => {
      const events: RetrylineEvent[] = [];
      const { sendTimes, finish } = setup([res(503, { 'Retry-After': '5' }), res(200)], {
        options: { onEvent: (event) => events.push(event) },
      });
      const state = await finish();
      const waited = (sendTimes[1] ?? 0) - (sendTimes[0] ?? 0);
      expect(waited).toBeGreaterThanOrEqual(5000);
      expect(waited).toBeLessThanOrEqual(5500); // spread ≤ min(5000/10, 1000)
      expect(state.value?.info.delays).toEqual([{ retry: 1, delay: waited, reason: 'retry-after' }]);
      expect(events.find((e) => e.type === 'retry-scheduled')).toMatchObject({
        reason: 'retry-after',
        delay: waited,
        hint: { source: 'retry-after', delay: 5000 },
      });
    });

    it('waits at least until the Retry-After date before the second attempt', async () => {
      const start = Date.UTC(2025, 0, 1, 0, 0, 0);
      const { sendTimes, finish } = setup(
        [res(503, { 'Retry-After': 'Wed, 01 Jan 2025 00:00:08 GMT' }), res(200)],
        {
          start,
        },
      );
      await finish();
      expect(sendTimes[0]).toBe(start);
      expect(sendTimes[1]).toBeGreaterThanOrEqual(start + 8000);
      expect(sendTimes[1]).toBeLessThanOrEqual(start + 8800);
    });

    it("waits for a RateLimit reset, with reason 'rate-limit-reset'", async () => {
      const { sendTimes, finish } = setup([res(429, { RateLimit: '"default";r=0;t=3' }), res(200)]);
      const state = await finish();
      expect((sendTimes[1] ?? 0) - (sendTimes[0] ?? 0)).toBeGreaterThanOrEqual(3000);
      expect(state.value?.info.delays[0]?.reason).toBe('rate-limit-reset');
    });

    it('retries a 413 only when it carries a hint', async () => {
      const hinted = setup([res(413, { 'Retry-After': '1' }), res(200)]);
      expect((await hinted.finish()).value?.response.status).toBe(200);
      expect(hinted.sends).toHaveLength(2);
      const bare = setup([res(413), res(200)]);
      expect((await bare.finish()).value?.info.outcome).toBe('not-retryable');
      expect(bare.sends).toHaveLength(1);
    });

    it('stops at once when asked to wait an hour: the 503 handed back as it came, retryAt in its info', async () => {
      const events: RetrylineEvent[] = [];
      const script = [res(503, { 'Retry-After': '3600' }), res(200)];
      const { sends, discarded, finish, clock } = setup(script, {
        options: { onEvent: (event) => events.push(event) },
      });
      const state = await finish();
      expect(state.error).toBeUndefined();
      expect(sends).toHaveLength(1);
      // The response itself, never freed: the caller reads it as the client gives it.
      expect(state.value?.response).toBe(script[0]);
      expect(discarded).toEqual([]);
      expect(state.value?.info).toMatchObject({
        attempts: 1,
        totalDelay: 0,
        delays: [],
        outcome: 'retry-after-too-long',
        stoppedBy: 'retry-after-too-long',
        retryAt: T0 + 3_600_000,
      });
      expect(clock.now()).toBe(T0);
      // request-end still says why, with the error that would have said it.
      expect(events.at(-1)).toMatchObject({
        type: 'request-end',
        outcome: 'retry-after-too-long',
        attempts: 1,
        status: 503,
        error: {
          name: 'RetryAfterTooLongError',
          message: `GET ${MASKED_URL} stopped after 1 attempt: the server asked to wait 3600000 ms (retry-after), more than maxRetryAfter (60000 ms): 503 Service Unavailable`,
        },
      });
    });

    it('stops at once when the hint passes the deadline: the 503 handed back, retryAt in its info', async () => {
      const events: RetrylineEvent[] = [];
      const script = [res(503, { 'Retry-After': '30' })];
      const { discarded, finish } = setup(script, {
        options: { deadline: 10_000, onEvent: (event) => events.push(event) },
      });
      const state = await finish();
      expect(state.error).toBeUndefined();
      expect(state.value?.response).toBe(script[0]);
      expect(discarded).toEqual([]);
      expect(state.value?.info).toMatchObject({
        attempts: 1,
        outcome: 'retry-after-too-long',
        stoppedBy: 'retry-after-too-long',
        retryAt: T0 + 30_000,
      });
      // Stopped at once (the clock runs on to the deadline that still bounds the body handed back).
      const end = events.at(-1) as { type: string; error?: { name: string; message: string } };
      expect(end).toMatchObject({
        type: 'request-end',
        t: T0,
        duration: 0,
        outcome: 'retry-after-too-long',
        status: 503,
      });
      expect(end.error?.name).toBe('RetryAfterTooLongError');
      expect(end.error?.message).toContain('more than the remaining 10000 ms before its deadline');
    });
  });

  describe('what stops the retries after a response never changes the shape of the result', () => {
    it('retries run out: the last 503 handed back, stoppedBy exhausted', async () => {
      const script = [res(503), res(503), res(503)];
      const { sends, discarded, finish } = setup(script, { options: { retries: 2 } });
      const state = await finish();
      expect(sends).toHaveLength(3);
      expect(state.value?.response).toBe(script[2]);
      expect(discarded).toEqual([script[0], script[1]]);
      expect(state.value?.info).toMatchObject({ attempts: 3, outcome: 'exhausted', stoppedBy: 'exhausted' });
      expect(state.value?.info.retryAt).toBeUndefined();
    });

    it('a spent retry budget: the 503 handed back, stoppedBy budget', async () => {
      const events: RetrylineEvent[] = [];
      const script = [res(503), res(200)];
      const { sends, discarded, finish, clock } = setup(script, {
        options: {
          budget: retryBudget({ ratio: 0, minPerSecond: 0 }),
          onEvent: (event) => events.push(event),
        },
      });
      const state = await finish();
      expect(state.error).toBeUndefined();
      expect(sends).toHaveLength(1);
      expect(state.value?.response).toBe(script[0]);
      expect(discarded).toEqual([]);
      expect(state.value?.info).toMatchObject({
        attempts: 1,
        totalDelay: 0,
        outcome: 'budget-exhausted',
        stoppedBy: 'budget',
      });
      expect(state.value?.info.retryAt).toBeUndefined();
      expect(clock.now()).toBe(T0);
      expect(events.at(-1)).toMatchObject({
        type: 'request-end',
        outcome: 'budget-exhausted',
        status: 503,
        error: { name: 'RetryBudgetExhaustedError' },
      });
    });

    it('a deadline with no room for the next wait: the 503 handed back, stoppedBy deadline', async () => {
      const events: RetrylineEvent[] = [];
      const script = [res(503), res(200)];
      // A 1 s backoff, a 500 ms deadline: the wait is not started.
      const { sends, discarded, finish } = setup(script, {
        options: { deadline: 500, onEvent: (event) => events.push(event) },
      });
      const state = await finish();
      expect(state.error).toBeUndefined();
      expect(sends).toHaveLength(1);
      expect(state.value?.response).toBe(script[0]);
      expect(discarded).toEqual([]);
      expect(state.value?.info).toMatchObject({
        attempts: 1,
        totalDelay: 0,
        delays: [],
        outcome: 'deadline',
        stoppedBy: 'deadline',
      });
      // Stopped at once (the clock runs on to the deadline that still bounds the body handed back).
      expect(events.at(-1)).toMatchObject({
        type: 'request-end',
        t: T0,
        duration: 0,
        outcome: 'deadline',
        status: 503,
        error: { name: 'DeadlineExceededError' },
      });
    });

    it('after a transport failure nothing is handed back: a spent budget still rejects with its error', async () => {
      const { sends, finish } = setup([fail(undici('ECONNRESET')), res(200)], {
        options: { budget: retryBudget({ ratio: 0, minPerSecond: 0 }) },
      });
      const state = await finish();
      expect(sends).toHaveLength(1);
      expect(state.value).toBeUndefined();
      expect((state.error as Error).name).toBe('RetryBudgetExhaustedError');
      expect(retryInfoOf(state.error)).toMatchObject({
        attempts: 1,
        outcome: 'budget-exhausted',
        stoppedBy: 'budget',
      });
    });
  });

  describe('retryOn', () => {
    it('replaces the retryable statuses with a list', async () => {
      const teapot = setup([res(418), res(200)], { options: { retryOn: { statuses: [418] } } });
      expect((await teapot.finish()).value?.response.status).toBe(200);
      expect(teapot.sends).toHaveLength(2);

      const unavailable = setup([res(503), res(200)], { options: { retryOn: { statuses: [418] } } });
      expect((await unavailable.finish()).value?.info.outcome).toBe('not-retryable');
      expect(unavailable.sends).toHaveLength(1);
    });

    it('replaces the idempotent methods with a list', async () => {
      const post = setup([res(503), res(200)], {
        method: 'POST',
        options: { retryOn: { methods: ['post'] } },
      });
      expect((await post.finish()).value?.response.status).toBe(200);
      expect(post.sends).toHaveLength(2);

      const get = setup([res(503), res(200)], { method: 'GET', options: { retryOn: { methods: ['POST'] } } });
      expect((await get.finish()).value?.info.outcome).toBe('not-retryable');
      expect(get.sends).toHaveLength(1);
    });

    it("lets a predicate decide, seeing Retryline's own verdict in outcome.retryable", async () => {
      const seen: HttpOutcome[] = [];
      const script = [res(425), res(503), fail(undici('ECONNRESET')), res(404)];
      const { sends, finish } = setup(script, {
        options: {
          retries: 5,
          retryOn: (outcome) => {
            seen.push(outcome);
            return outcome.retryable || outcome.status === 425;
          },
        },
      });
      const state = await finish();
      expect(sends).toHaveLength(4);
      expect(state.value?.response).toBe(script[3]);
      expect(state.value?.info.outcome).toBe('not-retryable');
      const common = { method: 'GET', url: URL_, keyed: false, idempotent: true, hinted: false };
      // A response's own headers are there too, for a provider's retry headers.
      const headersOf = (i: number) => (script[i] as FakeResponse).headers;
      expect(seen).toEqual([
        { ...common, attempt: 1, phase: 'response', status: 425, headers: headersOf(0), retryable: false },
        { ...common, attempt: 2, phase: 'response', status: 503, headers: headersOf(1), retryable: true },
        {
          ...common,
          attempt: 3,
          phase: 'unknown',
          code: 'ECONNRESET',
          error: expect.any(TypeError),
          retryable: true,
        },
        { ...common, attempt: 4, phase: 'response', status: 404, headers: headersOf(3), retryable: false },
      ]);
      expect(seen[0]?.headers).toBe(headersOf(0));
    });

    it('reads a wait from the `hint` option first, held to maxRetryAfter like any server hint', async () => {
      const ms = ({ headers }: { headers: Headers }) => {
        const value = headers.get('retry-after-ms');
        return value === null ? undefined : Number(value);
      };
      const hint = ms as unknown as NonNullable<HttpRetryOptions['hint']>;
      const first = setup([res(503, { 'retry-after-ms': '2500', 'retry-after': '9' }), res(200)], {
        options: { hint },
      });
      await first.finish();
      // A server's wait, plus up to a tenth of it so clients told the same wait spread out.
      const waited = (times: number[]) => (times[1] as number) - (times[0] as number);
      expect(waited(first.sendTimes)).toBeGreaterThanOrEqual(2500);
      expect(waited(first.sendTimes)).toBeLessThanOrEqual(2750);
      // Nothing read (or nothing usable): the standard headers, then the backoff.
      for (const value of [undefined, 'soon', '-5']) {
        const headers: Record<string, string> = { 'retry-after': '9' };
        if (value !== undefined) headers['retry-after-ms'] = value;
        const fallback = setup([res(503, headers), res(200)], { options: { hint } });
        await fallback.finish();
        expect(waited(fallback.sendTimes)).toBeGreaterThanOrEqual(9000);
        expect(waited(fallback.sendTimes)).toBeLessThanOrEqual(9900);
      }
      const long = setup([res(503, { 'retry-after-ms': '120000' }), res(200)], {
        options: { hint, maxRetryAfter: 60_000 },
      });
      // Handed back as it came, the wait refused: the 503 and its info say why.
      expect((await long.finish()).value?.info).toMatchObject({
        stoppedBy: 'retry-after-too-long',
        retryAt: T0 + 120_000,
      });
      expect(long.sends).toHaveLength(1);
    });

    it('stops at once when the predicate says no, and rejects with what it throws', async () => {
      const no = setup([res(503), res(200)], { options: { retryOn: () => false } });
      expect((await no.finish()).value?.info.outcome).toBe('not-retryable');
      expect(no.sends).toHaveLength(1);

      const broken = new Error('predicate bug');
      const script = [res(503), res(200)];
      const throwing = setup(script, {
        options: {
          retryOn: () => {
            throw broken;
          },
        },
      });
      expect((await throwing.finish()).error).toBe(broken);
      expect(throwing.sends).toHaveLength(1);
      expect(throwing.discarded).toEqual([script[0]]);
    });
  });

  it('tells onRetry the status of a response, and the error of a transport failure', async () => {
    const calls: HttpRetryEvent[] = [];
    const reset = undici('ECONNRESET');
    const { finish } = setup([res(503), fail(reset), res(200)], {
      options: { requestId: 'req-9', onRetry: (event) => void calls.push(event) },
    });
    await finish();
    expect(calls).toEqual([
      {
        attempt: 1,
        nextAttempt: 2,
        delay: 1000,
        reason: 'backoff',
        error: undefined,
        status: 503,
        requestId: 'req-9',
      },
      { attempt: 2, nextAttempt: 3, delay: 1000, reason: 'backoff', error: reset, requestId: 'req-9' },
    ]);
    expect('status' in (calls[1] ?? {})).toBe(false);
  });

  it('rejects at once with signal.reason when aborted during a wait', async () => {
    const controller = new AbortController();
    const script = [res(503), res(200)];
    const { sends, run, clock } = setup(script, {
      options: { signal: controller.signal, backoff: { strategy: 'constant', base: 60_000 } },
    });
    await clock.advance(1000);
    const reason = new Error('navigated away');
    controller.abort(reason);
    await run.done;
    expect(run.state.error).toBe(reason);
    expect(sends).toHaveLength(1);
    expect(clock.pending()).toBe(0);
  });

  it.each([
    ['an async retryOn', { retryOn: () => new Promise<boolean>(() => {}) }],
    ['an async onRetry', { onRetry: () => new Promise<void>(() => {}) }],
  ])('rejects at once with signal.reason when aborted while %s has not settled', async (_name, hook) => {
    const controller = new AbortController();
    const { sends, run, discarded } = setup([res(503), res(200)], {
      options: { signal: controller.signal, ...hook },
    });
    // The 503 is in and the hook is still running: the request must not wait for it.
    await new Promise((resolve) => setImmediate(resolve));
    expect(run.state.settled).toBe(false);
    const reason = new Error('navigated away');
    controller.abort(reason);
    await new Promise((resolve) => setImmediate(resolve));
    expect(run.state.settled).toBe(true);
    expect(run.state.error).toBe(reason);
    expect(sends).toHaveLength(1);
    // The 503 judged when the abort came is freed, never returned (retryOn), or was already (onRetry).
    expect(discarded).toHaveLength(1);
  });

  it('emits the events of one retried request in order, URL masked and headers redacted', async () => {
    const events: RetrylineEvent[] = [];
    const { finish } = setup(
      [
        res(503, { 'Set-Cookie': 'session=s3cr3t', 'Content-Type': 'text/plain', 'X-Api-Key': 'echo' }),
        res(200),
      ],
      {
        url: 'https://user:hunter2@api.example/items?token=abc&page=2#top',
        headers: { Authorization: 'Bearer t0k3n', 'X-Api-Key': 'key-1', Accept: 'application/json' },
        options: {
          requestId: 'req-1',
          redactHeaders: ['X-API-KEY'],
          attemptHeader: 'Retry-Attempt',
          store: memoryStore(),
          onEvent: (event) => events.push(event),
        },
      },
    );
    await finish();
    const envelope = { v: 1, requestId: 'req-1' };
    const sent = (attempt: number) => ({
      authorization: '[redacted]',
      'x-api-key': '[redacted]',
      accept: '[redacted]',
      'retry-attempt': `attempt=${attempt}; max=3`,
    });
    expect(events).toEqual([
      { ...envelope, type: 'request-start', t: T0, client: 'test', method: 'GET', url: MASKED_URL },
      { ...envelope, type: 'attempt-start', t: T0, attempt: 1, headers: sent(1) },
      {
        ...envelope,
        type: 'attempt-end',
        t: T0,
        attempt: 1,
        outcome: 'retry',
        duration: 0,
        phase: 'response',
        status: 503,
        headers: { 'set-cookie': '[redacted]', 'content-type': 'text/plain', 'x-api-key': '[redacted]' },
      },
      // The retry budget (on by default) is asked before the wait: 100 floor retries + 10% of 1 request, 1 spent.
      { ...envelope, type: 'budget', t: T0, key: 'https://api.example', remaining: 99, allowed: true },
      {
        ...envelope,
        type: 'retry-scheduled',
        t: T0,
        attempt: 2,
        retry: 1,
        delay: 1000,
        reason: 'backoff',
        strategy: 'constant',
        jitter: 'none',
        raw: 1000,
        capped: 1000,
      },
      { ...envelope, type: 'attempt-start', t: T0 + 1000, attempt: 2, headers: sent(2) },
      {
        ...envelope,
        type: 'attempt-end',
        t: T0 + 1000,
        attempt: 2,
        outcome: 'success',
        duration: 0,
        phase: 'response',
        status: 200,
        headers: {},
      },
      {
        ...envelope,
        type: 'request-end',
        t: T0 + 1000,
        outcome: 'success',
        attempts: 2,
        totalDelay: 1000,
        duration: 1000,
        status: 200,
      },
    ]);
    const text = JSON.stringify(events);
    expect(JSON.parse(text)).toEqual(events);
    for (const secret of ['hunter2', 'abc', 'Bearer', 't0k3n', 'key-1', 's3cr3t', 'echo', 'top']) {
      expect(text).not.toContain(secret);
    }
  });

  it('reports a transport failure in attempt-end with its phase and code', async () => {
    const events: RetrylineEvent[] = [];
    const { finish } = setup([fail(undici('ECONNREFUSED')), res(200)], {
      method: 'POST',
      redirected: false,
      options: { onEvent: (event) => events.push(event) },
    });
    await finish();
    expect(events.find((e) => e.type === 'attempt-end')).toMatchObject({
      attempt: 1,
      outcome: 'error',
      phase: 'not-sent',
      code: 'ECONNREFUSED',
      error: { name: 'TypeError', message: 'fetch failed' },
    });
  });

  it.each([
    [{ retryOn: 5 }, 'retryOn', 'Expected retryOn to be an object or a function, got 5'],
    [{ retryOn: [503] }, 'retryOn', 'Expected retryOn to be an object or a function, got an array'],
    [
      { redactHeaders: 'x' },
      'redactHeaders',
      "Expected redactHeaders to be an array of header names, got 'x'",
    ],
    [
      { requestIdHeader: 'bad header' },
      'requestIdHeader',
      "Expected requestIdHeader to be a header name, got 'bad header'",
    ],
    [
      { idempotencyKey: 'yes' },
      'idempotencyKey',
      "Expected idempotencyKey to be true, a function or an object, got 'yes'",
    ],
    [{ retries: -1 }, 'retries', 'Expected retries to be a non-negative integer or Infinity, got -1'],
  ])(
    'rejects invalid options %j with InvalidOptionsError, sending nothing',
    async (options, option, message) => {
      const { sends, finish } = setup([res(200)], { options: options as HttpRetryOptions });
      const error = (await finish()).error as InvalidOptionsError;
      expect(error).toBeInstanceOf(InvalidOptionsError);
      expect(error.message).toBe(message);
      expect(error.option).toBe(option);
      expect(sends).toHaveLength(0);
    },
  );
});

describe('resolveHttpOptions', () => {
  it('fills in the defaults', () => {
    const resolved = resolveHttpOptions(undefined);
    expect(resolved.policy.retries).toBe(2);
    expect([...resolved.rules.statuses]).toEqual([408, 429, 500, 502, 503, 504]);
    expect([...resolved.rules.methods].sort()).toEqual(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PUT', 'TRACE']);
    expect(resolved.predicate).toBeUndefined();
    expect(resolved.key).toBeUndefined();
    expect(resolved.requestIdHeader).toBeUndefined();
    expect(resolved.attemptHeader).toBeUndefined();
    expect(resolved.deadlineHeader).toBeUndefined();
    // Redaction is an allowlist: a name on it keeps its value, any other is redacted.
    expect(resolved.redacted('content-type')).toBe(false);
    expect(resolved.redacted('accept')).toBe(true);
    expect(resolved.onRetry).toBeUndefined();
    expect(resolved.onEvent).toBeUndefined();
  });

  it('upper-cases listed methods, lower-cases redacted names and keeps a predicate', () => {
    const predicate = () => true;
    expect(resolveHttpOptions({ retryOn: { methods: ['post', 'Get'] } }).rules.methods).toEqual(
      new Set(['POST', 'GET']),
    );
    expect(resolveHttpOptions({ retryOn: { statuses: [418] } }).rules.statuses).toEqual(new Set([418]));
    expect(resolveHttpOptions({ retryOn: predicate }).predicate).toBe(predicate);
    expect(resolveHttpOptions({ redactHeaders: ['Retry-After'] }).redacted('retry-after')).toBe(true);
    expect(resolveHttpOptions({ exposeHeaders: ['Accept'] }).redacted('accept')).toBe(false);
    expect(resolveHttpOptions({ idempotencyKey: true }).key?.header).toBe('Idempotency-Key');
  });

  it('ignores a __proto__ key', () => {
    const options = JSON.parse('{"__proto__": {"retryOn": 5, "idempotencyKey": true}}') as HttpRetryOptions;
    const resolved = resolveHttpOptions(options);
    expect(resolved.key).toBeUndefined();
    expect(resolved.predicate).toBeUndefined();
  });

  it.each([
    [
      { retryOn: { statuses: [99] } },
      'retryOn.statuses',
      'Expected retryOn.statuses to be an array of HTTP status codes, got an array',
    ],
    [
      { retryOn: { statuses: 503 } },
      'retryOn.statuses',
      'Expected retryOn.statuses to be an array of HTTP status codes, got 503',
    ],
    [
      { retryOn: { methods: [1] } },
      'retryOn.methods',
      'Expected retryOn.methods to be an array of method names, got an array',
    ],
    [{ retryOn: null }, 'retryOn', 'Expected retryOn to be an object or a function, got null'],
    [
      { redactHeaders: [1] },
      'redactHeaders',
      'Expected redactHeaders to be an array of header names, got an array',
    ],
    [{ attemptHeader: 'a b' }, 'attemptHeader', "Expected attemptHeader to be a header name, got 'a b'"],
    [{ deadlineHeader: 5 }, 'deadlineHeader', 'Expected deadlineHeader to be a header name, got 5'],
    [{ signal: {} }, 'signal', 'Expected signal to be an AbortSignal, got an object'],
    [{ requestId: '' }, 'requestId', "Expected requestId to be a non-empty string, got ''"],
    [{ onRetry: 'log' }, 'onRetry', "Expected onRetry to be a function, got 'log'"],
    [{ onEvent: 1 }, 'onEvent', 'Expected onEvent to be a function, got 1'],
    ['fast', 'options', "Expected options to be an object, got 'fast'"],
  ])('rejects %j, naming %s', (options, option, message) => {
    let error: unknown;
    try {
      resolveHttpOptions(options as HttpRetryOptions);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect((error as InvalidOptionsError).message).toBe(message);
    expect((error as InvalidOptionsError).option).toBe(option);
  });
});

describe('prepareHttpOptions', () => {
  it("takes a request's own id, signal or listener over the client's options without resolving them again", async () => {
    const prepared = prepareHttpOptions({ retries: 0, store: memoryStore() });
    const options = prepared.with({ requestId: 'req-7' });
    expect(options).not.toBe(prepared.with(undefined));
    let sends = 0;
    const { info } = await runHttpRequest({
      client: 'test',
      method: 'GET',
      url: URL_,
      headers: undefined,
      replayable: true,
      options,
      send: () => {
        sends++;
        return Promise.resolve(res(sends === 1 ? 503 : 200));
      },
      inspect: (response) => response,
      discard: () => {},
    });
    // Resolved again from scratch, `retries: 0` would be lost and the 503 retried.
    expect(sends).toBe(1);
    expect(revealed(info)).toMatchObject({ requestId: 'req-7', attempts: 1, outcome: 'exhausted' });
  });
});

describe('the default guard key', () => {
  it.each([
    ['https://api.example/items?token=abc', 'https://api.example'],
    ['https://user:pw@api.example:8443/x', 'https://api.example:8443'],
    ['/flaky?token=abc#frag', '/flaky'],
    ['https://user:p@SECRET@api.example/x', 'https://api.example'],
    [' https://user:SECRET@api.example/x', 'https://api.example'],
    ['https:/user:SECRET@api.example/x', 'https://api.example'],
    ['//user:SECRET@api.example/x?k=v', '//api.example/x'],
  ])('%s → %s (never a query or credentials)', (url, key) => {
    expect(originOf(url)).toBe(key);
  });

  it("is the page's origin for a relative URL in a browser", () => {
    vi.stubGlobal('location', { origin: 'https://shop.example' });
    try {
      expect(originOf('/api/cart?session=s3cret')).toBe('https://shop.example');
    } finally {
      vi.unstubAllGlobals();
    }
  });
});

describe('a slow onRetry and the deadline', () => {
  it('stops before a wait the hook left no time for: no delay recorded, the 503 reported', async () => {
    const events: RetrylineEvent[] = [];
    const { clock, sends, finish } = setup([res(503), res(200)], {
      options: {
        deadline: 1500,
        onEvent: (event) => events.push(event),
        // The hook runs once setup() has returned the clock.
        onRetry: () => clockOf.sleep(800),
      },
    });
    const clockOf = clock;
    const state = await finish();
    expect(sends).toHaveLength(1);
    // The 503 is handed back as it came; why no retry followed is in its retry info.
    expect(state.error).toBeUndefined();
    expect(state.value?.response.status).toBe(503);
    expect(state.value?.info).toMatchObject({
      attempts: 1,
      delays: [],
      outcome: 'deadline',
      stoppedBy: 'deadline',
    });
    const end = events.at(-1);
    expect(end).toMatchObject({ type: 'request-end', outcome: 'deadline', status: 503 });
    expect((end as { error?: { name: string } }).error?.name).toBe('DeadlineExceededError');
  });
});
