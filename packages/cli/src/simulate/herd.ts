/**
 * The thundering herd of Marc Brooker's "Exponential Backoff And Jitter" (AWS Architecture Blog,
 * 2015), in virtual time: how much work and how much time a jitter saves when many clients contend
 * for one resource. Deterministic for a given seed, and no real time passes.
 *
 * The model (the blog's setup):
 *
 * - **One versioned row, optimistic concurrency.** The server holds a row with a version number.
 *   It answers instantly and has no capacity limit: contention comes only from conflicts, not from
 *   queueing. A read returns the current version; a write carrying a version succeeds (and bumps
 *   the version) only if the row still has that version, and fails with a conflict otherwise.
 * - **Clients.** `clients` clients all start at time 0. A *call* is one try of the operation:
 *   read the version (one round trip), then write with it (another round trip). A client whose
 *   write conflicts waits its backoff, then calls again (read, then write); it never gives up.
 *   Each one-way network hop (client to server or back) takes |Normal(hopMs, 0.2 · hopMs)|
 *   milliseconds — the blog's 10 ± 2 ms — drawn from `seededRandom(seed)`.
 * - **Backoff.** The wait before retry n (n = 1, 2, …) is Retryline's own `computeDelay` on the
 *   policy `normalizePolicy` makes of the strategy, with jitter drawn from `seededRandom(seed + 1)`
 *   and decorrelated jitter walking from the client's previous delay (`base` before the first):
 *   - `none`: exponential, `base · 2^n` capped at `cap`, no jitter;
 *   - `full`: U(0, capped exponential); `equal`: capped/2 + U(0, capped/2);
 *   - `decorrelated`: min(cap, U(base, 3 · previous));
 *   - `no-backoff`: retry at once (constant backoff of 0, no jitter).
 * - **Results.** `calls` is the total number of calls of all clients (each read-then-write try
 *   counts once, whether it succeeds or conflicts); `completionMs` is when the last client's
 *   write succeeded, as the client sees it (its response arrived).
 *
 * Defaults are the blog simulator's: `hopMs` 10, `base` 5 ms, `cap` 2 s. Unlike the blog, which
 * averages 100 runs per point, one run is one seed; full and equal jitter come within a few percent
 * of each other in calls, so their order can flip with a change of seed or client count. Events run
 * on {@link simClock}'s heap; the server's and clients' steps are scheduled callbacks, so no promise
 * is made per event.
 */
import { computeDelay, type PolicyOptions, seededRandom } from '@retryline/core';
import { normalizePolicy } from '@retryline/core/adapter';
import { simClock } from './sim-clock';

/** The backoff strategies the herd compares: Brooker's four, and retrying at once. */
export type HerdStrategy = 'none' | 'full' | 'equal' | 'decorrelated' | 'no-backoff';

/** Every {@link HerdStrategy}, in the order tables list them. */
export const HERD_STRATEGIES: readonly HerdStrategy[] = [
  'none',
  'full',
  'equal',
  'decorrelated',
  'no-backoff',
];

/** The model's defaults. */
export const HERD_DEFAULTS = {
  seed: 1,
  hopMs: 10,
  base: 5,
  cap: 2_000,
  from: 10,
  to: 200,
  step: 10,
} as const;

/** The most clients one run simulates: the none and no-backoff strategies cost about clients² calls. */
export const MAX_HERD_CLIENTS = 2_000;

/**
 * The most work one sweep may take, as the sum over its runs of clients² (what the none and
 * no-backoff strategies cost): that of one run at {@link MAX_HERD_CLIENTS}, some 20 s on a 2-core
 * machine. A sweep such as `1..2000 step 1` would otherwise run for hours without a word.
 */
export const MAX_HERD_WORK = MAX_HERD_CLIENTS ** 2;

/** The client counts a sweep runs: `from`, `from + step`, … and `to` itself, even off the step. */
export function sweepCounts(from: number, to: number, step: number): number[] {
  const counts: number[] = [];
  for (let clients = from; clients <= to; clients += step) counts.push(clients);
  if (counts.at(-1) !== to) counts.push(to);
  return counts;
}

/** A sweep's work in {@link MAX_HERD_WORK}'s unit: the sum of its client counts squared. */
export function sweepWork(counts: readonly number[]): number {
  return counts.reduce((sum, clients) => sum + clients * clients, 0);
}

/** Hop variation: the standard deviation of a hop, as a share of `hopMs`. */
const HOP_SPREAD = 0.2;

export interface HerdConfig {
  /** How many clients contend. A whole number from 1 to {@link MAX_HERD_CLIENTS}. */
  readonly clients: number;
  readonly strategy: HerdStrategy;
  /** @default 1 */
  readonly seed?: number;
  /** One-way network latency in milliseconds (> 0). @default 10 */
  readonly hopMs?: number;
  /** Backoff base in milliseconds (> 0). @default 5 */
  readonly base?: number;
  /** Backoff cap (`maxDelay`) in milliseconds (≥ base). @default 2000 */
  readonly cap?: number;
}

export interface HerdResult {
  readonly clients: number;
  readonly strategy: HerdStrategy;
  /** Calls (read-then-write tries) of all clients together. */
  readonly calls: number;
  /** When the last client's write succeeded, in milliseconds of virtual time. */
  readonly completionMs: number;
}

export interface HerdSweep {
  /** @default 10 */
  readonly from?: number;
  /** @default 200 */
  readonly to?: number;
  /** @default 10 */
  readonly step?: number;
  /** @default every strategy */
  readonly strategies?: readonly HerdStrategy[];
  /** @default 1 */
  readonly seed?: number;
  readonly hopMs?: number;
  readonly base?: number;
  readonly cap?: number;
}

function fail(name: string, expected: string, value: unknown): never {
  throw new RangeError(`Expected ${name} to be ${expected}, got ${String(value)}`);
}

function checkWhole(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    fail(name, `a whole number from ${min} to ${max}`, value);
  return value;
}

function checkPositive(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    fail(name, 'a positive finite number', value);
  return value;
}

function checkStrategy(value: unknown): HerdStrategy {
  if (typeof value !== 'string' || !(HERD_STRATEGIES as readonly string[]).includes(value))
    fail('strategy', `one of ${HERD_STRATEGIES.join(', ')}`, value);
  return value as HerdStrategy;
}

/** The Retryline policy behind a strategy. */
export function herdPolicyOptions(strategy: HerdStrategy, base: number, cap: number): PolicyOptions {
  if (strategy === 'no-backoff') {
    return { retries: Number.POSITIVE_INFINITY, backoff: { strategy: 'constant', base: 0 }, jitter: 'none' };
  }
  return {
    retries: Number.POSITIVE_INFINITY,
    backoff: { strategy: 'exponential', base, factor: 2 },
    maxDelay: cap,
    jitter: strategy,
  };
}

/**
 * Runs the herd once: `clients` clients contend on one versioned row under one strategy until every
 * one has written. Deterministic for a seed.
 *
 * @example
 * ```ts
 * const { calls, completionMs } = await simulateHerd({ clients: 100, strategy: 'full', seed: 1 });
 * ```
 */
export async function simulateHerd(config: HerdConfig): Promise<HerdResult> {
  const clients = checkWhole('clients', config.clients, 1, MAX_HERD_CLIENTS);
  const strategy = checkStrategy(config.strategy);
  const seed = checkWhole('seed', config.seed ?? HERD_DEFAULTS.seed, 0, 0xffff_ffff);
  const hopMs = checkPositive('hopMs', config.hopMs ?? HERD_DEFAULTS.hopMs);
  const base = checkPositive('base', config.base ?? HERD_DEFAULTS.base);
  const cap = checkPositive('cap', config.cap ?? HERD_DEFAULTS.cap);
  if (cap < base) fail('cap', `at least base (${base})`, cap);

  const policy = normalizePolicy(herdPolicyOptions(strategy, base, cap));
  const network = seededRandom(seed);
  const jitter = seededRandom((seed + 1) >>> 0);
  const clock = simClock();
  // |Normal(hopMs, HOP_SPREAD · hopMs)|, by Box–Muller (1 − u keeps the logarithm finite).
  const hop = () => {
    const z = Math.sqrt(-2 * Math.log(1 - network())) * Math.cos(2 * Math.PI * network());
    return Math.abs(hopMs * (1 + HOP_SPREAD * z));
  };

  let version = 0;
  let calls = 0;
  let done = 0;
  let completionMs = 0;

  const client = () => {
    let retry = 0;
    let previousDelay = policy.backoff.base;
    const call = () => {
      calls++;
      // Request to the server, the read there, the version back to the client.
      clock.schedule(hop(), () => {
        const seen = version;
        clock.schedule(hop(), () => {
          // The conditional write goes out; the server applies it or refuses it on arrival.
          clock.schedule(hop(), () => {
            const written = version === seen;
            if (written) version++;
            clock.schedule(hop(), () => (written ? finish() : backOff()));
          });
        });
      });
    };
    const finish = () => {
      done++;
      completionMs = clock.now();
    };
    const backOff = () => {
      retry++;
      const { delay } = computeDelay(policy, retry, previousDelay, jitter);
      previousDelay = delay;
      clock.schedule(delay, call);
    };
    call();
  };

  for (let i = 0; i < clients; i++) client();
  await clock.run(Number.POSITIVE_INFINITY);
  if (done !== clients) throw new Error(`herd ended with ${clients - done} of ${clients} clients unwritten`);
  return { clients, strategy, calls, completionMs };
}

/**
 * Runs the herd for every client count `from, from + step, …` and `to`, and every strategy: one row
 * per (clients, strategy), client counts in order, strategies in the order given. A sweep whose
 * work passes {@link MAX_HERD_WORK} is refused.
 */
export async function simulateHerds(sweep: HerdSweep = {}): Promise<HerdResult[]> {
  const from = checkWhole('from', sweep.from ?? HERD_DEFAULTS.from, 1, MAX_HERD_CLIENTS);
  const to = checkWhole('to', sweep.to ?? HERD_DEFAULTS.to, 1, MAX_HERD_CLIENTS);
  const step = checkWhole('step', sweep.step ?? HERD_DEFAULTS.step, 1, MAX_HERD_CLIENTS);
  if (to < from) fail('to', `at least from (${from})`, to);
  const strategies = (sweep.strategies ?? HERD_STRATEGIES).map(checkStrategy);
  if (strategies.length === 0) fail('strategies', 'at least one strategy', 'none');
  const counts = sweepCounts(from, to, step);
  if (sweepWork(counts) > MAX_HERD_WORK) {
    fail(
      'the sweep',
      `at most ${MAX_HERD_WORK} clients² in all (raise step or narrow the range)`,
      sweepWork(counts),
    );
  }
  const rows: HerdResult[] = [];
  for (const clients of counts) {
    for (const strategy of strategies) {
      rows.push(
        await simulateHerd({
          clients,
          strategy,
          ...(sweep.seed === undefined ? {} : { seed: sweep.seed }),
          ...(sweep.hopMs === undefined ? {} : { hopMs: sweep.hopMs }),
          ...(sweep.base === undefined ? {} : { base: sweep.base }),
          ...(sweep.cap === undefined ? {} : { cap: sweep.cap }),
        }),
      );
    }
  }
  return rows;
}
