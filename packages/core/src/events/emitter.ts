import type { FaultQuery, FaultStep } from '../http/fault';
import type { Clock } from '../time/clock';
import type { RetrylineEvent, RetrylineEventListener } from './types';

type Without<E> = E extends unknown ? Omit<E, 'v' | 'requestId' | 't'> : never;

/** The fields of an event that its emitter adds: version, request id and time. */
export type EventPayload = Without<RetrylineEvent>;

/** Emits one request's events. With no listener anywhere it builds nothing. */
export interface Emit {
  (payload: EventPayload): void;
  /**
   * Whether anyone receives events now (a listener, a subscriber, the devtools hook): callers skip
   * building costly fields (redacted headers) when no one does.
   */
  listening(): boolean;
}

/**
 * The devtools hook the browser extension defines at document_start. Reading the property when no
 * extension is installed is all it costs.
 */
export const DEVTOOLS_HOOK = Symbol.for('retryline.devtools');

/** What the devtools hook must offer. */
export interface DevtoolsHook {
  push(event: RetrylineEvent): void;
  /**
   * Asked before each attempt of an HTTP request is sent, in development builds: how to answer it
   * instead (a fault the DevTools panel injects), or `undefined` to send it. Read inside a guard,
   * as `push` is: a hook that throws or answers nonsense injects nothing. Optional.
   */
  fault?(query: FaultQuery): FaultStep | undefined;
  /**
   * Called once each time a client is created (`retryFetch`, `attachRetry`, ky's `retryline`),
   * before it sends anything: the DevTools panel can then tell a page that uses Retryline but has
   * sent no request yet from a page that does not use it. Called inside a guard, as `push` is: a
   * hook whose `hello` throws never fails creating the client. Optional.
   */
  hello?(): void;
  /**
   * Offered, in development builds, as each HTTP request that is safe to send without its caller
   * starts: a GET, HEAD or OPTIONS whose body, if any, can be sent again, and that its client would
   * retry (the method is in `retryOn.methods`, and the request may be retried at all: not
   * `retry: false` nor `retries: 0`). `replay` sends it again through the same client (its options,
   * guards, and the faults the hook injects) as a request of its own: its own events under a fresh
   * id (a caller's request-id header is still sent as it was), aborted by nothing of the caller's,
   * its response freed and its failure ignored. Given a signal, aborting it stops the replay (the
   * hook stops its replays when the panel goes); the promise settles when the replay has ended,
   * never rejected. The DevTools panel's Replay keeps the latest and runs one on demand.
   *
   * `request` names the request as its `request-start` event does (client, method, URL redacted).
   * A request id is unique only among the requests in flight: a caller that reuses its own id (a
   * session-wide correlation id in `requestIdHeader`) gives it to each request in turn, so a hook
   * keeps and finds an offer by the id together with `request`, never by the id alone.
   *
   * Called inside a guard, as `push` is: a hook that throws never fails the request. Optional.
   */
  replayable?(
    requestId: string,
    replay: (signal?: AbortSignal) => Promise<void>,
    request: { readonly client: string; readonly method: string; readonly url: string },
  ): void;
}

const globalListeners = new Set<RetrylineEventListener>();

/**
 * Receives the events of every request in this realm, from every client (logs, metrics, traces).
 * Returns a function that unsubscribes.
 *
 * @example
 * ```ts
 * const stop = subscribe((event) => { if (event.type === 'retry-scheduled') console.warn(event) });
 * ```
 */
export function subscribe(listener: RetrylineEventListener): () => void {
  globalListeners.add(listener);
  return () => {
    globalListeners.delete(listener);
  };
}

const ignore = () => {};

function deliver<T>(listener: (value: T) => void, value: T): void {
  try {
    const result: unknown = listener(value);
    // An async listener that fails would leave an unhandled rejection, which ends a Node process
    // (its default `--unhandled-rejections=throw` since Node 15).
    if (typeof (result as PromiseLike<unknown> | undefined)?.then === 'function') {
      Promise.resolve(result).catch(ignore);
    }
  } catch {
    // A faulty listener must not change how a request is retried.
  }
}

export function createEmitter(
  listener: RetrylineEventListener | undefined,
  requestId: string | (() => string),
  clock: Clock,
): Emit {
  const listening = listener === undefined ? anyoneListening : always;
  const emit = ((payload: EventPayload) => {
    if (!listening()) return;
    const hook = devtoolsHook();
    const id = typeof requestId === 'function' ? requestId() : requestId;
    const event = { v: 1, requestId: id, t: clock.now(), ...payload } as RetrylineEvent;
    if (listener) deliver(listener, event);
    for (const global of globalListeners) deliver(global, event);
    if (hook) deliver((e) => hook.push(e), event);
  }) as Emit;
  // Shared functions, not closures: an emitter is made per request, and usually nobody listens.
  emit.listening = listening;
  return emit;
}

/**
 * The devtools hook, if one with a `push` is there now. The page owns the global it lives on: a
 * getter that throws (on the hook or on its `push`) is read as no hook, never let out to fail the
 * request that happened to emit.
 */
export function devtoolsHook(): DevtoolsHook | undefined {
  try {
    const hook = (globalThis as { [DEVTOOLS_HOOK]?: DevtoolsHook })[DEVTOOLS_HOOK];
    return typeof hook?.push === 'function' ? hook : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Tells the devtools hook, if there is one, that a client was created (its optional `hello`):
 * called once per client, where every adapter's client resolves its options.
 */
export function helloDevtools(): void {
  const hook = devtoolsHook();
  if (hook) deliver(() => hook.hello?.(), undefined);
}

/**
 * Offers the devtools hook, if it takes offers (its optional `replayable`), a way to send `request`
 * again. `requestId` is read only then, so no id is drawn for a hook that takes none.
 */
export function offerDevtoolsReplay(
  requestId: () => string,
  request: Parameters<NonNullable<DevtoolsHook['replayable']>>[2],
  replay: (signal?: AbortSignal) => Promise<void>,
): void {
  const hook = devtoolsHook();
  if (hook) deliver(() => hook.replayable?.(requestId(), replay, request), undefined);
}

/** Whether a subscriber or the devtools hook receives events now (a client's own listener aside). */
export const anyoneListening = (): boolean => globalListeners.size > 0 || devtoolsHook() !== undefined;
const always = () => true;
