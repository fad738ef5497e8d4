/**
 * Sustained overload in virtual time: a server of fixed capacity offered twice what it can serve,
 * for as long as the run lasts, and what the clients' retry policy does to the work it gets done.
 * The question is the one of Google's *Site Reliability Engineering*, chapter 21 "Handling
 * Overload" (https://sre.google/sre-book/handling-overload/): a server that rejects what it cannot
 * serve still spends work on each rejection, so clients that keep sending what will be rejected
 * (and retrying it) take capacity from the requests it could serve; adaptive client-side throttling
 * (`adaptiveThrottle()`) refuses that part locally instead. Deterministic for a given seed, and no
 * real time passes.
 *
 * The model:
 *
 * - **Server.** The storms' server (`createStormServer` in `storm.ts`): a FIFO queue in front of
 *   `workers` workers of `serviceMs` each (`workers / serviceMs · 1000` req/s), no stall. Its queue
 *   holds at most `queueLimit` requests; an attempt that finds it full gets `503` at once, and that
 *   rejection is not free: it costs a worker `rejectShare × serviceMs` (reading the request,
 *   deciding, answering), owed at once and paid before the next queued request starts. So every
 *   rejected attempt takes `rejectShare` of a request's worth of capacity from the served ones.
 * - **Clients, open loop.** Logical requests arrive as a Poisson process of
 *   `offeredLoad × capacity` per second (exponential gaps from `seededRandom(seed)`), whatever the
 *   server answers, as the users of an overloaded service keep coming: the offered load stays at
 *   `offeredLoad` × capacity however the policy behaves, which is what "2× overload" means. (A
 *   closed loop would lower its own offer as responses slow down and raise it as fast 503s come
 *   back, mixing the policy's effect with the loop's.) They are dealt in turn to `clients` client
 *   processes, each with its own Retryline client (`retryFetch` with its own store and guards, as
 *   separate processes have; the jitter of all from `seededRandom(seed + 1)`) or the policy's own
 *   `send`. Every attempt times out after `timeoutMs`.
 * - **Measures**, over the measured window `[warmUpMs, warmUpMs + durationMs)` (the warm-up lets the
 *   queue fill and every client's guards reach their steady state; the throttle's counts start
 *   empty, as after a deployment): goodput (responses with a 2xx the clients received in the
 *   window, per second), attempts that reached the server, attempts it rejected (503) and attempts
 *   the clients refused themselves (a throttle's refusal ends its request, so each refused request
 *   is one refused attempt); and, of the logical requests that arrived in the window, the share
 *   that ended with a 2xx and their latency (from arrival until they settled, failures included:
 *   a request refused locally settles at once). Arrivals stop at the window's end; the run goes on
 *   (at most `settleMs`) until those requests have settled.
 *
 * The defaults: 8 workers × 40 ms serve 200 req/s, and 400 req/s arrive (2×). A rejection costs
 * 10 % of a request (4 ms): an answer with no work behind it is far cheaper than the work, but not
 * free. The queue holds 16 requests (80 ms of work), so a queued request waits at most some 100 ms
 * and the 1 s timeout never fires: every failure is a 503, and the wasted work is the rejections'.
 * Ten client processes of 40 req/s each. Ten seconds of warm-up, thirty measured.
 *
 * What to expect: with every worker busy, served `S` and rejected `J` per second share the workers'
 * time, `S · serviceMs + J · rejectShare · serviceMs = workers` seconds per second, so each rejected
 * attempt costs `rejectShare` of a served one. Without a throttle, `J` is the attempts sent beyond
 * what is served: the 400/s first attempts plus whatever retries the budget and the gate let
 * through. With `adaptiveThrottle()` (k = 2), a client sends about `k` attempts per accepted one, so
 * `J ≈ S`: fewer rejections, and the capacity they took goes to served requests.
 */

import { seededRandom } from '@retryline/core';
import { getRetryInfo } from '@retryline/fetch';
import { percentile } from './closed-storm';
import { retrylineWithThrottlePolicy } from './peers';
import { simClock } from './sim-clock';
import {
  createStormServer,
  eachPolicy,
  policyClient,
  ratio,
  resolveFields,
  STORM_REQUEST_HEADER,
  STORM_URL,
  type StormFieldRule,
  type StormPolicy,
  type StormServer,
} from './storm';

/** The server, the load and the window measured: everything but the clients' policy. */
export interface OverloadScenario {
  /** Parallel workers. @default 8 */
  readonly workers: number;
  /** Milliseconds a worker spends serving one request. @default 40 */
  readonly serviceMs: number;
  /** Waiting requests beyond which the server answers 503 at once. @default 16 */
  readonly queueLimit: number;
  /** What a 503 of a full queue costs a worker, as a share of `serviceMs`. @default 0.1 */
  readonly rejectShare: number;
  /** Logical requests arriving per second, as a multiple of the server's capacity. @default 2 */
  readonly offeredLoad: number;
  /** Client processes, each with its own Retryline client and guards. @default 10 */
  readonly clients: number;
  /** The per-attempt timeout every client uses. @default 1000 */
  readonly timeoutMs: number;
  /** Milliseconds of overload before the measured window. @default 10000 */
  readonly warmUpMs: number;
  /** How long the measured window lasts. @default 30000 */
  readonly durationMs: number;
  /** Seeds the arrivals (`seed`) and the policy's jitter (`seed + 1`). @default 1 */
  readonly seed: number;
  /** How long after the window the run may go on for its requests to settle. @default 30000 */
  readonly settleMs: number;
}

/** A scenario (any field left out takes its default) and the policy to run it with. */
export interface OverloadConfig extends Partial<OverloadScenario> {
  /** @default {@link retrylineWithThrottlePolicy} */
  readonly policy?: StormPolicy;
}

/** What one policy got out of the overloaded server, over the measured window. */
export interface OverloadReport {
  readonly policy: string;
  readonly scenario: OverloadScenario;
  /** `workers / serviceMs · 1000`: requests per second the server serves when it rejects nothing. */
  readonly capacityPerSecond: number;
  /** Logical requests that arrived in the window. */
  readonly logicalRequests: number;
  /** Logical requests that ended with a 2xx in the window. */
  readonly succeeded: number;
  /** `succeeded` per second of the window. */
  readonly goodputPerSecond: number;
  /** Attempts that reached the server in the window (its 503s included). */
  readonly attempts: number;
  /** Attempts the server answered with a 503 because its queue was full. */
  readonly rejected: number;
  readonly rejectedPerSecond: number;
  /** Attempts the clients refused themselves (nothing sent): first attempts and retries. */
  readonly refused: number;
  /** Of those, first attempts (the request rejected with `ThrottledError`). */
  readonly refusedFirst: number;
  /** The share of the workers' time in the window spent on rejections. */
  readonly rejectWorkShare: number;
  /** Requests the workers served in the window, and those whose client had given up (wasted). */
  readonly served: number;
  readonly wasted: number;
  /** Of the requests that arrived in the window, the share that ended with a 2xx. */
  readonly successRate: number;
  /** Their latency, arrival to settling, failures included (nearest rank), in milliseconds. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** The 99th-percentile latency of those that succeeded. */
  readonly successP99Ms: number;
  /** How those that failed ended: `HTTP <status>` (and what stopped its retries), or an error's name. */
  readonly failures: Readonly<Record<string, number>>;
}

/** 200 req/s offered 400 req/s, a rejection at 10 % of a request (the module comment says why). */
export const OVERLOAD_DEFAULTS: OverloadScenario = {
  workers: 8,
  serviceMs: 40,
  queueLimit: 16,
  rejectShare: 0.1,
  offeredLoad: 2,
  clients: 10,
  timeoutMs: 1_000,
  warmUpMs: 10_000,
  durationMs: 30_000,
  seed: 1,
  settleMs: 30_000,
};

const positiveInteger: StormFieldRule = [(v) => Number.isInteger(v) && v > 0, 'a positive integer'];
const positiveMs: StormFieldRule = [(v) => Number.isFinite(v) && v > 0, 'a positive number of milliseconds'];
const msFromZero: StormFieldRule = [(v) => Number.isFinite(v) && v >= 0, 'a number of milliseconds ≥ 0'];

const OVERLOAD_FIELD_RULES: Record<keyof OverloadScenario, StormFieldRule> = {
  workers: positiveInteger,
  serviceMs: positiveMs,
  queueLimit: [(v) => Number.isInteger(v) && v >= 0, 'an integer ≥ 0'],
  rejectShare: [(v) => Number.isFinite(v) && v >= 0, 'a number ≥ 0 (a share of serviceMs)'],
  offeredLoad: [(v) => Number.isFinite(v) && v > 0, 'a positive number (a multiple of capacity)'],
  clients: positiveInteger,
  timeoutMs: positiveMs,
  warmUpMs: msFromZero,
  durationMs: positiveMs,
  seed: [(v) => Number.isInteger(v), 'an integer'],
  settleMs: msFromZero,
};

/** What happened to one logical request. */
interface Fate {
  readonly arrivedAt: number;
  settledAt?: number;
  ok?: boolean;
  /** How it failed, for the failures table. */
  kind?: string;
}

/** The server's counts within the window `[from, to)`. */
interface WindowCounts {
  attempts: number;
  rejected: number;
  served: number;
  wasted: number;
}

/** The storms' server with the rejection cost, counting its events within `[from, to)`. */
function overloadServer(
  clock: ReturnType<typeof simClock>,
  scenario: OverloadScenario,
  from: number,
  to: number,
): { server: StormServer; counts: WindowCounts } {
  const counts: WindowCounts = { attempts: 0, rejected: 0, served: 0, wasted: 0 };
  const inWindow = () => clock.now() >= from && clock.now() < to;
  const server = createStormServer(
    clock,
    {
      workers: scenario.workers,
      serviceMs: scenario.serviceMs,
      stallAt: 0,
      stallMs: 0,
      queueLimit: scenario.queueLimit,
      slowWaitMs: Number.POSITIVE_INFINITY,
      rejectMs: scenario.rejectShare * scenario.serviceMs,
    },
    {
      sent: () => {
        if (inWindow()) counts.attempts++;
      },
      rejected: () => {
        if (inWindow()) counts.rejected++;
      },
      served: (wasted) => {
        if (!inWindow()) return;
        counts.served++;
        if (wasted) counts.wasted++;
      },
    },
  );
  return { server, counts };
}

/** How a request that did not succeed ended, and whether a throttle refused its last attempt. */
function failureOf(result: unknown): { kind: string; refused: boolean; first: boolean } {
  const info = getRetryInfo(result as Response);
  const refused = info?.outcome === 'throttled';
  if (result instanceof Response) {
    const stopped = info?.stoppedBy === undefined ? '' : ` (${info.stoppedBy})`;
    return { kind: `HTTP ${result.status}${stopped}`, refused, first: false };
  }
  const name = result instanceof Error ? result.name : typeof result;
  return { kind: name, refused: refused || name === 'ThrottledError', first: true };
}

/**
 * Runs one policy against the overloaded server and reports what it got done in the window.
 *
 * @example
 * ```ts
 * const plain = await simulateOverload({ policy: retrylineDefaultsPolicy });
 * const throttled = await simulateOverload({ policy: retrylineWithThrottlePolicy });
 * console.log(throttled.goodputPerSecond / plain.goodputPerSecond, throttled.rejected, plain.rejected);
 * ```
 */
export async function simulateOverload(config: OverloadConfig = {}): Promise<OverloadReport> {
  const scenario = resolveFields(config, OVERLOAD_DEFAULTS, OVERLOAD_FIELD_RULES);
  const policy = config.policy ?? retrylineWithThrottlePolicy;
  const { warmUpMs, durationMs, timeoutMs } = scenario;
  const end = warmUpMs + durationMs;
  const inWindow = (time: number) => time >= warmUpMs && time < end;
  const clock = simClock();
  const { server, counts } = overloadServer(clock, scenario, warmUpMs, end);
  const random = seededRandom(scenario.seed + 1);
  const clients = Array.from({ length: scenario.clients }, () =>
    policyClient(policy, server.fetch, clock, { timeoutMs, random }),
  );

  const fates: Fate[] = [];
  const refusals = { all: 0, first: 0 };
  let succeeded = 0;
  let open = 0;
  const settle = (fate: Fate, result: unknown, ok: boolean) => {
    open--;
    fate.settledAt = clock.now();
    fate.ok = ok;
    if (ok) {
      if (inWindow(fate.settledAt)) succeeded++;
      return;
    }
    const failure = failureOf(result);
    fate.kind = failure.kind;
    if (failure.refused && inWindow(fate.settledAt)) {
      refusals.all++;
      if (failure.first) refusals.first++;
    }
  };
  const arrive = () => {
    const id = fates.length;
    const fate: Fate = { arrivedAt: clock.now() };
    fates.push(fate);
    open++;
    const client = clients[id % clients.length] as (typeof clients)[number];
    client(STORM_URL, { headers: { [STORM_REQUEST_HEADER]: String(id) } }).then(
      (result) => settle(fate, result, result instanceof Response && result.ok),
      (error: unknown) => settle(fate, error, false),
    );
    scheduleArrival();
  };
  const arrivals = seededRandom(scenario.seed);
  const capacityPerSecond = (scenario.workers / scenario.serviceMs) * 1_000;
  const ratePerSecond = scenario.offeredLoad * capacityPerSecond;
  // Poisson arrivals: exponential gaps, by inversion of a uniform draw (1 − u, never 0).
  const scheduleArrival = () => {
    const gap = (-Math.log(1 - arrivals()) / ratePerSecond) * 1_000;
    if (clock.now() + gap < end) clock.schedule(gap, arrive);
  };
  scheduleArrival();

  await clock.run(end);
  const settleBy = end + scenario.settleMs;
  while (open > 0 && clock.now() < settleBy) await clock.run(Math.min(settleBy, clock.now() + 100));

  return summarise(policy, scenario, {
    fates: fates.filter((fate) => inWindow(fate.arrivedAt)),
    succeeded,
    refusals,
    counts,
    now: clock.now(),
    capacityPerSecond,
  });
}

/** The report, from what the run recorded. */
function summarise(
  policy: StormPolicy,
  scenario: OverloadScenario,
  run: {
    readonly fates: readonly Fate[];
    readonly succeeded: number;
    readonly refusals: { readonly all: number; readonly first: number };
    readonly counts: WindowCounts;
    readonly now: number;
    readonly capacityPerSecond: number;
  },
): OverloadReport {
  const seconds = scenario.durationMs / 1_000;
  const failures: Record<string, number> = {};
  const latencies: number[] = [];
  const successLatencies: number[] = [];
  let ok = 0;
  for (const fate of run.fates) {
    const latency = (fate.settledAt ?? run.now) - fate.arrivedAt;
    latencies.push(latency);
    if (fate.ok === true) {
      ok++;
      successLatencies.push(latency);
    } else {
      const kind = fate.kind ?? 'unfinished';
      failures[kind] = (failures[kind] ?? 0) + 1;
    }
  }
  const { attempts, rejected, served, wasted } = run.counts;
  return {
    policy: policy.name,
    scenario,
    capacityPerSecond: run.capacityPerSecond,
    logicalRequests: run.fates.length,
    succeeded: run.succeeded,
    goodputPerSecond: run.succeeded / seconds,
    attempts,
    rejected,
    rejectedPerSecond: rejected / seconds,
    refused: run.refusals.all,
    refusedFirst: run.refusals.first,
    rejectWorkShare:
      (rejected * scenario.rejectShare * scenario.serviceMs) / (scenario.workers * scenario.durationMs),
    served,
    wasted,
    successRate: ratio(ok, run.fates.length),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    successP99Ms: percentile(successLatencies, 0.99),
    failures,
  };
}

/** Runs several policies through the same scenario and seed, one after another. */
export const simulateOverloads = (
  config: Partial<OverloadScenario> & { readonly policies: readonly StormPolicy[] },
): Promise<OverloadReport[]> => eachPolicy<OverloadScenario, OverloadReport>(simulateOverload, config);
