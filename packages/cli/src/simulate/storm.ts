/**
 * A retry storm in virtual time (a 2-second database stall and the retries it sets off): how much
 * load a client's retry policy adds while a server is stalled, and whether the server's backlog clears
 * once the stall is over or the retries keep it saturated (a metastable failure). Deterministic for a
 * given seed, and no real time passes: the cost of a run is the cost of its requests.
 *
 * The model:
 *
 * - **Clients, open loop.** Logical requests arrive as a Poisson process of `ratePerSecond` for
 *   `durationMs` (exponential gaps drawn from `seededRandom(seed)`), whatever the server does, as
 *   independent users do. Each is a `GET http://storm.test/work` (with a header naming it, so the
 *   server can count attempts per request) through Retryline's real fetch adapter:
 *   `retryFetch(server, { clock, random: seededRandom(seed + 1), store: memoryStore(), timeout:
 *   timeoutMs, ...policy.options })`, one fresh store per run so runs share no guard state. A policy
 *   may bring its own `send` instead (a peer's behaviour, such as {@link immediateRetryPolicy}).
 * - **Server.** A FIFO queue in front of `workers` parallel workers, each taking `serviceMs` per
 *   request: capacity `workers / serviceMs · 1000` req/s. It does not notice a client giving up: a
 *   request whose client timed out still takes a worker when it reaches the head (wasted work). That
 *   makes a storm self-sustaining: once the queue holds more than a timeout's worth of work, every
 *   request it serves has already been abandoned, and each abandoned request comes back as a retry.
 *   The fake fetch rejects with `signal.reason` as soon as the attempt's signal aborts, as real fetch
 *   does, while the server keeps the job. A served request gets `200 ok`. With `queueLimit`, a
 *   request that finds the queue full gets `503` at once (load shedding; off by default), free of
 *   cost here (the overload model, `overload.ts`, charges each rejection a share of a worker).
 * - **The stall.** During `[stallAt, stallAt + stallMs)` the database behind the workers is stuck:
 *   no request starts, and one in progress pauses, finishing `stallMs` later than it would have.
 * - **Recovery.** The backlog has cleared from the first instant after the stall from which, until
 *   `durationMs`, every request a worker starts had waited less than `timeoutMs / 4`, and none still
 *   queued at `durationMs` has waited that long. `recoveredAfterMs` is that instant minus the stall's
 *   end (rounded up to the millisecond), or `null` when the run ends first. Only the arrival window
 *   counts: once arrivals stop, any backlog drains, which says nothing.
 * - **Incident amplification.** Attempts per first attempt of the requests that arrived in
 *   `[stallAt, stallAt + stallMs + 8 s]`: the stall plus long enough for a storm to show itself or die
 *   out. Over the whole run (`amplification`) the healthy traffic before it dilutes the figure.
 * - After `durationMs` no request arrives, and the run goes on (at most `settleMs`) until every request
 *   has settled, so attempts, successes and wasted work count each request's whole story. The timeline
 *   covers `[0, durationMs)`.
 * - The closed loop (`closed-storm.ts`: clients that wait for each answer, then think) runs on the
 *   same server, stall, clock, timeline, client wiring and recovery check (`startStormRun`); only
 *   the arrivals and the measures differ.
 *
 * The defaults: a pool of 32 connections at 50 ms a query serves 640 req/s, and 240 req/s arrive —
 * 37.5 % utilisation, the headroom of a service sized to survive losing a node. Attempts time out
 * after 1 s (20 service times); the database stalls for 2 s at t = 5 s; requests arrive for 15 s, so
 * the whole incident window lies inside the run. Why these numbers:
 *
 * - Storm or not is decided by `attempts per request × utilisation`. Once every attempt times out,
 *   Retryline's defaults without a budget (two retries) send 3 × 240 = 720 req/s, more than 640: the
 *   queue never again drops below a timeout's worth, and a 2 s stall becomes an outage that lasts as
 *   long as the load does. Below 1/3 utilisation the same client would recover by itself, slowly; at
 *   35 % it does for some seeds. 37.5 % leaves margin.
 * - The budget (10 % of requests plus 10/s over 10 s) lets through the retries of the stall's first
 *   second, then holds retries near 34/s: the backlog of about 1.1 s of work drains at ~370 req/s
 *   and clears 1.65 s after the stall (seeds 1–10: 1.65–1.91 s; incident amplification 1.11–1.12×).
 *   At 40 % utilisation it takes 1.8–2.0 s, too close to the 2 s recovery target (`stormRecoveryMs`
 *   in bench/report.mjs). A client whose budget window is full of history when the stall hits (stall
 *   at t = 10 s) has more retries in hand and clears in 1.8–2.0 s: the 2 s figure is the budget's,
 *   not this model's, edge.
 * - 240 req/s, not less: the budget's floor (10 retries/s) is absolute, so at lower rates it is a
 *   larger share of the traffic and amplification creeps towards 1.2×; and not more, because each
 *   request runs Retryline's whole engine (some 200 µs of real time), which is what a run costs.
 */

import { type Clock, memoryStore, type Random, seededRandom } from '@retryline/core';
import { invalid } from '@retryline/core/adapter';
import { type FetchRetryOptions, retryFetch } from '@retryline/fetch';
import { type SimClock, simClock } from './sim-clock';

/** The server, the load and the stall: everything but the client's policy. */
export interface StormScenario {
  /** Parallel workers. @default 32 */
  readonly workers: number;
  /** Milliseconds a worker spends on one request. @default 50 */
  readonly serviceMs: number;
  /** Logical requests per second (Poisson arrivals). @default 240 */
  readonly ratePerSecond: number;
  /** The per-attempt timeout every client uses. @default 1000 */
  readonly timeoutMs: number;
  /** When the stall begins, in milliseconds from the start. @default 5000 */
  readonly stallAt: number;
  /** How long the stall lasts. @default 2000 */
  readonly stallMs: number;
  /** How long requests keep arriving. @default 15000 */
  readonly durationMs: number;
  /** Seeds the arrivals (`seed`) and the policy's jitter (`seed + 1`). @default 1 */
  readonly seed: number;
  /** Waiting requests beyond which the server answers 503 at once. @default Infinity (unbounded) */
  readonly queueLimit: number;
  /** How long after `durationMs` the run may go on for the last requests to settle. @default 60000 */
  readonly settleMs: number;
}

/** What a custom policy's `send` is given besides the server's fetch and the clock. */
export interface StormSendContext {
  /** The scenario's per-attempt timeout. */
  readonly timeoutMs: number;
  /** The run's seeded random (`seededRandom(seed + 1)`), for any jitter. */
  readonly random: Random;
}

/**
 * Builds a client that sends one logical request: `url` with `init`, through `fetchImpl` (the
 * simulated server), on `clock`. `init` identifies the logical request to the server (a header);
 * pass it on with every attempt. Resolving with a 2xx `Response` counts as a success.
 */
export type StormSender = (
  fetchImpl: typeof fetch,
  clock: Clock,
  context: StormSendContext,
) => (url: string, init: RequestInit) => Promise<unknown>;

/** A client's retry behaviour: Retryline's fetch options, or a custom `send`. */
export type StormPolicy =
  | {
      readonly name: string;
      /**
       * Retryline's fetch options; a function for options holding guard values, called once per
       * run, so runs share no guard (a guard value is one guard wherever it is given).
       */
      readonly options: FetchRetryOptions | (() => FetchRetryOptions);
    }
  | { readonly name: string; readonly send: StormSender };

/** A scenario (any field left out takes its default) and the policy to run it with. */
export interface StormConfig extends Partial<StormScenario> {
  /** @default {@link defaultGuardsPolicy} */
  readonly policy?: StormPolicy;
}

/** One 100 ms slice of the run, for charts. */
export interface StormBucket {
  /** The slice's start, in milliseconds. */
  readonly t: number;
  /** Attempts that reached the server. */
  readonly sent: number;
  /** Requests the workers finished (abandoned ones included). */
  readonly served: number;
  /** Requests waiting for a worker at the slice's end. */
  readonly queue: number;
}

/** What one policy did to the server in one scenario. */
export interface StormReport extends StormServerMeasures {
  readonly policy: string;
  readonly scenario: StormScenario;
  readonly logicalRequests: number;
  /** Attempts that reached the server (503s of a full queue included). */
  readonly attempts: number;
  /** `attempts / logicalRequests` over the whole run. */
  readonly amplification: number;
  /** Logical requests that arrived in `[stallAt, stallAt + stallMs + 8 s]`. */
  readonly incidentRequests: number;
  /** Their attempts per first attempt. */
  readonly incidentAmplification: number;
  /** Logical requests that ended with a 2xx response. */
  readonly succeeded: number;
  /** Logical requests that ended otherwise. */
  readonly failed: number;
  /** Logical requests still running when `settleMs` ran out. */
  readonly unfinished: number;
  /** `succeeded / logicalRequests`. */
  readonly successRate: number;
  /** How failed requests ended: an error's name, or `HTTP <status>`. */
  readonly failures: Readonly<Record<string, number>>;
}

/** What the server side of any storm run measures, open loop or closed. */
export interface StormServerMeasures {
  /** Milliseconds after the stall's end until the backlog cleared; `null` when it did not by `durationMs`. */
  readonly recoveredAfterMs: number | null;
  /** Requests the workers finished. */
  readonly served: number;
  /** Of those, the ones whose client had already given up (wasted work). */
  readonly wasted: number;
  /** The most requests waiting for a worker at once. */
  readonly peakQueue: number;
  /** 100 ms buckets over `[0, durationMs)`. */
  readonly timeline: readonly StormBucket[];
}

/** The defaults: a service at 37.5 % utilisation, stalled for 2 s (the module comment says why). */
export const STORM_DEFAULTS: StormScenario = {
  workers: 32,
  serviceMs: 50,
  ratePerSecond: 240,
  timeoutMs: 1_000,
  stallAt: 5_000,
  stallMs: 2_000,
  durationMs: 15_000,
  seed: 1,
  queueLimit: Number.POSITIVE_INFINITY,
  settleMs: 60_000,
};

/** The URL every logical request gets. */
export const STORM_URL = 'http://storm.test/work';

/** The header that tells the simulated server which logical request an attempt belongs to. */
export const STORM_REQUEST_HEADER = 'x-storm-request';

/** How long after the stall's end requests still count towards the incident. */
export const INCIDENT_TAIL_MS = 8_000;

/** The width of a timeline bucket. */
export const BUCKET_MS = 100;

/**
 * Retryline's defaults, untouched: 2 retries, exponential backoff from 100 ms, full jitter, and the
 * retry budget that HTTP clients have on by default.
 */
export const defaultGuardsPolicy: StormPolicy = { name: 'default guards', options: {} };

/** The same retries and backoff with no budget and no recovery gate. */
export const guardsOffPolicy: StormPolicy = { name: 'guards off', options: { budget: false, gate: false } };

class TimeoutError extends Error {
  override name = 'TimeoutError';
}

// The reason an attempt's timer is cancelled with: a shared value, since abort() without a reason
// builds a DOMException (with its stack) every time.
const SETTLED = Symbol('settled');

/**
 * A peer's naive client, written as a plain loop rather than with Retryline: on a timeout, a
 * transport error or a 5xx it sends again at once, `retries` times.
 */
export function immediateRetryPolicy(retries = 3): StormPolicy {
  if (!Number.isInteger(retries) || retries < 0) throw invalid('retries', 'a non-negative integer', retries);
  return {
    name: `immediate retries ×${retries}`,
    send: (fetchImpl, clock, { timeoutMs }) =>
      async function sendImmediately(url, init) {
        let last: unknown;
        for (let attempt = 0; attempt <= retries; attempt++) {
          const attemptControl = new AbortController();
          const timer = new AbortController();
          clock.sleep(timeoutMs, timer.signal).then(
            () => attemptControl.abort(new TimeoutError(`GET ${url} timed out after ${timeoutMs} ms`)),
            () => {},
          );
          try {
            const response = await fetchImpl(url, { ...init, signal: attemptControl.signal });
            if (response.status < 500) return response;
            last = response;
          } catch (error) {
            last = error;
          } finally {
            timer.abort(SETTLED);
          }
        }
        if (last instanceof Response) return last;
        throw last;
      },
  };
}

// What each scenario field must be: [the check, how an error message says it].
const FIELD_RULES: Record<keyof StormScenario, StormFieldRule> = {
  workers: [(v) => Number.isInteger(v) && v > 0, 'a positive integer'],
  serviceMs: [(v) => Number.isFinite(v) && v > 0, 'a positive number of milliseconds'],
  ratePerSecond: [(v) => Number.isFinite(v) && v > 0, 'a positive number'],
  timeoutMs: [(v) => Number.isFinite(v) && v > 0, 'a positive number of milliseconds'],
  stallAt: [(v) => Number.isFinite(v) && v >= 0, 'a number of milliseconds ≥ 0'],
  stallMs: [(v) => Number.isFinite(v) && v >= 0, 'a number of milliseconds ≥ 0'],
  durationMs: [(v) => Number.isFinite(v) && v > 0, 'a positive number of milliseconds'],
  seed: [(v) => Number.isInteger(v), 'an integer'],
  queueLimit: [
    (v) => v === Number.POSITIVE_INFINITY || (Number.isInteger(v) && v >= 0),
    'an integer ≥ 0 or Infinity',
  ],
  settleMs: [(v) => Number.isFinite(v) && v >= 0, 'a number of milliseconds ≥ 0'],
};

/** What a scenario field must be: the check, and how an error message says it. */
export type StormFieldRule = readonly [(value: number) => boolean, string];

const { ratePerSecond: _openLoopOnly, ...sharedRules } = FIELD_RULES;
/** The rules of the fields the open and the closed loop share (all but the arrival rate). */
export const SHARED_FIELD_RULES: Record<
  Exclude<keyof StormScenario, 'ratePerSecond'>,
  StormFieldRule
> = sharedRules;

/**
 * Takes each field of `rules` from `config` when given (checking it, naming it when it is wrong),
 * else from `defaults`.
 */
export function resolveFields<T extends object>(
  config: Partial<Record<keyof T, unknown>>,
  defaults: T,
  rules: Record<keyof T, StormFieldRule>,
): T {
  const scenario = { ...defaults } as Record<string, unknown>;
  for (const name of Object.keys(rules) as Array<keyof T & string>) {
    const value = config[name];
    if (value === undefined) continue;
    const [ok, expected] = rules[name];
    if (typeof value !== 'number' || !ok(value)) throw invalid(name, expected, value);
    scenario[name] = value;
  }
  return scenario as T;
}

/**
 * Takes each field of `rules` from `config` when given (checking it, naming it when it is wrong),
 * else from `defaults`, and checks that the stall ends while requests still arrive.
 */
export function resolveStormFields<T extends Pick<StormScenario, 'stallAt' | 'stallMs' | 'durationMs'>>(
  config: Partial<Record<keyof T, unknown>>,
  defaults: T,
  rules: Record<keyof T, StormFieldRule>,
): T {
  const resolved = resolveFields(config, defaults, rules);
  if (resolved.stallAt + resolved.stallMs > resolved.durationMs) {
    throw invalid(
      'stallAt + stallMs',
      `at most durationMs (${resolved.durationMs} ms): the stall must end while requests still arrive`,
      resolved.stallAt + resolved.stallMs,
    );
  }
  return resolved;
}

interface Job {
  readonly enqueuedAt: number;
  /** Answers the client; dropped when the client gives up, so the job holds nothing of it. */
  respond: (() => void) | undefined;
}

/** The server's side of a scenario. */
export type StormServerOptions = Pick<
  StormScenario,
  'workers' | 'serviceMs' | 'stallAt' | 'stallMs' | 'queueLimit'
> & {
  /** A request started after the stall that had waited this long means the backlog has not cleared. */
  readonly slowWaitMs: number;
  /**
   * Milliseconds of a worker's time each 503 of a full queue costs (reading the request, deciding,
   * answering): owed at once and paid before the next queued request starts. 0 makes rejecting
   * free, as the storms assume. @default 0
   */
  readonly rejectMs?: number;
};

/** What the server tells the simulation as it goes. */
export interface StormServerListener {
  /** An attempt reached the server (before it is queued or turned away). */
  sent?(init: RequestInit | undefined): void;
  /** A worker finished a request; `wasted` when its client had already given up. */
  served?(wasted: boolean): void;
  /** The queue was full: the attempt got a 503 at once. */
  rejected?(): void;
}

/** The simulated server: its fetch and its counters. */
export interface StormServer {
  /** The fetch clients send through: queues the request, resolves `200 ok` once a worker has served it. */
  readonly fetch: typeof fetch;
  /** Requests waiting for a worker. */
  waiting(): number;
  /** How long the oldest waiting request has waited; 0 when none waits. */
  oldestWait(): number;
  /** Attempts that reached the server. */
  attempts(): number;
  served(): number;
  /** Served requests whose client had already given up. */
  wasted(): number;
  /** Attempts answered 503 because the queue was full. */
  rejected(): number;
  peakQueue(): number;
  /** The last time, after the stall, a worker started a request that had waited `slowWaitMs` or more. */
  lastSlowStart(): number | undefined;
}

/**
 * One attempt's job, handed to `enqueue`: the promise resolves `200 ok` once a worker has served the
 * job; the client's abort rejects it at once with the signal's reason, and the server, unaware,
 * keeps the job (it no longer answers anyone).
 */
function attemptJob(
  enqueuedAt: number,
  signal: AbortSignal | undefined,
  enqueue: (job: Job) => void,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    const onAbort = () => {
      job.respond = undefined;
      reject(signal?.reason);
    };
    const job: Job = {
      enqueuedAt,
      respond() {
        signal?.removeEventListener('abort', onAbort);
        resolve(new Response('ok', { status: 200 }));
      },
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    enqueue(job);
  });
}

/**
 * The server of the model (see the module comment): a FIFO queue, `workers` workers of `serviceMs`
 * each, blind to clients giving up, stalled during `[stallAt, stallAt + stallMs)`; with a
 * `queueLimit`, a 503 at once for an attempt that finds the queue full, which costs a worker
 * `rejectMs` (none by default).
 */
export function createStormServer(
  clock: SimClock,
  options: StormServerOptions,
  listener: StormServerListener = {},
): StormServer {
  const { workers, serviceMs, stallAt, stallMs, queueLimit, slowWaitMs, rejectMs = 0 } = options;
  const stallEnd = stallAt + stallMs;
  const queue = jobQueue();
  let busy = 0;
  let attempts = 0;
  let served = 0;
  let wasted = 0;
  let rejected = 0;
  /** Rejections whose work no worker has done yet: they go before the queue. */
  let owed = 0;
  let peakQueue = 0;
  let lastSlowStart: number | undefined;

  const release = () => {
    busy--;
    startWork();
  };
  const finish = (job: Job) => {
    served++;
    listener.served?.(job.respond === undefined);
    if (job.respond) job.respond();
    else wasted++;
    release();
  };
  function startWork() {
    const now = clock.now();
    if (now >= stallAt && now < stallEnd) return;
    // A rejection's work comes first: the server has already answered it.
    for (; busy < workers && owed > 0; owed--, busy++) clock.schedule(rejectMs, release);
    while (busy < workers && queue.length() > 0) {
      const job = queue.take();
      busy++;
      if (now >= stallEnd && now - job.enqueuedAt >= slowWaitMs) lastSlowStart = now;
      // Work in progress when the stall begins pauses for the whole stall.
      const pause = now < stallAt && now + serviceMs > stallAt ? stallMs : 0;
      clock.schedule(serviceMs + pause, () => finish(job));
    }
  }
  if (stallMs > 0) clock.schedule(stallEnd - clock.now(), startWork);

  const serverFetch: typeof fetch = (_input, init) => {
    const signal = init?.signal ?? undefined;
    if (signal?.aborted) return Promise.reject(signal.reason);
    attempts++;
    listener.sent?.(init);
    if (queue.length() >= queueLimit) {
      rejected++;
      listener.rejected?.();
      if (rejectMs > 0) owed++;
      startWork();
      return Promise.resolve(new Response('busy', { status: 503 }));
    }
    return attemptJob(clock.now(), signal, (job) => {
      queue.push(job);
      peakQueue = Math.max(peakQueue, queue.length());
      startWork();
    });
  };

  return {
    fetch: serverFetch,
    waiting: queue.length,
    oldestWait: () => {
      const oldest = queue.oldest();
      return oldest === undefined ? 0 : clock.now() - oldest.enqueuedAt;
    },
    attempts: () => attempts,
    served: () => served,
    wasted: () => wasted,
    rejected: () => rejected,
    peakQueue: () => peakQueue,
    lastSlowStart: () => lastSlowStart,
  };
}

/**
 * The server's FIFO of waiting jobs: `take()` hands out the oldest (call it only when `length()` is
 * above 0) and lets go of it, since a started job must not stay reachable from the queue.
 */
function jobQueue() {
  const items: Array<Job | undefined> = [];
  let head = 0;
  const length = () => items.length - head;
  return {
    length,
    oldest: () => items[head],
    push: (job: Job) => {
      items.push(job);
    },
    take(): Job {
      const job = items[head] as Job;
      items[head++] = undefined;
      if (head > 4_096 && head * 2 > items.length) {
        items.splice(0, head);
        head = 0;
      }
      return job;
    },
  };
}

/** The scenario fields the machinery both loops share reads: all but the open loop's arrival rate. */
export type StormRunScenario = Omit<StormScenario, 'ratePerSecond'>;

/** The machinery one run of either loop shares: clock, server, timeline, the policy's client, recovery. */
export interface StormRun {
  readonly clock: SimClock;
  readonly server: StormServer;
  /** The 100 ms buckets over `[0, durationMs)`, filled in as the run goes. */
  readonly timeline: readonly StormBucket[];
  /** The policy's client: sends one logical request (pass the request's header in `init`). */
  readonly send: (url: string, init: RequestInit) => Promise<unknown>;
  /**
   * The recovery measure (see the module comment): known once the clock has reached `durationMs`;
   * `null` before, and when the backlog had not cleared by then.
   */
  recoveredAfterMs(): number | null;
  /** What the server side measured, for a report: recovery, served and wasted work, queue, timeline. */
  measures(): StormServerMeasures;
  /**
   * Runs the arrival window, then goes on (at most `settleMs`) while `open()` says requests are
   * still running.
   */
  run(open: () => number): Promise<void>;
}

/**
 * The client a policy sends through: the policy's own `send`, or Retryline's `retryFetch` over
 * `fetchImpl` with the simulation's clock and random, the scenario's timeout, a fresh memory store
 * and the policy's options (a function is called anew for each client, so no two share a guard).
 */
export function policyClient(
  policy: StormPolicy,
  fetchImpl: typeof fetch,
  clock: Clock,
  context: StormSendContext,
): (url: string, init: RequestInit) => Promise<unknown> {
  if ('send' in policy) return policy.send(fetchImpl, clock, context);
  return retryFetch(fetchImpl, {
    clock,
    random: context.random,
    store: memoryStore(),
    timeout: context.timeoutMs,
    ...(typeof policy.options === 'function' ? policy.options() : policy.options),
  });
}

/**
 * Sets up one run: a fresh clock, the server with its stall, the timeline, the recovery check at
 * `durationMs` and the policy's client (Retryline's `retryFetch` with the run's seeded jitter
 * `seededRandom(seed + 1)` and a fresh store, or the policy's own `send`). `onAttempt` hears of
 * every attempt that reaches the server, with the logical request's id from its header. The
 * caller schedules the arrivals, then calls `run`.
 */
export function startStormRun(
  scenario: StormRunScenario,
  policy: StormPolicy,
  onAttempt: (id: number | undefined) => void,
): StormRun {
  const { timeoutMs, stallAt, stallMs, durationMs } = scenario;
  const stallEnd = stallAt + stallMs;
  const slowWaitMs = timeoutMs / 4;
  const clock = simClock();
  const random = seededRandom(scenario.seed + 1);

  const buckets = Array.from({ length: Math.ceil(durationMs / BUCKET_MS) }, (_, i) => ({
    t: i * BUCKET_MS,
    sent: 0,
    served: 0,
    queue: 0,
  }));
  const bucketAt = (time: number) => (time < durationMs ? buckets[Math.floor(time / BUCKET_MS)] : undefined);
  const server = createStormServer(
    clock,
    { ...scenario, slowWaitMs },
    {
      sent(init) {
        const bucket = bucketAt(clock.now());
        if (bucket) bucket.sent++;
        onAttempt(requestId(init?.headers));
      },
      served() {
        const bucket = bucketAt(clock.now());
        if (bucket) bucket.served++;
      },
    },
  );
  for (const bucket of buckets) {
    clock.schedule(Math.min(bucket.t + BUCKET_MS, durationMs), () => {
      bucket.queue = server.waiting();
    });
  }
  // Recovery is judged on the arrival window: what happens once arrivals stop says nothing.
  let recoveredAfterMs: number | null = null;
  clock.schedule(durationMs, () => {
    if (server.oldestWait() >= slowWaitMs) return;
    const last = server.lastSlowStart();
    recoveredAfterMs = last === undefined ? 0 : Math.ceil(last - stallEnd);
  });

  const send = policyClient(policy, server.fetch, clock, { timeoutMs, random });

  return {
    clock,
    server,
    timeline: buckets,
    send,
    recoveredAfterMs: () => recoveredAfterMs,
    measures: () => ({
      recoveredAfterMs,
      served: server.served(),
      wasted: server.wasted(),
      peakQueue: server.peakQueue(),
      timeline: buckets,
    }),
    async run(open) {
      await clock.run(durationMs);
      const settleBy = durationMs + scenario.settleMs;
      while (open() > 0 && clock.now() < settleBy)
        await clock.run(Math.min(settleBy, clock.now() + BUCKET_MS));
    },
  };
}

/**
 * Runs one policy through the scenario and reports what it did to the server.
 *
 * @example
 * ```ts
 * const guarded = await simulateStorm({ policy: defaultGuardsPolicy });
 * const unguarded = await simulateStorm({ policy: guardsOffPolicy });
 * console.log(guarded.incidentAmplification, unguarded.recoveredAfterMs);
 * ```
 */
export async function simulateStorm(config: StormConfig = {}): Promise<StormReport> {
  const scenario = resolveStormFields(config, STORM_DEFAULTS, FIELD_RULES);
  const policy = config.policy ?? defaultGuardsPolicy;
  const { stallAt, stallMs, durationMs } = scenario;
  const incidentEnd = stallAt + stallMs + INCIDENT_TAIL_MS;
  // Attempts per logical request, by id (the value of the request's header).
  const attemptsOf: number[] = [];
  const storm = startStormRun(scenario, policy, (id) => {
    if (id !== undefined && id < attemptsOf.length) attemptsOf[id] = (attemptsOf[id] ?? 0) + 1;
  });
  const { clock, server, send } = storm;
  const arrivals = seededRandom(scenario.seed);

  // --- The clients ----------------------------------------------------------------------------
  const arrivedAt: number[] = [];
  let succeeded = 0;
  let failed = 0;
  let open = 0;
  const failures: Record<string, number> = {};
  const fail = (kind: string) => {
    failed++;
    failures[kind] = (failures[kind] ?? 0) + 1;
  };

  const arrive = () => {
    const id = arrivedAt.length;
    arrivedAt.push(clock.now());
    attemptsOf.push(0);
    open++;
    send(STORM_URL, { headers: { [STORM_REQUEST_HEADER]: String(id) } }).then(
      (result) => {
        open--;
        if (result instanceof Response && result.ok) succeeded++;
        else fail(result instanceof Response ? `HTTP ${result.status}` : 'no response');
      },
      (error: unknown) => {
        open--;
        fail(error instanceof Error ? error.name : typeof error);
      },
    );
    scheduleArrival();
  };
  // Poisson arrivals: exponential gaps, by inversion of a uniform draw (1 − u, never 0).
  const scheduleArrival = () => {
    const gap = (-Math.log(1 - arrivals()) / scenario.ratePerSecond) * 1_000;
    if (clock.now() + gap < durationMs) clock.schedule(gap, arrive);
  };
  scheduleArrival();

  await storm.run(() => open);

  let incidentRequests = 0;
  let incidentFirst = 0;
  let incidentAttempts = 0;
  for (let id = 0; id < arrivedAt.length; id++) {
    const at = arrivedAt[id] as number;
    if (at < stallAt || at > incidentEnd) continue;
    incidentRequests++;
    const sent = attemptsOf[id] ?? 0;
    if (sent > 0) incidentFirst++;
    incidentAttempts += sent;
  }
  const logicalRequests = arrivedAt.length;
  const attempts = server.attempts();
  return {
    policy: policy.name,
    scenario,
    logicalRequests,
    attempts,
    amplification: ratio(attempts, logicalRequests),
    incidentRequests,
    incidentAmplification: ratio(incidentAttempts, incidentFirst),
    succeeded,
    failed,
    unfinished: open,
    successRate: ratio(succeeded, logicalRequests),
    failures,
    ...storm.measures(),
  };
}

/**
 * Runs several policies through the same scenario and seed, one after another, with `simulate`
 * (the open loop's or the closed loop's).
 */
export async function eachPolicy<S, R>(
  simulate: (config: Partial<S> & { readonly policy: StormPolicy }) => Promise<R>,
  config: Partial<S> & { readonly policies: readonly StormPolicy[] },
): Promise<R[]> {
  const { policies, ...scenario } = config;
  const reports: R[] = [];
  for (const policy of policies) reports.push(await simulate({ ...(scenario as Partial<S>), policy }));
  return reports;
}

/**
 * Runs several policies through the same scenario and seed, one after another (what
 * `retryline simulate storm` compares).
 */
export const simulateStorms = (
  config: Partial<StormScenario> & { readonly policies: readonly StormPolicy[] },
): Promise<StormReport[]> => eachPolicy<StormScenario, StormReport>(simulateStorm, config);

/** `part / whole`, 0 when `whole` is 0. */
export const ratio = (part: number, whole: number) => (whole === 0 ? 0 : part / whole);

/** The logical request an attempt belongs to, from its header; `undefined` when it has none. */
function requestId(headers: HeadersInit | undefined): number | undefined {
  // Read without building a Headers object for each attempt of a plain-object init.
  let value: string | null | undefined;
  if (headers instanceof Headers) value = headers.get(STORM_REQUEST_HEADER);
  else if (Array.isArray(headers))
    value = headers.find(([name]) => name.toLowerCase() === STORM_REQUEST_HEADER)?.[1];
  else value = headers?.[STORM_REQUEST_HEADER];
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return undefined;
  return Number(value);
}
