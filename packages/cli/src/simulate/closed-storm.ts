/**
 * The retry storm with a closed loop of clients: a fixed population of clients, each sending one
 * logical request, waiting for it to settle, thinking, and sending the next. Where the open loop
 * (`storm.ts`) asks what retries do to a server whose callers keep coming whatever happens, this
 * asks the same of callers that wait for their answers, as the users of a page or the workers of a
 * job queue do. Deterministic for a given seed, and in virtual time: the same server, stall, clock
 * and client wiring as the open loop (`startStormRun` in `storm.ts`), only the arrivals differ.
 *
 * The model:
 *
 * - **Clients, closed loop.** `clients` clients share the policy's one client (one `retryFetch`
 *   with one store, or the policy's `send`), as the concurrent callers of one service share its
 *   HTTP client, so a budget or breaker sees all of their traffic. Each client thinks first (so the
 *   clients start staggered, with no start-up wave), then sends a logical request, waits until it
 *   settles (a response or an error, retries included), thinks again, and so on. Think times are
 *   exponential with mean `thinkMs`, drawn from `seededRandom(seed)` (the policy's jitter draws from
 *   `seededRandom(seed + 1)`, as in the open loop). A client whose next request would start at or
 *   after `durationMs` stops: every logical request starts in `[0, durationMs)`. No client ever
 *   has more than one logical request outstanding, so at most `clients` are.
 * - **Server and stall**: the open loop's (see `storm.ts`): a FIFO queue in front of `workers`
 *   workers of `serviceMs` each, unbounded unless `queueLimit` is set, blind to clients giving up
 *   (a request abandoned by its client still takes a worker: wasted work); stalled during
 *   `[stallAt, stallAt + stallMs)`. Every attempt times out after `timeoutMs`.
 * - After `durationMs` no request starts, and the run goes on (at most `settleMs`) until every
 *   request has settled.
 *
 * The measures (`BUCKET_MS` = 100 ms buckets of the timeline, over `[0, durationMs)`):
 *
 * 1. **Amplification in the stall's window** (`windowAmplification`): the attempts that reached the
 *    server, over the whole run, from the logical requests whose first attempt reached the server
 *    in `[stallAt, stallAt + WINDOW_MS)` (4 s: the stall and what follows it), divided by the number
 *    of those requests (`windowRequests`). 1 means no retries; a request that a breaker failed
 *    without any attempt has no first attempt and is not among them (its failure shows in success).
 * 2. **Peak arrivals vs steady** (`peakVsSteady`): the most attempts reaching the server in one
 *    bucket among the buckets that end after `stallAt` (`peakPerBucket`), divided by the mean
 *    attempts per bucket over the buckets lying wholly in `[WARM_UP_MS, stallAt)` (`steadyPerBucket`;
 *    the first second is warm-up). `null` when no bucket lies there. `steadyLoad` is that steady
 *    rate as a share of the server's capacity (`workers / serviceMs`).
 * 3. **Success** (`successRate`): logical requests that ended with a 2xx response, divided by all
 *    logical requests (those that started in `[0, durationMs)`; unfinished ones count as failures).
 * 4. **Latency** (`p50Ms`, `p99Ms`): of each logical request, from its start (the client sending
 *    it) until it settles, successes and failures alike, retries and waits included; a request
 *    still running when the run ends counts with its age then (a lower bound). The percentile is
 *    the nearest rank: the `ceil(p · n)`-th smallest of the `n` latencies.
 * 5. **Recovery after the stall** (`recoveredAfterMs`): the open loop's definition — the backlog has
 *    cleared from the first instant after the stall from which, until `durationMs`, every request a
 *    worker starts had waited less than `timeoutMs / 4`, and none still queued at `durationMs` has
 *    waited that long; milliseconds from the stall's end to that instant (rounded up), or `null`
 *    when the run's arrival window ends first. **Wasted work** (`wasted`): requests the workers
 *    served after their client had given up on them.
 *
 * The defaults: 8 workers × 5 ms serve 1,600 req/s. A closed loop's throughput is
 * `X = clients / (R + Z)` (response time `R`, think time `Z`), so 400 clients offer 60 % of capacity
 * (960 req/s) when `Z = 400 / 960 s − 5 ms ≈ 412 ms`. The stall (2 s) comes at t = 5 s, once the
 * loop is steady, and requests start for 15 s. Attempts time out after 1 s (200 service times).
 *
 * What the closed loop bounds: with at most one attempt per client in flight, a client whose
 * attempts all time out sends at most one attempt per `timeoutMs` (immediate retries), so while
 * the server is stalled or backlogged, attempts arrive at no more than `clients / timeoutMs` (400/s
 * here), a quarter of capacity. Once the stall ends, the backlog drains whatever the policy; what
 * the policies differ in is how many attempts they add, how much of the served work is wasted, how
 * long their requests take and how many fail.
 */

import { seededRandom } from '@retryline/core';
import {
  BUCKET_MS,
  defaultGuardsPolicy,
  eachPolicy,
  ratio,
  resolveStormFields,
  SHARED_FIELD_RULES,
  STORM_DEFAULTS,
  STORM_REQUEST_HEADER,
  STORM_URL,
  type StormBucket,
  type StormFieldRule,
  type StormPolicy,
  type StormRunScenario,
  type StormScenario,
  type StormServerMeasures,
  startStormRun,
} from './storm';

/** The closed loop's scenario: the open loop's server, stall and timeout, and clients that think. */
export interface ClosedStormScenario extends StormRunScenario {
  /** Clients, each with at most one logical request outstanding. @default 400 */
  readonly clients: number;
  /** The mean think time (exponential) before each of a client's requests. @default 412 */
  readonly thinkMs: number;
  /** Parallel workers. @default 8 */
  readonly workers: number;
  /** Milliseconds a worker spends on one request. @default 5 */
  readonly serviceMs: number;
}

/** A closed-loop scenario (any field left out takes its default) and the policy to run it with. */
export interface ClosedStormConfig extends Partial<ClosedStormScenario> {
  /** @default {@link defaultGuardsPolicy} */
  readonly policy?: StormPolicy;
}

/** What one policy did in the closed loop: the five measures (see the module comment) and counts. */
export interface ClosedStormReport extends StormServerMeasures {
  readonly policy: string;
  readonly scenario: ClosedStormScenario;
  /** Logical requests started in `[0, durationMs)`. */
  readonly logicalRequests: number;
  /** Attempts that reached the server (503s of a full queue included). */
  readonly attempts: number;
  /** The most logical requests outstanding at once (at most `clients`). */
  readonly maxOutstanding: number;
  /** Logical requests whose first attempt reached the server in `[stallAt, stallAt + WINDOW_MS)`. */
  readonly windowRequests: number;
  /** Measure 1: their attempts (over the whole run) per request. */
  readonly windowAmplification: number;
  /** Mean attempts per bucket over the buckets wholly in `[WARM_UP_MS, stallAt)`. */
  readonly steadyPerBucket: number;
  /** `steadyPerBucket` as a share of capacity (attempts per second / `workers / serviceMs`). */
  readonly steadyLoad: number;
  /** The most attempts in one bucket among those ending after `stallAt`. */
  readonly peakPerBucket: number;
  /** Measure 2: `peakPerBucket / steadyPerBucket`; `null` when there is no steady bucket. */
  readonly peakVsSteady: number | null;
  /** Logical requests that ended with a 2xx response. */
  readonly succeeded: number;
  /** Logical requests that ended otherwise. */
  readonly failed: number;
  /** Logical requests still running when `settleMs` ran out. */
  readonly unfinished: number;
  /** Measure 3: `succeeded / logicalRequests`. */
  readonly successRate: number;
  /** How failed requests ended: an error's name, or `HTTP <status>`. */
  readonly failures: Readonly<Record<string, number>>;
  /** The median latency of the logical requests, in milliseconds. */
  readonly p50Ms: number;
  /** Measure 4: the 99th-percentile latency of the logical requests, in milliseconds. */
  readonly p99Ms: number;
  /**
   * The least window amplification any policy could reach with this run's arrivals: a first attempt
   * sent in `[stallAt, stallEnd + serviceMs − timeoutMs)` times out before any worker can start it,
   * so its request needs at least one more attempt.
   */
  readonly amplificationBound: number;
  /**
   * The least p99 any policy could reach with this run's arrivals: nothing is served during the
   * stall, so a request started at `t` within it takes at least `stallEnd + serviceMs − t`, and any
   * other at least `serviceMs`.
   */
  readonly p99BoundMs: number;
  /** (Measure 5, recovery after the stall, and the wasted work are the server's: see {@link StormServerMeasures}.) */
}

/** A scenario's fields but the open loop's arrival rate. */
function withoutRate({ ratePerSecond: _rate, ...rest }: StormScenario): StormRunScenario {
  return rest;
}

/** 400 clients at 60 % of a 1,600 req/s server, stalled for 2 s at t = 5 s (the module comment says why). */
export const CLOSED_STORM_DEFAULTS: ClosedStormScenario = {
  // The open loop's timeout, stall, run length, seed, queue and settle time; only the server's size
  // and the arrivals differ.
  ...withoutRate(STORM_DEFAULTS),
  clients: 400,
  thinkMs: 412,
  workers: 8,
  serviceMs: 5,
};

/** How long from the stall's start first attempts count towards the window's amplification. */
export const WINDOW_MS = 4_000;

/** The start of the run that the steady rate leaves out. */
export const WARM_UP_MS = 1_000;

const CLOSED_FIELD_RULES: Record<keyof ClosedStormScenario, StormFieldRule> = {
  clients: [(v) => Number.isInteger(v) && v > 0, 'a positive integer'],
  thinkMs: [(v) => Number.isFinite(v) && v >= 0, 'a number of milliseconds ≥ 0'],
  ...SHARED_FIELD_RULES,
};

/**
 * The nearest-rank percentile: the `ceil(p · n)`-th smallest of the `n` values (the smallest for
 * `p = 0`); 0 when there are none.
 *
 * @example
 * ```ts
 * percentile([5, 1, 4, 2, 3], 0.5); // 3
 * percentile([5, 1, 4, 2, 3], 0.99); // 5
 * ```
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1] as number;
}

/** The peak-arrivals measure of a timeline (measure 2 of the module comment). */
export interface PeakArrivals {
  readonly steadyPerBucket: number;
  readonly peakPerBucket: number;
  /** `peakPerBucket / steadyPerBucket`; `null` when no bucket lies wholly in `[warmUpMs, stallAt)`. */
  readonly peakVsSteady: number | null;
}

/**
 * The most attempts in one bucket among those ending after `stallAt`, against the mean per bucket
 * over the buckets lying wholly in `[warmUpMs, stallAt)`.
 */
export function peakArrivals(
  timeline: readonly Pick<StormBucket, 't' | 'sent'>[],
  stallAt: number,
  warmUpMs = WARM_UP_MS,
): PeakArrivals {
  let steadySum = 0;
  let steadyBuckets = 0;
  let peakPerBucket = 0;
  for (const { t, sent } of timeline) {
    if (t >= warmUpMs && t + BUCKET_MS <= stallAt) {
      steadySum += sent;
      steadyBuckets++;
    }
    if (t + BUCKET_MS > stallAt) peakPerBucket = Math.max(peakPerBucket, sent);
  }
  const steadyPerBucket = ratio(steadySum, steadyBuckets);
  return {
    steadyPerBucket,
    peakPerBucket,
    peakVsSteady: steadyBuckets === 0 || steadyPerBucket === 0 ? null : peakPerBucket / steadyPerBucket,
  };
}

/**
 * Runs one policy through the closed-loop scenario and reports the five measures.
 *
 * @example
 * ```ts
 * const report = await simulateClosedStorm({ policy: defaultGuardsPolicy, seed: 2 });
 * console.log(report.windowAmplification, report.p99Ms, report.recoveredAfterMs);
 * ```
 */
export async function simulateClosedStorm(config: ClosedStormConfig = {}): Promise<ClosedStormReport> {
  const scenario = resolveStormFields(config, CLOSED_STORM_DEFAULTS, CLOSED_FIELD_RULES);
  const policy = config.policy ?? defaultGuardsPolicy;
  const { clients, thinkMs, stallAt, durationMs } = scenario;
  const windowEnd = stallAt + WINDOW_MS;

  // Per logical request, by id (the value of its header).
  const startedAt: number[] = [];
  const settledAt: number[] = [];
  const attemptsOf: number[] = [];
  const firstAttemptAt: number[] = [];
  const storm = startStormRun(scenario, policy, (id) => {
    if (id === undefined || id >= attemptsOf.length) return;
    const sent = attemptsOf[id] ?? 0;
    if (sent === 0) firstAttemptAt[id] = storm.clock.now();
    attemptsOf[id] = sent + 1;
  });
  const { clock, server, send } = storm;
  const thinking = seededRandom(scenario.seed);

  // --- The clients ----------------------------------------------------------------------------
  let succeeded = 0;
  let failed = 0;
  let open = 0;
  let maxOutstanding = 0;
  const failures: Record<string, number> = {};
  const settle = (id: number, kind?: string) => {
    open--;
    settledAt[id] = clock.now();
    if (kind === undefined) {
      succeeded++;
      return;
    }
    failed++;
    failures[kind] = (failures[kind] ?? 0) + 1;
  };

  const sendNext = () => {
    const id = startedAt.length;
    startedAt.push(clock.now());
    settledAt.push(Number.NaN);
    attemptsOf.push(0);
    firstAttemptAt.push(Number.NaN);
    open++;
    maxOutstanding = Math.max(maxOutstanding, open);
    send(STORM_URL, { headers: { [STORM_REQUEST_HEADER]: String(id) } })
      .then(
        (result) => {
          if (result instanceof Response && result.ok) settle(id);
          else settle(id, result instanceof Response ? `HTTP ${result.status}` : 'no response');
        },
        (error: unknown) => settle(id, error instanceof Error ? error.name : typeof error),
      )
      .then(thinkThenSend);
  };
  // Exponential think times, by inversion of a uniform draw (1 − u, never 0).
  function thinkThenSend() {
    const think = -Math.log(1 - thinking()) * thinkMs;
    if (clock.now() + think < durationMs) clock.schedule(think, sendNext);
  }
  for (let client = 0; client < clients; client++) thinkThenSend();

  await storm.run(() => open);

  // --- The measures -----------------------------------------------------------------------------
  let windowRequests = 0;
  let windowAttempts = 0;
  let caught = 0;
  const end = clock.now();
  const stallEnd = stallAt + scenario.stallMs;
  const surelyTimedOut = stallEnd + scenario.serviceMs - scenario.timeoutMs;
  const least = startedAt.map((start) =>
    start >= stallAt && start < stallEnd ? stallEnd + scenario.serviceMs - start : scenario.serviceMs,
  );
  const latencies = startedAt.map((start, id) => {
    const first = firstAttemptAt[id] as number;
    if (first >= stallAt && first < windowEnd) {
      windowRequests++;
      windowAttempts += attemptsOf[id] ?? 0;
      if (first < surelyTimedOut) caught++;
    }
    const settled = settledAt[id] as number;
    return (Number.isNaN(settled) ? end : settled) - start;
  });
  const logicalRequests = startedAt.length;
  const peak = peakArrivals(storm.timeline, stallAt);
  const capacityPerBucket = (scenario.workers / scenario.serviceMs) * BUCKET_MS;
  return {
    policy: policy.name,
    scenario,
    logicalRequests,
    attempts: server.attempts(),
    maxOutstanding,
    windowRequests,
    windowAmplification: ratio(windowAttempts, windowRequests),
    steadyPerBucket: peak.steadyPerBucket,
    steadyLoad: peak.steadyPerBucket / capacityPerBucket,
    peakPerBucket: peak.peakPerBucket,
    peakVsSteady: peak.peakVsSteady,
    succeeded,
    failed,
    unfinished: open,
    successRate: ratio(succeeded, logicalRequests),
    failures,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    amplificationBound: ratio(windowRequests + caught, windowRequests),
    p99BoundMs: percentile(least, 0.99),
    ...storm.measures(),
  };
}

/** Runs several policies through the same closed-loop scenario and seed, one after another. */
export const simulateClosedStorms = (
  config: Partial<ClosedStormScenario> & { readonly policies: readonly StormPolicy[] },
): Promise<ClosedStormReport[]> =>
  eachPolicy<ClosedStormScenario, ClosedStormReport>(simulateClosedStorm, config);
