/**
 * Structured logs from the event stream: one line per event, as a plain JSON-able object a logger
 * (console, pino, winston …) can print or ship. Events are redacted before they are emitted, so a
 * log line never holds a credential, a cookie or a query value.
 */

import { invalid } from '../policy/normalize';
import { subscribe } from './emitter';
import type { RetrylineEvent, RetrylineEventListener } from './types';

/** Any logger with `info` and `warn` taking an object first and a message second (pino's shape). */
export interface EventLogger {
  info(line: EventLogLine, message: string): void;
  warn(line: EventLogLine, message: string): void;
}

/** One log line: the event's fields under stable names, without its envelope version. */
export interface EventLogLine {
  /** `retryline.<event type>`, e.g. `retryline.retry-scheduled`. */
  readonly event: string;
  readonly requestId: string;
  /** Epoch milliseconds on the request's clock. */
  readonly time: number;
  readonly [field: string]: unknown;
}

/** Which events to log, and at which level. */
export interface LogEventsOptions {
  /** Event types to log. @default every type */
  readonly types?: readonly RetrylineEvent['type'][];
}

// A request that had to wait, gave up, or met a guard that said no is worth a warning; the rest is
// the normal course of a request.
function isWarning(event: RetrylineEvent): boolean {
  switch (event.type) {
    case 'retry-scheduled':
      return true;
    case 'request-end':
      return event.outcome !== 'success';
    case 'breaker-state':
      return event.to !== 'closed';
    case 'budget':
      return !event.allowed;
    case 'retry-parked':
      return true;
    default:
      return false;
  }
}

const ms = (value: number) => `${Math.round(value)} ms`;

/** A short human message for an event; the line holds the details. */
function describe(event: RetrylineEvent): string {
  switch (event.type) {
    case 'request-start':
      return `${event.method ?? event.operation ?? event.client} ${event.url ?? ''}`.trim();
    case 'attempt-start':
      return `attempt ${event.attempt}`;
    case 'attempt-end':
      return `attempt ${event.attempt} ${event.outcome}${event.status === undefined ? '' : ` (${event.status})`} in ${ms(event.duration)}`;
    case 'retry-scheduled':
      return `attempt ${event.attempt} in ${ms(event.delay)} (${event.reason})`;
    case 'request-end':
      return `${event.outcome} after ${event.attempts} attempt${event.attempts === 1 ? '' : 's'} in ${ms(event.duration)}`;
    case 'breaker-state':
      return `breaker for ${event.key} ${event.from} → ${event.to}`;
    case 'budget':
      return `retry budget for ${event.key}: ${event.allowed ? 'retry allowed' : 'spent'}, ${event.remaining} left`;
    case 'guard-wait':
      return `waited ${ms(event.waited)} for the ${event.guard} (${event.key})`;
    case 'retry-parked':
      return `attempt ${event.attempt} parked: ${event.key} failed ${event.failures} times in a row`;
    case 'retry-released':
      return `attempt ${event.attempt} ${event.reason === 'probe' ? 'goes as the probe' : event.reason} after ${ms(event.waited)} parked (${event.key})`;
  }
}

/** The log line for one event: its fields, `event` and `time` in place of `type` and `t`. */
export function eventLogLine(event: RetrylineEvent): EventLogLine {
  const { v: _version, type, t, requestId, ...fields } = event;
  return { event: `retryline.${type}`, requestId, time: t, ...fields };
}

/**
 * A listener that writes one structured line per event to `logger`: `warn` for retries, give-ups,
 * an opening breaker and a spent budget, `info` for the rest. Pass it as a client's or a request's
 * `onEvent`. A logger that throws never changes how a request is retried.
 *
 * @example
 * ```ts
 * const fetchWithRetry = retryFetch(fetch, { onEvent: eventLogger(console) });
 * ```
 */
export function eventLogger(logger: EventLogger, options: LogEventsOptions = {}): RetrylineEventListener {
  if (typeof logger?.info !== 'function' || typeof logger.warn !== 'function') {
    throw invalid('logger', 'an object with info() and warn() methods (console, pino …)', logger);
  }
  const types = options.types === undefined ? undefined : new Set(options.types);
  return (event) => {
    if (types && !types.has(event.type)) return;
    const line = eventLogLine(event);
    const message = `[retryline] ${describe(event)}`;
    if (isWarning(event)) logger.warn(line, message);
    else logger.info(line, message);
  };
}

/**
 * Logs every request's events in this realm (all clients, `retry()` included), one structured line
 * per event, until the returned function is called.
 *
 * @example
 * ```ts
 * import pino from 'pino';
 * const stop = logEvents(pino(), { types: ['retry-scheduled', 'request-end'] });
 * ```
 */
export function logEvents(logger: EventLogger, options: LogEventsOptions = {}): () => void {
  return subscribe(eventLogger(logger, options));
}
