/**
 * What the request engine lends a failover or hedging value for one request, and what the value
 * plans back (see `failover.ts`). Types and one symbol only: the engine carries none of the
 * planning, which reaches a bundle only with `failover()` or `hedging()`.
 */

import type { AttemptResult, LoopAttempt, Refusal } from '../engine/attempt-loop';
import type { Health } from '../engine/outcome';
import type { Emit } from '../events/emitter';
import type { GuardHooks } from '../guard/guards';
import type { HttpExchange, ResolvedHttpOptions } from './request-engine';

/** One attempt as a plan sends it: the engine's `HttpAttempt`. */
export interface PlannedAttempt {
  readonly attempt: number;
  readonly signal: AbortSignal | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly url?: string;
}

/** What the engine lends a plan: the request, and a few of the engine's own readings of it. */
export interface PlanHost<R> {
  readonly exchange: HttpExchange<R>;
  readonly options: ResolvedHttpOptions;
  readonly method: string;
  readonly label: string;
  readonly emit: Emit;
  /** The client's guards for this request (made after the plan). */
  hooks(): GuardHooks | undefined;
  /** Whether an error is a transport failure (a refused connection, a reset …). */
  transportFailure(error: unknown): boolean;
  /** What `attempt-end` says of an attempt's result. */
  describe(result: AttemptResult<R>): Record<string, unknown>;
  /** The caller's headers, names lower-cased. */
  callerHeaders(): Record<string, string>;
}

/** A request's plan: the endpoint of each attempt, and its hedges. */
export interface RequestPlan<R> {
  /** The URL the client's guards key the request by, when it goes to the endpoints. */
  readonly serviceUrl: string | undefined;
  send(context: LoopAttempt, attempt: PlannedAttempt): Promise<R>;
  /** Fields of `attempt-start` (the endpoint). */
  startFields(): Record<string, unknown> | undefined;
  /** Fields of `attempt-end` (the endpoint that answered, and whether a hedge did). */
  endFields(): Record<string, unknown> | undefined;
  /** Where the attempt that answered was sent, when not the request's own URL. */
  sentTo(): string | undefined;
  /**
   * The loop's admission and bookkeeping hooks around the guards': the endpoint's pick before them,
   * its breaker told the attempt's health after.
   */
  hooks(guards: GuardHooks | undefined): {
    admit: ((context: LoopAttempt) => Refusal | undefined | Promise<Refusal | undefined>) | undefined;
    record: ((health: Health) => Promise<void> | undefined) | undefined;
    abandon: (() => Promise<void> | undefined) | undefined;
  };
}

/** How a failover or hedging value makes a request's plan (under this symbol on the value). */
export type Planner = <R>(host: PlanHost<R>, endpoints: unknown, hedge: unknown) => RequestPlan<R>;

export const PLAN = Symbol('retryline.plan');
