import {
  AttemptTimeoutError,
  DeadlineExceededError,
  InvalidOptionsError,
  isRetrylineError,
  RetriesExhaustedError,
} from './errors';
import { createEmitter } from './events/emitter';
import { createRequestId } from './events/request-id';
import { type RetrylineEventListener, summarizeError } from './events/types';
import { decide, initialState, type RetryState } from './policy/decide';
import { expectObject, invalid, mergeOptions, normalizePolicy, own } from './policy/normalize';
import type { PolicyOptions } from './policy/options';
import type { Clock } from './time/clock';

/**
 * Return this from the operation to ask for another attempt without throwing (seed 001's
 * `:retry`). When no retry is left, `retry()` rejects with `RetriesExhaustedError`.
 */
export const RETRY: unique symbol = Symbol.for('retryline.retry');

/** What each attempt of the operation is told. */
export interface AttemptContext {
  /** This attempt's number: 1 for the first try. */
  readonly attempt: number;
  /** Retries still allowed after this attempt (may be `Infinity`). */
  readonly retriesLeft: number;
  /**
   * Aborts when the caller aborts, the deadline passes or this attempt's `timeout` runs out.
   * Pass it on (to fetch, a database driver …) so abandoned work stops too.
   */
  readonly signal: AbortSignal;
  /** The logical request's id, the same on every attempt. */
  readonly requestId: string;
  /** Milliseconds since the request started. */
  readonly elapsed: number;
  /** What ended the previous attempt (`undefined` on the first, or after `RETRY`). */
  readonly previousError: unknown;
}

/** What `retryIf` is told besides the error. */
export interface RetryIfContext {
  /** The attempt that failed. */
  readonly attempt: number;
  readonly requestId: string;
}

/** What `onRetry` is told, before each wait. */
export interface RetryInfo {
  /** The attempt that failed. */
  readonly attempt: number;
  /** The attempt that will follow the wait (`attempt + 1`). */
  readonly nextAttempt: number;
  /** The retry number n (equal to the failed attempt's number). */
  readonly retry: number;
  /** The wait in milliseconds. */
  readonly delay: number;
  /** What the failed attempt threw, or `undefined` when it returned `RETRY`. */
  readonly error: unknown;
  readonly requestId: string;
}

/** Options of {@link retry}: the shared policy options plus the hooks of a generic operation. */
export interface RetryOptions extends PolicyOptions {
  /**
   * Aborting it stops everything at once: the running attempt's signal aborts, a wait ends, and
   * `retry()` rejects with `signal.reason`. Aborts are never retried.
   */
  signal?: AbortSignal;
  /**
   * Decides whether a thrown error is retried. By default every error is, except aborts
   * (`AbortError`) and `InvalidOptionsError`.
   * @example
   * ```ts
   * retry(op, { retryIf: (error) => !(error instanceof TypeError) });
   * ```
   */
  retryIf?: (error: unknown, context: RetryIfContext) => boolean | Promise<boolean>;
  /** Another name for `retryIf`, for users coming from p-retry or cockatiel. Give one, not both. */
  shouldRetry?: (error: unknown, context: RetryIfContext) => boolean | Promise<boolean>;
  /**
   * Called before each wait. Awaited if it returns a promise; throwing stops retrying and
   * rejects with what it threw.
   * @example
   * ```ts
   * retry(op, { onRetry: ({ attempt, delay, error }) => console.warn(`attempt ${attempt} failed; retrying in ${delay} ms`, error) });
   * ```
   */
  onRetry?: (info: RetryInfo) => void | Promise<void>;
  /** Receives this request's events (DESIGN §9). */
  onEvent?: RetrylineEventListener;
  /** Names the operation in error messages and events. @default 'Operation' */
  operation?: string;
  /** The request id to use instead of a fresh UUID. */
  requestId?: string;
}

/** What `retry()` resolves to: the operation's result, never the `RETRY` sentinel. */
export type RetryResult<T> = Exclude<Awaited<T>, typeof RETRY>;

/** An operation that `retry()` runs once per attempt. */
export type RetryOperation<T> = (context: AttemptContext) => T;

type Predicate = NonNullable<RetryOptions['retryIf']>;

interface Hooks {
  readonly signal: AbortSignal | undefined;
  readonly retryIf: Predicate;
  readonly onRetry: RetryOptions['onRetry'];
  readonly onEvent: RetrylineEventListener | undefined;
  readonly label: string;
  readonly operation: string | undefined;
  readonly requestId: string | undefined;
}

/** Default predicate: everything but aborts and invalid options. */
function retryableByDefault(error: unknown): boolean {
  if (isRetrylineError(error, 'InvalidOptionsError')) return false;
  return !(
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'AbortError'
  );
}

function optionalFunction<F>(name: string, value: unknown): F | undefined {
  if (value !== undefined && typeof value !== 'function') throw invalid(name, 'a function', value);
  return value as F | undefined;
}

function optionalString(name: string, value: unknown): string | undefined {
  if (value !== undefined && (typeof value !== 'string' || value === ''))
    throw invalid(name, 'a non-empty string', value);
  return value as string | undefined;
}

function normalizeHooks(options: RetryOptions): Hooks {
  const signal = own(options, 'signal');
  if (
    signal !== undefined &&
    (typeof signal !== 'object' || signal === null || typeof signal.addEventListener !== 'function')
  ) {
    throw invalid('signal', 'an AbortSignal', signal);
  }
  const retryIf = optionalFunction<Predicate>('retryIf', own(options, 'retryIf'));
  const shouldRetry = optionalFunction<Predicate>('shouldRetry', own(options, 'shouldRetry'));
  if (retryIf && shouldRetry) {
    throw new InvalidOptionsError('Expected only one of retryIf and shouldRetry, got both', {
      option: 'retryIf',
    });
  }
  const operation = optionalString('operation', own(options, 'operation'));
  return {
    signal,
    retryIf: retryIf ?? shouldRetry ?? retryableByDefault,
    onRetry: optionalFunction('onRetry', own(options, 'onRetry')),
    onEvent: optionalFunction('onEvent', own(options, 'onEvent')),
    label: operation ?? 'Operation',
    operation,
    requestId: optionalString('requestId', own(options, 'requestId')),
  };
}

/** Runs `fire` after `ms` unless `cancel` aborts first. */
function after(clock: Clock, ms: number, cancel: AbortSignal, fire: () => void): void {
  clock.sleep(ms, cancel).then(fire, () => {});
}

/** Settles with `promise`, or rejects with `signal.reason` as soon as `signal` aborts. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

const plural = (n: number) => `${n} attempt${n === 1 ? '' : 's'}`;
const causeText = (error: unknown) =>
  error === undefined ? 'the operation returned RETRY' : summarizeError(error).message;

async function execute<T>(fn: RetryOperation<T>, options: RetryOptions): Promise<RetryResult<T>> {
  if (typeof fn !== 'function') throw invalid('the operation', 'a function', fn, 'fn');
  const policy = normalizePolicy(options);
  const hooks = normalizeHooks(options);
  const { clock } = policy;
  const { signal, label } = hooks;
  if (signal?.aborted) throw signal.reason;

  const requestId = hooks.requestId ?? createRequestId();
  const emit = createEmitter(hooks.onEvent, requestId, clock);
  let state: RetryState = initialState(policy, clock.now());
  let lastError: unknown;
  emit({
    type: 'request-start',
    client: 'retry',
    ...(hooks.operation === undefined ? {} : { operation: hooks.operation }),
  });

  const end = (
    outcome: 'success' | 'exhausted' | 'not-retryable' | 'aborted' | 'deadline',
    error?: unknown,
  ) =>
    emit({
      type: 'request-end',
      outcome,
      attempts: state.attempts,
      totalDelay: state.totalDelay,
      duration: clock.now() - state.startedAt,
      ...(outcome === 'success' ? {} : { error: summarizeError(error) }),
    });

  // `request` aborts the running attempt and any wait: on the caller's abort, or at the deadline.
  const request = new AbortController();
  // `timers` cancels the deadline timer once the request is over, so nothing stays pending.
  const timers = new AbortController();
  const onCallerAbort = () => request.abort(signal?.reason);
  signal?.addEventListener('abort', onCallerAbort, { once: true });
  if (policy.deadline !== undefined) {
    const deadline = policy.deadline;
    after(clock, deadline, timers.signal, () =>
      request.abort(
        new DeadlineExceededError(
          `${label} exceeded its ${deadline} ms deadline during attempt ${state.attempts}`,
          {
            cause: lastError,
            attempts: state.attempts,
            totalDelay: state.totalDelay,
            deadline,
          },
        ),
      ),
    );
  }

  // The request was aborted (by the caller or the deadline): report it and return the reason.
  const stopped = (): unknown => {
    const reason = request.signal.reason;
    end(signal?.aborted ? 'aborted' : 'deadline', reason);
    return reason;
  };

  try {
    for (;;) {
      state = { ...state, attempts: state.attempts + 1 };
      const attempt = state.attempts;
      const attemptStartedAt = clock.now();
      emit({ type: 'attempt-start', attempt });

      const attemptControl = new AbortController();
      const attemptTimers = new AbortController();
      const forward = () => attemptControl.abort(request.signal.reason);
      request.signal.addEventListener('abort', forward, { once: true });
      const timeout = policy.timeout;
      if (timeout !== undefined) {
        after(clock, timeout, attemptTimers.signal, () =>
          attemptControl.abort(
            new AttemptTimeoutError(`${label} attempt ${attempt} timed out after ${timeout} ms`, {
              attempts: attempt,
              totalDelay: state.totalDelay,
              timeout,
            }),
          ),
        );
      }
      const context: AttemptContext = {
        attempt,
        retriesLeft: policy.retries - (attempt - 1),
        signal: attemptControl.signal,
        requestId,
        elapsed: attemptStartedAt - state.startedAt,
        previousError: lastError,
      };
      let outcome: { ok: true; value: Awaited<T> } | { ok: false; error: unknown };
      try {
        const value = await raceAbort(
          new Promise<Awaited<T>>((resolve) => resolve(fn(context) as Awaited<T>)),
          attemptControl.signal,
        );
        outcome = { ok: true, value };
      } catch (error) {
        outcome = { ok: false, error };
      } finally {
        attemptTimers.abort();
        request.signal.removeEventListener('abort', forward);
      }

      const duration = clock.now() - attemptStartedAt;
      if (request.signal.aborted) {
        emit({
          type: 'attempt-end',
          attempt,
          outcome: 'aborted',
          duration,
          error: summarizeError(request.signal.reason),
        });
        throw stopped();
      }
      if (outcome.ok && outcome.value !== RETRY) {
        emit({ type: 'attempt-end', attempt, outcome: 'success', duration });
        end('success');
        return outcome.value as RetryResult<T>;
      }
      const error = outcome.ok ? undefined : outcome.error;
      const timedOut =
        !outcome.ok && error === attemptControl.signal.reason && error instanceof AttemptTimeoutError;
      emit({
        type: 'attempt-end',
        attempt,
        outcome: outcome.ok ? 'retry' : timedOut ? 'timeout' : 'error',
        duration,
        ...(outcome.ok ? {} : { error: summarizeError(error) }),
      });
      lastError = error;

      if (!outcome.ok && !timedOut && !(await hooks.retryIf(error, { attempt, requestId }))) {
        end('not-retryable', error);
        throw error;
      }
      if (request.signal.aborted) throw stopped();

      const decision = decide(policy, state, clock.now(), error);
      if (!decision.retry) {
        const details = { cause: error, attempts: attempt, totalDelay: state.totalDelay };
        if (decision.reason === 'deadline' && policy.deadline !== undefined) {
          const wait = decision.computation?.delay ?? 0;
          const failure = new DeadlineExceededError(
            `${label} stopped after ${plural(attempt)}: waiting ${Math.round(wait)} ms for the next one would pass its ${policy.deadline} ms deadline (${causeText(error)})`,
            { ...details, deadline: policy.deadline },
          );
          end('deadline', failure);
          throw failure;
        }
        const failure =
          decision.reason === 'max-delay'
            ? new RetriesExhaustedError(
                `${label} gave up after ${plural(attempt)}: the next backoff (${Math.round(decision.computation?.raw ?? 0)} ms) passes maxDelay (${policy.maxDelay} ms): ${causeText(error)}`,
                { ...details, reason: 'max-delay' },
              )
            : new RetriesExhaustedError(
                `${label} failed after ${plural(attempt)}: ${causeText(error)}`,
                details,
              );
        end('exhausted', failure);
        throw failure;
      }

      const { delay, computation } = decision;
      emit({
        type: 'retry-scheduled',
        attempt: decision.nextAttempt,
        retry: computation.retry,
        delay,
        reason: 'backoff',
        strategy: policy.backoff.strategy,
        jitter: policy.jitter.type,
        raw: computation.raw,
        capped: computation.capped,
      });
      if (hooks.onRetry) {
        try {
          await hooks.onRetry({
            attempt,
            nextAttempt: decision.nextAttempt,
            retry: computation.retry,
            delay,
            error,
            requestId,
          });
        } catch (hookError) {
          end('not-retryable', hookError);
          throw hookError;
        }
      }
      try {
        await clock.sleep(delay, request.signal);
      } catch {
        throw stopped();
      }
      state = decision.state;
    }
  } finally {
    timers.abort();
    signal?.removeEventListener('abort', onCallerAbort);
  }
}

/**
 * Runs `fn` until it succeeds, retrying failures with backoff and jitter. `fn` gets the attempt
 * number and a signal; returning `RETRY` or throwing a retryable error asks for another attempt.
 *
 * - Exhaustion rejects with `RetriesExhaustedError` (`cause`, `attempts`, `totalDelay`).
 * - A non-retryable error is rethrown as it is.
 * - `retries: 0` or `retry: false` fails fast: one attempt.
 * - Aborting `signal` rejects at once with `signal.reason`; no further attempt starts.
 *
 * @example
 * ```ts
 * const leader = await retry(
 *   async ({ signal }) => (await findLeader(signal)) ?? RETRY,
 *   { retries: 5, backoff: { strategy: 'constant', base: 500 } },
 * );
 * ```
 */
export function retry<T>(fn: RetryOperation<T>, options: RetryOptions = {}): Promise<RetryResult<T>> {
  try {
    return execute(fn, expectObject('options', options) as RetryOptions);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A `retry` bound to shared defaults. */
export interface BoundRetry {
  <T>(fn: RetryOperation<T>, overrides?: RetryOptions): Promise<RetryResult<T>>;
  /** The defaults this function was created with. */
  readonly defaults: Readonly<RetryOptions>;
}

/**
 * Creates a `retry` with shared defaults that each call can override (seed 001's config plus
 * per-call overrides). Defaults are validated here, once.
 *
 * @example
 * ```ts
 * const retryLeader = createRetry({ retries: 5, backoff: { strategy: 'constant', base: 5000 } });
 * await retryLeader(findLeaderOrRetry, { retries: Infinity, deadline: 60_000 });
 * ```
 */
export function createRetry(defaults: RetryOptions = {}): BoundRetry {
  const shared = mergeOptions<RetryOptions>(expectObject('defaults', defaults) as RetryOptions, undefined);
  normalizePolicy(shared);
  normalizeHooks(shared);
  const bound = <T>(fn: RetryOperation<T>, overrides?: RetryOptions) => {
    try {
      return retry(fn, mergeOptions(shared, expectObject('options', overrides) as RetryOptions));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return Object.assign(bound, { defaults: shared }) as BoundRetry;
}
