import {
  AttemptTimeoutError,
  DeadlineExceededError,
  RetriesExhaustedError,
  RetryAfterTooLongError,
  type RetrylineErrorDetails,
} from '../errors';
import type { Emit } from '../events/emitter';
import { type RequestOutcome, summarizeError } from '../events/types';
import {
  type Decision,
  type DelayHint,
  type DelayReason,
  decide,
  initialState,
  type RetryState,
} from '../policy/decide';
import type { ResolvedPolicy } from '../policy/options';
import { type Clock, startTimer } from '../time/clock';
import { type Health, handsBack, type StoppedOutcome } from './outcome';

/** What one attempt is told by the loop. */
export interface LoopAttempt {
  /** 1 for the first try. */
  readonly attempt: number;
  /**
   * Aborts on the caller's abort, at the deadline, or after the attempt's `timeout`. `undefined`
   * when nothing can abort the attempt (no signal, deadline or timeout): no AbortController is made
   * for it, which is most of what a request costs on the happy path.
   */
  readonly signal: AbortSignal | undefined;
  /** Milliseconds since the request started. */
  readonly elapsed: number;
  /** Milliseconds left before the deadline (`Infinity` without one). */
  readonly remaining: number;
  /** Retries still allowed after this attempt. */
  readonly retriesLeft: number;
  /** What ended the previous attempt. */
  readonly previousError: unknown;
  /** Milliseconds waited between the attempts so far. */
  readonly totalDelay: number;
}

/** How an attempt settled. */
export type AttemptResult<V> =
  | { readonly ok: true; readonly value: V }
  | { readonly ok: false; readonly error: unknown };

/** The caller's judgement of an attempt. */
export type Verdict<V> =
  /** Resolve with this value: a success, or an answer that is final (a 404). */
  | {
      readonly action: 'return';
      readonly value: V;
      readonly outcome?: 'success' | 'not-retryable';
      readonly health?: Health;
    }
  /** Reject with this error as it is. */
  | { readonly action: 'throw'; readonly error: unknown; readonly health?: Health }
  /**
   * Retry if the policy allows. `fallback` is what to resolve with if it does not (an HTTP
   * response the caller gets back when retries run out); `hint` is the server's asked-for wait.
   */
  | {
      readonly action: 'retry';
      readonly error?: unknown;
      readonly fallback?: V;
      readonly hint?: DelayHint;
      /** Says what failed, in messages, when there is no error (`503 Service Unavailable`). */
      readonly summary?: string;
      /** How this attempt reflects on the dependency's health, when the default is wrong. */
      readonly health?: Health;
    };

export type { Health } from './outcome';

/** A guard's refusal: the error to stop with, and the outcome to report. */
export interface Refusal {
  readonly error: unknown;
  readonly outcome: RequestOutcome;
}

/** One wait, as reported to the caller and in `retry-scheduled` events. */
export interface ScheduledDelay {
  /** The retry it came before; 0 for a guard's wait before the first attempt. */
  readonly retry: number;
  readonly delay: number;
  /** A backoff or a server's hint, or a guard that held the attempt (pacing, limiter, bulkhead). */
  readonly reason: DelayReason | GuardWaitReason;
}

/** The guards that can hold an attempt before it is sent. */
export type GuardWaitReason = 'pacing' | 'limiter' | 'bulkhead' | 'parked';

/** What the loop needs from its caller. */
export interface LoopSpec<V> {
  readonly policy: ResolvedPolicy;
  readonly signal: AbortSignal | undefined;
  /**
   * `signal` belongs to this request alone: with no deadline, attempts and waits follow it as it
   * is, and the loop makes no controller of its own (an HTTP exchange's `ownSignal`).
   */
  readonly ownSignal?: boolean;
  /**
   * The value returned goes on working after the request (an HTTP response whose body is still to
   * be read): the caller's abort keeps reaching the signal its last attempt was sent with, while
   * the value lives, as it would with the caller's signal handed to the client.
   */
  readonly outlives?: boolean;
  /** Names the request in error messages: `Operation`, `GET https://api.example/x`. */
  readonly label: string;
  readonly emit: Emit;
  /** Fields of the `request-start` event besides its envelope. */
  readonly start: { readonly client: string } & Record<string, unknown>;
  /** Fields added to an attempt's `attempt-start` event (headers sent …). Called just before `run`. */
  prepare?(attempt: LoopAttempt): Record<string, unknown>;
  /** Performs one attempt. */
  run(attempt: LoopAttempt): Promise<V>;
  /**
   * How the first attempt went, when the caller already made it (admitted by the guards and sent,
   * through an {@link AttemptControl} when it had a timeout): the loop starts by judging it, and
   * runs only the attempts after it. `timedOut`: it failed with its own timeout.
   */
  readonly first?: (AttemptResult<V> & { readonly timedOut?: boolean }) | undefined;

  /** Judges how an attempt settled (never called for the caller's abort or the deadline). */
  judge(result: AttemptResult<V>, attempt: LoopAttempt, timedOut: boolean): Verdict<V> | Promise<Verdict<V>>;
  /** Fields added to an `attempt-end` event (status, phase …). */
  describe?(result: AttemptResult<V>): Record<string, unknown>;
  /** Called once a retry is decided, before the wait: returns an error to stop with instead. */
  refuse?(): unknown;
  /** Called before each wait; may be async; throwing stops the loop with what it threw. */
  onRetry?:
    | ((info: {
        attempt: number;
        nextAttempt: number;
        delay: number;
        reason: DelayReason;
        error: unknown;
      }) => unknown)
    | undefined;
  /** Releases a value that will not be returned (an HTTP response being retried). */
  discard?(value: V): void;
  /** Told how the request ended, whoever listens to events (what `request-end` reports). */
  settled?(summary: RequestSummary): void;
  /** Guards before each attempt (rate limiter, bulkhead, breaker): a refusal stops the request, nothing sent. */
  admit?: ((attempt: LoopAttempt) => Refusal | undefined | Promise<Refusal | undefined>) | undefined;
  /**
   * What the guards held the admitted attempt for, if anything (pacing, a limiter's token, a
   * bulkhead's place): a wait like a backoff, counted in the request's delays and totalDelay.
   */
  takeWaits?:
    | (() => readonly { readonly guard: GuardWaitReason; readonly ms: number }[] | undefined)
    | undefined;
  /** Frees what `admit` took for the attempt (a bulkhead place) once it has settled. */
  release?: (() => Promise<void> | undefined) | undefined;
  /** Tells the guards how an attempt went. */
  record?: ((health: Health) => Promise<void> | undefined) | undefined;
  /** The admitted attempt ended with nothing to count (an abort, a judge that threw). */
  abandon?: (() => Promise<void> | undefined) | undefined;
  /** Guards before a retry is scheduled (retry budget): a refusal stops the request. */
  allowRetry?:
    | ((failed: {
        readonly details: RetrylineErrorDetails;
        readonly summary: string;
      }) => Promise<Refusal | undefined>)
    | undefined;
}

/** How a request ended: `request-end`'s fields, and every wait. */
export interface RequestSummary {
  readonly outcome: RequestOutcome;
  readonly attempts: number;
  readonly totalDelay: number;
  readonly delays: readonly ScheduledDelay[];
}

/** What the loop resolves with. */
export interface LoopResult<V> {
  readonly value: V;
  readonly attempts: number;
  readonly totalDelay: number;
  readonly delays: readonly ScheduledDelay[];
  /**
   * How the request ended. A value handed back after a failed attempt says why no retry followed
   * (what stopped the retries never changes the shape of the result): its retries ran
   * out, the budget refused one, the deadline left no room, or the server asked for too long a wait.
   */
  readonly outcome: 'success' | 'not-retryable' | 'exhausted' | StoppedOutcome;
  /** When the server said to come back, for a request stopped by too long a hint. */
  readonly retryAt?: number;
}

export type { StoppedOutcome } from './outcome';

/**
 * Settles with `promise`, or rejects with `signal.reason` as soon as `signal` aborts. Through
 * {@link onAbort}: removing an event listener costs a loopback request some 6 µs, a set entry nothing.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) {
      // The promise's own rejection is handled too: it is no longer anyone's to report.
      promise.then(undefined, ignore);
      return reject(signal.reason);
    }
    const stop = onAbort(signal, () => reject(signal.reason));
    promise.then(
      (value) => {
        stop();
        resolve(value);
      },
      (error: unknown) => {
        stop();
        reject(error);
      },
    );
  });
}

/**
 * An attempt with its own AbortController, for a per-attempt timeout: aborted by its timer or by
 * the request's signal, which reaches it through the shared callback set ({@link onAbort}). Its
 * race ends the moment it aborts, so its own fresh signal needs no listener. The attempt loop and
 * the HTTP engine's first attempt both time attempts through it.
 */
export class AttemptControl {
  readonly #controller = new AbortController();
  #cut: ((reason: unknown) => void) | undefined;
  #unlink: (() => void) | undefined;
  #cancelTimer: (() => void) | undefined;

  /** Linked to the request's signal at once: an abort before the send ends the attempt too. */
  constructor(request: AbortSignal | undefined) {
    if (request?.aborted) this.abort(request.reason);
    else if (request) this.#unlink = onAbort(request, () => this.abort(request.reason));
  }

  /** The signal the attempt is sent with. */
  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    this.#controller.abort(reason);
    this.#cut?.(reason);
  }

  /**
   * Aborts with an AttemptTimeoutError after `timeout` ms, unless {@link done} comes first.
   * `label` names the request in its message; `totalDelay` is the request's waits so far.
   */
  time(clock: Clock, timeout: number, label: string, attempt: number, totalDelay: number): void {
    this.#cancelTimer = startTimer(clock, timeout, () =>
      this.abort(
        new AttemptTimeoutError(`${label} attempt ${attempt} timed out after ${timeout} ms`, {
          attempts: attempt,
          totalDelay,
          timeout,
        }),
      ),
    );
  }

  /** Settles as `run()` does, or rejects with the reason the moment the attempt aborts. */
  race<V>(run: () => Promise<V>): Promise<V> {
    return new Promise<V>((resolve, reject) => {
      const own = this.#controller.signal;
      if (own.aborted) reject(own.reason);
      this.#cut = reject;
      run().then(resolve, reject);
    });
  }

  /** Whether `error` is what this attempt's own timeout aborted it with. */
  timedOut(error: unknown): boolean {
    return error === this.#controller.signal.reason && error instanceof AttemptTimeoutError;
  }

  /** Stops the timer and the link to the request's signal: once the attempt settled or was refused. */
  done(): void {
    this.#cut = undefined;
    this.#cancelTimer?.();
    // Dropped, not only cleared: the timer's callback holds the scope it was made in.
    this.#cancelTimer = undefined;
    this.#unlink?.();
    this.#unlink = undefined;
  }
}

// Links kept for returned values, each dropped once its value is collected.
const keptLinks = new FinalizationRegistry<() => void>((stop) => stop());

/**
 * Lets the caller's `signal` keep aborting `target` (the controller an attempt was sent with)
 * while `value` (what that attempt returned: a response whose body is still to be read) lives.
 * Made here, not where `value` is known: a closure made in the attempt loop would hold the loop's
 * scope, `value` in it, and a value held by its own finalizer's callback is never collected.
 */
export function keepFollowing(
  value: unknown,
  signal: AbortSignal,
  target: { abort(reason: unknown): void },
): void {
  if (signal.aborted || !((typeof value === 'object' && value !== null) || typeof value === 'function'))
    return;
  keptLinks.register(
    value,
    onAbort(signal, () => target.abort(signal.reason)),
  );
}

/** Calls `stop` once `value` is collected (a timer bound to a response nobody reads any more). */
function keepUntilCollected(value: unknown, stop: () => void): void {
  if ((typeof value === 'object' && value !== null) || typeof value === 'function') {
    keptLinks.register(value, stop);
  }
}

/**
 * Aborts `target` (the controller the returned response was sent with) at the deadline, `left` ms
 * from now, so a body read past it rejects as under `AbortSignal.timeout`. Made here, not in the
 * loop: a closure made there would hold the loop's scope. Returns the timer's cancel, or nothing
 * when the deadline has passed already (`target` is aborted at once).
 */
function expireBody(
  clock: Clock,
  left: number,
  target: { abort(reason: unknown): void },
  label: string,
  deadline: number,
  { attempts, totalDelay }: RetryState,
): (() => void) | undefined {
  const expire = () =>
    target.abort(
      new DeadlineExceededError(`${label} exceeded its ${deadline} ms deadline while its response was read`, {
        attempts,
        totalDelay,
        deadline,
      }),
    );
  if (left > 0) return startTimer(clock, left, expire, true);
  expire();
  return undefined;
}

/**
 * The state with another attempt count, written out field by field: V8 (Node 20) builds
 * `{ ...state, attempts }` on a slow path that cost some 0.6 µs an attempt.
 */
const withAttempts = (state: RetryState, attempts: number): RetryState => ({
  attempts,
  startedAt: state.startedAt,
  totalDelay: state.totalDelay,
  previousDelay: state.previousDelay,
});

// One listener per signal, however many requests share it or however often one request's signal is
// raced: each use adds a callback to the signal's set and deletes it when done, so a signal shared by
// a thousand requests in flight carries one listener (no MaxListenersExceededWarning), not a
// thousand, and no listener is ever removed (which costs far more than adding one). The sets are
// kept in a WeakMap, not on the signals: a property added to a signal slows fetch's own handling of
// every signal that has one (some 10 µs a request on loopback).
const abortCallbacks = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `callback` when `signal` aborts; returns a function that stops that. */
function onAbort(signal: AbortSignal, callback: () => void): () => void {
  const callbacks = abortCallbacks.get(signal) ?? listenFor(signal);
  callbacks.add(callback);
  return () => {
    callbacks.delete(callback);
  };
}

/**
 * The callback set of `signal`, with the one listener that calls it. Made apart from
 * {@link onAbort}: a listener made there would share its scope and hold the first callback, and
 * with it the first request's response, for as long as the signal lives.
 */
function listenFor(signal: AbortSignal): Set<() => void> {
  const registered = new Set<() => void>();
  abortCallbacks.set(signal, registered);
  signal.addEventListener(
    'abort',
    () => {
      for (const call of [...registered]) call();
      registered.clear();
    },
    { once: true },
  );
  return registered;
}

const plural = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;

/**
 * The attempt loop every entry point shares (`retry()`, the HTTP engine): runs attempts, lets the
 * caller judge each, asks `decide()` whether and how long to wait, waits abortably, and emits the
 * events. The order for one attempt: deadline → timeout → send → judge → delay → deadline check →
 * abortable wait → next attempt. Aborts stop everything at once; nothing is left pending.
 */
export async function runAttemptLoop<V>(spec: LoopSpec<V>): Promise<LoopResult<V>> {
  const { signal } = spec;
  if (signal?.aborted) {
    // A first attempt the caller made may have brought a response: freed, never returned.
    if (spec.first?.ok) spec.discard?.(spec.first.value);
    throw signal.reason;
  }
  return new AttemptLoop(spec).run();
}

/** What aborts a sent attempt, and so what a value it returned keeps following. */
type Abortable = { abort(reason: unknown): void };

/** One attempt as the loop runs it. */
interface Running<V> {
  readonly context: LoopAttempt;
  /** What the caller made of it already (the first attempt, sent before the loop). */
  readonly made: LoopSpec<V>['first'];
  /** Its own controller, with a timeout. */
  readonly control: AttemptControl | undefined;
  /** What a value it returned keeps following: its controller, or the request's. */
  readonly sentWith: Abortable | undefined;
  /** When it started. */
  readonly start: number;
  /** When it went out: later than its start when a guard made it wait. */
  sentAt: number;
}

/** A failed attempt the policy may retry, with what its stop or retry says of it. */
interface Failure<V> {
  readonly verdict: Extract<Verdict<V>, { action: 'retry' }>;
  readonly running: Running<V>;
  readonly causeText: string;
  readonly details: RetrylineErrorDetails;
}

/**
 * One request's loop. A class rather than one long closure: each step is a method a screen long,
 * and the request's state is a handful of fields, not a scope every callback holds.
 */
class AttemptLoop<V> {
  readonly #spec: LoopSpec<V>;
  readonly #policy: ResolvedPolicy;
  readonly #clock: Clock;
  #state: RetryState;
  #lastError: unknown;
  readonly #delays: ScheduledDelay[] = [];
  #ended = false;
  // The last status a response gave: every request-end reports it, however the request stops.
  #lastStatus: { readonly status: unknown } | undefined;
  // Aborted on the caller's abort or at the deadline; `undefined` when nothing can abort.
  readonly #request: AbortController | undefined;
  readonly #aborted: AbortSignal | undefined;
  readonly #unlink: (() => void) | undefined;
  readonly #deadlineAt: number;
  #cancelDeadline: (() => void) | undefined;
  /**
   * The last attempt's response while a retry is pending (its wait, and its attempt's admission):
   * handed back as it came if the retry's attempt is refused before it is sent, else released
   * once that attempt is admitted. With what it was sent with, for `handOver`.
   */
  #held: { readonly value: V; readonly sentWith: Abortable | undefined } | undefined;

  constructor(spec: LoopSpec<V>) {
    const { policy, signal } = spec;
    this.#spec = spec;
    this.#policy = policy;
    this.#clock = policy.clock;
    this.#state = initialState(policy, this.#clock.now());
    // Events are built only when someone listens (`emit.listening()`): the happy path builds none.
    if (spec.emit.listening()) spec.emit({ type: 'request-start', ...spec.start } as never);
    // An AbortController costs some 10 µs to make in Node, so the loop makes one only when
    // something can abort (a caller's signal, a deadline). The caller's signal is never handed on:
    // a client keeps listeners on the signal it is given (fetch until its Request is collected),
    // which would pile up on a signal shared by many requests. A signal that is this request's
    // alone (a fetch Request's own) is followed as it is, unless a deadline must abort too.
    const direct = policy.deadline === undefined && spec.ownSignal === true;
    const request =
      policy.deadline === undefined && (signal === undefined || direct) ? undefined : new AbortController();
    this.#request = request;
    this.#aborted = direct ? signal : request?.signal;
    this.#unlink = request && signal ? onAbort(signal, () => request.abort(signal.reason)) : undefined;
    this.#deadlineAt =
      policy.deadline === undefined ? Number.POSITIVE_INFINITY : this.#state.startedAt + policy.deadline;
    if (request && policy.deadline !== undefined)
      this.#cancelDeadline = this.#startDeadline(request, policy.deadline);
  }

  /** Aborts the request at its deadline; cancelled once the request is over, so nothing stays pending. */
  #startDeadline(request: AbortController, deadline: number): () => void {
    return startTimer(this.#clock, deadline, () =>
      request.abort(
        new DeadlineExceededError(
          `${this.#spec.label} exceeded its ${deadline} ms deadline during attempt ${this.#state.attempts}`,
          {
            cause: this.#lastError,
            attempts: this.#state.attempts,
            totalDelay: this.#state.totalDelay,
            deadline,
          },
        ),
      ),
    );
  }

  async run(): Promise<LoopResult<V>> {
    try {
      for (;;) {
        const result = await this.#attempt();
        if (result) return result;
      }
    } catch (error) {
      this.#release();
      // Whatever else ended the request (a store that failed, a backoff function that threw): it
      // still ends with a request-end, so no listener is left with a request in flight.
      if (!this.#ended) this.#end(this.#aborted?.aborted ? this.#abortedAs() : 'not-retryable', error);
      throw error;
    } finally {
      this.#cancelDeadline?.();
      this.#unlink?.();
    }
  }

  /** Ends the request: `settled`, and a request-end for whoever listens. */
  #end(
    outcome: RequestOutcome,
    error?: unknown,
    extra: Record<string, unknown> | undefined = this.#lastStatus,
  ) {
    const state = this.#state;
    this.#ended = true;
    this.#spec.settled?.({
      outcome,
      attempts: state.attempts,
      totalDelay: state.totalDelay,
      delays: this.#delays,
    });
    const { emit } = this.#spec;
    if (!emit.listening()) return;
    emit({
      type: 'request-end',
      outcome,
      attempts: state.attempts,
      totalDelay: state.totalDelay,
      duration: this.#clock.now() - state.startedAt,
      ...extra,
      ...(error === undefined ? {} : { error: summarizeError(error) }),
    });
  }

  /**
   * What the request resolves with may still be read (a response's body): the caller's abort
   * keeps reaching the controller it was sent with, and so does the deadline, now on a timer that
   * holds no process open and goes when the value is collected.
   */
  #handOver(value: V, sentWith: Abortable | undefined): void {
    const spec = this.#spec;
    const policy = this.#policy;
    const { signal } = spec;
    if (!spec.outlives || sentWith === undefined) return;
    if (signal) keepFollowing(value, signal, sentWith);
    if (this.#cancelDeadline === undefined || policy.deadline === undefined) return;
    this.#cancelDeadline();
    this.#cancelDeadline = undefined;
    const left = this.#deadlineAt - this.#clock.now();
    const expiry = expireBody(this.#clock, left, sentWith, spec.label, policy.deadline, this.#state);
    if (expiry) keepUntilCollected(value, expiry);
  }

  #abortedAs(): RequestOutcome {
    return this.#spec.signal?.aborted ? 'aborted' : 'deadline';
  }

  /** The request was aborted (by the caller or the deadline): reports it, returns the reason. */
  #stopped(): unknown {
    const reason = this.#aborted?.reason;
    this.#end(this.#abortedAs(), reason);
    return reason;
  }

  /** Lets go of the response a pending retry would have stood in for. */
  #release(): void {
    if (this.#held) this.#spec.discard?.(this.#held.value);
    this.#held = undefined;
  }

  /** Counts what the guards held the admitted attempt for, as waits. */
  #countGuardWaits(retry: number): void {
    for (const { guard, ms } of this.#spec.takeWaits?.() ?? []) {
      this.#state = { ...this.#state, totalDelay: this.#state.totalDelay + ms };
      this.#delays.push({ retry, delay: ms, reason: guard });
    }
  }

  /** The next attempt as it starts. */
  #begin(): Running<V> {
    const state = withAttempts(this.#state, this.#state.attempts + 1);
    this.#state = state;
    const policy = this.#policy;
    // The first attempt starts when the request does (one clock read fewer on the happy path).
    const now = state.attempts === 1 ? state.startedAt : this.#clock.now();
    const made = state.attempts === 1 ? this.#spec.first : undefined;
    // Its own controller only with a timeout; otherwise the attempt aborts when the request does.
    // Linked before the guards, so a limiter's wait ends at once on an abort or at the deadline.
    const control = policy.timeout === undefined || made ? undefined : new AttemptControl(this.#aborted);
    const context: LoopAttempt = {
      attempt: state.attempts,
      signal: control ? control.signal : this.#aborted,
      elapsed: now - state.startedAt,
      remaining: this.#deadlineAt - now,
      retriesLeft: policy.retries - (state.attempts - 1),
      previousError: this.#lastError,
      totalDelay: state.totalDelay,
    };
    const sentWith = control ?? (made ? undefined : this.#request);
    return { context, made, control, sentWith, start: now, sentAt: now };
  }

  /** One attempt, from admission to the wait after it: the request's result, or `undefined` to go on. */
  async #attempt(): Promise<LoopResult<V> | undefined> {
    const running = this.#begin();
    const admitting = this.#admit(running);
    if (admitting) {
      const refused = await admitting;
      if (refused) return refused;
    }
    const result = await this.#send(running);
    const verdict = await this.#judge(running, result);
    if (verdict.action === 'return') {
      const final = verdict.outcome ?? 'success';
      // The controller the last attempt was sent with keeps following the caller's abort.
      this.#handOver(verdict.value, running.sentWith);
      this.#end(final);
      return this.#result(verdict.value, final);
    }
    if (verdict.action === 'throw') {
      this.#end('not-retryable', verdict.error);
      throw verdict.error;
    }
    this.#lastError = verdict.error;
    if (this.#aborted?.aborted) {
      if (verdict.fallback !== undefined) this.#spec.discard?.(verdict.fallback);
      throw this.#stopped();
    }
    const cause = verdict.error;
    const failure: Failure<V> = {
      verdict,
      running,
      causeText:
        verdict.summary ??
        (cause === undefined ? 'the attempt asked for a retry' : summarizeError(cause).message),
      details: { cause, attempts: running.context.attempt, totalDelay: this.#state.totalDelay },
    };
    return this.#retryOrStop(failure);
  }

  #result(value: V, outcome: LoopResult<V>['outcome'], retryAt?: number): LoopResult<V> {
    const { attempts, totalDelay } = this.#state;
    return {
      value,
      attempts,
      totalDelay,
      delays: this.#delays,
      outcome,
      ...(retryAt === undefined ? {} : { retryAt }),
    };
  }

  /**
   * Asks the guards to let the attempt go (the first attempt the caller made was admitted already):
   * `undefined` when they did at once; else a promise of the request's result when the attempt is
   * not sent (see {@link #refused}), or of `undefined` once it may go.
   */
  #admit(running: Running<V>): Promise<LoopResult<V> | undefined> | undefined {
    const { context, made, control } = running;
    let admitted: ReturnType<NonNullable<LoopSpec<V>['admit']>>;
    try {
      admitted = made ? undefined : this.#spec.admit?.(context);
    } catch (error) {
      control?.done();
      this.#countGuardWaits(context.attempt - 1);
      return this.#unadmitted(error);
    }
    // Awaited only when a guard answers through a promise: otherwise the attempt goes out within
    // the caller's call, with no turn of the event loop in between.
    return admitted instanceof Promise
      ? this.#admitLater(running, admitted)
      : this.#admitted(running, admitted);
  }

  /** A guard that answers through a promise (a wait, a shared store): the attempt goes out after. */
  async #admitLater(
    running: Running<V>,
    admitted: Promise<Refusal | undefined>,
  ): Promise<LoopResult<V> | undefined> {
    const attempt = running.context.attempt;
    let refusal: Refusal | undefined;
    try {
      refusal = await admitted;
    } catch (error) {
      running.control?.done();
      // A guard's wait an abort cut short counts what passed, as a backoff's does.
      this.#countGuardWaits(attempt - 1);
      return this.#unadmitted(error);
    }
    running.sentAt = this.#clock.now();
    // A wait is a wait: what a guard held the attempt for counts like a backoff.
    this.#countGuardWaits(attempt - 1);
    return this.#admitted(running, refusal);
  }

  /** Admitted (the response a retry would have stood in for is let go), or refused. */
  #admitted(
    running: Running<V>,
    refusal: Refusal | undefined,
  ): Promise<LoopResult<V> | undefined> | undefined {
    if (refusal || this.#aborted?.aborted) return this.#refused(running, refusal);
    this.#release();
    return undefined;
  }

  /**
   * The attempt is not sent: refused by a guard, or the request aborted while a guard answered. A
   * refusal of a retry's attempt hands back the last response as it came; a refusal of the
   * request's first attempt, or after a failure that left no response, rejects with its error.
   */
  async #refused(running: Running<V>, refusal: Refusal | undefined): Promise<LoopResult<V>> {
    const spec = this.#spec;
    running.control?.done();
    await spec.release?.();
    this.#state = withAttempts(this.#state, this.#state.attempts - 1);
    if (!refusal) {
      this.#release();
      // Aborted while a guard answered: nothing is sent, and a breaker's trial place is freed.
      forget(spec.abandon?.());
      throw this.#stopped();
    }
    const held = this.#held;
    if (held && handsBack(refusal.outcome)) {
      this.#held = undefined;
      this.#handOver(held.value, held.sentWith);
      this.#end(refusal.outcome, refusal.error);
      const retryAt = (refusal.error as { retryAt?: unknown } | undefined)?.retryAt;
      return this.#result(held.value, refusal.outcome, typeof retryAt === 'number' ? retryAt : undefined);
    }
    this.#release();
    this.#end(refusal.outcome, refusal.error);
    throw refusal.error;
  }

  /** A guard's admission threw (a store that failed, or the abort it was waiting through). */
  async #unadmitted(error: unknown): Promise<never> {
    await this.#spec.release?.();
    this.#state = withAttempts(this.#state, this.#state.attempts - 1);
    this.#release();
    if (this.#aborted?.aborted) throw this.#stopped();
    throw error;
  }

  /** Sends the admitted attempt (or takes the one the caller made), then frees its guard places. */
  async #send(running: Running<V>): Promise<AttemptResult<V>> {
    const { context, made, control } = running;
    const spec = this.#spec;
    const sending =
      running.sentAt === running.start
        ? context
        : {
            ...context,
            elapsed: running.sentAt - this.#state.startedAt,
            remaining: this.#deadlineAt - running.sentAt,
          };
    if (!made && spec.emit.listening()) {
      spec.emit({ type: 'attempt-start', attempt: context.attempt, ...spec.prepare?.(sending) });
    }
    const timeout = this.#policy.timeout;
    if (control && timeout !== undefined) {
      control.time(this.#clock, timeout, spec.label, context.attempt, this.#state.totalDelay);
    }
    let result: AttemptResult<V>;
    if (made) result = made;
    else {
      try {
        const sent = control
          ? control.race(() => spec.run(sending))
          : raceAbort(spec.run(sending), context.signal);
        result = { ok: true, value: await sent };
      } catch (error) {
        result = { ok: false, error };
      } finally {
        control?.done();
      }
    }
    // Awaited only when there is something to wait for: each await is a turn of the event loop.
    const released = spec.release?.();
    if (released) await released;
    return result;
  }

  /**
   * Judges how the attempt settled, reports its end, and tells the guards its health. An abort
   * ends the request here, whatever the attempt brought.
   */
  async #judge(running: Running<V>, result: AttemptResult<V>): Promise<Verdict<V>> {
    const { context, made, control, sentAt } = running;
    const spec = this.#spec;
    const aborted = this.#aborted;
    // The attempt's end, read only for an event: a clock read is a cost on the happy path.
    const endedAt = spec.emit.listening() ? this.#clock.now() : undefined;
    if (aborted?.aborted) {
      if (result.ok) spec.discard?.(result.value);
      // An abort says nothing about the server: a breaker's trial place is freed, not held.
      forget(spec.abandon?.());
      spec.emit({
        type: 'attempt-end',
        attempt: context.attempt,
        outcome: 'aborted',
        duration: (endedAt ?? this.#clock.now()) - sentAt,
        error: summarizeError(aborted?.reason),
      });
      throw this.#stopped();
    }
    const timedOut = !result.ok && (control ? control.timedOut(result.error) : made?.timedOut === true);
    let verdict: Verdict<V>;
    try {
      const judged = spec.judge(result, context, timedOut);
      // A judge may wait (an async retryOn, a shared store): an abort does not wait for it.
      verdict = judged instanceof Promise ? await raceAbort(judged, aborted) : judged;
    } catch (error) {
      if (result.ok) spec.discard?.(result.value);
      forget(spec.abandon?.());
      if (aborted?.aborted && error === aborted.reason) throw this.#stopped();
      this.#end('not-retryable', error);
      throw error;
    }
    this.#reportEnd(running, result, verdict, timedOut, endedAt);
    // After attempt-end, so a breaker-state this attempt causes follows the attempt's end.
    if (spec.record) {
      const recorded = spec.record(healthOf(verdict));
      if (recorded) await recorded;
    }
    return verdict;
  }

  /** The attempt-end event (built only for someone to read: describing a response costs). */
  #reportEnd(
    running: Running<V>,
    result: AttemptResult<V>,
    verdict: Verdict<V>,
    timedOut: boolean,
    endedAt: number | undefined,
  ): void {
    const { emit } = this.#spec;
    const listening = emit.listening();
    const details = listening ? this.#spec.describe?.(result) : undefined;
    this.#lastStatus = details?.status === undefined ? undefined : { status: details.status };
    if (!listening) return;
    // A response handed back as it is without being a success (a 400, a POST's 503) failed.
    const outcome =
      verdict.action === 'return'
        ? (verdict.outcome ?? 'success') === 'success'
          ? 'success'
          : 'error'
        : timedOut
          ? 'timeout'
          : result.ok
            ? 'retry'
            : 'error';
    emit({
      type: 'attempt-end',
      attempt: running.context.attempt,
      outcome,
      duration: (endedAt ?? this.#clock.now()) - running.sentAt,
      ...details,
      ...(result.ok ? {} : { error: summarizeError(result.error) }),
    });
  }

  /** Why the wait before the next attempt is not started: it would pass the deadline. */
  #pastDeadlineError(failure: Failure<V>, wait: number): DeadlineExceededError {
    const policy = this.#policy;
    return new DeadlineExceededError(
      `${this.#spec.label} stopped after ${plural(failure.running.context.attempt)}: waiting ${Math.round(wait)} ms for the next one would pass its ${policy.deadline} ms deadline (${failure.causeText})`,
      // Only reached with a deadline: without one, deadlineAt is Infinity.
      { ...failure.details, deadline: policy.deadline ?? Number.POSITIVE_INFINITY },
    );
  }

  /**
   * A retry refused after a response: the response is handed back as it came, and request-end
   * says why no retry followed, with the error that would have said it.
   */
  #stopWith(
    failure: Failure<V>,
    value: V,
    outcome: StoppedOutcome,
    why: unknown,
    at?: number,
  ): LoopResult<V> {
    this.#handOver(value, failure.running.sentWith);
    this.#end(outcome, why);
    return this.#result(value, outcome, at);
  }

  /** After a failure the policy may retry: asks decide(), the guards and the deadline, then waits. */
  async #retryOrStop(failure: Failure<V>): Promise<LoopResult<V> | undefined> {
    const { verdict } = failure;
    const decision = decide(this.#policy, this.#state, this.#clock.now(), verdict.error, verdict.hint);
    if (!decision.retry) return this.#stop(failure, decision);
    const spec = this.#spec;
    const refused = spec.refuse?.();
    if (refused !== undefined) {
      if (verdict.fallback !== undefined) spec.discard?.(verdict.fallback);
      this.#end('not-retryable', refused);
      throw refused;
    }
    const denied = await spec.allowRetry?.({ details: failure.details, summary: failure.causeText });
    if (denied) {
      if (verdict.fallback !== undefined && denied.outcome === 'budget-exhausted') {
        return this.#stopWith(failure, verdict.fallback, 'budget-exhausted', denied.error);
      }
      if (verdict.fallback !== undefined) spec.discard?.(verdict.fallback);
      this.#end(denied.outcome, denied.error);
      throw denied.error;
    }
    const { delay } = decision;
    // decide() checked the deadline; the budget's store may have taken time since.
    if (this.#clock.now() + delay >= this.#deadlineAt) return this.#stopAtDeadline(failure, delay);
    if (verdict.fallback !== undefined) {
      this.#held = { value: verdict.fallback, sentWith: failure.running.sentWith };
    }
    return this.#wait(failure, decision);
  }

  /** No retry: the response handed back, or the error that says why. */
  #stop(failure: Failure<V>, decision: Extract<Decision, { retry: false }>): LoopResult<V> {
    const { verdict, running, causeText, details } = failure;
    const { fallback } = verdict;
    const attempt = running.context.attempt;
    if ((decision.reason === 'retries' || decision.reason === 'max-delay') && fallback !== undefined) {
      this.#handOver(fallback, running.sentWith);
      this.#end('exhausted');
      return this.#result(fallback, 'exhausted');
    }
    if (decision.reason === 'retry-after-too-long') {
      const now = this.#clock.now();
      const asked = decision.hint?.delay ?? 0;
      const byDeadline = now + asked >= this.#deadlineAt;
      const limit = byDeadline
        ? `the remaining ${Math.round(this.#deadlineAt - now)} ms before its deadline`
        : `maxRetryAfter (${this.#policy.maxRetryAfter} ms)`;
      const retryAt = now + asked;
      const error = new RetryAfterTooLongError(
        `${this.#spec.label} stopped after ${plural(attempt)}: the server asked to wait ${Math.round(asked)} ms (${decision.hint?.source}), more than ${limit}: ${causeText}`,
        { ...details, retryAt, ...(byDeadline ? { deadline: this.#policy.deadline } : {}) },
      );
      if (fallback !== undefined)
        return this.#stopWith(failure, fallback, 'retry-after-too-long', error, retryAt);
      this.#end('retry-after-too-long', error);
      throw error;
    }
    if (decision.reason === 'deadline' && this.#policy.deadline !== undefined) {
      return this.#stopAtDeadline(failure, decision.computation?.delay ?? 0);
    }
    if (fallback !== undefined) this.#spec.discard?.(fallback);
    const error =
      decision.reason === 'max-delay'
        ? new RetriesExhaustedError(
            `${this.#spec.label} gave up after ${plural(attempt)}: the next backoff (${Math.round(decision.computation?.raw ?? 0)} ms) passes maxDelay (${this.#policy.maxDelay} ms): ${causeText}`,
            { ...details, reason: 'max-delay' },
          )
        : new RetriesExhaustedError(
            `${this.#spec.label} failed after ${plural(attempt)}: ${causeText}`,
            details,
          );
    this.#end('exhausted', error);
    throw error;
  }

  /** The wait would pass the deadline: the response handed back (stoppedBy deadline), or the error. */
  #stopAtDeadline(failure: Failure<V>, delay: number): LoopResult<V> {
    const fallback = failure.verdict.fallback;
    const error = this.#pastDeadlineError(failure, delay);
    if (fallback !== undefined) return this.#stopWith(failure, fallback, 'deadline', error);
    this.#end('deadline', error);
    throw error;
  }

  /** Reports the retry, lets onRetry see it, and waits for it, abortably. */
  async #wait(
    failure: Failure<V>,
    decision: Extract<Decision, { retry: true }>,
  ): Promise<LoopResult<V> | undefined> {
    const { delay, computation, reason } = decision;
    const spec = this.#spec;
    this.#delays.push({ retry: computation.retry, delay, reason });
    spec.emit({
      type: 'retry-scheduled',
      attempt: decision.nextAttempt,
      retry: computation.retry,
      delay,
      reason,
      strategy: this.#policy.backoff.strategy,
      jitter: this.#policy.jitter.type,
      raw: computation.raw,
      capped: computation.capped,
      ...(decision.hint ? { hint: { source: decision.hint.source, delay: decision.hint.delay } } : {}),
    });
    if (spec.onRetry) {
      const stop = await this.#onRetry(failure, decision);
      if (stop) return stop;
    }
    const waitFrom = this.#clock.now();
    try {
      await this.#clock.sleep(delay, this.#aborted);
    } catch {
      // Cut short: the time it did wait counts in request-end's totalDelay.
      this.#state = { ...this.#state, totalDelay: this.#state.totalDelay + (this.#clock.now() - waitFrom) };
      this.#release();
      throw this.#stopped();
    }
    this.#state = decision.state;
    return undefined;
  }

  /** Calls onRetry (a slow hook does not hold up an abort); a stop when it left no time to wait. */
  async #onRetry(
    failure: Failure<V>,
    decision: Extract<Decision, { retry: true }>,
  ): Promise<LoopResult<V> | undefined> {
    const { delay, reason } = decision;
    const aborted = this.#aborted;
    try {
      const hooked = this.#spec.onRetry?.({
        attempt: failure.running.context.attempt,
        nextAttempt: decision.nextAttempt,
        delay,
        reason,
        error: failure.verdict.error,
      });
      await raceAbort(Promise.resolve(hooked), aborted);
    } catch (hookError) {
      this.#release();
      if (aborted?.aborted && hookError === aborted.reason) throw this.#stopped();
      this.#end('not-retryable', hookError);
      throw hookError;
    }
    // A slow hook may have used up what was left before the deadline: the wait is not made.
    if (this.#clock.now() + delay < this.#deadlineAt) return undefined;
    this.#delays.pop();
    const held = this.#held;
    this.#held = undefined;
    if (held) return this.#stopWith(failure, held.value, 'deadline', this.#pastDeadlineError(failure, delay));
    const error = this.#pastDeadlineError(failure, delay);
    this.#end('deadline', error);
    throw error;
  }
}

/** How an attempt reflects on the dependency's health: the verdict knows best (a POST's 503 is not retried, yet says the origin is failing). */
function healthOf<V>(verdict: Verdict<V>): Health {
  if (verdict.health) return verdict.health;
  if (verdict.action === 'retry') return 'failure';
  return verdict.action === 'return' && (verdict.outcome ?? 'success') === 'success' ? 'success' : 'ignored';
}

const ignore = () => {};

/** Lets a store call finish on its own: its answer and its failure matter to nobody now. */
function forget(pending: Promise<unknown> | undefined): void {
  pending?.catch(ignore);
}
