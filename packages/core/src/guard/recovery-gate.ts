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
import type { Clock } from '../time/clock';
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

/**
 * How long a probe counts on the key's one probe place when nothing ends it first (no timeout
 * set), give or take {@link LEASE_MARGIN_MS}.
 */
export const PROBE_LEASE_MS = 10_000;

/**
 * A probe's lease is told apart from a newer one by its time, as a lease holder allows for clock
 * drift (Gray and Cheriton, "Leases", SOSP 1989, https://doi.org/10.1145/74851.74870): the attempt
 * given the probe place counts on it for its timeout (else {@link PROBE_LEASE_MS}) plus this margin
 * (the other guards' admission before the send, the judging after), and the store keeps it one
 * margin longer still (its round trips, on its own clock). So an end the holder reports in time
 * reaches the store while the lease is still its own, and an attempt that outlived its lease (a
 * newer probe may hold the place by then) ends as a plain attempt: only the holder frees the place.
 */
const LEASE_MARGIN_MS = 500;

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

/**
 * One parked retry. A release wakes it (ends its sleep) with its place in the release's pace; so
 * is it nudged when it becomes the oldest (it then asks for the probe place) or its request aborts.
 */
interface Parked {
  /** When it was parked (a retry parked again keeps its place in line). */
  readonly parkedAt: number;
  /** Set by a release: the milliseconds to wait for its place in the release's pace. */
  paced?: number | undefined;
  /** Ends the sleep it is in. */
  waking?: AbortController;
}

const nudge = (parked: Parked | undefined) => parked?.waking?.abort();

/**
 * What this process keeps of one key's parked retries: they and the release under way, in one
 * record, kept only while a retry is parked on the key (it goes with the last of them).
 */
interface Line {
  /** The parked retries, oldest first. */
  readonly parked: Parked[];
  /** Release credit: successes earn it, a release spends 1. */
  credit: number;
  /** The next free place in the release's pace (epoch ms; 0 before the first release). */
  nextRelease: number;
  /** The release under way: when it began, and when its first retry was parked. */
  wave?: readonly [number, number];
}

/** What one store keeps of the gate in this process: a line per key with retries parked on it. */
type Lines = Map<string, Line>;

// Keyed by the store, so that every client sharing a store (and so a key's health) shares its
// parked retries in this process, and a release wakes theirs too.
const linesByStore = new WeakMap<object, Lines>();

function linesOf(store: GuardStore): Lines {
  let lines = linesByStore.get(store);
  if (!lines) {
    lines = new Map();
    linesByStore.set(store, lines);
  }
  return lines;
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
  /**
   * A first attempt admitted at once (see {@link quiet}) succeeded. While it was out, a key may
   * have failed (and been held, its retries parked): the success is then counted as the attempt
   * loop counts one, so it frees the key and releases its parked retries. Nothing to do, and no
   * clock read, while the gate is still quiet.
   */
  recordAtOnce(request: GuardRequest, clock: Clock): void;
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
        const parked = settled === undefined ? 0 : (linesOf(settled).get(key)?.parked.length ?? 0);
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
  const lines = linesOf(store);
  const release = (key: string, now: number) => releaseParked(lines, config, key, now);
  return {
    kind: 'gate',
    keyOf,
    quiet: ops.quiet,
    recordAtOnce(request, clock) {
      if (ops.quiet()) return;
      const key = keyOf(request);
      // The response is the caller's already: a store that fails to count it matters to nobody now.
      forget(
        then(ops.record(key, config, 'success', false, 0, clock.now()), () => release(key, clock.now())),
      );
    },
    session: (context) => gateSession(context, config, ops, { lines, release }),
  };
}

/**
 * A success to `key`: earns releasePerSuccess of a release; the oldest parked retries go, each at
 * its place in the release's pace.
 */
function releaseParked(lines: Lines, config: RecoveryGateConfig, key: string, now: number): void {
  const line = lines.get(key);
  if (!line) return;
  const waiting = line.parked;
  let earned = line.credit + config.releasePerSuccess;
  let slot = Math.max(now, line.nextRelease);
  // The release replays the spacing in which the retries were parked (the pace their requests
  // came at before the outage), compressed by releasePace: measured from the first release.
  if (!line.wave && waiting[0]) line.wave = [now, waiting[0].parkedAt];
  const [start, firstParked] = line.wave ?? [now, now];
  while (earned >= 1 && waiting.length) {
    const next = waiting.shift() as Parked;
    slot = Math.max(slot, start + (next.parkedAt - firstParked) * config.releasePace);
    next.paced = slot - now;
    nudge(next);
    slot += config.releaseGapMs;
    earned -= 1;
  }
  // The next in line is now the oldest: it starts asking for the probe place, so it is not left
  // asleep if the retries just released bring no success.
  nudge(waiting[0]);
  if (waiting.length) {
    line.credit = earned;
    line.nextRelease = slot;
  } else lines.delete(key);
}

/** What a parked retry needs of its request and its gate. */
interface ParkContext {
  readonly session: SessionContext;
  readonly config: RecoveryGateConfig;
  readonly ops: GateOps;
  readonly lines: Lines;
  readonly lease: ProbeLease;
  /** Releases the oldest parked retries of a key as a success does, at the release's pace. */
  readonly release: (key: string, now: number) => void;
}

/** The key's probe place as one request holds it (see {@link LEASE_MARGIN_MS}). */
interface ProbeLease {
  /** How long the store keeps it. */
  readonly storeMs: number;
  /** The store gave the request the probe place, asked at `at`. */
  granted(at: number): void;
  /** Whether the request's attempt holds the probe place still (its own to free); let go either way. */
  holds(): boolean;
  /** The attempt ends with nothing to count, or is not sent after all: the probe place, if its own, is freed. */
  free(): Promise<void> | undefined;
}

function probeLease(session: SessionContext, config: RecoveryGateConfig, ops: GateOps): ProbeLease {
  const { key, policy } = session;
  const { clock } = policy;
  // From the moment it asked: the attempt's timeout (else PROBE_LEASE_MS), plus a margin.
  const counted = (policy.timeout ?? PROBE_LEASE_MS) + LEASE_MARGIN_MS;
  let until: number | undefined;
  const lease: ProbeLease = {
    storeMs: counted + LEASE_MARGIN_MS,
    granted(at) {
      until = at + counted;
    },
    holds() {
      const own = until !== undefined && clock.now() < until;
      until = undefined;
      return own;
    },
    free() {
      if (!lease.holds()) return undefined;
      return then(ops.record(key, config, 'ignored', true, 0, clock.now()), () => undefined);
    },
  };
  return lease;
}

function gateSession(
  session: SessionContext,
  config: RecoveryGateConfig,
  ops: GateOps,
  local: { readonly lines: Lines; readonly release: (key: string, now: number) => void },
) {
  const { lines, release } = local;
  const { key, policy } = session;
  const { clock } = policy;
  const lease = probeLease(session, config, ops);
  const park: ParkContext = { session, config, ops, lines, lease, release };
  // The admitted attempt's signal: a store's answer is not awaited past its abort.
  let signal: AbortSignal | undefined;
  /** What the gate said: a parked retry waits, then goes or is refused. */
  const decide = (verdict: GateVerdict | 'deadline', attempt: LoopAttempt, deadlineAt: number) => {
    if (verdict === 'deadline') return refusalFor(park, attempt, verdict);
    if (verdict !== 'park') return undefined;
    return parkRetry(park, attempt, deadlineAt).then((reason) => refusalFor(park, attempt, reason));
  };
  return {
    admit(attempt: LoopAttempt, deadlineAt: number): Refusal | undefined | Promise<Refusal | undefined> {
      signal = attempt.signal;
      if (attempt.attempt === 1) return undefined;
      // While older retries wait for their release, a new one waits behind them.
      if (lines.has(key)) return decide('park', attempt, deadlineAt);
      const verdict = ask(park, attempt);
      return verdict instanceof Promise
        ? verdict.then((answer) => decide(answer, attempt, deadlineAt))
        : decide(verdict, attempt, deadlineAt);
    },
    record(health: Health): Promise<void> | undefined {
      const probe = lease.holds();
      const probeWait = config.probeMs * (0.5 + policy.random());
      // Each success sends the next parked retry on its way: released at the pace the server
      // answers, once the store has counted it.
      const counted = then(ops.record(key, config, health, probe, probeWait, clock.now()), () => {
        if (health === 'success') release(key, clock.now());
      });
      if (!(counted instanceof Promise)) return undefined;
      // The count goes on whatever happens; an abort ends the wait for it, as it ends every wait.
      // (A signal aborted already, by the attempt's own timeout, is no reason not to wait.)
      return !signal || signal.aborted ? counted : unlessAborted(counted, signal);
    },
    // A later guard refused the attempt, or admission failed: not sent, so the probe place goes.
    unsent: lease.free,
    abandon: lease.free,
  };
}

/** Lets a store's bookkeeping finish on its own: its failure matters to nobody now. */
function forget(answer: StoreAnswer<unknown>): void {
  if (answer instanceof Promise) answer.catch(() => {});
}

/**
 * Asks the store whether a retry may go; a `probe` verdict gives the request the probe place, from
 * the moment it asked. A store that answers through a promise is raced with the request's signal,
 * as the gate's sleeps are: the caller's abort rejects at once, the deadline's answers `deadline`
 * (see {@link endedByDeadline}); a probe place given after that is freed.
 */
function ask(park: ParkContext, attempt: LoopAttempt): StoreAnswer<GateVerdict | 'deadline'> {
  const { ops, config, lease, session } = park;
  const at = session.policy.clock.now();
  const answer = then(ops.admit(session.key, config, at, lease.storeMs), (verdict) => {
    if (verdict === 'probe') lease.granted(at);
    // Nobody waits for it any more: the probe place goes back.
    if (attempt.signal?.aborted) forget(lease.free());
    return verdict;
  });
  if (!(answer instanceof Promise) || !attempt.signal) return answer;
  return unlessAborted(answer, attempt.signal).then((verdict) => {
    if (verdict !== undefined) return verdict;
    endedByDeadline(attempt);
    return 'deadline';
  });
}

/**
 * `pending` (a store's answer, its work going on regardless), or `undefined` as soon as `signal`
 * aborts. A listener of its own rather than AbortSignal.any, whose combined signal Node 20 can
 * garbage-collect while it is still awaited.
 */
function unlessAborted<T>(pending: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const stop = () => resolve(undefined);
    const done = () => signal.removeEventListener('abort', stop);
    signal.addEventListener('abort', stop, { once: true });
    pending.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
  });
}

/**
 * Parks a retry until a success releases it, its turn to probe comes, or its time is up:
 * `maxParkMs`, its `maxDelay` or its deadline, whichever is first. A released retry that finds
 * the key held again once its place in the release's pace comes waits in line again, in its
 * place. Says how the wait ended.
 */
async function parkRetry(
  park: ParkContext,
  attempt: LoopAttempt,
  deadlineAt: number,
): Promise<ReleaseReason> {
  const { session, config, ops } = park;
  const { key, policy, emit } = session;
  const { clock } = policy;
  const since = clock.now();
  if (endedByDeadline(attempt)) return 'deadline';
  const parked: Parked = { parkedAt: since };
  let line = join(park, parked);
  emit({ type: 'retry-parked', attempt: attempt.attempt, key, failures: ops.failures(key) });
  const untilAt = since + Math.max(0, Math.min(config.maxParkMs, policy.maxDelay, deadlineAt - since));
  // The caller's abort (or the deadline's) ends the sleep at once: a listener of its own rather than
  // AbortSignal.any, whose combined signal Node 20 can garbage-collect while it is still awaited.
  const onAbort = () => nudge(parked);
  attempt.signal?.addEventListener('abort', onAbort, { once: true });
  let reason: ReleaseReason | undefined;
  try {
    while (reason === undefined) {
      reason = await waitInLine(park, attempt, parked, line, untilAt, untilAt === deadlineAt);
      if (reason !== 'released') break;
      reason = await waitForPlace(park, attempt, parked, untilAt);
      if (reason === undefined) line = join(park, parked);
    }
  } finally {
    attempt.signal?.removeEventListener('abort', onAbort);
    leave(park, line, parked);
    session.waited(attempt.attempt, 'parked', since, true);
  }
  emit({ type: 'retry-released', attempt: attempt.attempt, key, reason, waited: clock.now() - since });
  return reason;
}

/**
 * A parked retry waits in line until a release wakes it, its turn to probe comes, or its time is
 * up. One sleep at a time: the oldest sleeps a probe interval at a time and then asks for the probe
 * place; the others sleep until their time is up or something wakes them.
 */
async function waitInLine(
  park: ParkContext,
  attempt: LoopAttempt,
  parked: Parked,
  line: Line,
  untilAt: number,
  atDeadline: boolean,
): Promise<ReleaseReason> {
  const { config, session } = park;
  const { policy } = session;
  const { clock } = policy;
  while (parked.paced === undefined) {
    const now = clock.now();
    if (now >= untilAt) {
      // Time is up: unless the key is clear by now (one last question), the gate gives up on it.
      if (atDeadline) return 'deadline';
      const last = await ask(park, attempt);
      return last === 'go' ? 'released' : last === 'park' ? 'max-wait' : last;
    }
    const head = line.parked[0] === parked;
    const step = head ? Math.min(config.probeMs * (0.5 + policy.random()), untilAt - now) : untilAt - now;
    parked.waking = new AbortController();
    await clock.sleep(step, parked.waking.signal).catch(() => {});
    if (endedByDeadline(attempt)) return 'deadline';
    if (parked.paced !== undefined || !head || line.parked[0] !== parked || clock.now() >= untilAt) continue;
    // The oldest asks for the probe place: it goes as the probe when no probe is in flight (even if
    // released meanwhile: its end frees the place); once the key is no longer held (another
    // client's or process's success, state forgotten), the release starts, waking it at its pace.
    const verdict = await ask(park, attempt);
    if (verdict === 'probe' || verdict === 'deadline') return verdict;
    if (verdict === 'go') park.release(session.key, clock.now());
  }
  return 'released';
}

/**
 * A released retry waits for its place in the release's pace, plus a short spread, so a release is
 * not a spike. Having waited, it asks the gate again before it goes: a key held again meanwhile (a
 * new streak of failures, a failed probe) parks it again (`undefined`) rather than letting it fire
 * into an origin that fails again.
 */
async function waitForPlace(
  park: ParkContext,
  attempt: LoopAttempt,
  parked: Parked,
  untilAt: number,
): Promise<ReleaseReason | undefined> {
  const { policy } = park.session;
  const { clock } = policy;
  const wait = Math.min((parked.paced ?? 0) + policy.random() * park.config.spreadMs, untilAt - clock.now());
  if (wait > 0) await clock.sleep(wait, attempt.signal).catch(rethrowUnlessDeadline(attempt));
  if (endedByDeadline(attempt)) return 'deadline';
  const verdict = wait > 0 ? await ask(park, attempt) : 'go';
  if (verdict !== 'park') return verdict === 'go' ? 'released' : verdict;
  parked.paced = undefined;
  return undefined;
}

/** A parked retry takes its place in its key's line: by when it was parked (a retry parked again keeps its place). */
function join(park: ParkContext, parked: Parked): Line {
  const { lines, session } = park;
  let line = lines.get(session.key);
  if (!line) {
    line = { parked: [], credit: 0, nextRelease: 0 };
    lines.set(session.key, line);
  }
  const after = line.parked.findIndex((other) => other.parkedAt > parked.parkedAt);
  line.parked.splice(after < 0 ? line.parked.length : after, 0, parked);
  return line;
}

/** A parked retry leaves its line; the next becomes the oldest, and the last one out ends the line. */
function leave(park: ParkContext, line: Line, parked: Parked): void {
  const { lines, session } = park;
  const at = line.parked.indexOf(parked);
  if (at >= 0) line.parked.splice(at, 1);
  // The next in line becomes the oldest: it starts asking for the probe place.
  if (at === 0) nudge(line.parked[0]);
  if (line.parked.length === 0 && lines.get(session.key) === line) lines.delete(session.key);
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
