/**
 * Faults the Retryline DevTools panel injects at the send step of an attempt. Core holds no rule:
 * before each attempt of an HTTP request it asks the devtools hook (`fault`, defined by the
 * extension's page script) how to answer it, and the request's adapter answers as its client would
 * have (`HttpExchange.inject`). Steps are named after `@retryline/msw`'s (`status`, `networkError`,
 * `slow`), so what was tried in the browser reads as a test script.
 *
 * In development builds only: every line below is behind `process.env.NODE_ENV !== 'production'`,
 * which bundlers replace, so a production bundle folds it away. Where nothing replaces it and there
 * is no `process` (modules loaded in a page as they are), reading it throws and nothing is injected.
 */

import { devtoolsHook } from '../events/emitter';
import type { Clock } from '../time/clock';
import type { HttpAttempt, HttpExchange } from './request-engine';

// The one Node global read here, and only inside a guard; declared for this module alone (core's
// build has no Node types).
declare const process: { readonly env: { readonly NODE_ENV?: string } };

/** What the devtools hook is asked before each attempt of an HTTP request is sent. */
export interface FaultQuery {
  /** `'fetch'`, `'axios'`, `'ky'`: the client that sends. */
  readonly client: string;
  /** Upper-cased. */
  readonly method: string;
  /** The URL as events show it: query values masked, credentials dropped. */
  readonly url: string;
  /** 1 for the first try. */
  readonly attempt: number;
  /** The request's id, as in its events. */
  readonly requestId: string;
}

/** Answers the attempt with a response (`@retryline/msw`'s `status(…)`). */
export interface StatusFault {
  readonly step: 'status';
  /** 200 to 599, as fetch's `Response` takes. */
  readonly status: number;
  readonly statusText?: string;
  /** Response headers (`retry-after`, …). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The body as text; none for 204, 205 and 304. */
  readonly body?: string;
}

/** Fails the attempt as the network does, with the client's own error (`@retryline/msw`'s `networkError()`). */
export interface NetworkErrorFault {
  readonly step: 'networkError';
}

/**
 * Waits `ms` before the attempt is answered: by `answer`, or, without one, by the real server
 * (`@retryline/msw`'s `slow(ms, step)`). The attempt's timeout, the deadline and the caller's abort
 * end the wait as they end a slow server.
 */
export interface SlowFault {
  readonly step: 'slow';
  readonly ms: number;
  readonly answer?: StatusFault | NetworkErrorFault;
  /**
   * The hook's own end to the wait (its rules removed, its panel closed): when it aborts, the wait
   * ends at once and the attempt goes to the server as usual, `answer` unused.
   */
  readonly signal?: AbortSignal;
}

/** How the devtools hook asks for one attempt to be answered. */
export type FaultStep = StatusFault | NetworkErrorFault | SlowFault;

/** What an adapter's `inject` builds: a response, or the network's failure (a wait is core's). */
export type FaultAnswer = StatusFault | NetworkErrorFault;

/** One attempt, as {@link faultFor} asks the hook about it and answers it. */
export interface FaultAttempt<R> {
  readonly exchange: HttpExchange<R>;
  readonly clock: Clock;
  readonly query: FaultQuery;
  /**
   * Called when the client could not build the answer and the attempt was sent as usual instead:
   * an attempt the server answered is not one a fault answered.
   */
  readonly unanswered?: () => void;
}

/** How an attempt is sent as usual: to the endpoint its request's plan picked, if it has one. */
export type SendAsUsual<R> = (sent: HttpAttempt) => Promise<R>;

/**
 * How the devtools hook has an attempt answered: a function that answers it, or `undefined` when
 * it is sent as usual (no hook, no fault for it, an adapter that cannot inject, a production
 * build). `attempt` is read only once a hook with `fault` is there, so no request id is drawn
 * otherwise. Whatever the hook does (throw, answer nonsense, hide a getter that throws) is read as
 * no fault: a hook can never fail a request other than as the fault it asked for.
 */
export function faultFor<R>(
  attempt: () => FaultAttempt<R>,
): ((sent: HttpAttempt, send: SendAsUsual<R>) => Promise<R>) | undefined {
  try {
    if (process.env.NODE_ENV !== 'production') {
      const hook = devtoolsHook();
      if (typeof hook?.fault !== 'function') return undefined;
      const asked = attempt();
      const step = asked.exchange.inject && readStep(hook.fault(asked.query));
      if (step) return (sent, send) => answer(asked, step, sent, send);
    }
  } catch {
    // The page owns the hook: a fault it cannot tell is no fault.
  }
  return undefined;
}

function answer<R>(
  attempt: FaultAttempt<R>,
  step: FaultStep,
  sent: HttpAttempt,
  send: SendAsUsual<R>,
): Promise<R> {
  const { exchange, clock } = attempt;
  if (step.step === 'slow') {
    const then = step.answer;
    return hookWait(clock, step.ms, sent.signal, step.signal).then((ended) =>
      then && !ended ? answer(attempt, then, sent, send) : send(sent),
    );
  }
  try {
    return (exchange.inject as NonNullable<HttpExchange<R>['inject']>)(step, sent);
  } catch {
    // A response the client cannot build (what fetch refuses is checked below, so only a client's
    // own quirk): sent as usual, and not marked as answered by a fault.
    attempt.unanswered?.();
    return send(sent);
  }
}

/**
 * A slow step's wait: ended by the attempt's signal (rejecting with its reason, as a slow server's
 * wait ends) or by the hook's (resolving `true`: the rule is gone, so the attempt goes on as usual).
 * Both listeners go when it ends, so a wait cut short leaves no timer and no listener behind.
 */
function hookWait(
  clock: Clock,
  ms: number,
  attempt: AbortSignal | undefined,
  hook: AbortSignal | undefined,
): Promise<boolean> {
  if (hook === undefined) return clock.sleep(ms, attempt).then(() => false);
  if (hook.aborted) return Promise.resolve(true);
  const both = new AbortController();
  const cut = () => both.abort();
  attempt?.addEventListener('abort', cut, { once: true });
  hook.addEventListener('abort', cut, { once: true });
  return clock
    .sleep(ms, attempt?.aborted ? attempt : both.signal)
    .then(
      () => false,
      (error: unknown) => {
        if (attempt?.aborted) throw attempt.reason;
        if (hook.aborted) return true;
        throw error;
      },
    )
    .finally(() => {
      attempt?.removeEventListener('abort', cut);
      hook.removeEventListener('abort', cut);
    });
}

// RFC 9110 §5.1: a field name is a token. RFC 9110 §5.5 and RFC 9112 §4: a field value and a
// reason phrase are HTAB, SP, VCHAR or obs-text, one byte each; fetch's Headers and Response refuse
// anything else (CR, LF, NUL, a character above U+00FF).
const TOKEN = /^[!#$%&'*+.^_`|~\w-]+$/;
const FIELD_TEXT = /^[\t\x20-\x7e\x80-\xff]*$/;
// Fetch's Response refuses a body with these ("null body status").
const NULL_BODY = [204, 205, 304];

/** A step, copied out of what the hook returned (so no getter of its runs later), or `undefined`. */
function readStep(value: unknown, inner = false): FaultStep | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { step, ms, answer: then, signal: given } = value as Record<string, unknown>;
  if (step === 'networkError') return { step };
  if (step === 'status') return readStatus(value as Record<string, unknown>);
  if (step !== 'slow' || inner || typeof ms !== 'number' || !(ms >= 0 && ms < Number.POSITIVE_INFINITY))
    return undefined;
  // Only a real AbortSignal ends the wait early: anything else given as one is no signal.
  const signal = typeof AbortSignal !== 'undefined' && given instanceof AbortSignal ? given : undefined;
  const slow: SlowFault = signal ? { step: 'slow', ms, signal } : { step: 'slow', ms };
  if (then === undefined) return slow;
  const next = readStep(then, true) as FaultAnswer | undefined;
  return next && { ...slow, answer: next };
}

function readStatus({ status, statusText, headers, body }: Record<string, unknown>): StatusFault | undefined {
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599)
    return undefined;
  const fault: { -readonly [K in keyof StatusFault]: StatusFault[K] } = { step: 'status', status };
  if (typeof statusText === 'string' && FIELD_TEXT.test(statusText)) fault.statusText = statusText;
  if (typeof body === 'string' && !NULL_BODY.includes(status)) fault.body = body;
  if (typeof headers === 'object' && headers !== null) {
    const fields: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (TOKEN.test(name) && typeof value === 'string' && FIELD_TEXT.test(value)) fields[name] = value;
    }
    fault.headers = fields;
  }
  return fault;
}
