/**
 * How a request ends, defined once. Each row is one way to end: its key is the `outcome` of the
 * `request-end` event (the event vocabulary), `stoppedBy` its name in `getRetryInfo()` (what stopped
 * the retries; none for a success), and `handsBack` whether the request still resolves with its last
 * response (a retry was refused, yet the caller gets the response as their client would give it).
 * Every other "how it ended" type is read from this table, so a new way to end is one row.
 */
const ENDINGS = {
  success: { stoppedBy: undefined, handsBack: false },
  exhausted: { stoppedBy: 'exhausted', handsBack: false },
  'not-retryable': { stoppedBy: 'not-retryable', handsBack: false },
  aborted: { stoppedBy: 'aborted', handsBack: false },
  deadline: { stoppedBy: 'deadline', handsBack: true },
  'breaker-open': { stoppedBy: 'breaker', handsBack: true },
  'budget-exhausted': { stoppedBy: 'budget', handsBack: true },
  'rate-limited': { stoppedBy: 'limiter', handsBack: true },
  'quota-spent': { stoppedBy: 'pacing', handsBack: true },
  'bulkhead-rejected': { stoppedBy: 'bulkhead', handsBack: true },
  throttled: { stoppedBy: 'throttle', handsBack: true },
  'retry-after-too-long': { stoppedBy: 'retry-after-too-long', handsBack: true },
  'origin-failing': { stoppedBy: 'gate', handsBack: true },
} as const satisfies Record<string, { readonly stoppedBy: string | undefined; readonly handsBack: boolean }>;

type Endings = typeof ENDINGS;

/** How a request ended: the `outcome` of its `request-end` event. */
export type RequestOutcome = keyof Endings;

/**
 * Why retrying stopped, for a request whose last attempt failed: its retries ran out, the failure
 * was not one to retry, a guard refused (the retry budget, the breaker, the limiter, pacing, the
 * bulkhead, the adaptive throttle), the deadline left no room, the server asked for a wait longer than allowed, or the
 * caller aborted.
 */
export type StoppedBy = NonNullable<Endings[RequestOutcome]['stoppedBy']>;

/**
 * The outcomes of a request whose last response is handed back though a retry was refused: by the
 * budget, the deadline or too long a hint, or by a guard that refused the retry's attempt before it
 * was sent (an open breaker, a limiter, pacing, a full bulkhead).
 */
export type StoppedOutcome = {
  [K in RequestOutcome]: Endings[K]['handsBack'] extends true ? K : never;
}[RequestOutcome];

/** Why the policy stops after a retryable failure: the retries or the `maxDelay` ran out, the deadline, too long a hint. */
export type StopReason = 'retries' | 'max-delay' | 'deadline' | 'retry-after-too-long';

/**
 * Why retrying stopped with `RetriesExhaustedError`: the retries ran out, the next delay passed
 * `maxDelay`, or the origin kept failing for as long as the recovery gate parks a retry.
 */
export type ExhaustionReason = Extract<StopReason, 'retries' | 'max-delay'> | 'origin-failing';

/** How an attempt reflects on the dependency's health (what a circuit breaker counts). */
export type Health = 'success' | 'failure' | 'ignored';

/** What `getRetryInfo()` says stopped a request that ended with `outcome`. */
export const stoppedByOf = (outcome: RequestOutcome): StoppedBy | undefined => ENDINGS[outcome].stoppedBy;

/** Whether a request that ended with `outcome` hands back its last response. */
export const handsBack = (outcome: RequestOutcome): outcome is StoppedOutcome => ENDINGS[outcome].handsBack;
