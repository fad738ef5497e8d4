/**
 * The recovery gate: retries wait for the origin to recover instead of firing blind into an outage.
 *
 * While a key (by default an origin) keeps failing, its retries are parked rather than sent on
 * their backoff. One parked retry at a time goes ahead as a probe (the circuit breaker's half-open
 * trial, applied to retries rather than to all traffic: first attempts are never held). Once an
 * attempt to the key succeeds, the parked retries are released oldest first, clocked by the
 * server's answers: each success releases the next parked retry (ACK clocking, as in TCP; Jacobson,
 * "Congestion Avoidance and Control", SIGCOMM 1988, https://ee.lbl.gov/papers/congavoid.pdf), so
 * the release stops if the successes do, and paced: it replays the spacing in which the retries
 * were parked (the pace their requests came at), a little faster (`releasePace`), so the retries an
 * outage parked do not all return in the same instant. A retry is parked at most
 * `maxParkMs`, its `maxDelay` or until its deadline: an origin still failing then stops it with
 * its last response.
 *
 * The key's health (consecutive failures, whether it is held, the probe's lease) is a pure state
 * machine kept in the client's store, so clients sharing a store share it: in a memory store's
 * table, or through a shared store's `gateAdmit` and `gateRecord` (a fleet on `redisStore` shares
 * an origin's health; a shared store without them keeps it in this process's memory). The parked
 * retries themselves wait in their process.
 */

import type { LoopAttempt, Refusal } from '../engine/attempt-loop';
import type { Health } from '../engine/outcome';
import { DeadlineExceededError, isRetrylineError, RetriesExhaustedError } from '../errors';
import { finiteNumber, own } from '../policy/normalize';
import {
  type Binding,
  type BoundGuard,
  checkObject,
  type GuardRequest,
  type GuardValue,
  type GuardValueOptions,
  guardHome,
  guardValue,
  keyFunction,
  type SessionContext,
  unsent,
} from './guard';
import {
  type GuardStore,
  IDLE_MS,
  type Memory,
  type MemoryStore,
  memoryOf,
  memoryStore,
  type Slot,
  type Store,
  type StoreAnswer,
  step,
} from './store';

/** The gate's rules. */
export interface RecoveryGateOptions {
  /**
   * Consecutive failed attempts to a key (timeouts, connection errors, retryable statuses, from
   * any request) after which its retries are parked.
   * @default 3
   */
  readonly holdAfter?: number;
  /**
   * Milliseconds between probes while the key is held: after a probe fails, the next parked retry
   * goes no sooner than this (with ±50 % spread).
   * @default 250
   */
  readonly probeMs?: number;
  /**
   * The most milliseconds a released retry waits past its place in the release's pace, drawn
   * uniformly, so releases of several processes do not line up.
   * @default 10
   */
  readonly spreadMs?: number;
  /**
   * The most milliseconds a retry stays parked (never past its `maxDelay` or deadline). A key still
   * failing then stops the request with its last response (`stoppedBy: 'gate'`).
   * @default 5_000
   */
  readonly maxParkMs?: number;
  /**
   * Parked retries released per success to the key once it answers again (ACK clocking): the
   * release goes on while successes come back, and stops when they do not.
   * @default 1
   */
  readonly releasePerSuccess?: number;
  /**
   * The least milliseconds between two releases of one key's parked retries in this process: the
   * release's pace, so the retries an outage parked return over time rather than at once.
   * @default 0.5
   */
  readonly releaseGapMs?: number;
  /**
   * How the release replays the spacing in which the retries were parked: each goes its parking
   * time's distance from the first one's after the release began, times this (1: the pace their
   * requests came at before the outage; 0.8: a quarter faster; 0: as fast as successes and
   * `releaseGapMs` allow).
   * @default 0.8
   */
  readonly releasePace?: number;
}

/** The gate's rules, defaults filled in. */
export interface RecoveryGateConfig {
  readonly holdAfter: number;
  readonly probeMs: number;
  readonly spreadMs: number;
  readonly maxParkMs: number;
  readonly releasePerSuccess: number;
  readonly releaseGapMs: number;
  readonly releasePace: number;
}

/**
 * The defaults: hold after 3 failures in a row, probe every 250 ms, park 5 s at most; release one
 * parked retry per success, replaying the spacing they were parked in a fifth faster, at least
 * 0.5 ms apart, with 10 ms of spread.
 */
export const GATE_DEFAULTS: RecoveryGateConfig = /* @__PURE__ */ Object.freeze({
  holdAfter: 3,
  probeMs: 250,
  spreadMs: 10,
  maxParkMs: 5_000,
  releasePerSuccess: 1,
  releaseGapMs: 0.5,
  releasePace: 0.8,
});

/** How long a probe holds the key's one probe place when nothing ends it first (no timeout set). */
export const PROBE_LEASE_MS = 10_000;

/** A key's health: plain JSON. */
export interface GateState {
  /** Failed attempts since the last success. */
  readonly failures: number;
  /** Whether retries to the key are parked. */
  readonly holding: boolean;
  /** Until when the probe in flight holds the key's one probe place (0: no probe). */
  readonly probeUntil: number;
  /** No probe before this instant (after a failed probe). */
  readonly nextProbeAt: number;
}

/** What the gate says of a retry about to be sent. */
export type GateVerdict = 'go' | 'probe' | 'park';

/** A key that has seen nothing: nothing held. */
export const gateInit = (): GateState => ({ failures: 0, holding: false, probeUntil: 0, nextProbeAt: 0 });

/**
 * A retry asks to go: `go` while the key is not held; while it is, `probe` (the retry takes the
 * probe place until `now + leaseMs`) when no probe is in flight and the last failed one is
 * `probeMs` old, else `park`.
 */
export function gateAdmit(
  state: GateState,
  now: number,
  leaseMs: number,
): { readonly verdict: GateVerdict; readonly state: GateState } {
  if (!state.holding) return { verdict: 'go', state };
  if (state.probeUntil > now || state.nextProbeAt > now) return { verdict: 'park', state };
  return { verdict: 'probe', state: { ...state, probeUntil: now + leaseMs } };
}

/**
 * An attempt to the key ended: a success frees the key (`recovered` when it was held); a failure
 * counts, holding the key from `holdAfter` in a row. A probe's end frees the probe place, and a
 * failed probe puts the next one `probeWait` away.
 */
export function gateRecord(
  state: GateState,
  config: RecoveryGateConfig,
  health: Health,
  probe: boolean,
  probeWait: number,
  now: number,
): { readonly recovered: boolean; readonly state: GateState } {
  if (health === 'success') return { recovered: state.holding, state: gateInit() };
  if (health === 'ignored') {
    return { recovered: false, state: probe ? { ...state, probeUntil: 0 } : state };
  }
  const failures = state.failures + 1;
  return {
    recovered: false,
    state: {
      failures,
      holding: state.holding || failures >= config.holdAfter,
      probeUntil: probe ? 0 : state.probeUntil,
      nextProbeAt: probe ? now + probeWait : state.nextProbeAt,
    },
  };
}

/** Validates the gate's options once, at the boundary. */
export function normalizeGate(input: RecoveryGateOptions = {}): RecoveryGateConfig {
  checkObject('gate', input, 'an object of recovery gate options');
  const holdAfter = finiteNumber('gate.holdAfter', own(input, 'holdAfter'), GATE_DEFAULTS.holdAfter, 1);
  return {
    holdAfter: Math.ceil(holdAfter),
    probeMs: finiteNumber('gate.probeMs', own(input, 'probeMs'), GATE_DEFAULTS.probeMs, 1),
    spreadMs: finiteNumber('gate.spreadMs', own(input, 'spreadMs'), GATE_DEFAULTS.spreadMs, 0),
    maxParkMs: finiteNumber('gate.maxParkMs', own(input, 'maxParkMs'), GATE_DEFAULTS.maxParkMs, 0),
    releasePerSuccess: finiteNumber(
      'gate.releasePerSuccess',
      own(input, 'releasePerSuccess'),
      GATE_DEFAULTS.releasePerSuccess,
      0,
    ),
    releaseGapMs: finiteNumber(
      'gate.releaseGapMs',
      own(input, 'releaseGapMs'),
      GATE_DEFAULTS.releaseGapMs,
      0,
    ),
    releasePace: finiteNumber('gate.releasePace', own(input, 'releasePace'), GATE_DEFAULTS.releasePace, 0),
  };
}

/** `recoveryGate()`'s options: the rules, and where the state lives. */
export interface RecoveryGateValueOptions extends RecoveryGateOptions, GuardValueOptions {}

/** A recovery gate: every HTTP client has one of its own unless given this or `gate: false`. */
export interface RecoveryGate extends GuardValue<'gate'> {
  /** The rules, defaults filled in. */
  readonly config: RecoveryGateConfig;
  /**
   * Whether retries to `key` (by default an origin) are parked, after how many failures in a row,
   * and how many wait in this process. Throws for a gate whose state is in a shared store.
   */
  state(key: string): { readonly holding: boolean; readonly failures: number; readonly parked: number };
}

/** How a parked retry's wait ended. */
type ReleaseReason = 'probe' | 'released' | 'max-wait' | 'deadline';

/** One parked retry: woken by a release or a probe's turn; nudged when it becomes the oldest. */
interface Parked {
  /** `after`: for a release, the milliseconds to wait for its place in the release's pace. */
  wake(how: 'probe' | 'released', after?: number): void;
  /** When it was parked. */
  readonly parkedAt: number;
  nudge(): void;
}

/** What one store keeps of the gate in this process: each key's parked retries, oldest first. */
interface Local {
  readonly queues: Map<string, Parked[]>;
  /** Each key's release credit: successes earn it, a release spends 1. */
  readonly credit: Map<string, number>;
  /** Each key's next free place in the release's pace (epoch ms). */
  readonly nextRelease: Map<string, number>;
  /** Each key's release under way: when it began, and when its first retry was parked. */
  readonly wave: Map<string, [number, number]>;
}

// Keyed by the store, so that every client sharing a store (and so a key's health) shares its
// parked retries in this process, and a release wakes theirs too.
const locals = new WeakMap<object, Local>();

function localOf(store: GuardStore): Local {
  let local = locals.get(store);
  if (!local) {
    local = { queues: new Map(), credit: new Map(), nextRelease: new Map(), wave: new Map() };
    locals.set(store, local);
  }
  return local;
}

/**
 * A gate's state untouched for a minute, with no probe in flight, is forgotten, held or not (as a
 * shared store's key expires): parked retries keep their key's state in use while they wait.
 */
const idle = (slot: Slot<GateState, RecoveryGateConfig>, now: number) =>
  now - slot.last >= IDLE_MS && slot.state.probeUntil <= now;

/** The gate's operations on a store, as its sessions ask them. */
interface GateOps {
  /**
   * Whether no key has gate state that a success would have to clear: a first attempt may then
   * skip the gate. Synchronous and cheap: the happy path asks it on every request.
   */
  quiet(): boolean;
  admit(key: string, config: RecoveryGateConfig, now: number, leaseMs: number): StoreAnswer<GateVerdict>;
  /** Counts an attempt's end (as `Store.gateRecord`); answers whether the key recovered (a success freed it). */
  record(...args: Parameters<SharedGate['gateRecord']>): StoreAnswer<boolean>;
  /** The key's failures in a row, for the `retry-parked` event. */
  failures(key: string): number;
}

const then = <T, R>(answer: StoreAnswer<T>, next: (value: T) => R): StoreAnswer<R> =>
  answer instanceof Promise ? answer.then(next) : next(answer);

// One set of operations per store, so that every client sharing a store shares what it knows.
const opsByStore = new WeakMap<object, GateOps>();

/**
 * The gate's operations on a store: a memory store's table; a shared store's own `gateAdmit` and
 * `gateRecord` (the state shared by every process using it); else, for a shared store without
 * them, a memory table of this process's own.
 */
function gateOps(store: GuardStore): GateOps {
  let ops = opsByStore.get(store);
  if (!ops) {
    const shared = memoryOf(store) ? undefined : (store as Store);
    ops =
      shared?.gateAdmit && shared.gateRecord
        ? sharedGate(shared as SharedGate)
        : memoryGate(memoryOf(store) ?? (memoryOf(fallbacks(store)) as Memory));
    opsByStore.set(store, ops);
  }
  return ops;
}

/** The gate in a memory table: every operation synchronous. */
function memoryGate(memory: Memory): GateOps {
  const table = memory.table<GateState, RecoveryGateConfig>('gates', idle);
  return {
    quiet: () => table.size === 0,
    admit: (key, config, now, leaseMs) =>
      step(memory, table, key, config, now, gateInit, (state) => gateAdmit(state, now, leaseMs)).verdict,
    record(key, config, health, probe, probeWait, now) {
      if (health === 'success') {
        // A success leaves nothing to remember: the key's state goes (so the table is empty again,
        // and the happy path skips the gate) and a held key has recovered.
        const slot = table.get(key);
        if (slot === undefined) return false;
        table.delete(key);
        return slot.state.holding;
      }
      // An outcome that counts nothing, to a key with no state: nothing to keep (no slot for a 404).
      if (health === 'ignored' && !probe && !table.has(key)) return false;
      return step(memory, table, key, config, now, gateInit, (state) =>
        gateRecord(state, config, health, probe, probeWait, now),
      ).recovered;
    },
    failures: (key) => table.get(key)?.state.failures ?? 0,
  };
}

/** The gate's operations of a memory store, as a {@link Store} has them (for `localStore()`). */
export function gateStoreOps(store: MemoryStore): SharedGate {
  const ops = gateOps(store);
  return {
    gateAdmit: ops.admit,
    gateRecord: (key, config, health, probe, probeWait, now) => {
      const recovered = ops.record(key, config, health, probe, probeWait, now) as boolean;
      return { recovered, failures: ops.failures(key) };
    },
  };
}

type SharedGate = Required<Pick<Store, 'gateAdmit' | 'gateRecord'>>;

/**
 * The gate in a shared store. What this process knows of it is a hint: the keys it has seen
 * fail (or held) and not yet seen succeed, each with its last known failures in a row, forgotten
 * once untouched for a minute (or a probe lease), as the store forgets idle state. The hint keeps
 * the happy path free of round trips: `quiet()` holds while it is empty, and a success to a key
 * this process knows nothing of is not sent. So a key's failures in a row are counted across the
 * fleet, but only the successes of processes that saw it fail clear them (among them every
 * process with retries parked on it, whose first attempts, never held, go on being sent).
 */
function sharedGate(store: SharedGate): GateOps {
  const known = new Map<string, { failures: number; until: number }>();
  let sweepAt = 0;
  const note = (key: string, failures: number, until: number) => {
    const hint = known.get(key);
    if (hint) {
      hint.failures = failures;
      hint.until = Math.max(hint.until, until);
    } else known.set(key, { failures, until });
  };
  const sweep = (now: number) => {
    if (now < sweepAt) return;
    sweepAt = now + IDLE_MS;
    for (const [key, hint] of known) if (hint.until <= now) known.delete(key);
  };
  return {
    quiet: () => known.size === 0,
    admit(key, config, now, leaseMs) {
      sweep(now);
      return then(store.gateAdmit(key, config, now, leaseMs), (verdict) => {
        if (verdict !== 'go' || known.has(key)) {
          note(key, known.get(key)?.failures ?? 0, now + Math.max(IDLE_MS, leaseMs));
        }
        return verdict;
      });
    },
    record(key, config, health, probe, probeWait, now) {
      sweep(now);
      // An outcome that changes nothing: one that counts nothing, or a success to a key this
      // process knows no state of (no round trip; see above).
      if (!probe && (health === 'ignored' || (health === 'success' && !known.has(key)))) return false;
      return then(store.gateRecord(key, config, health, probe, probeWait, now), (recorded) => {
        // No failure in a row: nothing held, nothing left to clear.
        if (recorded.failures === 0) known.delete(key);
        else note(key, recorded.failures, now + IDLE_MS);
        return recorded.recovered;
      });
    },
    failures: (key) => known.get(key)?.failures ?? 0,
  };
}

// A shared store without gate operations keeps the gate in this process: one memory store per store.
const fallbackStores = new WeakMap<object, GuardStore>();
function fallbacks(store: GuardStore): GuardStore {
  let fallback = fallbackStores.get(store);
  if (!fallback) {
    fallback = memoryStore();
    fallbackStores.set(store, fallback);
  }
  return fallback;
}

/** A recovery gate bound to a client, as the engine's happy path asks it. */
export interface BoundGate {
  /**
   * Whether a first attempt may skip the loop's set-up: no key has failed since its last success,
   * so the attempt's outcome has nothing to change. Synchronous, never a round trip: with a shared
   * store it reads what this process knows (see `sharedGate`).
   */
  quiet(): boolean;
}

/**
 * A recovery gate per key (by default per origin): while the key keeps failing, retries are
 * parked instead of fired blind, one probe at a time goes ahead, and the parked retries are released
 * at the pace successes come back. First attempts are never held. Every HTTP client has a gate of
 * its own by default; `gate: false` turns it off, `gate: recoveryGate({ … })` tunes or shares it.
 *
 * @example
 * ```ts
 * const gate = recoveryGate({ probeMs: 500 });
 * const api = retryFetch(fetch, { gate });
 * gate.state('https://api.example').holding;
 * ```
 */
export function recoveryGate(options: RecoveryGateValueOptions = {}): RecoveryGate {
  const config = Object.freeze(normalizeGate(options));
  const home = guardHome('recoveryGate', options);
  return guardValue<'gate', RecoveryGate>(
    {
      kind: 'gate',
      config,
      state(key) {
        const slot = home.table<GateState, RecoveryGateConfig>('gates', idle)?.get(key);
        const settled = home.settled();
        const parked = settled === undefined ? 0 : (localOf(settled).queues.get(key)?.length ?? 0);
        return { holding: slot?.state.holding === true, failures: slot?.state.failures ?? 0, parked };
      },
    },
    (binding) => bindGate(config, home.forClient(binding), home.keyFor(binding)),
  );
}

/** The gate a client has unless told otherwise: the defaults, its state in the client's store. */
export function clientGate(binding: Binding & { readonly store: GuardStore }): BoundGuard & BoundGate {
  return bindGate(GATE_DEFAULTS, binding.store, keyFunction(undefined, binding));
}

function bindGate(
  config: RecoveryGateConfig,
  store: GuardStore,
  keyOf: (request: GuardRequest) => string,
): BoundGuard & BoundGate {
  const ops = gateOps(store);
  const { queues, credit, nextRelease, wave } = localOf(store);
  return {
    kind: 'gate',
    keyOf,
    quiet: ops.quiet,
    session: (context) => gateSession(context, config, ops, { queues, release, done }),
  };

  /** A key's release is over (nothing parked on it): what paced it goes too. */
  function done(key: string): void {
    credit.delete(key);
    nextRelease.delete(key);
    wave.delete(key);
  }

  /** A success to `key`: earns releasePerSuccess of a release; the oldest parked retries go, each after a spread. */
  function release(key: string, now: number): void {
    const waiting = queues.get(key);
    let earned = (credit.get(key) ?? 0) + config.releasePerSuccess;
    let slot = Math.max(now, nextRelease.get(key) ?? now);
    // The release replays the spacing in which the retries were parked (the pace their requests
    // came at before the outage), compressed by releasePace: measured from the first release.
    if (!wave.has(key) && waiting?.[0]) wave.set(key, [now, waiting[0].parkedAt]);
    const [start, firstParked] = wave.get(key) ?? [now, now];
    while (earned >= 1 && waiting?.length) {
      const next = waiting.shift() as Parked;
      slot = Math.max(slot, start + (next.parkedAt - firstParked) * config.releasePace);
      next.wake('released', slot - now);
      slot += config.releaseGapMs;
      earned -= 1;
    }
    // The next in line is now the oldest: it starts asking for the probe place, so it is not left
    // asleep if the retries just released bring no success.
    waiting?.[0]?.nudge();
    if (waiting?.length) {
      credit.set(key, earned);
      nextRelease.set(key, slot);
    } else done(key);
  }
}

/** What a parked retry needs of its request and its gate. */
interface ParkContext {
  readonly session: SessionContext;
  readonly config: RecoveryGateConfig;
  readonly ops: GateOps;
  readonly queues: Map<string, Parked[]>;
  readonly leaseMs: number;
  /** The key has no parked retry left: its release under way, if any, is over. */
  readonly done: (key: string) => void;
  /** Releases the oldest parked retries of a key as a success does, at the release's pace. */
  readonly release: (key: string, now: number) => void;
}

function gateSession(
  session: SessionContext,
  config: RecoveryGateConfig,
  ops: GateOps,
  local: {
    readonly queues: Map<string, Parked[]>;
    readonly release: (key: string, now: number) => void;
    readonly done: (key: string) => void;
  },
) {
  const { queues, release } = local;
  const { key, policy } = session;
  const { clock } = policy;
  const park: ParkContext = {
    session,
    config,
    ops,
    queues,
    leaseMs: policy.timeout ?? PROBE_LEASE_MS,
    done: local.done,
    release,
  };
  // Whether the attempt this session admitted holds the key's probe place.
  let probing = false;
  /** What the gate said: a parked retry waits, then goes or is refused. */
  const decide = (verdict: GateVerdict, attempt: LoopAttempt, deadlineAt: number) => {
    probing = verdict === 'probe';
    if (verdict !== 'park') return undefined;
    return parkRetry(park, attempt, deadlineAt).then((reason) => {
      probing = reason === 'probe';
      return refusalFor(park, attempt, reason);
    });
  };
  /** Each success sends the next parked retry on its way: released at the pace the server answers. */
  const released = (recovered: boolean, health: Health) => {
    if ((recovered || health === 'success') && queues.get(key)?.length) release(key, clock.now());
  };
  return {
    admit(attempt: LoopAttempt, deadlineAt: number): Refusal | undefined | Promise<Refusal | undefined> {
      if (attempt.attempt === 1) return undefined;
      // While older retries wait for their release, a new one waits behind them.
      if (queues.get(key)?.length) return decide('park', attempt, deadlineAt);
      const verdict = ops.admit(key, config, clock.now(), park.leaseMs);
      return verdict instanceof Promise
        ? verdict.then((answer) => decide(answer, attempt, deadlineAt))
        : decide(verdict, attempt, deadlineAt);
    },
    record(health: Health): Promise<void> | undefined {
      const probe = probing;
      probing = false;
      const probeWait = config.probeMs * (0.5 + policy.random());
      const recovered = ops.record(key, config, health, probe, probeWait, clock.now());
      if (recovered instanceof Promise) return recovered.then((answer) => released(answer, health));
      released(recovered, health);
      return undefined;
    },
    // A later guard refused the attempt, or admission failed: not sent, so the probe place goes.
    unsent(): Promise<void> | undefined {
      return this.abandon();
    },
    abandon(): Promise<void> | undefined {
      const probe = probing;
      probing = false;
      if (!probe) return undefined;
      const recorded = ops.record(key, config, 'ignored', true, 0, clock.now());
      return recorded instanceof Promise ? recorded.then(() => undefined) : undefined;
    },
  };
}

/**
 * Parks a retry until a success releases it, its turn to probe comes, or its time is up:
 * `maxParkMs`, its `maxDelay` or its deadline, whichever is first. One sleep at a time per parked
 * retry: the oldest sleeps a probe interval at a time and then asks for the probe place; the
 * others sleep until their time is up or something wakes them. Says how the wait ended.
 */
async function parkRetry(
  park: ParkContext,
  attempt: LoopAttempt,
  deadlineAt: number,
): Promise<ReleaseReason> {
  const { session, config, ops, queues } = park;
  const { key, policy, emit } = session;
  const { clock } = policy;
  const since = clock.now();
  if (endedByDeadline(attempt)) return 'deadline';
  const waiting = queues.get(key) ?? [];
  queues.set(key, waiting);
  emit({ type: 'retry-parked', attempt: attempt.attempt, key, failures: ops.failures(key) });
  const untilAt = since + Math.max(0, Math.min(config.maxParkMs, policy.maxDelay, deadlineAt - since));
  let reason: ReleaseReason | undefined;
  let nudge: AbortController | undefined;
  let paced = 0;
  const parked: Parked = {
    parkedAt: since,
    wake(how, after = 0) {
      reason = how;
      paced = after;
      nudge?.abort();
    },
    nudge: () => nudge?.abort(),
  };
  waiting.push(parked);
  // The caller's abort (or the deadline's) ends the sleep at once: a listener of its own rather than
  // AbortSignal.any, whose combined signal Node 20 can garbage-collect while it is still awaited.
  const onAbort = () => nudge?.abort();
  attempt.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    while (reason === undefined) {
      const now = clock.now();
      if (now >= untilAt) {
        reason = await lastWord(park, now, untilAt === deadlineAt);
        break;
      }
      const head = waiting[0] === parked;
      const step = head ? Math.min(config.probeMs * (0.5 + policy.random()), untilAt - now) : untilAt - now;
      nudge = new AbortController();
      await clock.sleep(step, nudge.signal).catch(() => {});
      if (endedByDeadline(attempt)) reason = 'deadline';
      if (reason !== undefined || !head || waiting[0] !== parked || clock.now() >= untilAt) continue;
      // (Given the probe place, it goes as the probe even if released meanwhile: its end frees it.)
      const asked = await askAsOldest(park, attempt);
      if (asked) reason = asked;
    }
    // A released retry waits for its place in the release's pace, plus a short spread, so a
    // release is not a spike.
    if (reason === 'released') {
      const wait = Math.min(paced + policy.random() * config.spreadMs, untilAt - clock.now());
      if (wait > 0) await clock.sleep(wait, attempt.signal).catch(rethrowUnlessDeadline(attempt));
      if (endedByDeadline(attempt)) reason = 'deadline';
    }
  } finally {
    attempt.signal?.removeEventListener('abort', onAbort);
    leave(park, waiting, parked);
    session.waited(attempt.attempt, 'parked', since, true);
  }
  emit({ type: 'retry-released', attempt: attempt.attempt, key, reason, waited: clock.now() - since });
  return reason;
}

/**
 * The oldest parked retry asks for the probe place: it goes as the probe when no probe is in flight;
 * once the key is no longer held (another client's or process's success, state forgotten), the
 * release starts, waking it at the release's pace. A shared store answers through a promise: an
 * abort meanwhile ends the wait, unless the probe place was given (the loop, seeing the abort,
 * abandons the attempt, which frees it).
 */
async function askAsOldest(park: ParkContext, attempt: LoopAttempt): Promise<ReleaseReason | undefined> {
  const { ops, config, leaseMs, session } = park;
  const { key, policy } = session;
  let verdict = ops.admit(key, config, policy.clock.now(), leaseMs);
  if (verdict instanceof Promise) {
    verdict = await verdict;
    if (verdict !== 'probe' && endedByDeadline(attempt)) return 'deadline';
  }
  if (verdict === 'probe') return 'probe';
  if (verdict === 'go') park.release(key, policy.clock.now());
  return undefined;
}

/** Time is up: unless the key is clear by now (one last question), the gate gives up on it. */
async function lastWord(park: ParkContext, now: number, atDeadline: boolean): Promise<ReleaseReason> {
  if (atDeadline) return 'deadline';
  const { ops, config, leaseMs, session } = park;
  const last = await ops.admit(session.key, config, now, leaseMs);
  return last === 'probe' ? 'probe' : last === 'go' ? 'released' : 'max-wait';
}

/** A parked retry leaves its queue; the next becomes the oldest, and an empty queue ends the release. */
function leave(park: ParkContext, waiting: Parked[], parked: Parked): void {
  const { queues, session } = park;
  const at = waiting.indexOf(parked);
  if (at >= 0) waiting.splice(at, 1);
  // The next in line becomes the oldest: it starts asking for the probe place.
  if (at === 0) waiting[0]?.nudge();
  if (waiting.length === 0 && queues.get(session.key) === waiting) {
    queues.delete(session.key);
    park.done(session.key);
  }
}

/**
 * Whether the request's signal ended the wait: the caller's abort rethrows it at once; the
 * deadline's ends the wait as the deadline does (the last response is handed back, not an error
 * about an attempt that was never sent).
 */
function endedByDeadline(attempt: LoopAttempt): boolean {
  const signal = attempt.signal;
  if (!signal?.aborted) return false;
  if (isRetrylineError(signal.reason, 'DeadlineExceededError')) return true;
  throw signal.reason;
}

/** For a sleep the request's signal may end: the deadline's end is no error here (see {@link endedByDeadline}). */
const rethrowUnlessDeadline = (attempt: LoopAttempt) => (error: unknown) => {
  if (!endedByDeadline(attempt)) throw error;
};

/** What a parked retry whose time ran out stops with: the deadline's error, or the gate's. */
function refusalFor(park: ParkContext, attempt: LoopAttempt, reason: ReleaseReason): Refusal | undefined {
  const { key, policy, label } = park.session;
  if (reason === 'deadline') {
    return {
      outcome: 'deadline',
      error: new DeadlineExceededError(
        `${label} was not retried: ${key} kept failing until its ${policy.deadline} ms deadline`,
        { ...unsent(attempt), deadline: policy.deadline ?? Number.POSITIVE_INFINITY },
      ),
    };
  }
  if (reason !== 'max-wait') return undefined;
  const parkedFor = Math.round(Math.min(park.config.maxParkMs, policy.maxDelay));
  return {
    outcome: 'origin-failing',
    error: new RetriesExhaustedError(
      `${label} was not retried: ${key} kept failing for the ${parkedFor} ms its retry may be parked`,
      { ...unsent(attempt), reason: 'origin-failing' },
    ),
  };
}
