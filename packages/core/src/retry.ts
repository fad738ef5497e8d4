import { runAttemptLoop } from './engine/attempt-loop';
import { InvalidOptionsError, isRetrylineError } from './errors';
import { createEmitter } from './events/emitter';
import { createRequestId } from './events/request-id';
import type { RetrylineEventListener } from './events/types';
import { anyGuard, type GuardOptions, guardHooks, resolveGuards } from './guard/guards';
import { refuseStore, withOwnStore } from './guard/store';
import {
  CALL_OPTIONS,
  expectObject,
  invalid,
  mergeOptions,
  normalizePolicy,
  optionalFunction,
  optionalSignal,
  optionalString,
  own,
} from './policy/normalize';
import type { PolicyOptions } from './policy/options';

/**
 * Return this from the operation to ask for another attempt without throwing. When no retry is
 * left, `retry()` rejects with `RetriesExhaustedError`.
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

/** What `retryOn` is told besides the error. */
export interface RetryOnContext {
  /** The attempt that failed. */
  readonly attempt: number;
  readonly requestId: string;
}

/** What `onRetry` is told, before each wait. */
export interface RetryEvent {
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
export interface RetryOptions extends PolicyOptions, GuardOptions {
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
   * retry(op, { retryOn: (error) => !(error instanceof TypeError) });
   * ```
   * The HTTP adapters' option of the same name sees the classified failure instead of the error.
   */
  retryOn?: (error: unknown, context: RetryOnContext) => boolean | Promise<boolean>;
  /**
   * Called before each wait. Awaited if it returns a promise; throwing stops retrying and
   * rejects with what it threw.
   * @example
   * ```ts
   * retry(op, { onRetry: ({ attempt, delay, error }) => console.warn(`attempt ${attempt} failed; retrying in ${delay} ms`, error) });
   * ```
   */
  onRetry?: (event: RetryEvent) => void | Promise<void>;
  /** Receives this request's events. */
  onEvent?: RetrylineEventListener;
  /** Names the operation in error messages and events. @default 'Operation' */
  operation?: string;
  /** The request id to use instead of a fresh UUID. */
  requestId?: string;
  /**
   * The key the guards (`breaker`, `budget`, `limiter`, `bulkhead`) keep their state under: calls
   * with the same key and the same guard value share one breaker, one budget … Name the
   * dependency, not the call site.
   * @default the `operation` name, else `'retry'`
   * @example
   * ```ts
   * const breaker = circuitBreaker({ consecutiveFailures: 5 });
   * retry(() => db.query(sql), { guardKey: 'db-primary', breaker, budget: retryBudget() });
   * ```
   */
  guardKey?: string;
}

/** What `retry()` resolves to: the operation's result, never the `RETRY` sentinel. */
export type RetryResult<T> = Exclude<Awaited<T>, typeof RETRY>;

/** An operation that `retry()` runs once per attempt. */
export type RetryOperation<T> = (context: AttemptContext) => T;

type Predicate = NonNullable<RetryOptions['retryOn']>;

interface Hooks {
  readonly signal: AbortSignal | undefined;
  readonly retryOn: Predicate;
  readonly onRetry: RetryOptions['onRetry'];
  readonly onEvent: RetrylineEventListener | undefined;
  readonly label: string;
  readonly operation: string | undefined;
  readonly requestId: string | undefined;
  readonly guardKey: string | undefined;
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

// Names the predicate has had: retryIf (Retryline 0.1) and shouldRetry (p-retry's).
const RENAMED = ['retryIf', 'shouldRetry'] as const;

function normalizeHooks(options: RetryOptions): Hooks {
  for (const name of RENAMED) {
    // A predicate under another library's name would otherwise be ignored without a word.
    if (own(options as Record<string, unknown>, name) !== undefined) {
      throw new InvalidOptionsError(`Expected retryOn, got ${name}: the predicate's one name is retryOn`, {
        option: name,
      });
    }
  }
  const operation = optionalString('operation', own(options, 'operation'));
  return {
    signal: optionalSignal(own(options, 'signal')),
    retryOn: optionalFunction<Predicate>('retryOn', own(options, 'retryOn')) ?? retryableByDefault,
    onRetry: CALL_OPTIONS.onRetry(own(options, 'onRetry')) as RetryOptions['onRetry'],
    onEvent: CALL_OPTIONS.onEvent(own(options, 'onEvent')) as RetrylineEventListener | undefined,
    label: operation ?? 'Operation',
    operation,
    requestId: CALL_OPTIONS.requestId(own(options, 'requestId')),
    guardKey: optionalString('guardKey', own(options, 'guardKey')),
  };
}

/** Guards are opt-in here: a generic operation has no origin to key a default budget by. */
const resolveRetryGuards = (options: RetryOptions) => resolveGuards(options, { own: false, pacing: false });

async function execute<T>(fn: RetryOperation<T>, options: RetryOptions): Promise<RetryResult<T>> {
  if (typeof fn !== 'function') throw invalid('the operation', 'a function', fn, 'fn');
  const policy = normalizePolicy(options);
  const hooks = normalizeHooks(options);
  const guards = resolveRetryGuards(options);
  const requestId = hooks.requestId ?? createRequestId();
  const { onRetry } = hooks;
  const emit = createEmitter(hooks.onEvent, requestId, policy.clock);
  const guarded = anyGuard(guards)
    ? guardHooks(guards, {
        key: hooks.guardKey ?? hooks.operation ?? 'retry',
        policy,
        emit,
        label: hooks.label,
      })
    : undefined;
  const result = await runAttemptLoop<Awaited<T>>({
    policy,
    signal: hooks.signal,
    label: hooks.label,
    emit,
    start: { client: 'retry', ...(hooks.operation === undefined ? {} : { operation: hooks.operation }) },
    run: (context) =>
      new Promise<Awaited<T>>((resolve) =>
        resolve(
          fn({
            attempt: context.attempt,
            retriesLeft: context.retriesLeft,
            // The loop makes no signal when nothing can abort; the operation still gets one.
            signal: context.signal ?? new AbortController().signal,
            requestId,
            elapsed: context.elapsed,
            previousError: context.previousError,
          }) as Awaited<T>,
        ),
      ),
    async judge(result, { attempt }) {
      if (result.ok) {
        return result.value === RETRY
          ? { action: 'retry', summary: 'the operation returned RETRY' }
          : { action: 'return', value: result.value };
      }
      // A timed-out attempt is asked about too: only the caller knows whether it is safe to repeat.
      if (await hooks.retryOn(result.error, { attempt, requestId })) {
        return result.error === undefined
          ? { action: 'retry', error: undefined, summary: 'the operation threw undefined' }
          : { action: 'retry', error: result.error };
      }
      return { action: 'throw', error: result.error };
    },
    ...(onRetry
      ? {
          onRetry: ({ attempt, nextAttempt, delay, error }) =>
            onRetry({ attempt, nextAttempt, retry: attempt, delay, error, requestId }),
        }
      : {}),
    ...(guarded
      ? {
          admit: guarded.admit,
          release: guarded.release,
          record: guarded.record,
          abandon: guarded.abandon,
          allowRetry: guarded.allowRetry,
          takeWaits: guarded.takeWaits,
        }
      : {}),
  });
  return result.value as RetryResult<T>;
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
 * Creates a `retry` with shared defaults that each call can override. Defaults are validated here,
 * once.
 *
 * @example
 * ```ts
 * const retryLeader = createRetry({ retries: 5, backoff: { strategy: 'constant', base: 5000 } });
 * await retryLeader(findLeaderOrRetry, { retries: Infinity, deadline: 60_000 });
 * ```
 */
export function createRetry(defaults: RetryOptions = {}): BoundRetry {
  // Guard state is the bound function's own, shared by its calls and by no other client.
  const shared = withOwnStore(
    mergeOptions<RetryOptions>(expectObject('defaults', defaults) as RetryOptions, undefined),
  );
  normalizePolicy(shared);
  normalizeHooks(shared);
  resolveRetryGuards(shared);
  const bound = <T>(fn: RetryOperation<T>, overrides?: RetryOptions) => {
    try {
      const given = expectObject('options', overrides) as RetryOptions;
      refuseStore(given);
      return retry(fn, mergeOptions(shared, given));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return Object.assign(bound, { defaults: shared }) as BoundRetry;
}
