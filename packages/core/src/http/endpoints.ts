/**
 * Endpoint failover: one service reached through several base URLs. Each attempt picks an endpoint
 * the way a load balancer picks a backend (random two choices, round robin, or smooth weighted round
 * robin; see draft seed 003 §2.4 and Mitzenmacher, "The Power of Two Choices in Randomized Load
 * Balancing", IEEE TPDS 2001), each endpoint has its own circuit breaker (ejected while open, one
 * probe let back in half-open, as a load balancer's health check would), and the latencies each
 * endpoint answers with give hedged requests their delay (its observed p95).
 *
 * The breakers' state lives in the client's store (a `redisStore` shares it across a fleet); the
 * load (requests outstanding, latency) is what this process sees, kept per store.
 */

import type { Health } from '../engine/outcome';
import { CircuitOpenError } from '../errors';
import type { Emit } from '../events/emitter';
import {
  type BreakerAdmission,
  type BreakerConfig,
  type BreakerOptions,
  breakerOps,
  normalizeBreaker,
} from '../guard/breaker';
import { clientStore, type GuardStore, type Store } from '../guard/store';
import { describe, expectObject, invalid, own } from '../policy/normalize';
import type { Random } from '../time/random';
import { redactUrl } from './redact';

/** One endpoint: a base URL, with a weight for `balance: 'weighted'`. */
export type EndpointSpec = string | { readonly url: string; readonly weight?: number };

/** The endpoints of a service: a list, or a function that gives one per request. */
export type EndpointsOption =
  | readonly EndpointSpec[]
  | ((request: { readonly method: string; readonly url: string }) => readonly EndpointSpec[]);

/** How an attempt picks its endpoint. */
export type Balance = 'two-choices' | 'round-robin' | 'weighted';

/** Hedged requests: a delay in milliseconds, or the endpoint's observed p95 latency. */
export type HedgeOption =
  | false
  | number
  | {
      /** Milliseconds, or `'p95'`: the endpoint's p95 latency once it has answered 20 times. */
      readonly delay: number | 'p95';
      /** The delay while a `'p95'` endpoint has fewer than 20 answers. @default no hedge until then */
      readonly fallback?: number;
    };

/** An endpoint after validation: its base URL with no trailing slash. */
export interface Endpoint {
  readonly base: string;
  readonly weight: number;
}

/** The per-endpoint breaker's defaults: quicker to eject and to probe than the client's breaker. */
export const ENDPOINT_BREAKER_DEFAULTS = /* @__PURE__ */ Object.freeze({
  consecutiveFailures: 3,
  openMs: 5_000,
  failureRate: 0.5,
  windowSize: 20,
  minCalls: 10,
  halfOpenCalls: 1,
} as const);

/** How many latencies an endpoint keeps for its p95, and how many it needs first. */
const SAMPLES = 100;
const MIN_SAMPLES = 20;
// The weight of a new latency in an endpoint's moving average.
const EWMA_ALPHA = 0.3;
// A failed attempt makes its endpoint look this much slower to `two-choices` (at most MAX_PENALTY ms).
const FAILURE_PENALTY = 2;
const MAX_PENALTY = 60_000;

const BALANCES: readonly Balance[] = ['two-choices', 'round-robin', 'weighted'];

/** What `endpoints`, `balance`, `endpointBreaker` and `hedge` resolve to. */
export interface Failover {
  readonly endpoints:
    | readonly Endpoint[]
    | ((request: { method: string; url: string }) => readonly Endpoint[]);
  readonly balance: Balance;
  readonly breaker: BreakerConfig;
  readonly hedge: { readonly delay: number | 'p95'; readonly fallback: number | undefined } | undefined;
  readonly pool: Pool;
}

/** What one endpoint has shown this process: its load, its latencies, and when it was ejected. */
export interface EndpointStats {
  outstanding: number;
  ewma: number;
  readonly samples: number[];
  count: number;
  p95: number | undefined;
  ejectedUntil: number;
  // Smooth weighted round robin's running weight.
  current: number;
}

/** The endpoints' stats and breakers of one store: every client given that store shares them. */
export class Pool {
  readonly stats = new Map<string, EndpointStats>();
  turn = 0;
  readonly ops: Pick<Store, 'breakerAdmit' | 'breakerRecord'>;
  constructor(store: GuardStore) {
    this.ops = breakerOps(store);
  }

  of(base: string): EndpointStats {
    let stats = this.stats.get(base);
    if (!stats) {
      stats = { outstanding: 0, ewma: 0, samples: [], count: 0, p95: undefined, ejectedUntil: 0, current: 0 };
      this.stats.set(base, stats);
    }
    return stats;
  }
}

const pools = new WeakMap<object, Pool>();

function poolOf(store: GuardStore | undefined): Pool {
  const home = store ?? clientStore();
  let pool = pools.get(home);
  if (!pool) {
    pool = new Pool(home);
    pools.set(home, pool);
  }
  return pool;
}

/** Validates one endpoint: an absolute http(s) URL with no credentials, query or fragment. */
function endpointOf(spec: unknown, name: string): Endpoint {
  const object = typeof spec === 'object' && spec !== null;
  const url = object ? own(spec as { url?: unknown }, 'url') : spec;
  const weight = object ? own(spec as { weight?: unknown }, 'weight') : undefined;
  const expected = 'an absolute http(s) base URL with no credentials, query or fragment';
  if (typeof url !== 'string') throw invalid(name, expected, spec, 'endpoints');
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(name, expected, redactUrl(url), 'endpoints');
  }
  if (
    (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') ||
    parsed.username !== '' ||
    parsed.password !== '' ||
    parsed.search !== '' ||
    parsed.hash !== '' ||
    url.includes('?') ||
    url.includes('#')
  ) {
    throw invalid(name, expected, redactUrl(url), 'endpoints');
  }
  if (weight !== undefined && !(typeof weight === 'number' && Number.isFinite(weight) && weight > 0)) {
    throw invalid(`${name}.weight`, 'a finite number > 0', weight, 'endpoints');
  }
  return { base: parsed.href.replace(/\/+$/, ''), weight: weight ?? 1 };
}

/** Validates a list of endpoints (given, or returned by the option's function). */
export function endpointList(list: unknown): readonly Endpoint[] {
  if (!Array.isArray(list) || list.length === 0) {
    throw invalid('endpoints', 'a non-empty array of base URLs, or a function returning one', list);
  }
  const endpoints = list.map((spec, i) => endpointOf(spec, `endpoints[${i}]`));
  const bases = new Set(endpoints.map((endpoint) => endpoint.base));
  if (bases.size !== endpoints.length) throw invalid('endpoints', 'distinct base URLs', list);
  return endpoints;
}

function hedgeOf(input: unknown): Failover['hedge'] {
  if (input === undefined || input === false) return undefined;
  const delay = (value: unknown, name: string) => {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 2_147_483_647) {
      throw invalid(name, 'a finite number of milliseconds ≥ 0', value, 'hedge');
    }
    return value;
  };
  if (typeof input === 'number') return { delay: delay(input, 'hedge'), fallback: undefined };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalid('hedge', "false, a delay in milliseconds or { delay: number | 'p95', fallback? }", input);
  }
  const given = own(input as { delay?: unknown }, 'delay');
  const fallback = own(input as { fallback?: unknown }, 'fallback');
  return {
    delay: given === 'p95' ? 'p95' : delay(given, 'hedge.delay'),
    fallback: fallback === undefined ? undefined : delay(fallback, 'hedge.fallback'),
  };
}

/**
 * Resolves the failover options: `undefined` when there are neither endpoints nor hedges (the
 * engine then takes none of this module's paths).
 */
export function resolveFailover(
  options: {
    readonly endpoints?: unknown;
    readonly balance?: unknown;
    readonly endpointBreaker?: unknown;
    readonly hedge?: unknown;
  },
  store: GuardStore | undefined,
): Failover | undefined {
  const given = own(options, 'endpoints');
  const balance = own(options, 'balance') ?? 'two-choices';
  const breaker = own(options, 'endpointBreaker');
  const hedge = hedgeOf(own(options, 'hedge'));
  if (!BALANCES.includes(balance as Balance)) {
    throw invalid('balance', `one of ${BALANCES.map((b) => describe(b)).join(', ')}`, balance);
  }
  if (breaker !== undefined) expectObject('endpointBreaker', breaker);
  const config = normalizeBreaker({
    ...ENDPOINT_BREAKER_DEFAULTS,
    ...(breaker as BreakerOptions | undefined),
  });
  if (given === undefined && hedge === undefined) {
    if (breaker !== undefined || own(options, 'balance') !== undefined) {
      throw invalid('endpoints', 'given with balance and endpointBreaker', given);
    }
    return undefined;
  }
  let endpoints: Failover['endpoints'] = [];
  if (typeof given === 'function') {
    const fn = given as (request: { method: string; url: string }) => unknown;
    endpoints = (request) => endpointList(fn(request));
  } else if (given !== undefined) endpoints = endpointList(given);
  return { endpoints, balance: balance as Balance, breaker: config, hedge, pool: poolOf(store) };
}

const ABSOLUTE = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Where a request's URL goes on `endpoint`: a relative URL joined onto its base; an absolute one
 * that starts with one of the endpoints' bases moved onto this one; `undefined` for a URL elsewhere
 * (left alone).
 */
export function rebase(url: string, endpoints: readonly Endpoint[], endpoint: Endpoint): string | undefined {
  if (!ABSOLUTE.test(url) && !url.startsWith('//')) {
    if (url === '') return endpoint.base;
    return url.startsWith('?') || url.startsWith('#')
      ? `${endpoint.base}${url}`
      : `${endpoint.base}/${url.replace(/^\/+/, '')}`;
  }
  for (const { base } of endpoints) {
    if (
      url === base ||
      url.startsWith(`${base}/`) ||
      url.startsWith(`${base}?`) ||
      url.startsWith(`${base}#`)
    ) {
      return endpoint.base + url.slice(base.length);
    }
  }
  return undefined;
}

/** The endpoint an attempt was sent to, and whether its breaker let it through as a probe. */
export interface Picked {
  readonly endpoint: Endpoint;
  readonly stats: EndpointStats;
  readonly url: string;
  readonly key: string;
  /** The endpoint's base, redacted, for events. */
  readonly name: string;
}

/** The key an endpoint's breaker is kept under in the store. */
const keyOf = (endpoint: Endpoint) => `endpoint ${endpoint.base}`;

/**
 * The endpoints one request may use, and the picks it makes. Built once per request; `undefined`
 * endpoints (hedging only) route nothing.
 */
export class Route {
  readonly #failover: Failover;
  readonly #endpoints: readonly Endpoint[];
  readonly #random: Random;
  readonly #emit: Emit;
  readonly #label: string;
  readonly #url: string;

  constructor(
    failover: Failover,
    request: { method: string; url: string },
    random: Random,
    emit: Emit,
    label: string,
  ) {
    this.#failover = failover;
    const { endpoints } = failover;
    this.#endpoints = typeof endpoints === 'function' ? endpoints(request) : endpoints;
    this.#random = random;
    this.#emit = emit;
    this.#label = label;
    this.#url = request.url;
  }

  /** Whether the request is for the endpoints (a relative URL, or one on an endpoint's base). */
  get routed(): boolean {
    const first = this.#endpoints[0];
    return first !== undefined && rebase(this.#url, this.#endpoints, first) !== undefined;
  }

  /** The request's URL on the first endpoint: what its guards key it by and messages name. */
  get serviceUrl(): string {
    const first = this.#endpoints[0];
    return (first && rebase(this.#url, this.#endpoints, first)) ?? this.#url;
  }

  /**
   * Picks the endpoint for an attempt, other than those in `avoid` while another can take it: the
   * balance's choice among endpoints not ejected, admitted by its breaker. An endpoint whose
   * breaker refuses is ejected until it would let a probe through, and the pick goes on among the
   * rest; with every endpoint ejected the attempt is refused, nothing sent.
   */
  async pick(
    avoid: ReadonlySet<string>,
    now: () => number,
    attempt: { attempts: number; totalDelay: number; cause: unknown },
  ): Promise<Picked> {
    const { pool, breaker } = this.#failover;
    const refused = new Set<string>();
    let retryAt = Number.POSITIVE_INFINITY;
    for (;;) {
      const at = now();
      const open = this.#endpoints.filter((e) => !refused.has(e.base) && pool.of(e.base).ejectedUntil <= at);
      if (open.length === 0) {
        for (const e of this.#endpoints) {
          if (!refused.has(e.base)) retryAt = Math.min(retryAt, pool.of(e.base).ejectedUntil);
        }
        throw new CircuitOpenError(
          `${this.#label} was not sent: the circuit breaker of every endpoint is open (the first lets a probe through at ${new Date(retryAt).toISOString()})`,
          { retryAt, ...attempt },
        );
      }
      const others = open.filter((e) => !avoid.has(e.base));
      const endpoint = this.#choose(others.length > 0 ? others : open);
      const stats = pool.of(endpoint.base);
      const key = keyOf(endpoint);
      const answer = pool.ops.breakerAdmit(key, breaker, now());
      const admission: BreakerAdmission = answer instanceof Promise ? await answer : answer;
      if (admission.allowed) {
        const name = redactUrl(endpoint.base);
        if (admission.transition) this.#emit({ type: 'breaker-state', key: name, ...admission.transition });
        return { endpoint, stats, key, name, url: rebase(this.#url, this.#endpoints, endpoint) as string };
      }
      stats.ejectedUntil = admission.retryAt;
      retryAt = Math.min(retryAt, admission.retryAt);
      refused.add(endpoint.base);
    }
  }

  #choose(candidates: readonly Endpoint[]): Endpoint {
    const { pool, balance } = this.#failover;
    const only = candidates[0] as Endpoint;
    if (candidates.length === 1) return only;
    if (balance === 'round-robin') {
      // One turn per pick over the whole list, so ejections do not reorder the rest.
      const turn = pool.turn++;
      const order = this.#endpoints;
      for (let i = 0; i < order.length; i++) {
        const next = order[(turn + i) % order.length] as Endpoint;
        if (candidates.includes(next)) return next;
      }
      return only;
    }
    if (balance === 'weighted') {
      // Smooth weighted round robin: each endpoint gains its weight, the leader pays the total.
      let total = 0;
      let best = only;
      let bestStats = pool.of(only.base);
      for (const endpoint of candidates) {
        const stats = pool.of(endpoint.base);
        stats.current += endpoint.weight;
        total += endpoint.weight;
        if (stats.current > bestStats.current) {
          best = endpoint;
          bestStats = stats;
        }
      }
      bestStats.current -= total;
      return best;
    }
    // Random two choices: the less loaded of two drawn at random, load = (outstanding + 1) × latency.
    const n = candidates.length;
    const i = Math.min(n - 1, Math.floor(this.#random() * n));
    let j = Math.min(n - 2, Math.floor(this.#random() * (n - 1)));
    if (j >= i) j++;
    const a = candidates[i] as Endpoint;
    const b = candidates[j] as Endpoint;
    return load(pool.of(b.base)) < load(pool.of(a.base)) ? b : a;
  }

  /** How an attempt to `picked` ended, for its breaker (and a breaker-state event on a change). */
  record(picked: Picked, health: Health, now: number): Promise<void> | undefined {
    const { pool, breaker } = this.#failover;
    const report = (recorded: { transition?: { from: string; to: string } }) => {
      const { transition } = recorded;
      if (!transition) return;
      // Closed again: the local ejection is over too, for every client of the store.
      if (transition.to === 'closed') picked.stats.ejectedUntil = 0;
      this.#emit({
        type: 'breaker-state',
        key: picked.name,
        from: transition.from as 'closed',
        to: transition.to as 'open',
      });
    };
    const recorded = pool.ops.breakerRecord(picked.key, breaker, health, now);
    if (recorded instanceof Promise) return recorded.then(report);
    report(recorded);
    return undefined;
  }
}

/** What `two-choices` compares: requests in flight, weighted by the moving average latency. */
const load = (stats: EndpointStats) => (stats.outstanding + 1) * (stats.ewma + 1);

/** An attempt to the endpoint starts. */
export function started(stats: EndpointStats): void {
  stats.outstanding++;
}

/**
 * An attempt to the endpoint ended after `latency` ms: a success (an answer worth the wait) adds
 * to its latencies; a failure makes it look slower to `two-choices`; `undefined` (cancelled) neither.
 */
export function ended(stats: EndpointStats, latency: number, ok: boolean | undefined): void {
  stats.outstanding = Math.max(0, stats.outstanding - 1);
  // A copy cancelled because the other answered says nothing of its endpoint.
  if (ok === undefined) return;
  if (!ok) {
    stats.ewma = Math.min(MAX_PENALTY, Math.max(stats.ewma * FAILURE_PENALTY, latency, 1));
    return;
  }
  stats.ewma = stats.count === 0 ? latency : stats.ewma + (latency - stats.ewma) * EWMA_ALPHA;
  stats.samples[stats.count % SAMPLES] = latency;
  stats.count++;
  // The p95 is recomputed every tenth answer: a sort of 100 numbers is not a per-request cost.
  if (stats.count >= MIN_SAMPLES && (stats.p95 === undefined || stats.count % 10 === 0)) {
    const sorted = stats.samples.slice().sort((x, y) => x - y);
    stats.p95 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)];
  }
}

/** The hedge delay for an attempt to an endpoint with `stats`, or `undefined` for no hedge. */
export function hedgeDelay(failover: Failover, stats: EndpointStats): number | undefined {
  const { hedge } = failover;
  if (!hedge) return undefined;
  if (hedge.delay !== 'p95') return hedge.delay;
  return stats.p95 ?? hedge.fallback;
}
