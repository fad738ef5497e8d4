import type { Clock } from '../time/clock';
import type { RetrylineEvent, RetrylineEventListener } from './types';

type Without<E> = E extends unknown ? Omit<E, 'v' | 'requestId' | 't'> : never;

/** The fields of an event that its emitter adds: version, request id and time. */
export type EventPayload = Without<RetrylineEvent>;

/** Emits one request's events. With no listener it builds nothing. */
export type Emit = (payload: EventPayload) => void;

export function createEmitter(
  listener: RetrylineEventListener | undefined,
  requestId: string,
  clock: Clock,
): Emit {
  if (!listener) return () => {};
  return (payload) => {
    try {
      listener({ v: 1, requestId, t: clock.now(), ...payload } as RetrylineEvent);
    } catch {
      // A faulty listener must not change how a request is retried.
    }
  };
}
