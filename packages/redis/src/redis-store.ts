import type { Store } from '@retryline/core';
import { invalid, MAX_DELAY_LIMIT, systemClock } from '@retryline/core/adapter';
import {
  type BreakerAdmission,
  type BreakerConfig,
  type BreakerOutcome,
  type BreakerRecord,
  type BudgetDecision,
  type BudgetRecord,
  type BulkheadConfig,
  bucketInit,
  bucketTake,
  type GateVerdict,
  localStore,
  type RecoveryGateConfig,
  type RetryBudgetConfig,
  type TokenBucketConfig,
} from '@retryline/core/store';
import { connectionOf, type RedisClient } from './connection';
import type { RedisStoreEvent, StoreOperation } from './events';
import { createRunner } from './runner';
import { BREAKER_ADMIT, BREAKER_RECORD, decodeBreakerState, decodeTransition } from './scripts/breaker';
import { BULKHEAD_ACQUIRE, BULKHEAD_RELEASE, BULKHEAD_RENEW } from './scripts/bulkhead';
import type { Script } from './scripts/lua';
import { PACING_GET, PACING_SET } from './scripts/pacing';
import { GATE_ADMIT, GATE_RECORD } from './scripts/recovery-gate';
import { BUDGET, decodeBudgetBuckets } from './scripts/retry-budget';
import { LIMITER_TAKE } from './scripts/token-bucket';

/** Options of {@link redisStore}. */
export interface RedisStoreOptions {
  /**
   * Starts every key the store writes (`<prefix>:breaker:<guard key>`, `:budget:`, `:limiter:`,
   * `:bulkhead:`, `:pacing:`, `:gate:`). Processes that should share guards use the same prefix;
   * give each environment (or test) its own.
   * @default 'retryline'
   * @example
   * ```ts
   * redisStore(redis, { prefix: 'retryline:prod' });
   * ```
   */
  readonly prefix?: string;
  /**
   * Whose clock the guards run on. `'redis'`: Redis's `TIME`, read inside each script, so a fleet
   * whose hosts' clocks disagree still agrees on when a breaker reopens or a budget window ends
   * (times in answers, such as `CircuitOpenError.retryAt`, are moved back into the caller's clock).
   * `'caller'`: the `now` each caller passes, as the memory store does (for tests with a virtual
   * clock; a fleet then needs synchronised clocks).
   * @default 'redis'
   * @example
   * ```ts
   * redisStore(redis, { clock: 'caller' });
   * ```
   */
  readonly clock?: 'redis' | 'caller';
  /**
   * What a guard hears when Redis cannot answer (unreachable, silent for `timeoutMs`, or
   * reconnecting). `true`: the store degrades to a memory store of its own, in this process, for the
   * operations Redis cannot answer, so every guard keeps working per process (the budget still caps
   * retries, a breaker still opens) and requests go on; Redis takes over again as soon as it
   * answers. `false`: the request fails with `StoreUnavailableError` before it is sent. What is
   * reported after a send (breakerRecord, bulkheadRelease, pacingSet, gateRecord) never fails the
   * request, in either mode. Either way the outage is reported once through `onEvent`.
   * @default true
   * @example
   * ```ts
   * redisStore(redis, { failOpen: false }); // no request without the fleet's shared guards
   * ```
   */
  readonly failOpen?: boolean;
  /**
   * How long Redis may answer nothing at all (no reply to any command on the connection) before an
   * operation waiting for it is answered from local memory (or fails), and how long after a command
   * is written Redis may start it. Judged by Redis's own answers, not by how long the caller waited:
   * a process busy with other work does not make Redis look slow. While an outage lasts, operations
   * are answered at once without waiting.
   * @default 250
   * @example
   * ```ts
   * redisStore(redis, { timeoutMs: 100 });
   * ```
   */
  readonly timeoutMs?: number;
  /**
   * While Redis is unavailable, one operation per this many milliseconds is sent to see whether it
   * is back (and at once when ioredis reconnects); the others fail without waiting.
   * @default 1000
   * @example
   * ```ts
   * redisStore(redis, { probeMs: 5000 });
   * ```
   */
  readonly probeMs?: number;
  /**
   * How long a breaker nobody calls is kept after its open period: past `openMs + idleMs` without
   * an operation, its key expires and the next call finds a closed breaker with an empty window.
   * A recovery gate's key likewise expires `idleMs` after its last operation (never before its
   * probe's lease or its next probe time): the next retry then finds a key that has seen nothing.
   * @default 60_000
   * @example
   * ```ts
   * redisStore(redis, { idleMs: 300_000 });
   * ```
   */
  readonly idleMs?: number;
  /**
   * How long a bulkhead place outlives the process that holds it. Places are leases: this process
   * renews its own every `leaseMs / 3` while it holds them, so a live attempt keeps its place for as
   * long as it runs, and a crashed process's places come free within `leaseMs`.
   * @default 30_000
   * @example
   * ```ts
   * redisStore(redis, { leaseMs: 10_000 });
   * ```
   */
  readonly leaseMs?: number;
  /**
   * How often a queued bulkhead waiter asks again: a place freed by another process wakes nobody
   * here. A waiter that has not asked for `max(1000, 10 × pollMs)` ms loses its queue slot.
   * @default 100
   * @example
   * ```ts
   * redisStore(redis, { pollMs: 50 });
   * ```
   */
  readonly pollMs?: number;
  /**
   * Receives the store's own events: `store-unavailable` once when an outage starts,
   * `store-recovered` when Redis answers again. Called synchronously; what it throws is ignored.
   * @example
   * ```ts
   * redisStore(redis, { onEvent: (event) => logger.warn(event) });
   * ```
   */
  readonly onEvent?: (event: RedisStoreEvent) => void;
}

/** A {@link Store} on Redis. */
export interface RedisStore extends Store {
  // Every operation is a round trip to Redis: each answers with a promise.
  breakerAdmit(key: string, config: BreakerConfig, now: number): Promise<BreakerAdmission>;
  breakerRecord(
    key: string,
    config: BreakerConfig,
    outcome: BreakerOutcome,
    now: number,
  ): Promise<BreakerRecord>;
  budgetRequest(key: string, config: RetryBudgetConfig, now: number): Promise<BudgetRecord>;
  pacingGet(key: string, now: number): Promise<number | undefined>;
  // The recovery gate's state is shared too: a fleet parks its retries to an origin together.
  gateAdmit(key: string, config: RecoveryGateConfig, now: number, leaseMs: number): Promise<GateVerdict>;
  gateRecord(
    key: string,
    config: RecoveryGateConfig,
    health: BreakerOutcome,
    probe: boolean,
    probeWait: number,
    now: number,
  ): Promise<{ readonly recovered: boolean; readonly failures: number }>;
  /** How often a queued bulkhead waiter asks again (see {@link RedisStoreOptions.pollMs}). */
  readonly pollMs: number;
  /** The key prefix in use. */
  readonly prefix: string;
  /**
   * Stops renewing this process's bulkhead leases (they then expire within `leaseMs`). Does not
   * close the ioredis client, which is yours.
   */
  close(): void;
}

/** Operations that report on a send rather than allow one: they never throw. */
const AFTER_SEND: ReadonlySet<StoreOperation> = new Set([
  'breakerRecord',
  'bulkheadRelease',
  'pacingSet',
  'gateRecord',
]);

const DEFAULTS = {
  prefix: 'retryline',
  clock: 'redis',
  failOpen: true,
  timeoutMs: 250,
  probeMs: 1000,
  idleMs: 60_000,
  leaseMs: 30_000,
  pollMs: 100,
} as const;

/**
 * A {@link Store} on Redis, so every process that uses the same Redis and prefix shares one
 * breaker, one retry budget, one rate limiter, one bulkhead, one pacing and one recovery gate per
 * guard key. Each operation is one Lua script (atomic, one round trip) applying the same rules as
 * core's pure guard functions; keys expire once their state no longer matters. When Redis is
 * unreachable or silent, the store answers from a memory store of its own (by default), so guards
 * keep working per process; the outage is reported once and the store returns to Redis by itself
 * when it answers.
 *
 * @example
 * ```ts
 * import { Redis } from 'ioredis';
 * import { circuitBreaker, retryFetch } from '@retryline/fetch';
 * import { redisStore } from '@retryline/redis';
 *
 * const store = redisStore(new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'), {
 *   prefix: 'retryline:checkout',
 *   onEvent: (event) => console.warn('[retryline]', event.type),
 * });
 * // The client's budget, and guard values given no store of their own, keep their state in Redis.
 * const api = retryFetch(fetch, { store, breaker: circuitBreaker() });
 * ```
 */
export function redisStore(client: RedisClient, options: RedisStoreOptions = {}): RedisStore {
  if (typeof client !== 'object' || client === null || typeof client.defineCommand !== 'function') {
    throw invalid('redisStore client', 'an ioredis client (Redis or Cluster)', client);
  }
  const settings = resolve(options);
  const { prefix, failOpen, leaseMs, pollMs } = settings;
  const connection = connectionOf(client);
  const run = createRunner({ connection, ...settings });
  const queueLeaseMs = Math.max(1000, 10 * pollMs);

  // Where the guards live while Redis cannot answer: this process's memory, one store per
  // redisStore. Its state outlives an outage and expires as the memory store's does, so a second
  // outage within a window finds what this process saw in the first.
  const local = localStore();

  /**
   * Runs `script` on `guard`'s key. When Redis cannot answer: `fallback()`, the same operation on
   * the local memory store, when failing open, and always for what is told after a send
   * (breakerRecord, bulkheadRelease, pacingSet, gateRecord): throwing there would turn a response
   * already received into an error.
   */
  async function op<T>(
    script: Script,
    operation: StoreOperation,
    guard: string,
    key: string,
    now: number,
    args: readonly (string | number)[],
    decode: (values: readonly string[], shift: number) => T,
    fallback: () => T | Promise<T>,
  ): Promise<T> {
    let answer: Awaited<ReturnType<typeof run>>;
    callerSkew = now - systemClock.now();
    try {
      answer = await run(script, operation, key, redisKey(guard, key), now, args.map(argument));
    } catch (error) {
      if (failOpen || AFTER_SEND.has(operation)) return fallback();
      throw error;
    }
    return decode(answer.values, answer.shift);
  }

  // Holders the local store gave a place or a queue slot, per guard key: the memory store's
  // bulkhead has no leases, so each must leave it, wherever its next operation goes.
  const localHolders = new Map<string, Set<string>>();
  const holdsLocally = (key: string, holder: string) => localHolders.get(key)?.has(holder) === true;
  const enterLocally = (key: string, holder: string) => {
    let holders = localHolders.get(key);
    if (!holders) {
      holders = new Set();
      localHolders.set(key, holders);
    }
    holders.add(holder);
  };
  const leaveLocally = (key: string, holder: string, now: number) => {
    const holders = localHolders.get(key);
    if (!holders?.delete(holder)) return Promise.resolve();
    if (holders.size === 0) localHolders.delete(key);
    return local.bulkheadRelease(key, holder, now);
  };

  const redisKey = (guard: string, key: string) => `${prefix}:${guard}:${key}`;

  // Bulkhead places this process holds, per Redis key, renewed while held. A renewal has no
  // caller's `now`: it takes the local clock moved by how far the callers' clock was from it last.
  const held = new Map<string, Set<string>>();
  let callerSkew = 0;
  let renewal: ReturnType<typeof setInterval> | undefined;
  let closed = false;
  const hold = (key: string, holder: string) => {
    if (closed) return;
    const rk = redisKey('bulkhead', key);
    let holders = held.get(rk);
    if (!holders) {
      holders = new Set();
      held.set(rk, holders);
    }
    holders.add(holder);
    if (!renewal) {
      renewal = setInterval(renew, Math.max(1, leaseMs / 3));
      // Renewal alone never keeps the process alive.
      (renewal as { unref?: () => void }).unref?.();
    }
  };
  const unhold = (key: string, holder: string) => {
    const rk = redisKey('bulkhead', key);
    const holders = held.get(rk);
    holders?.delete(holder);
    if (holders?.size === 0) held.delete(rk);
    if (held.size === 0) stopRenewal();
  };
  const stopRenewal = () => {
    if (renewal) clearInterval(renewal);
    renewal = undefined;
  };
  function renew() {
    for (const [rk, holders] of held) {
      const key = rk.slice(prefix.length + ':bulkhead:'.length);
      // A renewal that fails is retried on the next tick, while the lease still runs.
      run(BULKHEAD_RENEW, 'bulkheadRenew', key, rk, systemClock.now() + callerSkew, [
        argument(leaseMs),
        ...holders,
      ]).catch(() => {});
    }
  }

  return {
    pollMs,
    prefix,
    close: () => {
      closed = true;
      held.clear();
      stopRenewal();
    },

    breakerAdmit: (key, config, now) =>
      op<BreakerAdmission>(
        BREAKER_ADMIT,
        'breakerAdmit',
        'breaker',
        key,
        now,
        breakerArgs(config, settings.idleMs),
        ([allowed, transition, retryAt, state = ''], shift) => {
          const next = decodeBreakerState(state, shift);
          if (allowed !== '1') return { allowed: false, state: next, retryAt: Number(retryAt) + shift };
          const change = decodeTransition(transition);
          return change ? { allowed: true, state: next, transition: change } : { allowed: true, state: next };
        },
        () => local.breakerAdmit(key, config, now),
      ),

    breakerRecord: (key, config, outcome, now) =>
      op<BreakerRecord>(
        BREAKER_RECORD,
        'breakerRecord',
        'breaker',
        key,
        now,
        [...breakerArgs(config, settings.idleMs), outcome],
        ([, transition, , state = ''], shift) => {
          const next = decodeBreakerState(state, shift);
          const change = decodeTransition(transition);
          return change ? { state: next, transition: change } : { state: next };
        },
        () => local.breakerRecord(key, config, outcome, now),
      ),

    budgetRequest: (key, config, now) =>
      op<BudgetRecord>(
        BUDGET,
        'budgetRequest',
        'budget',
        key,
        now,
        [...budgetArgs(config), 'request'],
        ([, remaining, buckets = '']) => ({
          remaining: Number(remaining),
          state: { buckets: decodeBudgetBuckets(buckets) },
        }),
        () => local.budgetRequest(key, config, now),
      ),

    budgetRetry: (key, config, now) =>
      op<BudgetDecision>(
        BUDGET,
        'budgetRetry',
        'budget',
        key,
        now,
        [...budgetArgs(config), 'retry'],
        ([allowed, remaining, buckets = '']) => ({
          allowed: allowed === '1',
          remaining: Number(remaining),
          state: { buckets: decodeBudgetBuckets(buckets) },
        }),
        () => local.budgetRetry(key, config, now),
      ),

    async limiterTake(key, config, n, now) {
      // The pure function's own check, so a bad `n` fails the same way on every store.
      bucketTake(bucketInit(config, 0), config, n, 0);
      return op<{ readonly allowed: boolean; readonly retryAt?: number }>(
        LIMITER_TAKE,
        'limiterTake',
        'limiter',
        key,
        now,
        [...bucketArgs(config), n],
        ([allowed, retryAt], shift) =>
          allowed === '1' ? { allowed: true } : { allowed: false, retryAt: Number(retryAt) + shift },
        () => local.limiterTake(key, config, n, now),
      );
    },

    async bulkheadAcquire(key, config, holder, now) {
      const answer = await op(
        BULKHEAD_ACQUIRE,
        'bulkheadAcquire',
        'bulkhead',
        key,
        now,
        [...bulkheadArgs(config), holder, leaseMs, queueLeaseMs],
        ([result]) => ({ result: result as 'acquired' | 'queued' | 'rejected', local: false }),
        async () => ({ result: await local.bulkheadAcquire(key, config, holder, now), local: true }),
      );
      const { result } = answer;
      if (answer.local) {
        if (result !== 'rejected') enterLocally(key, holder);
      } else {
        // Redis answered: a place or a slot the holder took locally during an outage is given back.
        await leaveLocally(key, holder, now);
        // A place granted by Redis is renewed while held.
        if (result === 'acquired') hold(key, holder);
      }
      return result;
    },

    async bulkheadRelease(key, holder, now) {
      unhold(key, holder);
      // A place taken locally is freed there; Redis never knew of it (a slot it queued the holder
      // in before the outage lapses by itself).
      if (holdsLocally(key, holder)) return leaveLocally(key, holder, now);
      await op(
        BULKHEAD_RELEASE,
        'bulkheadRelease',
        'bulkhead',
        key,
        now,
        [holder],
        () => undefined,
        () => undefined,
      );
    },

    pacingSet: (key, until, now) =>
      op(
        PACING_SET,
        'pacingSet',
        'pacing',
        key,
        now,
        [until],
        () => undefined,
        () => local.pacingSet(key, until, now),
      ),

    pacingGet: (key, now) =>
      op(
        PACING_GET,
        'pacingGet',
        'pacing',
        key,
        now,
        [],
        ([until], shift) => (until ? Number(until) + shift : undefined),
        () => local.pacingGet(key, now),
      ),

    gateAdmit: (key, config, now, leaseMs) =>
      op<GateVerdict>(
        GATE_ADMIT,
        'gateAdmit',
        'gate',
        key,
        now,
        [settings.idleMs, leaseMs],
        ([verdict]) => verdict as GateVerdict,
        () => local.gateAdmit(key, config, now, leaseMs),
      ),

    gateRecord: (key, config, health, probe, probeWait, now) =>
      op(
        GATE_RECORD,
        'gateRecord',
        'gate',
        key,
        now,
        [settings.idleMs, config.holdAfter, health, probe ? 1 : 0, probeWait],
        ([recovered, failures]) => ({ recovered: recovered === '1', failures: Number(failures) }),
        () => local.gateRecord(key, config, health, probe, probeWait, now),
      ),
  };
}

/** A number as a script argument: exact (shortest round-trip form), Infinity as `inf`. */
function argument(value: string | number): string {
  if (typeof value === 'string') return value;
  return value === Number.POSITIVE_INFINITY ? 'inf' : String(value);
}

function breakerArgs(config: BreakerConfig, idleMs: number): (string | number)[] {
  return [
    config.failureRate,
    config.windowSize,
    config.minCalls,
    config.consecutiveFailures ?? '',
    config.openMs,
    config.halfOpenCalls,
    idleMs,
  ];
}

function budgetArgs(config: RetryBudgetConfig): number[] {
  return [config.ratio, config.windowMs, config.minPerSecond];
}

function bucketArgs(config: TokenBucketConfig): number[] {
  return [config.capacity, config.refillPerSecond];
}

function bulkheadArgs(config: BulkheadConfig): number[] {
  return [config.maxConcurrent, config.maxQueue];
}

type Settings = Required<Omit<RedisStoreOptions, 'onEvent'>> & {
  readonly onEvent: RedisStoreOptions['onEvent'];
};

/** Validates the options once, at the boundary. */
function resolve(options: RedisStoreOptions): Settings {
  if (typeof options !== 'object' || options === null)
    throw invalid('redisStore options', 'an object', options);
  const pick = <K extends keyof RedisStoreOptions>(name: K) =>
    Object.hasOwn(options, name) ? options[name] : undefined;
  // Each is a timer's delay or a key's expiry: past a timer's limit (2^31 − 1 ms, about 24.8 days)
  // Node fires a timer after 1 ms, and the store would time out or renew at once, forever.
  const positive = (name: 'timeoutMs' | 'probeMs' | 'idleMs' | 'leaseMs' | 'pollMs', min: number) => {
    const value = pick(name) ?? DEFAULTS[name];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > MAX_DELAY_LIMIT) {
      throw invalid(
        `redisStore.${name}`,
        `a number of milliseconds from ${min} to ${MAX_DELAY_LIMIT}`,
        value,
      );
    }
    return value;
  };
  const prefix = pick('prefix') ?? DEFAULTS.prefix;
  if (typeof prefix !== 'string' || prefix === '')
    throw invalid('redisStore.prefix', 'a non-empty string', prefix);
  const clock = pick('clock') ?? DEFAULTS.clock;
  if (clock !== 'redis' && clock !== 'caller')
    throw invalid('redisStore.clock', "one of 'redis', 'caller'", clock);
  const failOpen = pick('failOpen') ?? DEFAULTS.failOpen;
  if (typeof failOpen !== 'boolean') throw invalid('redisStore.failOpen', 'a boolean', failOpen);
  const onEvent = pick('onEvent');
  if (onEvent !== undefined && typeof onEvent !== 'function') {
    throw invalid('redisStore.onEvent', 'a function', onEvent);
  }
  return {
    prefix,
    clock,
    failOpen,
    timeoutMs: positive('timeoutMs', 1),
    probeMs: positive('probeMs', 1),
    idleMs: positive('idleMs', 0),
    leaseMs: positive('leaseMs', 1),
    pollMs: positive('pollMs', 1),
    onEvent,
  };
}
