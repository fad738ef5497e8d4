/**
 * Endpoint failover and hedged requests, as values a client imports only when it wants them:
 * `endpoints: failover([...])`, `hedge: hedging({ delay: 'p95' })`.
 *
 * Failover: one service reached through several base URLs. Each attempt picks an endpoint the way
 * a load balancer picks a backend (random two choices — Mitzenmacher, "The Power of Two Choices in
 * Randomized Load Balancing", IEEE TPDS 12(10), 2001 — round robin, or smooth weighted round
 * robin), each endpoint has its own circuit breaker (ejected while open, one probe let back in
 * half-open, as a load balancer's health check would), and a retry prefers an endpoint that has not
 * failed the request. The breakers' state lives in the client's store (a `redisStore` shares it
 * across a fleet); the load (requests in flight, latency) is what this process sees, per store.
 *
 * Hedging (Dean and Barroso, "The Tail at Scale", CACM 56(2), 2013): an idempotent attempt still
 * unanswered after a delay (fixed, or its endpoint's observed p95) gets a second copy, to another
 * endpoint where there is one; the first good answer is taken, the other cancelled. Each hedge takes
 * a retry from the retry budget.
 */

import type { AttemptResult, LoopAttempt, Refusal } from '../engine/attempt-loop';
import type { Health } from '../engine/outcome';
import { CircuitOpenError, isRetrylineError, type RetrylineErrorDetails } from '../errors';
import type { Emit } from '../events/emitter';
import {
  type BreakerAdmission,
  type BreakerConfig,
  type BreakerOptions,
  type BreakerRecord,
  breakerOps,
  normalizeBreaker,
  transitionEvent,
} from '../guard/breaker';
import type { GuardHooks } from '../guard/guards';
import { clientStore, type GuardStore, type Store } from '../guard/store';
import { describe, expectObject, invalid, own } from '../policy/normalize';
import type { Clock } from '../time/clock';
import type { Random } from '../time/random';
import { originOf } from './origin';
import { PLAN, type PlanHost, type PlannedAttempt, type Planner, type RequestPlan } from './plan';
import { redactHeaders, redactUrl } from './redact';

/** One endpoint: a base URL, with a weight for `balance: 'weighted'`. */
export type EndpointSpec = string | { readonly url: string; readonly weight?: number };

/** How an attempt picks its endpoint. */
export type Balance = 'two-choices' | 'round-robin' | 'weighted';

/** `failover()`'s options. */
export interface FailoverOptions {
  /**
   * How an attempt picks its endpoint: `'two-choices'` draws two at random and takes the one with
   * fewer requests in flight × lower moving-average latency; `'round-robin'` takes them in turn;
   * `'weighted'` in turn by weight (smooth weighted round robin).
   * @default 'two-choices'
   */
  readonly balance?: Balance;
  /**
   * The rules of each endpoint's own circuit breaker, its state in the client's store under the
   * key `endpoint <base>` (a shared store shares it). With every endpoint's breaker open, an
   * attempt is refused with `CircuitOpenError`, nothing sent.
   * @default { consecutiveFailures: 3, openMs: 5_000, failureRate: 0.5, windowSize: 20, minCalls: 10, halfOpenCalls: 1 }
   */
  readonly breaker?: BreakerOptions;
}

/** Several base URLs for one service: give it as a client's `endpoints`. */
export interface Failover {
  readonly kind: 'failover';
  readonly balance: Balance;
  /** The per-endpoint breaker's rules, defaults filled in. */
  readonly breaker: BreakerConfig;
  /** The endpoints, validated (bases without a trailing slash); `undefined` when a function gives them. */
  readonly endpoints: readonly Endpoint[] | undefined;
}

/** `hedging()`'s options. */
export interface HedgingOptions {
  /** Milliseconds, or `'p95'`: the endpoint's p95 latency once it has 20 answers. */
  readonly delay: number | 'p95';
  /** The delay while a `'p95'` endpoint has fewer than 20 answers. @default no hedge until then */
  readonly fallback?: number;
}

/** Hedged requests: give it as a client's `hedge`. */
export interface Hedging {
  readonly kind: 'hedging';
  readonly delay: number | 'p95';
  readonly fallback: number | undefined;
}

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
const MAX_TIMER = 2_147_483_647;
// The most endpoints (or, hedging alone, origins) a store's pool keeps stats for.
const MAX_POOL = 1_000;

const BALANCES: readonly Balance[] = ['two-choices', 'round-robin', 'weighted'];

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
    const stats = this.stats.get(base);
    if (stats) {
      // Most recently used last: what the cap drops first is what went longest unused.
      this.stats.delete(base);
      this.stats.set(base, stats);
      return stats;
    }
    const fresh = {
      outstanding: 0,
      ewma: 0,
      samples: [],
      count: 0,
      p95: undefined,
      ejectedUntil: 0,
      current: 0,
    };
    this.stats.set(base, fresh);
    if (this.stats.size > MAX_POOL) this.#trim();
    return fresh;
  }

  /**
   * Forgets the least recently used endpoints with nothing in flight, down to the cap: a client
   * that hedges across many origins must not grow for ever. Nothing is lost that matters: the
   * breakers are the store's (which forgets idle ones itself), and load and latency are relearnt.
   */
  #trim(): void {
    for (const [base, stats] of this.stats) {
      if (this.stats.size <= MAX_POOL * 0.9) return;
      if (stats.outstanding === 0) this.stats.delete(base);
    }
  }
}

const pools = new WeakMap<object, Pool>();

/** The pool of `store` (a client's), or of a store made for the request when it has none. */
export function poolOf(store: GuardStore | undefined): Pool {
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
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // below
  }
  if (
    !parsed ||
    (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') ||
    parsed.username !== '' ||
    parsed.password !== '' ||
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

/** Validates a list of endpoints (given, or returned by the function given). */
export function endpointList(list: unknown): readonly Endpoint[] {
  if (!Array.isArray(list) || list.length === 0) {
    // A URL given instead of a list may carry credentials or a token: named redacted.
    throw invalid(
      'endpoints',
      'a non-empty array of base URLs',
      typeof list === 'string' ? redactUrl(list) : list,
    );
  }
  const endpoints = list.map((spec, i) => endpointOf(spec, `endpoints[${i}]`));
  const bases = new Set(endpoints.map((endpoint) => endpoint.base));
  if (bases.size !== endpoints.length) throw invalid('endpoints', 'distinct base URLs', list);
  return endpoints;
}

/** Marks a value as a plan's, and keeps it whole through option mergers that copy plain objects. */
function planValue<V extends object>(
  value: V,
  tag: string,
  list?: (request: Request_) => readonly Endpoint[],
) {
  Object.defineProperty(value, PLAN, { value: plan });
  if (list) Object.defineProperty(value, LIST, { value: list });
  Object.defineProperty(value, Symbol.toStringTag, { value: tag });
  return Object.freeze(value);
}

type Request_ = { readonly method: string; readonly url: string };
const LIST = Symbol('retryline.endpoints');

/**
 * Several base URLs for one service, for a client's `endpoints`: each attempt picks one (see
 * `balance`), a retry prefers one that has not failed the request, and each has its own circuit
 * breaker (ejected while open, probed back in half-open). A relative URL is joined onto the
 * picked base; an absolute URL on one endpoint's base is moved onto the picked one (so axios's
 * `baseURL` or ky's `prefixUrl` may be the first endpoint); any other URL is left alone. The
 * request's idempotency key and id go to every endpoint unchanged, and events name the endpoint of
 * every attempt. A function gives the endpoints per request (validated each time).
 *
 * @example
 * ```ts
 * const api = retryFetch(fetch, {
 *   endpoints: failover(['https://a.api.example', 'https://b.api.example'], { balance: 'round-robin' }),
 * });
 * await api('/v1/items');
 * ```
 */
export function failover(
  endpoints: readonly EndpointSpec[] | ((request: Request_) => readonly EndpointSpec[]),
  options: FailoverOptions = {},
): Failover {
  expectObject('failover() options', options);
  const balance = own(options, 'balance') ?? 'two-choices';
  if (!BALANCES.includes(balance as Balance)) {
    throw invalid('balance', `one of ${BALANCES.map((b) => describe(b)).join(', ')}`, balance);
  }
  const breaker = own(options, 'breaker');
  if (breaker !== undefined) expectObject('breaker', breaker);
  const config = Object.freeze(normalizeBreaker({ ...ENDPOINT_BREAKER_DEFAULTS, ...breaker }));
  const fixed = typeof endpoints === 'function' ? undefined : endpointList(endpoints);
  const list =
    fixed === undefined
      ? (request: Request_) => endpointList((endpoints as (r: Request_) => unknown)(request))
      : undefined;
  return planValue(
    { kind: 'failover' as const, balance: balance as Balance, breaker: config, endpoints: fixed },
    'Failover',
    list,
  );
}

/**
 * Hedged requests, for a client's `hedge`: an idempotent attempt (GET, HEAD, OPTIONS, TRACE, PUT,
 * DELETE; never a POST, even keyed) still unanswered after `delay` gets a second copy, to another
 * endpoint where there is one, and the first good answer is taken, the other cancelled and its
 * connection freed. Each hedge takes one retry from the retry budget, so hedges stay within its
 * ratio; a spent budget sends none. A one-shot body is never hedged.
 *
 * @example
 * ```ts
 * retryFetch(fetch, { hedge: hedging({ delay: 'p95', fallback: 200 }) });
 * ```
 */
export function hedging(options: HedgingOptions | number): Hedging {
  const given = typeof options === 'number' ? { delay: options } : options;
  expectObject('hedging() options', given);
  const ms = (value: unknown, name: string) => {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIMER) {
      throw invalid(name, "a number of milliseconds ≥ 0, or 'p95'", value, 'hedge');
    }
    return value;
  };
  const delay = own(given, 'delay');
  const fallback = own(given, 'fallback');
  return planValue(
    {
      kind: 'hedging' as const,
      delay: delay === 'p95' ? ('p95' as const) : ms(delay, 'hedging.delay'),
      fallback: fallback === undefined ? undefined : ms(fallback, 'hedging.fallback'),
    },
    'Hedging',
  );
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
  const on = baseOf(url, endpoints);
  if (on !== undefined) return endpoint.base + url.slice(on.length);
  // The same URL spelt another way (`HTTPS://A.example`, `:443`): as the URL parser reads it.
  const href = normalized(url);
  const onParsed = href === undefined ? undefined : baseOf(href, endpoints);
  return onParsed === undefined ? undefined : endpoint.base + (href as string).slice(onParsed.length);
}

/**
 * The endpoint base `url` is on, the longest when several are (`https://a.example/v1/admin` over
 * `https://a.example/v1`): the tail moved onto another endpoint is what follows that base.
 */
function baseOf(url: string, endpoints: readonly Endpoint[]): string | undefined {
  let on: string | undefined;
  for (const { base } of endpoints) {
    if (on !== undefined && base.length <= on.length) continue;
    const next = url.charAt(base.length);
    if (url.startsWith(base) && (next === '' || next === '/' || next === '?' || next === '#')) on = base;
  }
  return on;
}

/** An absolute http(s) URL as the URL parser writes it (how endpoint bases are kept), else `undefined`. */
function normalized(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
  } catch {
    return undefined;
  }
}

/** The endpoint an attempt was sent to, and whether its breaker let it through as a probe. */
export interface Picked {
  readonly endpoint: Endpoint;
  readonly stats: EndpointStats;
  readonly url: string;
  readonly key: string;
  /** The endpoint's base, redacted, for events. */
  readonly name: string;
  /** Whether its breaker let it through as a half-open probe: only a probe has a place to free. */
  readonly trial: boolean;
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
  readonly #pool: Pool;
  readonly #random: Random;
  readonly #emit: Emit;
  readonly #label: string;
  readonly #url: string;

  constructor(failover: Failover, pool: Pool, request: Request_, random: Random, emit: Emit, label: string) {
    this.#failover = failover;
    const list = (failover as { [LIST]?: (request: Request_) => readonly Endpoint[] })[LIST];
    this.#endpoints = failover.endpoints ?? (list as (request: Request_) => readonly Endpoint[])(request);
    this.#pool = pool;
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
  async pick(avoid: ReadonlySet<string>, now: () => number, attempt: RetrylineErrorDetails): Promise<Picked> {
    const { breaker } = this.#failover;
    const pool = this.#pool;
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
        const url = rebase(this.#url, this.#endpoints, endpoint) as string;
        return { endpoint, stats, key, name, url, trial: admission.state.state === 'half-open' };
      }
      stats.ejectedUntil = admission.retryAt;
      retryAt = Math.min(retryAt, admission.retryAt);
      refused.add(endpoint.base);
    }
  }

  #choose(candidates: readonly Endpoint[]): Endpoint {
    const { balance } = this.#failover;
    const pool = this.#pool;
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
    // Nothing to count, and no probe place to free: an 'ignored' of a pick that was no probe
    // would free the place of another request's probe (the breaker opened since this pick).
    if (health === 'ignored' && !picked.trial) return undefined;
    const { breaker } = this.#failover;
    const pool = this.#pool;
    const report = (recorded: BreakerRecord) => {
      const { transition } = recorded;
      if (!transition) return;
      // Closed again: the local ejection is over too, for every client of the store.
      if (transition.to === 'closed') picked.stats.ejectedUntil = 0;
      this.#emit({
        type: 'breaker-state',
        key: picked.name,
        ...transitionEvent(transition, recorded.state, breaker.openMs),
      });
    };
    const recorded = pool.ops.breakerRecord(picked.key, breaker, health, now);
    if (recorded instanceof Promise) return recorded.then(report);
    report(recorded);
    return undefined;
  }
}

/** One copy of a hedged attempt (or the attempt itself), as its race tracks it. */
interface Run<R> {
  readonly picked: Picked | undefined;
  /** Where it was sent, when not the request's own URL. */
  readonly url: string | undefined;
  readonly hedge: boolean;
  cancelled: boolean;
  done: boolean;
  at?: number;
  controller?: AbortController;
  settled?: Promise<AttemptResult<R>>;
}

// The mark of an attempt a hedge answered, in its attempt-end.
const ANSWERED_BY_HEDGE = { answeredBy: 'hedge' } as const;
// What the hedge delay's timer resolves with.
const LATE: unique symbol = Symbol('late');
// What the copy that lost a hedge race is aborted with: it never reaches the caller.
const HEDGE_ANSWERED = /* @__PURE__ */ Object.assign(
  new Error('Cancelled: the other copy of this hedged attempt answered first'),
  { name: 'AbortError' },
);
// RFC 9110 §9.2.2: the methods a hedge may copy (and only those the client retries).
const HEDGEABLE = ['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE'];

const answerOf = <R>(result: AttemptResult<R>): R => {
  if (result.ok) return result.value;
  throw result.error;
};

const ignore = () => {};
/** Lets a store call finish on its own: its answer and its failure matter to nobody now. */
const forget = (pending: Promise<unknown> | undefined): void => {
  pending?.catch(ignore);
};

/**
 * `pending`, or `undefined` as soon as `signal` aborts; what `pending` brings after that goes to
 * `late` (a pick whose probe must be freed). A listener of its own, removed once either settles.
 */
function unlessAborted<T>(
  pending: Promise<T>,
  signal: AbortSignal | undefined,
  late: (value: T) => void,
): Promise<T | undefined> {
  if (signal === undefined) return pending;
  return new Promise<T | undefined>((resolve, reject) => {
    let cut = false;
    const stop = () => {
      cut = true;
      resolve(undefined);
    };
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    pending.then(
      (value) => {
        signal.removeEventListener('abort', stop);
        if (cut) late(value);
        else resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', stop);
        if (!cut) reject(error);
      },
    );
  });
}

/**
 * What a copy cancelled because the other answered says of its endpoint: an attempt its hedge beat
 * took at least as long as it ran, a sample of the tail the p95 must see (left out, the p95 would
 * stay on the fast side and hedges would keep firing); a hedge the attempt beat says nothing.
 */
const censored = (run: { readonly hedge: boolean }) => (run.hedge ? undefined : true);

/** What a refusal before `context`'s attempt says of the request so far. */
const unsentDetails = (context: LoopAttempt) => ({
  attempts: context.attempt - 1,
  totalDelay: context.totalDelay,
  cause: context.previousError,
});

/** What `two-choices` compares: requests in flight, weighted by the moving average latency. */
const load = (stats: EndpointStats) => (stats.outstanding + 1) * (stats.ewma + 1);

/**
 * An attempt to the endpoint ended after `latency` ms: a success (an answer worth the wait) adds
 * to its latencies; a failure makes it look slower to `two-choices`; `undefined` (a copy cancelled
 * because the other answered) neither.
 */
export function ended(stats: EndpointStats, latency: number, ok: boolean | undefined): void {
  stats.outstanding = Math.max(0, stats.outstanding - 1);
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

/** The value given as `endpoints` or `hedge`, if it is one of this module's of that kind. */
const planOf = <V extends { kind: string }>(value: unknown, kind: V['kind']): V | undefined =>
  typeof value === 'object' && value !== null && (value as V).kind === kind ? (value as V) : undefined;

/** A request's plan, made by the engine through the value's {@link PLAN}. */
const plan: Planner = (host, endpoints, hedge) => new FailoverPlan(host, endpoints, hedge);

/**
 * One request's endpoints and hedges: the endpoint each attempt goes to, its load and latency, the
 * breaker it reports to, and the hedge of an attempt that is late.
 */
class FailoverPlan<R> implements RequestPlan<R> {
  readonly #host: PlanHost<R>;
  readonly #clock: Clock;
  readonly #pool: Pool;
  readonly #route: Route | undefined;
  readonly #hedging: Hedging | undefined;
  readonly serviceUrl: string | undefined;
  // The endpoints that failed this request, the one picked for the attempt being made, and the
  // copy whose answer the attempt returned (a hedge's, when it answered first).
  readonly #tried = new Set<string>();
  #picked: Picked | undefined;
  #answer: Run<R> | undefined;

  constructor(host: PlanHost<R>, endpoints: unknown, hedge: unknown) {
    this.#host = host;
    const { options, exchange, method } = host;
    const { policy } = options;
    this.#clock = policy.clock;
    this.#pool = poolOf(options.store);
    const given = planOf<Failover>(endpoints, 'failover');
    const request = { method, url: exchange.url };
    const route = given && new Route(given, this.#pool, request, policy.random, host.emit, host.label);
    this.#route = route?.routed ? route : undefined;
    this.serviceUrl = this.#route?.serviceUrl;
    const hedging = planOf<Hedging>(hedge, 'hedging');
    // Never a request that is not idempotent by its method (a keyed POST included: two copies in
    // flight at once is what its key's store answers with a conflict), nor a one-shot body.
    const hedgeable = HEDGEABLE.includes(method) && options.rules.methods.has(method) && exchange.replayable;
    this.#hedging = hedgeable ? hedging : undefined;
  }

  hooks(guards: GuardHooks | undefined) {
    if (!this.#route) return { admit: guards?.admit, record: guards?.record, abandon: guards?.abandon };
    return {
      admit: (context: LoopAttempt) => this.#admit(context),
      record: (health: Health) => {
        const guarded = guards?.record(health);
        const recorded = this.#record(health);
        return guarded && recorded ? Promise.all([guarded, recorded]).then(ignore) : (guarded ?? recorded);
      },
      abandon: () => {
        this.#abandon();
        return guards?.abandon();
      },
    };
  }

  /** Whether the client's response is a failure (not a good answer to take). */
  #failed(value: R): boolean {
    const { exchange } = this.#host;
    return exchange.failed ? exchange.failed(value) : exchange.inspect(value).status >= 400;
  }

  /** How a copy that lost the race reflects on its endpoint: a transport failure or a transient status fails it. */
  #healthOf(result: AttemptResult<R>): Health {
    const { exchange, options } = this.#host;
    if (!result.ok) return this.#host.transportFailure(result.error) ? 'failure' : 'ignored';
    if (!this.#failed(result.value)) return 'success';
    return options.rules.statuses.has(exchange.inspect(result.value).status) ? 'failure' : 'ignored';
  }

  /**
   * Asks the client's guards, then picks the attempt's endpoint: a guard may hold the attempt (the
   * recovery gate parks a retry, a limiter waits for a token), and an endpoint ejected meanwhile
   * must not get it. A pick every endpoint's breaker refuses is a `breaker-open` refusal, nothing
   * sent, and what the guards hold for a sent attempt is given back.
   */
  #admit(context: LoopAttempt): Refusal | undefined | Promise<Refusal | undefined> {
    const hooks = this.#host.hooks();
    const guarded = hooks?.admit(context);
    const pick = (refusal: Refusal | undefined) => refusal ?? this.#pick(context, hooks);
    return guarded instanceof Promise ? guarded.then(pick) : pick(guarded);
  }

  /** The endpoint of an attempt the guards admitted. */
  #pick(context: LoopAttempt, hooks: GuardHooks | undefined): Promise<Refusal | undefined> {
    const route = this.#route as Route;
    const now = () => this.#clock.now();
    // The pick may wait on a shared store: the caller's abort and the deadline do not wait for it
    // (the loop sees the abort), and a pick that lands after them frees its probe.
    const picking = route.pick(this.#tried, now, unsentDetails(context));
    return unlessAborted(picking, context.signal, (late) =>
      forget(route.record(late, 'ignored', now())),
    ).then(
      (picked) => {
        if (picked !== undefined) this.#picked = picked;
        return undefined;
      },
      (error: unknown) => {
        this.#picked = undefined;
        forget(hooks?.unsent());
        if (!isRetrylineError(error, 'CircuitOpenError')) throw error;
        return { outcome: 'breaker-open' as const, error };
      },
    );
  }

  startFields() {
    return this.#picked && { endpoint: this.#picked.name };
  }

  endFields() {
    const answer = this.#answer;
    if (!answer) return undefined;
    return {
      ...(answer.picked && { endpoint: answer.picked.name }),
      ...(answer.hedge && ANSWERED_BY_HEDGE),
    };
  }

  sentTo() {
    return this.#answer?.url;
  }

  /** The attempt's health, for the breaker of the endpoint that answered. */
  #record(health: Health): Promise<void> | undefined {
    const answered = this.#answer?.picked ?? this.#picked;
    this.#answer = undefined;
    this.#picked = undefined;
    if (!answered) return undefined;
    if (health === 'failure') this.#tried.add(answered.endpoint.base);
    return (this.#route as Route).record(answered, health, this.#clock.now());
  }

  /** The attempt ended with nothing to count (an abort): its endpoint's probe place is freed. */
  #abandon(): void {
    const picked = this.#answer?.picked ?? this.#picked;
    this.#answer = undefined;
    this.#picked = undefined;
    if (picked) forget((this.#route as Route).record(picked, 'ignored', this.#clock.now()));
  }

  /** Sends an attempt, counted in its endpoint's load and latencies, and hedged once it is late. */
  send(context: LoopAttempt, given: PlannedAttempt): Promise<R> {
    const picked = this.#picked;
    const attempt = picked ? { ...given, url: picked.url } : given;
    const stats = picked?.stats ?? this.#pool.of(originOf(this.#host.exchange.url));
    const run: Run<R> = { picked, url: attempt.url, hedge: false, cancelled: false, done: false };
    this.#answer = run;
    const hedging = this.#hedging;
    const delay = hedging && (hedging.delay === 'p95' ? (stats.p95 ?? hedging.fallback) : hedging.delay);
    if (delay === undefined) return this.#tracked(stats, attempt, run);
    return this.#hedged(context, attempt, run, stats, delay);
  }

  /** One send, counted in its endpoint's load, and its latency once it is answered. */
  #tracked(stats: EndpointStats, attempt: PlannedAttempt, run: Run<R>): Promise<R> {
    const host = this.#host;
    const at = this.#clock.now();
    run.at = at;
    stats.outstanding++;
    let sent: Promise<R>;
    try {
      sent = host.exchange.send(attempt);
    } catch (error) {
      sent = Promise.reject(error);
    }
    return sent.then(
      (value) => {
        run.done = true;
        ended(stats, this.#clock.now() - at, run.cancelled ? censored(run) : !this.#failed(value));
        return value;
      },
      (error: unknown) => {
        run.done = true;
        ended(stats, this.#clock.now() - at, run.cancelled ? censored(run) : false);
        throw error;
      },
    );
  }

  /**
   * The hedged send: the attempt goes out; if it has not answered after `delay`, and the retry
   * budget gives a retry for it, a second copy goes to another endpoint where there is one.
   */
  async #hedged(
    context: LoopAttempt,
    attempt: PlannedAttempt,
    primary: Run<R>,
    stats: EndpointStats,
    delay: number,
  ): Promise<R> {
    const first = this.#launch(context, attempt, primary, stats);
    const timer = new AbortController();
    const late = await Promise.race([
      first,
      this.#clock.sleep(delay, timer.signal).then(
        (): typeof LATE => LATE,
        (): typeof LATE => LATE,
      ),
    ]);
    timer.abort('cancelled');
    if (late !== LATE) return answerOf(late);
    // The hedge's decision may wait on a shared store: the attempt's answer does not wait for it
    // (a decision that comes after the answer sends nothing: see #hedge).
    const hedge = await Promise.race([this.#hedge(context, primary, delay), first.then(() => undefined)]);
    // The attempt may have answered between the decision and now: no copy goes out after it.
    if (hedge && primary.done && hedge.picked && this.#route) {
      forget(this.#route.record(hedge.picked, 'ignored', this.#clock.now()));
    }
    if (!hedge || primary.done) return answerOf(await first);
    this.#event(context, hedge, attempt);
    this.#launch(context, attempt, hedge, hedge.picked?.stats ?? stats);
    return this.#race(context, attempt, primary, hedge);
  }

  /** Sends one copy of a hedged attempt, with its own signal (the attempt's abort reaches it). */
  #launch(context: LoopAttempt, attempt: PlannedAttempt, run: Run<R>, on: EndpointStats) {
    const outer = context.signal;
    const controller = new AbortController();
    run.controller = controller;
    // The caller's abort, the deadline and the attempt's timeout reach both copies.
    const follow = () => controller.abort(outer?.reason);
    if (outer?.aborted) follow();
    else outer?.addEventListener('abort', follow, { once: true });
    const sent = {
      ...attempt,
      signal: controller.signal,
      ...(run.url === undefined ? {} : { url: run.url }),
    };
    run.settled = this.#tracked(on, sent, run).then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    return run.settled;
  }

  /**
   * The hedge of a late attempt, if one goes: to another endpoint where there is one, with a retry
   * from the budget. `undefined` when the attempt answered meanwhile, was aborted, or the budget
   * (or every other endpoint's breaker) says no.
   */
  async #hedge(context: LoopAttempt, primary: Run<R>, delay: number): Promise<Run<R> | undefined> {
    const host = this.#host;
    const route = this.#route;
    if (primary.done || context.signal?.aborted) return undefined;
    let to: Picked | undefined;
    if (route && primary.picked) {
      try {
        const avoid = new Set([...this.#tried, primary.picked.endpoint.base]);
        to = await route.pick(avoid, () => this.#clock.now(), unsentDetails(context));
      } catch {
        return undefined;
      }
    }
    const guards = host.hooks();
    const summary = `${host.label} had not answered after ${Math.round(delay)} ms`;
    let allowed: boolean;
    try {
      allowed = guards ? await guards.allowHedge(summary) : true;
    } catch {
      // The budget's store failed: no hedge, and the attempt goes on as it would have without one.
      allowed = false;
    }
    if (!allowed || primary.done || context.signal?.aborted) {
      if (to && route) forget(route.record(to, 'ignored', this.#clock.now()));
      return undefined;
    }
    return { picked: to, url: to?.url ?? primary.url, hedge: true, cancelled: false, done: false };
  }

  /**
   * The first good answer of the two copies (or, when neither is good, the first that is a
   * response): the other is cancelled, its response freed, and its endpoint told how it went.
   */
  async #race(context: LoopAttempt, attempt: PlannedAttempt, primary: Run<R>, hedge: Run<R>) {
    const host = this.#host;
    const good = (result: AttemptResult<R>) => result.ok && !this.#failed(result.value);
    const tag = (run: Run<R>) =>
      (run.settled as Promise<AttemptResult<R>>).then((result) => ({ run, result }));
    const one = await Promise.race([tag(primary), tag(hedge)]);
    let won = one;
    if (!good(one.result)) {
      const two = await tag(one.run === primary ? hedge : primary);
      if (good(two.result) || (two.result.ok && !one.result.ok)) won = two;
    }
    const lost = won.run === primary ? hedge : primary;
    if (!lost.done) {
      lost.cancelled = true;
      lost.controller?.abort(HEDGE_ANSWERED);
    }
    const settled = tag(lost).then(({ result }) => {
      if (result.ok && result !== won.result) host.exchange.discard(result.value);
      const route = this.#route;
      if (route && lost.picked) {
        const health = lost.cancelled ? 'ignored' : this.#healthOf(result);
        if (health === 'failure') this.#tried.add(lost.picked.endpoint.base);
        forget(route.record(lost.picked, health, this.#clock.now()));
      }
      if (lost.hedge && !lost.cancelled) this.#event(context, lost, attempt, result);
    });
    forget(settled);
    // A hedge ends before the attempt it hedges (and so before its request): a cancelled one now,
    // one that answered already once its answer has been looked at.
    if (lost.hedge && lost.cancelled)
      this.#event(context, lost, attempt, { ok: false, error: HEDGE_ANSWERED });
    else if (lost.hedge) await settled.catch(ignore);
    if (won.run.hedge) this.#event(context, won.run, attempt, won.result);
    this.#answer = won.run;
    return answerOf(won.result);
  }

  /** A hedge's own `attempt-start` (no `result`) or `attempt-end`, beside the attempt it hedges. */
  #event(context: LoopAttempt, run: Run<R>, attempt: PlannedAttempt, result?: AttemptResult<R>): void {
    const host = this.#host;
    const { emit } = host;
    if (!emit.listening()) return;
    const endpoint = run.picked && { endpoint: run.picked.name };
    if (result === undefined) {
      emit({
        type: 'attempt-start',
        attempt: context.attempt,
        hedge: true,
        headers: redactHeaders({ ...host.callerHeaders(), ...attempt.headers }, host.options.redacted),
        ...endpoint,
      });
      return;
    }
    const good = result.ok && !this.#failed(result.value);
    emit({
      type: 'attempt-end',
      attempt: context.attempt,
      hedge: true,
      outcome: run.cancelled ? 'aborted' : good ? 'success' : 'error',
      duration: this.#clock.now() - (run.at ?? 0),
      ...(run.cancelled ? {} : host.describe(result)),
      ...endpoint,
    });
  }
}
