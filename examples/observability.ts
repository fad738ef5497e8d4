import { type EventLogger, logEvents } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { instrument } from '@retryline/otel';

// Once at start-up, after the OpenTelemetry SDK has registered its providers: a span per request
// and per attempt, trace context on every attempt, metrics per origin — and one log line per
// retry or give-up, each with the request's id (pino, winston or console: anything with info/warn).
export function observeRetries(logger: EventLogger): () => void {
  const stopTracing = instrument();
  const stopLogging = logEvents(logger, { types: ['retry-scheduled', 'request-end'] });
  return () => {
    stopLogging();
    stopTracing();
  };
}

// The same id on every attempt, in a header the server can log too.
export const api = retryFetch(fetch, { retries: 3, requestIdHeader: 'x-request-id' });
