/**
 * `instrument()`: turns the events of every Retryline HTTP request in the realm into OpenTelemetry
 * spans and metrics, and puts the trace context of each attempt on that attempt's request.
 */

import {
  type Attributes,
  type Context,
  context,
  type MeterProvider,
  metrics,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { type RetrylineEvent, subscribe } from '@retryline/core';
import {
  type AttemptEndEvent,
  type AttemptHeadersHook,
  addAttemptHeaders,
  type RequestEndEvent,
  type RequestStartEvent,
} from '@retryline/core/instrument';
import { attemptErrorType, methodAttributes, originAttributes, requestErrorType } from './attributes';
import { createMetrics, type RetrylineMetrics } from './metrics';
import { SCOPE_NAME, SCOPE_VERSION } from './version';

/** Where `instrument()` sends what it records. */
export interface InstrumentOptions {
  /**
   * The provider of the tracer spans are recorded with.
   * @default the global one (`trace.getTracerProvider()`): a no-op until an SDK registers one
   * @example
   * ```ts
   * instrument({ tracerProvider: new BasicTracerProvider() });
   * ```
   */
  tracerProvider?: TracerProvider;
  /**
   * The provider of the meter metrics are recorded with.
   * @default the global one (`metrics.getMeterProvider()`), read when `instrument()` is called
   * @example
   * ```ts
   * instrument({ meterProvider: new MeterProvider({ readers: [reader] }) });
   * ```
   */
  meterProvider?: MeterProvider;
  /**
   * Whether each attempt carries its CLIENT span's trace context, as the global propagator writes
   * it (`traceparent` and `tracestate` with the W3C propagator), so the server's span is a child
   * of that attempt. A header of the same name the caller set is kept.
   * @default true
   * @example
   * ```ts
   * // A third-party API that must not see our trace ids: spans and metrics, no headers.
   * instrument({ propagate: false });
   * ```
   */
  propagate?: boolean;
}

/** One logical request being traced, from `request-start` to `request-end`. */
interface Traced {
  /** The INTERNAL span of the logical request. */
  readonly span: Span;
  /** The caller's context with `span` set: the parent of every attempt's span. */
  readonly context: Context;
  readonly spanName: string;
  /** The attributes every span of the request carries. */
  readonly attributes: Attributes;
  /** The attributes every metric of the request carries: origin and method. */
  readonly metricAttributes: Attributes;
  /** CLIENT spans of attempts started and not yet ended, by attempt number. */
  readonly attempts: Map<number, Span>;
  /**
   * Requests in flight under this id. Core keeps ids apart (`id#2`) within one copy of core; two
   * copies (an ESM and a CJS build in one process) may still report one id twice. They share the
   * span, which ends with the last of them.
   */
  open: number;
}

const STOPPED = 'instrumentation stopped';

// The request maps of every running instrumentation, for `trackedRequests()`.
const running = new Set<ReadonlyMap<string, Traced>>();

/**
 * How many logical requests running instrumentations are tracing now: 0 once every request has
 * settled. Not part of the package's API (index.ts does not export it); tests use it to prove that
 * per-request state is dropped at `request-end`.
 * @internal
 */
export function trackedRequests(): number {
  let count = 0;
  for (const requests of running) count += requests.size;
  return count;
}

/**
 * Starts tracing and metrics for every Retryline HTTP request in this realm (fetch, axios and ky
 * adapters alike), and returns a function that stops them. Call it once, after the OpenTelemetry
 * SDK has registered its providers (or pass them); calling it twice records everything twice.
 *
 * Each logical request gets an INTERNAL span `retryline GET`, child of the context active when the
 * request started; each attempt a CLIENT span `GET` under it, with the HTTP semantic-convention
 * attributes (`http.request.resend_count` from the second attempt on). Retries, guard waits,
 * breaker changes and budget checks are events on the request's span. Metrics: `retryline.requests`,
 * `retryline.attempts`, `retryline.retries`, `retryline.give_ups`, `retryline.wait.duration`,
 * `retryline.breaker.state` and `retryline.budget.remaining`.
 *
 * Stopping unsubscribes, removes the header hook and stops the gauges. A request still running
 * then has its open spans ended at once with an ERROR status `instrumentation stopped`, so none is
 * left unexported; its later events are ignored.
 *
 * Instrumentation never changes how a request is sent or retried: an exception in it is dropped by
 * core, and requests that are not HTTP (`retry()` of a function) are not traced.
 *
 * @example
 * ```ts
 * import { instrument } from '@retryline/otel';
 * import { retryFetch } from '@retryline/fetch';
 *
 * const stop = instrument(); // after the OpenTelemetry SDK has started
 * const api = retryFetch(fetch, { retries: 3 });
 * await api('https://api.example/orders'); // 1 INTERNAL span, 1 CLIENT span per attempt
 * stop();
 * ```
 */
export function instrument(options: InstrumentOptions = {}): () => void {
  const tracer: Tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(
    SCOPE_NAME,
    SCOPE_VERSION,
  );
  const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE_NAME, SCOPE_VERSION);
  const recorded: RetrylineMetrics = createMetrics(meter);
  // Keyed by requestId, unique per request in flight within one copy of core; deleted at the last
  // request-end.
  const requests = new Map<string, Traced>();

  /** The CLIENT span of an attempt: started by whichever comes first, the header hook or attempt-start. */
  const attemptSpan = (traced: Traced, attempt: number): Span => {
    const open = traced.attempts.get(attempt);
    if (open) return open;
    const span = tracer.startSpan(
      traced.spanName,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          ...traced.attributes,
          // HTTP semconv: the resend count is absent on the first try, and counts every resend.
          ...(attempt > 1 ? { 'http.request.resend_count': attempt - 1 } : {}),
        },
      },
      traced.context,
    );
    traced.attempts.set(attempt, span);
    return span;
  };

  const requestStarted = (event: RequestStartEvent) => {
    const { method, url } = event;
    if (method === undefined || url === undefined) return;
    const sharing = requests.get(event.requestId);
    if (sharing) {
      sharing.open++;
      recorded.requestStarted(sharing.metricAttributes);
      return;
    }
    const { spanName, attributes: methodAttrs } = methodAttributes(method);
    const origin = originAttributes(url);
    const attributes: Attributes = {
      ...methodAttrs,
      'url.full': url,
      ...origin,
      'retryline.request_id': event.requestId,
      'retryline.client': event.client,
    };
    // The caller's context, read in the caller's async flow (listeners run synchronously in it).
    const parent = context.active();
    const span = tracer.startSpan(`retryline ${spanName}`, { kind: SpanKind.INTERNAL, attributes }, parent);
    const metricAttributes: Attributes = { ...origin, ...methodAttrs };
    requests.set(event.requestId, {
      span,
      context: trace.setSpan(parent, span),
      spanName,
      attributes,
      metricAttributes,
      attempts: new Map(),
      open: 1,
    });
    recorded.requestStarted(metricAttributes);
  };

  const attemptEnded = (traced: Traced, event: AttemptEndEvent) => {
    const span = attemptSpan(traced, event.attempt);
    traced.attempts.delete(event.attempt);
    const errorType = attemptErrorType(event);
    span.setAttributes({
      ...(event.status === undefined ? {} : { 'http.response.status_code': event.status }),
      ...(errorType === undefined ? {} : { 'error.type': errorType }),
      'retryline.attempt.outcome': event.outcome,
    });
    // HTTP semconv for CLIENT spans: ERROR for 4xx/5xx and for no response; unset otherwise.
    if (errorType !== undefined) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: event.error?.message ?? errorType });
    }
    span.end();
  };

  const requestEnded = (traced: Traced, event: RequestEndEvent) => {
    const failed = event.outcome !== 'success';
    if (--traced.open > 0) {
      // Another request with this id is still in flight: the shared span ends with the last one.
      if (failed) recorded.gaveUp({ ...traced.metricAttributes, 'retryline.outcome': event.outcome });
      return;
    }
    requests.delete(event.requestId);
    const message = event.error?.message ?? event.outcome;
    // An attempt whose end was never reported (its classification threw): it ended with the request.
    for (const span of traced.attempts.values()) {
      span.setStatus({ code: SpanStatusCode.ERROR, message });
      span.end();
    }
    traced.attempts.clear();
    traced.span.setAttributes({
      'retryline.outcome': event.outcome,
      'retryline.attempts': event.attempts,
      'retryline.total_delay_ms': event.totalDelay,
      ...(event.status === undefined ? {} : { 'http.response.status_code': event.status }),
      ...(failed ? { 'error.type': requestErrorType(event) } : {}),
    });
    if (failed) {
      traced.span.setStatus({ code: SpanStatusCode.ERROR, message });
      recorded.gaveUp({ ...traced.metricAttributes, 'retryline.outcome': event.outcome });
    }
    traced.span.end();
  };

  const listener = (event: RetrylineEvent) => {
    // Guard state is a property of the key, not of one request: the gauges learn it from any.
    if (event.type === 'breaker-state') recorded.breakerChanged(event.key, event.to);
    else if (event.type === 'budget') recorded.budgetConsulted(event.key, event.remaining);
    if (event.type === 'request-start') {
      requestStarted(event);
      return;
    }
    const traced = requests.get(event.requestId);
    if (!traced) return;
    switch (event.type) {
      case 'attempt-start':
        attemptSpan(traced, event.attempt);
        recorded.attemptStarted(traced.metricAttributes);
        return;
      case 'attempt-end':
        attemptEnded(traced, event);
        return;
      case 'retry-scheduled':
        traced.span.addEvent('retryline.retry_scheduled', {
          'retryline.delay_ms': event.delay,
          'retryline.reason': event.reason,
          ...(event.hint ? { 'retryline.hint.source': event.hint.source } : {}),
          'retryline.next_attempt': event.attempt,
        });
        recorded.retryScheduled(
          { ...traced.metricAttributes, 'retryline.reason': event.reason },
          event.delay,
        );
        return;
      case 'guard-wait':
        traced.span.addEvent('retryline.guard_wait', {
          'retryline.guard': event.guard,
          'retryline.guard.key': event.key,
          'retryline.waited_ms': event.waited,
        });
        recorded.guardWaited({ ...traced.metricAttributes, 'retryline.guard': event.guard }, event.waited);
        return;
      case 'breaker-state':
        traced.span.addEvent('retryline.breaker_state', {
          'retryline.breaker.from': event.from,
          'retryline.breaker.to': event.to,
          'retryline.guard.key': event.key,
        });
        return;
      case 'budget':
        traced.span.addEvent('retryline.budget', {
          'retryline.budget.remaining': event.remaining,
          'retryline.budget.allowed': event.allowed,
          'retryline.guard.key': event.key,
        });
        return;
      case 'request-end':
        requestEnded(traced, event);
        return;
    }
  };

  // The hook runs before the attempt's attempt-start: it starts the attempt's span and writes that
  // span's context, so the server's span is a child of the attempt, not of the logical request.
  const hook: AttemptHeadersHook = ({ requestId, attempt }) => {
    const traced = requests.get(requestId);
    if (!traced) return undefined;
    const span = attemptSpan(traced, attempt);
    const carrier: Record<string, string> = {};
    propagation.inject(trace.setSpan(traced.context, span), carrier);
    return Object.keys(carrier).length > 0 ? carrier : undefined;
  };

  running.add(requests);
  const unsubscribe = subscribe(listener);
  const removeHook = options.propagate === false ? undefined : addAttemptHeaders(hook);
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    unsubscribe();
    removeHook?.();
    recorded.close();
    for (const traced of requests.values()) {
      for (const span of [...traced.attempts.values(), traced.span]) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: STOPPED });
        span.end();
      }
    }
    requests.clear();
    running.delete(requests);
  };
}
