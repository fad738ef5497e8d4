import { attachRetry, getRetryInfo as axiosRetryInfo } from '@retryline/axios';
import { type Clock, seededRandom, virtualClock } from '@retryline/core';
import { GATE_DEFAULTS } from '@retryline/core/store';
import { getRetryInfo as fetchRetryInfo, retryFetch } from '@retryline/fetch';
import { getRetryInfo as kyRetryInfo, retryline } from '@retryline/ky';
import axios from 'axios';
import ky, { HTTPError } from 'ky';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FaultServer, startFaultServer } from '../support/fault-server';
import { observe } from '../support/observe';
import { settle } from '../support/settle';

/**
 * A server in outage, 60 callers at once, each adapter with its
 * DEFAULT policy (retries 2, exponential from 100 ms with full jitter, the default retry budget,
 * the recovery gate, maxRetryAfter 60 s). Whatever stops a request's retries — its retries ran out,
 * the gate gave up on an origin that kept failing, the retry budget refused one, the server asked
 * for too long a wait — every caller gets its client's own result for
 * the last response, and `getRetryInfo(result)` says which it was.
 *
 * The only options given are an injected clock and random source, as core lets every caller do:
 * waits run on a virtual clock, so no real time is spent on backoff and the whole outage
 * fits in one budget window.
 */

const CALLERS = 60;
// Default policy: `retries: 2`, so at most 3 attempts per request.
const MAX_ATTEMPTS = 3;
// Default retry budget: retries ≤ ratio 0.1 × requests + a floor of 10/s over a 10 s
// window. All 60 first attempts are counted before any retry is asked for (they are all sent before
// the first answer can arrive), and the outage plays out in well under a second of virtual time:
// 0.1 × 60 + 10 × 10 = 106 retries granted out of the 120 the policy would make.
const BUDGET_RETRIES = 0.1 * CALLERS + 10 * 10;
const RETRY_AFTER_SECONDS = 3600;
// Midnight UTC: a whole budget bucket starts here, so the outage never straddles a window edge.
const T0 = Date.UTC(2026, 0, 1);

/**
 * A virtual clock that also knows when each of its pending sleeps falls due, so time is moved only
 * while every request still running is asleep, and then straight to the next wake-up. Real time
 * passes only for the sockets; virtual time never races them (a request whose answer is still on
 * the wire does not see the clock jump past its own waits).
 */
function steppedClock(start: number) {
  const clock = virtualClock(start);
  const due = new Map<object, number>();
  const stepped: Clock = {
    now: () => clock.now(),
    sleep(ms, signal) {
      const token = {};
      due.set(token, clock.now() + Math.max(0, ms));
      return clock.sleep(ms, signal).finally(() => due.delete(token));
    },
  };
  /** Settles every one of `work`, advancing the clock whenever all that are still running sleep. */
  async function drive<T>(work: readonly Promise<T>[]): Promise<void> {
    const watched = work.map((each) => observe(each));
    for (;;) {
      const running = watched.filter((each) => !each.state.settled).length;
      if (running === 0) return;
      if (due.size > 0 && due.size === running) {
        await clock.advance(Math.min(...due.values()) - clock.now());
      } else {
        // Someone's attempt is on the wire: give the sockets a turn.
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    }
  }
  return { clock: stepped, drive, pending: () => due.size };
}

/** The part of getRetryInfo's answer these tests read, the same through every adapter. */
interface RetryInfoView {
  readonly attempts?: number;
  readonly stoppedBy?: string;
  readonly retryAt?: number;
}

/** What a caller got, read through its client's own conventions, and what getRetryInfo says of it. */
interface Read {
  readonly status: number;
  readonly body: string;
  readonly info: RetryInfoView | undefined;
}

interface Adapter {
  readonly name: string;
  readonly clock: ReturnType<typeof steppedClock>;
  /** One GET, as an application calls it through its one client. */
  get(url: string): Promise<unknown>;
  /**
   * Asserts that `result` is the client's own result for an HTTP error status (fetch resolves the
   * Response; axios rejects with its AxiosError holding the response; ky throws its HTTPError), and
   * reads it. A Retryline error in its place (a budget refusal rejecting with
   * RetryBudgetExhaustedError, say) fails here.
   */
  read(result: { value: unknown; error: unknown }): Promise<Read>;
  /** The same adapter, a client of its own made with `gate: false`. */
  withoutGate(): Adapter;
}

// One client per adapter, made once, as the docs say to (a client owns its budget).
function fetchAdapter(extra: { gate?: false } = {}): Adapter {
  const clock = steppedClock(T0);
  const client = retryFetch(fetch, { clock: clock.clock, random: seededRandom('fetch'), ...extra });
  return {
    name: 'fetch',
    withoutGate: () => fetchAdapter({ gate: false }),
    clock,
    get: (url) => client(url),
    async read({ value, error }) {
      expect(error, 'fetch resolves the Response for an HTTP status').toBeUndefined();
      expect(value).toBeInstanceOf(Response);
      const response = value as Response;
      return { status: response.status, body: await response.text(), info: fetchRetryInfo(response) };
    },
  };
}

function axiosAdapter(extra: { gate?: false } = {}): Adapter {
  const clock = steppedClock(T0);
  const instance = axios.create();
  attachRetry(instance, { clock: clock.clock, random: seededRandom('axios'), ...extra });
  return {
    name: 'axios',
    withoutGate: () => axiosAdapter({ gate: false }),
    clock,
    get: (url) => instance.get(url),
    async read({ value, error }) {
      expect(value, 'axios rejects for a status that fails validateStatus').toBeUndefined();
      expect(axios.isAxiosError(error)).toBe(true);
      if (!axios.isAxiosError(error)) throw error;
      expect(error.response, 'the AxiosError holds the last response').toBeDefined();
      const status = error.response?.status ?? 0;
      // axios's own code for a status that fails validateStatus (4xx, 5xx); a Retryline refusal
      // would come as ERR_RETRY_BUDGET or the like, with no response.
      expect(error.code).toBe(
        status >= 500 ? axios.AxiosError.ERR_BAD_RESPONSE : axios.AxiosError.ERR_BAD_REQUEST,
      );
      return {
        status,
        body: String(error.response?.data),
        info: axiosRetryInfo(error),
      };
    },
  };
}

function kyAdapter(extra: { gate?: false } = {}): Adapter {
  const clock = steppedClock(T0);
  const api = ky.create(retryline({ clock: clock.clock, random: seededRandom('ky'), ...extra }));
  return {
    name: 'ky',
    withoutGate: () => kyAdapter({ gate: false }),
    clock,
    get: (url) => api.get(url),
    async read({ value, error }) {
      expect(value, 'ky throws for a status that is not ok').toBeUndefined();
      expect(error).toBeInstanceOf(HTTPError);
      const { response } = error as HTTPError;
      return { status: response.status, body: await response.text(), info: kyRetryInfo(error) };
    },
  };
}

const adapters: readonly Adapter[] = [fetchAdapter(), axiosAdapter(), kyAdapter()];

let server: FaultServer;
beforeEach(async () => {
  server = await startFaultServer();
});
afterEach(async () => {
  await server.close();
});

/** `CALLERS` concurrent GETs of `path`, each settled as its caller sees it, read by the adapter. */
async function outage(adapter: Adapter, path: string): Promise<Read[]> {
  const calls = Array.from({ length: CALLERS }, () => settle(adapter.get(`${server.url}${path}`)));
  await adapter.clock.drive(calls);
  const reads: Read[] = [];
  for (const result of await Promise.all(calls)) reads.push(await adapter.read(result));
  // Nothing left waiting on the clock: every request has ended.
  expect(adapter.clock.pending()).toBe(0);
  return reads;
}

describe.each(adapters)('an outage through $name with default options', (adapter) => {
  it('gives all 60 callers the 503 as the client gives it; the recovery gate parks their retries and sends one probe at a time', async () => {
    server.script('/outage', [{ status: 503, body: 'down for maintenance' }]);
    const before = adapter.clock.clock.now();

    const reads = await outage(adapter, '/outage');

    const elapsed = adapter.clock.clock.now() - before;
    for (const read of reads) {
      expect(read.status).toBe(503);
      expect(read.body).toBe('down for maintenance');
      expect(read.info, 'getRetryInfo answers for every result').toBeDefined();
    }
    const infos = reads.map((read) => read.info as RetryInfoView);
    const byGate = infos.filter((info) => info.stoppedBy === 'gate');
    const exhausted = infos.filter((info) => info.stoppedBy === 'exhausted');
    // The origin never recovers: a parked retry gives up after the gate's maxParkMs; a retry that
    // went as a probe and failed, with no retry left, ran out of retries. The budget is never reached.
    expect(byGate.length, 'stopped by the gate').toBeGreaterThan(CALLERS / 2);
    expect(byGate.length + exhausted.length).toBe(CALLERS);
    for (const info of exhausted) expect(info.attempts).toBe(MAX_ATTEMPTS);

    // What the callers were told adds up to what the server saw.
    const attempts = infos.reduce((sum, info) => sum + (info.attempts ?? 0), 0);
    const seen = server.requests('/outage').length;
    expect(attempts).toBe(seen);
    // One probe at a time, no sooner than half a probe interval after the last failed one, for as
    // long as retries stay parked (a retry parks at most maxParkMs, and a request's two retries at
    // most twice that): far fewer retries than the budget's 106 would have let through.
    const { probeMs, maxParkMs } = GATE_DEFAULTS;
    const retries = seen - CALLERS;
    expect(retries).toBeGreaterThan(0);
    expect(retries).toBeLessThanOrEqual(1 + Math.ceil((2 * maxParkMs) / (probeMs / 2)));
    expect(retries).toBeLessThan(BUDGET_RETRIES);
    // Nobody waits past two parks and their backoffs.
    expect(elapsed).toBeLessThanOrEqual(2 * maxParkMs + 2 * 20_000);
  });

  it('without the gate (gate: false), the budget stops some and the rest run out of retries', async () => {
    server.script('/outage', [{ status: 503, body: 'down for maintenance' }]);

    const reads = await outage(adapter.withoutGate(), '/outage');

    for (const read of reads) {
      expect(read.status).toBe(503);
      expect(read.body).toBe('down for maintenance');
    }
    const infos = reads.map((read) => read.info as RetryInfoView);
    const exhausted = infos.filter((info) => info.stoppedBy === 'exhausted');
    const budget = infos.filter((info) => info.stoppedBy === 'budget');
    expect(exhausted.length + budget.length).toBe(CALLERS);
    for (const info of exhausted) expect(info.attempts).toBe(MAX_ATTEMPTS);
    for (const info of budget) expect(info.attempts).toBeLessThan(MAX_ATTEMPTS);
    const attempts = infos.reduce((sum, info) => sum + (info.attempts ?? 0), 0);
    const seen = server.requests('/outage').length;
    expect(attempts).toBe(seen);
    expect(seen - CALLERS, 'retries the server received').toBe(BUDGET_RETRIES);
    // Each refused retry ends one request; the 120 − 106 = 14 refused were second retries, as every
    // first retry was asked for (and granted) before virtual time moved.
    expect(budget.length).toBe(CALLERS * (MAX_ATTEMPTS - 1) - BUDGET_RETRIES);
  });

  it('gives all 60 callers a 429 with Retry-After: 3600 at once, with retryAt an hour on, and sends nothing more', async () => {
    server.script('/quota', [
      { status: 429, headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) }, body: 'quota spent' },
    ]);
    const before = adapter.clock.clock.now();

    const reads = await outage(adapter, '/quota');

    const after = adapter.clock.clock.now();
    for (const read of reads) {
      expect(read.status).toBe(429);
      expect(read.body).toBe('quota spent');
      expect(read.info).toMatchObject({ attempts: 1, stoppedBy: 'retry-after-too-long' });
      const retryAt = read.info?.retryAt ?? Number.NaN;
      expect(retryAt).toBeGreaterThanOrEqual(before + RETRY_AFTER_SECONDS * 1000);
      expect(retryAt).toBeLessThanOrEqual(after + RETRY_AFTER_SECONDS * 1000);
    }
    // No retry, no wait: one attempt per caller reached the server.
    expect(server.requests('/quota')).toHaveLength(CALLERS);
  });
});
