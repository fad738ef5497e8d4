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

function deliver(listener: (event: RetrylineEvent) => void, event: RetrylineEvent): void {
  try {
    listener(event);
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
    const hook = devtools();
    const id = typeof requestId === 'function' ? requestId() : requestId;
    const event = { v: 1, requestId: id, t: clock.now(), ...payload } as RetrylineEvent;
    if (listener) deliver(listener, event);
    for (const global of globalListeners) deliver(global, event);
    if (typeof hook?.push === 'function') deliver((e) => hook.push(e), event);
  }) as Emit;
  // Shared functions, not closures: an emitter is made per request, and usually nobody listens.
  emit.listening = listening;
  return emit;
}

const devtools = () => (globalThis as { [DEVTOOLS_HOOK]?: DevtoolsHook })[DEVTOOLS_HOOK];
/** Whether a subscriber or the devtools hook receives events now (a client's own listener aside). */
export const anyoneListening = (): boolean =>
  globalListeners.size > 0 || typeof devtools()?.push === 'function';
const always = () => true;
