import { attachRetry, getRetryInfo as axiosRetryInfo } from '@retryline/axios';
import { type HttpRetryOptions, type RetryInfo, seededRandom, virtualClock } from '@retryline/core';
import type { ScheduledDelay } from '@retryline/core/instrument';
import { getRetryInfo as fetchRetryInfo, retryFetch } from '@retryline/fetch';
import { getRetryInfo as kyRetryInfo, retryline } from '@retryline/ky';
import axios, { CanceledError } from 'axios';
import ky from 'ky';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FaultServer, type Step, startFaultServer } from '../support/fault-server';
import { onClock, untilWaiting } from '../support/on-clock';
import { settle } from '../support/settle';
import { type Driver, drivers } from './drivers';
import { spentBudget } from './scenarios';

// getRetryInfo() gives one shape through every adapter: the same keys with the same
// types, for whatever the request ended with (a Response, an AxiosError, ky's HTTPError, the
// caller's abort). Real clients against a real loopback server; every wait on a virtual clock.

let server: FaultServer;
beforeEach(async () => {
  server = await startFaultServer();
});
afterEach(async () => {
  await server.close();
});

const T0 = Date.UTC(2026, 0, 1);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Options on a fresh virtual clock: two retries 20 ms apart, no jitter. */
function onVirtualTime(options: HttpRetryOptions = {}) {
  const clock = virtualClock(T0);
  const base: HttpRetryOptions = {
    retries: 2,
    backoff: { strategy: 'constant', base: 20 },
    jitter: 'none',
    clock,
    random: seededRandom(7),
  };
  return { clock, options: { ...base, ...options } };
}

/** An info's shape: each key with the type of its value (each delay's too), in key order. */
function shapeOf(info: RetryInfo | undefined): Record<string, unknown> | undefined {
  if (info === undefined) return undefined;
  const typed = (value: object): Record<string, unknown> =>
    Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, field]) => [key, Array.isArray(field) ? field.map(typed) : typeof field]),
    );
  return typed(info);
}

interface Row {
  readonly name: string;
  readonly steps: Step[];
  readonly options?: HttpRetryOptions;
  /** Aborts the request from `onRetry`, before its first wait. */
  readonly abort?: boolean;
  readonly info: Omit<RetryInfo, 'requestId'>;
}

const backoff = (retry: number): ScheduledDelay => ({ retry, delay: 20, reason: 'backoff' });

const rows: Row[] = [
  {
    name: 'success after a retry',
    steps: [{ status: 503 }, { status: 200, body: 'ok' }],
    info: { attempts: 2, totalDelay: 20, delays: [backoff(1)], outcome: 'success' },
  },
  {
    name: 'a 503 that ran out of retries',
    steps: [{ status: 503 }],
    info: {
      attempts: 3,
      totalDelay: 40,
      delays: [backoff(1), backoff(2)],
      outcome: 'exhausted',
      stoppedBy: 'exhausted',
    },
  },
  {
    name: 'a 503 the retry budget stopped',
    steps: [{ status: 503 }],
    options: spentBudget(),
    info: { attempts: 1, totalDelay: 0, delays: [], outcome: 'budget-exhausted', stoppedBy: 'budget' },
  },
  {
    name: 'the caller’s abort before the first wait',
    steps: [{ status: 503 }],
    abort: true,
    // The wait was scheduled, then cut short before any time passed.
    info: { attempts: 1, totalDelay: 0, delays: [backoff(1)], outcome: 'aborted', stoppedBy: 'aborted' },
  },
];

/** Runs `row` through `driver` and returns what its getRetryInfo() says of the result. */
async function infoOf(driver: Driver, row: Row, path: string): Promise<RetryInfo | undefined> {
  server.script(path, row.steps);
  const controller = row.abort ? new AbortController() : undefined;
  const { clock, options } = onVirtualTime({
    ...row.options,
    ...(controller ? { onRetry: () => controller.abort(new Error('user left the page')) } : {}),
  });
  const result = await onClock(
    clock,
    driver.send({
      method: 'GET',
      url: `${server.url}${path}`,
      options,
      ...(controller ? { signal: controller.signal } : {}),
    }),
  );
  expect(result.outcome.kind).toBe(row.abort ? 'aborted' : 'response');
  return result.info;
}

describe.each(drivers)('getRetryInfo through $name', (driver) => {
  it.each(rows)('$name: every field, each of its type', async (row) => {
    const info = await infoOf(driver, row, '/info');
    expect(info).toEqual({ requestId: expect.stringMatching(UUID), ...row.info });
    // Own properties all: spreading and JSON see every field.
    expect(JSON.parse(JSON.stringify(info))).toEqual({ ...info });
    expect(Object.keys(info ?? {}).sort()).toEqual(Object.keys({ requestId: '', ...row.info }).sort());
  });
});

describe('getRetryInfo has one shape for every adapter', () => {
  it.each(rows)('$name: the same keys and types through fetch, axios and ky', async (row) => {
    const shapes: Record<string, unknown> = {};
    for (const driver of drivers) shapes[driver.name] = shapeOf(await infoOf(driver, row, `/${driver.name}`));
    expect(shapes.fetch).toBeDefined();
    expect(shapes.axios).toEqual(shapes.fetch);
    expect(shapes.ky).toEqual(shapes.fetch);
  });
});

/** One request through each adapter whose rejection is the caller's own abort reason. */
const reasonAdapters = [
  {
    name: 'fetch',
    getRetryInfo: fetchRetryInfo,
    get: (url: string, options: HttpRetryOptions, signal: AbortSignal) =>
      retryFetch(fetch, options)(url, { signal }),
  },
  {
    // A Request's own signal is the request's alone: its first attempt is sent before the attempt
    // loop is set up (the engine's shortcut), and an abort during it ends the request there.
    name: 'fetch with a Request',
    getRetryInfo: fetchRetryInfo,
    get: (url: string, options: HttpRetryOptions, signal: AbortSignal) =>
      retryFetch(fetch, options)(new Request(url, { signal })),
  },
  {
    name: 'ky',
    getRetryInfo: kyRetryInfo,
    get: (url: string, options: HttpRetryOptions, signal: AbortSignal) =>
      ky.create(retryline(options)).get(url, { signal }),
  },
];

describe.each(reasonAdapters)('getRetryInfo(reason) through $name', ({ get, getRetryInfo }) => {
  it('answers for the one request a reason ended, and for none once a second has ended with it', async () => {
    server.script('/slow', [{ status: 503 }]);
    const { clock, options } = onVirtualTime({ backoff: { strategy: 'constant', base: 10_000 } });
    const controller = new AbortController();
    const reason = new Error('user left the page');
    const first = settle(get(`${server.url}/slow`, options, controller.signal));
    await untilWaiting(clock, 1);
    controller.abort(reason);
    expect((await first).error).toBe(reason);
    expect(getRetryInfo(reason)).toEqual({
      requestId: expect.stringMatching(UUID),
      attempts: 1,
      totalDelay: 0,
      delays: [{ retry: 1, delay: 10_000, reason: 'backoff' }],
      outcome: 'aborted',
      stoppedBy: 'aborted',
    });
    // The same signal, already aborted, ends a second request with the same reason: which one
    // would `getRetryInfo(reason)` mean? Neither.
    const second = await settle(get(`${server.url}/slow`, options, controller.signal));
    expect(second.error).toBe(reason);
    expect(getRetryInfo(reason)).toBeUndefined();
    expect(server.requests('/slow')).toHaveLength(1);
  });

  it('counts the attempt an abort cut short, with no wait', async () => {
    server.script('/stall', [{ fault: 'stall-headers' }]);
    const { options } = onVirtualTime();
    const controller = new AbortController();
    const reason = new Error('user left the page');
    const request = settle(get(`${server.url}/stall`, options, controller.signal));
    while (server.requests('/stall').length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    controller.abort(reason);
    expect((await request).error).toBe(reason);
    expect(getRetryInfo(reason)).toEqual({
      requestId: expect.stringMatching(UUID),
      attempts: 1,
      totalDelay: 0,
      delays: [],
      outcome: 'aborted',
      stoppedBy: 'aborted',
    });
  });

  it('answers for neither of two requests one abort ended together', async () => {
    server.script('/slow', [{ status: 503 }]);
    const { clock, options } = onVirtualTime({ backoff: { strategy: 'constant', base: 10_000 } });
    const controller = new AbortController();
    const reason = new Error('user left the page');
    const both = Promise.all([
      settle(get(`${server.url}/slow`, options, controller.signal)),
      settle(get(`${server.url}/slow`, options, controller.signal)),
    ]);
    await untilWaiting(clock, 2);
    controller.abort(reason);
    expect((await both).map(({ error }) => error)).toEqual([reason, reason]);
    expect(getRetryInfo(reason)).toBeUndefined();
  });
});

describe('getRetryInfo(canceledError) through axios', () => {
  it('answers for each request one abort cancelled: each CanceledError is its own request’s', async () => {
    server.script('/slow', [{ status: 503 }]);
    const { clock, options } = onVirtualTime({ backoff: { strategy: 'constant', base: 1000 } });
    const instance = axios.create({ baseURL: server.url });
    attachRetry(instance, options);
    const controller = new AbortController();
    // The first request fails twice before the abort, the second once.
    const twice = settle(instance.get('/slow', { signal: controller.signal }));
    await untilWaiting(clock, 1);
    await clock.advance(1000);
    await untilWaiting(clock, 1);
    const once = settle(instance.get('/slow', { signal: controller.signal }));
    await untilWaiting(clock, 2);
    controller.abort(new Error('user left the page'));
    const [first, second] = [(await twice).error, (await once).error];
    expect(first).toBeInstanceOf(CanceledError);
    expect(second).toBeInstanceOf(CanceledError);
    expect(axiosRetryInfo(first)).toEqual({
      requestId: expect.stringMatching(UUID),
      attempts: 2,
      totalDelay: 1000,
      delays: [
        { retry: 1, delay: 1000, reason: 'backoff' },
        { retry: 2, delay: 1000, reason: 'backoff' },
      ],
      outcome: 'aborted',
      stoppedBy: 'aborted',
    });
    expect(axiosRetryInfo(second)).toEqual({
      requestId: expect.stringMatching(UUID),
      attempts: 1,
      totalDelay: 0,
      delays: [{ retry: 1, delay: 1000, reason: 'backoff' }],
      outcome: 'aborted',
      stoppedBy: 'aborted',
    });
    expect(axiosRetryInfo(first)?.requestId).not.toBe(axiosRetryInfo(second)?.requestId);
    expect(server.requests('/slow')).toHaveLength(3);
  });
});
