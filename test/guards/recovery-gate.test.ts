/**
 * The recovery gate, through the real fetch adapter, against a server simulated on the virtual
 * clock (each answer takes 10 ms of virtual time): while the origin keeps failing, retries are
 * parked and one probe at a time goes ahead; once it answers again, parked retries are released
 * one per success; a retry is parked no longer than maxParkMs or its deadline; first attempts are
 * never held. Outcomes are counted and ordered; no real time is measured.
 */
import {
  circuitBreaker,
  InvalidOptionsError,
  isRetrylineError,
  memoryStore,
  type RetrylineEvent,
  recoveryGate,
  type Store,
  seededRandom,
  virtualClock,
} from '@retryline/core';
import {
  GATE_DEFAULTS,
  gateAdmit,
  gateInit,
  gateRecord,
  localStore,
  normalizeGate,
} from '@retryline/core/store';
import { getRetryInfo, retryFetch } from '@retryline/fetch';
import { describe, expect, it } from 'vitest';
import { clientGate } from '../../packages/core/src/guard/recovery-gate';
import { settle } from '../support/settle';

const T0 = Date.UTC(2026, 0, 1);
const URL_DOWN = 'http://origin.test/work';
const KEY = 'http://origin.test';
const ANSWER_MS = 10;

/** A server on `clock` that answers 503 until `recoverAt`, then 200; it records every attempt. */
function simulatedServer(clock: ReturnType<typeof virtualClock>, recoverAt: number) {
  const log: Array<{ t: number; retry: boolean; status: number }> = [];
  let retriesInFlight = 0;
  let mostRetriesInFlightWhileDown = 0;
  const fetchImpl = async (_input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const retry = !new Headers(init?.headers).get('x-attempt')?.startsWith('attempt=1;');
    const down = clock.now() < recoverAt;
    if (retry) retriesInFlight++;
    if (retry && down) mostRetriesInFlightWhileDown = Math.max(mostRetriesInFlightWhileDown, retriesInFlight);
    try {
      await clock.sleep(ANSWER_MS, init?.signal ?? undefined);
    } finally {
      if (retry) retriesInFlight--;
    }
    const status = clock.now() < recoverAt ? 503 : 200;
    log.push({ t: clock.now(), retry, status });
    return new Response(status === 200 ? 'ok' : 'down', { status });
  };
  return { fetchImpl, log, mostRetriesInFlightWhileDown: () => mostRetriesInFlightWhileDown };
}

function setup(recoverAt: number, options: Record<string, unknown> = {}) {
  const clock = virtualClock(T0);
  const server = simulatedServer(clock, T0 + recoverAt);
  const events: RetrylineEvent[] = [];
  const client = retryFetch(server.fetchImpl as typeof fetch, {
    clock,
    random: seededRandom(7),
    attemptHeader: 'x-attempt',
    onEvent: (event) => events.push(event),
    ...options,
  });
  return { clock, server, events, client };
}

/** Starts `count` GETs at once and runs the clock until all have settled. */
async function burst(
  client: (url: string) => Promise<Response>,
  clock: ReturnType<typeof virtualClock>,
  count: number,
) {
  const calls = Array.from({ length: count }, () => settle(client(URL_DOWN)));
  await clock.runAll();
  return Promise.all(calls);
}

describe('the recovery gate (on by default for HTTP clients)', () => {
  it('parks retries while the origin fails, sends one probe at a time, and releases them once it answers', async () => {
    const { clock, server, events, client } = setup(1_500, { retries: 3 });
    const results = await burst(client, clock, 20);

    for (const { value, error } of results) {
      expect(error).toBeUndefined();
      expect(value?.status).toBe(200);
    }
    // While the origin was down, never more than one retry was on the wire at a time.
    expect(server.mostRetriesInFlightWhileDown()).toBe(1);
    const parked = events.filter((event) => event.type === 'retry-parked');
    const released = events.filter(
      (event): event is Extract<RetrylineEvent, { type: 'retry-released' }> =>
        event.type === 'retry-released',
    );
    expect(parked.length).toBeGreaterThan(0);
    expect(released.length).toBe(parked.length);
    expect(released.some((event) => event.reason === 'probe')).toBe(true);
    expect(released.some((event) => event.reason === 'released')).toBe(true);
    for (const event of parked) expect(event).toMatchObject({ key: KEY });
    // The parked wait is in the retry info, as its own kind of delay.
    const waits = results.flatMap(({ value }) => getRetryInfo(value)?.delays ?? []);
    expect(waits.some((delay) => delay.reason === 'parked')).toBe(true);
    // The probes while down came at most one per half probe interval (probeMs × U(0.5, 1.5)).
    const downRetries = server.log.filter((entry) => entry.retry && entry.status === 503);
    for (let i = 1; i < downRetries.length; i++) {
      const gap = (downRetries[i]?.t ?? 0) - (downRetries[i - 1]?.t ?? 0);
      expect(gap).toBeGreaterThanOrEqual(125);
    }
  });

  it('releases parked retries one per success (ACK clocking), not all at once', async () => {
    const { clock, events, client } = setup(1_500, { retries: 3 });
    await burst(client, clock, 30);
    // Order of events after the first success: each release follows a success it was clocked by.
    const firstSuccess = events.findIndex(
      (event) => event.type === 'attempt-end' && event.outcome === 'success',
    );
    expect(firstSuccess).toBeGreaterThanOrEqual(0);
    let successes = 0;
    let releases = 0;
    for (const event of events.slice(firstSuccess)) {
      if (event.type === 'attempt-end' && event.outcome === 'success') successes++;
      if (event.type === 'retry-released' && event.reason === 'released') {
        releases++;
        expect(releases).toBeLessThanOrEqual(successes);
      }
    }
    expect(releases).toBeGreaterThan(5);
  });

  it('paces the release: it replays the spacing the retries were parked in, a fifth faster', async () => {
    const { clock, events, client } = setup(1_500, { retries: 3 });
    await burst(client, clock, 30);
    const parkedAt = new Map<string, number>();
    const releases: Array<{ parked: number; released: number }> = [];
    for (const event of events) {
      const id = `${event.requestId} ${'attempt' in event ? event.attempt : ''}`;
      if (event.type === 'retry-parked') parkedAt.set(id, event.t);
      if (event.type === 'retry-released' && event.reason === 'released') {
        releases.push({ parked: parkedAt.get(id) ?? Number.NaN, released: event.t });
      }
    }
    expect(releases.length).toBeGreaterThan(5);
    releases.sort((a, b) => a.parked - b.parked);
    const [first] = releases as [{ parked: number; released: number }];
    const { releasePace, spreadMs } = GATE_DEFAULTS;
    for (const each of releases) {
      // Released no sooner than its parking time's distance from the first, times releasePace
      // (each release goes at its place plus up to spreadMs).
      expect(each.released - first.released).toBeGreaterThanOrEqual(
        (each.parked - first.parked) * releasePace - spreadMs,
      );
    }
  });

  it('never holds a first attempt: a new request goes out while retries are parked', async () => {
    const { clock, server, events, client } = setup(60_000, { retries: 3 });
    const early = Array.from({ length: 10 }, () => settle(client(URL_DOWN)));
    // Let the gate hold (three failures) and park retries.
    await clock.advance(500);
    expect(events.some((event) => event.type === 'retry-parked')).toBe(true);
    const firstsBefore = server.log.filter((entry) => !entry.retry).length;
    const late = settle(client(URL_DOWN));
    await clock.advance(ANSWER_MS);
    expect(server.log.filter((entry) => !entry.retry).length).toBe(firstsBefore + 1);
    await clock.runAll();
    await Promise.all([...early, late]);
  });

  it('gives up on an origin that does not recover after maxParkMs: the last 503, stoppedBy gate', async () => {
    const { clock, client } = setup(Number.POSITIVE_INFINITY, { gate: recoveryGate({ maxParkMs: 2_000 }) });
    const results = await burst(client, clock, 10);
    const stopped = results.map(({ value }) => getRetryInfo(value)?.stoppedBy);
    for (const { value, error } of results) {
      expect(error).toBeUndefined();
      expect(value?.status).toBe(503);
      expect(await value?.text()).toBe('down');
    }
    expect(stopped.filter((by) => by === 'gate').length).toBeGreaterThan(0);
    expect(stopped.every((by) => by === 'gate' || by === 'exhausted')).toBe(true);
    // Two parks at most per request (one per retry), each at most 2 s, plus backoff and answers.
    expect(clock.now() - T0).toBeLessThan(2 * 2_000 + 1_000);
  });

  it('never parks past the deadline: the request stops with stoppedBy deadline', async () => {
    const { clock, client } = setup(Number.POSITIVE_INFINITY, { deadline: 800, retries: 5 });
    const results = await burst(client, clock, 10);
    const stopped = results.map(({ value }) => getRetryInfo(value)?.stoppedBy);
    expect(stopped.filter((by) => by === 'deadline').length).toBeGreaterThan(0);
    expect(clock.now() - T0).toBeLessThanOrEqual(800 + ANSWER_MS);
  });

  it('an abort while parked rejects at once with the abort reason and frees the place', async () => {
    const gate = recoveryGate();
    const { clock, client } = setup(Number.POSITIVE_INFINITY, { gate, retries: 3 });
    const controller = new AbortController();
    const others = Array.from({ length: 5 }, () => settle(client(URL_DOWN)));
    const aborted = settle(client(URL_DOWN, { signal: controller.signal }));
    await clock.advance(600);
    expect(gate.state(KEY).holding).toBe(true);
    expect(gate.state(KEY).parked).toBeGreaterThan(0);
    const reason = new Error('user left');
    controller.abort(reason);
    expect((await aborted).error).toBe(reason);
    await clock.runAll();
    await Promise.all(others);
    expect(gate.state(KEY).parked).toBe(0);
  });

  it('gate: false sends retries on their backoff, blind', async () => {
    const { clock, server, events, client } = setup(1_500, { retries: 3, gate: false });
    await burst(client, clock, 20);
    expect(events.some((event) => event.type === 'retry-parked')).toBe(false);
    expect(server.mostRetriesInFlightWhileDown()).toBeGreaterThan(1);
  });
});

describe('the recovery gate under pressure (an adversarial review of it)', () => {
  it('a probe a later guard refuses frees the probe place: the parked retries are not left to time out', async () => {
    // The breaker refuses the gate's probe; before the fix the place stayed taken for the 10 s lease.
    const { clock, client, server } = setup(1_000, {
      retries: 3,
      budget: false,
      breaker: circuitBreaker({ consecutiveFailures: 3, openMs: 200 }),
    });
    const results = await burst(client, clock, 8);
    const stopped = results.map(({ value }) => getRetryInfo(value)?.stoppedBy);
    // Refused by the open breaker at once, not parked until maxParkMs.
    expect(stopped.every((by) => by === 'breaker' || by === undefined)).toBe(true);
    expect(clock.now() - T0).toBeLessThan(GATE_DEFAULTS.maxParkMs);
    expect(server.log.filter((entry) => entry.retry)).toHaveLength(0);
  });

  it('the retries still parked behind one that was released and then aborted are released too', async () => {
    const gate = recoveryGate({ probeMs: 1_000 });
    const { clock, client, events } = setup(1_000, { gate, retries: 3, budget: false });
    const controllers = Array.from({ length: 5 }, () => new AbortController());
    const calls = controllers.map((controller) => settle(client(URL_DOWN, { signal: controller.signal })));
    await clock.advance(1_005);
    // A new request's success releases the oldest parked retry; while it waits for its place in
    // the release's pace (no retry-released yet), its caller gives up.
    const fresh = settle(client(URL_DOWN));
    await clock.advance(ANSWER_MS + 1);
    const parkedOrder = events
      .filter((event) => event.type === 'retry-parked')
      .map((event) => event.requestId);
    const releasing = parkedOrder.find(
      (id) => !events.some((event) => event.type === 'retry-released' && event.requestId === id),
    );
    const starts = events.filter((event) => event.type === 'request-start').map((event) => event.requestId);
    const aborted = controllers[starts.indexOf(releasing as string)];
    expect(aborted).toBeDefined();
    aborted?.abort(new Error('user left'));
    await clock.runAll();
    const results = await Promise.all(calls);
    expect((await fresh).value?.status).toBe(200);
    // Every other request gets its 200, long before maxParkMs.
    expect(results.filter(({ value }) => value?.status === 200)).toHaveLength(4);
    expect(clock.now() - T0).toBeLessThan(GATE_DEFAULTS.maxParkMs);
    expect(gate.state(KEY)).toEqual({ holding: false, failures: 0, parked: 0 });
  });

  it('a deadline that comes while retries are parked hands back the last 503 (stoppedBy deadline), never an error', async () => {
    const { clock, client } = setup(Number.POSITIVE_INFINITY, { deadline: 800, retries: 5 });
    const results = await burst(client, clock, 10);
    for (const { value, error } of results) {
      expect(error).toBeUndefined();
      expect(value?.status).toBe(503);
      expect(['deadline', 'exhausted', 'gate']).toContain(getRetryInfo(value)?.stoppedBy);
    }
  });

  it('forgets a held key after a minute without use, so the happy path is back; a 404 keeps no state', async () => {
    const store = memoryStore();
    const { clock, client } = setup(Number.POSITIVE_INFINITY, { store, retries: 0 });
    for (let i = 0; i < 3; i++) await burst(client, clock, 1);
    expect(store.size().gates).toBe(1);
    // A minute later, the next sweep (every 1,000 store operations) drops it.
    await clock.advance(61_000);
    const other = retryFetch(async () => new Response('missing', { status: 404 }), {
      clock,
      store,
      deadline: 5_000,
    });
    for (let i = 0; i < 1_000; i++) await other(`http://elsewhere-${i % 10}.test/`);
    expect(store.size().gates).toBe(0);
  });

  it('a released retry waits no longer than maxParkMs in all, its place in the release included', async () => {
    const { clock, events, client } = setup(1_000, {
      retries: 3,
      gate: recoveryGate({ maxParkMs: 1_000, releaseGapMs: 300 }),
    });
    await burst(client, clock, 10);
    const waits = events
      .filter(
        (event): event is Extract<RetrylineEvent, { type: 'retry-released' }> =>
          event.type === 'retry-released',
      )
      .map((event) => event.waited);
    expect(waits.length).toBeGreaterThan(0);
    for (const waited of waits) expect(waited).toBeLessThanOrEqual(1_000);
  });
});

/**
 * A server on `clock` whose answer to each attempt (its status, and how long it takes) is
 * scripted by when it was sent (ms after T0) and, for retries, their order; it logs when each
 * attempt was sent and when it ended.
 */
function scriptedServer(
  clock: ReturnType<typeof virtualClock>,
  answer: (attempt: { t: number; retry: boolean; nth: number }) => { status: number; ms: number },
) {
  const log: Array<{ sent: number; ended: number; retry: boolean; status: number }> = [];
  let retries = 0;
  const fetchImpl = async (_input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const retry = !new Headers(init?.headers).get('x-attempt')?.startsWith('attempt=1;');
    const sent = clock.now() - T0;
    const { status, ms } = answer({ t: sent, retry, nth: retry ? retries++ : -1 });
    await clock.sleep(ms, init?.signal ?? undefined);
    log.push({ sent, ended: clock.now() - T0, retry, status });
    return new Response(status === 200 ? 'ok' : 'down', { status });
  };
  return { fetchImpl, log };
}

describe('the recovery gate under pressure (a second adversarial review)', () => {
  it('a released retry that finds the origin held again once its place in the release comes is parked again, not sent', async () => {
    const clock = virtualClock(T0);
    // Down until 1 s, up for 50 ms, then down again (by when each attempt is sent).
    const server = scriptedServer(clock, ({ t }) => ({
      status: t >= 1_000 && t < 1_050 ? 200 : 503,
      ms: ANSWER_MS,
    }));
    // One success releases every parked retry, 100 ms apart.
    const gate = recoveryGate({
      probeMs: 1_000,
      releasePerSuccess: 10,
      releaseGapMs: 100,
      releasePace: 0,
      spreadMs: 0,
      maxParkMs: 3_000,
    });
    const options = {
      clock,
      random: seededRandom(7),
      attemptHeader: 'x-attempt',
      budget: false,
      gate,
    } as const;
    const client = retryFetch(server.fetchImpl as typeof fetch, { ...options, retries: 1 });
    const calls = Array.from({ length: 6 }, () => settle(client(URL_DOWN)));
    await clock.advance(1_000);
    // A success releases the parked retries; 50 ms later, three failures hold the origin again.
    const fresh = settle(client(URL_DOWN));
    await clock.advance(50);
    const once = retryFetch(server.fetchImpl as typeof fetch, { ...options, retries: 0 });
    const failing = Array.from({ length: 3 }, () => settle(once(URL_DOWN)));
    await clock.runAll();
    await Promise.all([...calls, fresh, ...failing]);
    expect(server.log.some((entry) => entry.retry && entry.status === 200)).toBe(true);
    // Held again, the retries go one probe at a time, a failed probe's wait apart (probeMs × U(0.5, 1.5)):
    // none of those released 100 ms apart fires into the failing origin.
    const sentWhileDown = server.log.filter((entry) => entry.retry && entry.sent >= 1_050).map((e) => e.sent);
    expect(sentWhileDown.length).toBeGreaterThan(0);
    for (let i = 1; i < sentWhileDown.length; i++) {
      expect((sentWhileDown[i] ?? 0) - (sentWhileDown[i - 1] ?? 0)).toBeGreaterThanOrEqual(500);
    }
  });

  it.each(['gateAdmit', 'gateRecord'] as const)(
    'an abort while the gate waits for a shared store (%s) ends the request at once',
    async (slow) => {
      const clock = virtualClock(T0);
      const server = scriptedServer(clock, () => ({ status: 503, ms: ANSWER_MS }));
      // A shared store whose gate operation answers a second late.
      const local = localStore();
      let asked = 0;
      const late = <T>(answer: T | Promise<T>): Promise<T> => {
        asked++;
        return clock.sleep(1_000).then(() => answer);
      };
      const store: Store = {
        ...local,
        gateAdmit: (...args: Parameters<typeof local.gateAdmit>) =>
          slow === 'gateAdmit' ? late(local.gateAdmit(...args)) : local.gateAdmit(...args),
        gateRecord: (...args: Parameters<typeof local.gateRecord>) =>
          slow === 'gateRecord' ? late(local.gateRecord(...args)) : local.gateRecord(...args),
      };
      const client = retryFetch(server.fetchImpl as typeof fetch, {
        clock,
        random: seededRandom(7),
        attemptHeader: 'x-attempt',
        budget: false,
        store,
        gate: recoveryGate({ holdAfter: 1 }),
      });
      const controller = new AbortController();
      let ended = false;
      const call = settle(client(URL_DOWN, { signal: controller.signal })).finally(() => {
        ended = true;
      });
      // The first attempt's failure is counted (gateRecord); its retry asks to go (gateAdmit).
      for (let i = 0; asked === 0 && i < 1_000; i++) await clock.advance(1);
      expect(asked).toBe(1);
      const reason = new Error('user left');
      controller.abort(reason);
      await clock.advance(0);
      expect(ended).toBe(true);
      expect((await call).error).toBe(reason);
      await clock.runAll();
      // A probe place the store gives after the abort is freed, not kept for its lease.
      expect(await local.gateAdmit(KEY, normalizeGate(), clock.now(), 1_000)).toBe('probe');
    },
  );

  it('a success the happy path sent at once, ending once the key is held, frees it and releases its parked retries', async () => {
    const store = memoryStore();
    // Probes 5-15 s apart: without the success, parked retries would wait for maxParkMs.
    const { clock, client } = setup(1_000, {
      store,
      retries: 3,
      budget: false,
      gate: recoveryGate({ store, probeMs: 10_000 }),
    });
    // The gate as the happy path asks it (HTTP clients' own gate, on the same store).
    const atOnce = clientGate({ store, key: undefined });
    const request = { method: 'GET', url: URL_DOWN };
    const noClock = {
      now: () => {
        throw new Error('a clock read while the gate is quiet');
      },
      sleep: () => Promise.resolve(),
    };
    // While quiet, a success costs nothing, not even a clock read.
    expect(atOnce.quiet()).toBe(true);
    atOnce.recordAtOnce(request, noClock);
    const calls = Array.from({ length: 5 }, () => settle(client(URL_DOWN)));
    await clock.advance(1_500);
    expect(atOnce.quiet()).toBe(false);
    // A first attempt admitted at once before the outage succeeds now, the origin back.
    atOnce.recordAtOnce(request, clock);
    await clock.runAll();
    const results = await Promise.all(calls);
    expect(results.map(({ value }) => value?.status)).toEqual([200, 200, 200, 200, 200]);
    expect(clock.now() - T0).toBeLessThan(2_000);
  });

  it('a success the happy path sent at once, ending once the origin is held, releases the parked retries', async () => {
    const clock = virtualClock(T0);
    // The origin answers /slow in 1.5 s with a 200; anything else, with a 503 for its first second.
    const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
      const slow = String(input).endsWith('/slow');
      await clock.sleep(slow ? 1_500 : ANSWER_MS, init?.signal ?? undefined);
      const up = slow || clock.now() - T0 >= 1_000;
      return new Response(up ? 'ok' : 'down', { status: up ? 200 : 503 });
    };
    // No listener and no added header: a first attempt takes the happy path's shortcut while the
    // gate is quiet. Probes 5-15 s apart: without that success, parked retries wait for maxParkMs.
    const gate = recoveryGate({ probeMs: 10_000 });
    const client = retryFetch(fetchImpl as typeof fetch, {
      clock,
      random: seededRandom(7),
      retries: 3,
      budget: false,
      gate,
    });
    const slow = settle(client(`${KEY}/slow`));
    const calls = Array.from({ length: 5 }, () => settle(client(URL_DOWN)));
    await clock.advance(1_200);
    expect(gate.state(KEY)).toMatchObject({ holding: true });
    expect(gate.state(KEY).parked).toBeGreaterThan(0);
    await clock.runAll();
    expect((await slow).value?.status).toBe(200);
    const results = await Promise.all(calls);
    expect(results.map(({ value }) => value?.status)).toEqual([200, 200, 200, 200, 200]);
    expect(clock.now() - T0).toBeLessThan(2_000);
    expect(gate.state(KEY)).toEqual({ holding: false, failures: 0, parked: 0 });
  });

  it('a probe that outlives its lease leaves the probe place to the probe given it after, when it ends', async () => {
    const clock = virtualClock(T0);
    // Down throughout: the first retry (the first probe) hangs 12 s, past its lease (no timeout:
    // 10 s and a margin); the next answer in 5 s.
    const server = scriptedServer(clock, ({ retry, nth }) => ({
      status: 503,
      ms: !retry ? ANSWER_MS : nth === 0 ? 12_000 : 5_000,
    }));
    const client = retryFetch(server.fetchImpl as typeof fetch, {
      clock,
      random: seededRandom(7),
      attemptHeader: 'x-attempt',
      retries: 1,
      budget: false,
      maxDelay: 60_000,
      gate: recoveryGate({ holdAfter: 1, maxParkMs: 60_000 }),
    });
    await burst(client, clock, 4);
    const [outlived, next, after] = server.log
      .filter((entry) => entry.retry)
      .sort((a, b) => a.sent - b.sent) as [LogEntry, LogEntry, LogEntry];
    // The first probe ended while the next was out, and left it its place: the third went after.
    expect(outlived.ended).toBeGreaterThan(next.sent);
    expect(outlived.ended).toBeLessThan(next.ended);
    expect(after.sent).toBeGreaterThanOrEqual(next.ended);
  });
});

type LogEntry = ReturnType<typeof scriptedServer>['log'][number];

describe('the gate as a pure state machine (what a shared store runs)', () => {
  const config = normalizeGate();

  it('holds a key after holdAfter failures in a row; a success frees it and says it recovered', () => {
    let state = gateInit();
    for (let i = 0; i < config.holdAfter - 1; i++)
      state = gateRecord(state, config, 'failure', false, 0, 0).state;
    expect(gateAdmit(state, 0, 1_000).verdict).toBe('go');
    state = gateRecord(state, config, 'failure', false, 0, 0).state;
    expect(state.holding).toBe(true);
    const probe = gateAdmit(state, 10, 1_000);
    expect(probe.verdict).toBe('probe');
    // One probe at a time: the next asks while the first holds the place.
    expect(gateAdmit(probe.state, 20, 1_000).verdict).toBe('park');
    const failed = gateRecord(probe.state, config, 'failure', true, 250, 30).state;
    expect(gateAdmit(failed, 100, 1_000).verdict).toBe('park');
    expect(gateAdmit(failed, 280, 1_000).verdict).toBe('probe');
    // A probe that outlives its lease frees the place for the next.
    expect(gateAdmit(probe.state, 1_010, 1_000).verdict).toBe('probe');
    const recovered = gateRecord(failed, config, 'success', false, 0, 300);
    expect(recovered.recovered).toBe(true);
    expect(gateAdmit(recovered.state, 300, 1_000).verdict).toBe('go');
  });

  it('survives a JSON round trip, as a shared store keeps it', () => {
    const state = gateRecord(gateInit(), normalizeGate({ holdAfter: 1 }), 'failure', false, 0, 5).state;
    expect(JSON.parse(JSON.stringify(state))).toEqual(state);
  });

  it('validates its options at the factory', () => {
    for (const bad of [
      { probeMs: 0 },
      { holdAfter: 0 },
      { spreadMs: -1 },
      { maxParkMs: Number.NaN },
      { releasePace: -1 },
      { releaseGapMs: -1 },
      { releasePerSuccess: -1 },
    ]) {
      expect(() => recoveryGate(bad)).toThrow(InvalidOptionsError);
    }
    let thrown: unknown;
    try {
      retryFetch(fetch, { gate: true as never });
    } catch (error) {
      thrown = error;
    }
    expect(isRetrylineError(thrown, 'InvalidOptionsError')).toBe(true);
    expect((thrown as Error).message).toContain('recoveryGate()');
  });
});
