import { readFileSync } from 'node:fs';
import { metrics, propagation, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { type DataPoint, type Histogram, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { circuitBreaker, type HttpRetryOptions, memoryStore, retryBudget } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { type InstrumentOptions, instrument, SCOPE_NAME, SCOPE_VERSION } from '@retryline/otel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// Test-only: how many requests the running instrumentations still hold state for.
import { trackedRequests } from '../../packages/otel/src/instrument';
import { type Driver, drivers, fetchDriver } from '../conformance/drivers';
import { useTracing } from '../support/otel';
import { useFaultServer } from '../support/use-fault-server';

// @retryline/otel against a real OpenTelemetry SDK (in-memory exporters), a real context manager
// and the W3C propagator, with every adapter sending to the loopback fault server.
const server = useFaultServer();
const fast: HttpRetryOptions = { retries: 2, backoff: { strategy: 'constant', base: 10 }, jitter: 'none' };

/** A reader that exports nothing: the test collects when it wants to look. */
class CollectingReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

const { exporter, tracerProvider } = useTracing();
const testTracer = tracerProvider.getTracer('retryline-test');
let reader: CollectingReader;
let meterProvider: MeterProvider;
const stops: (() => void)[] = [];

/** Starts instrumentation into this file's SDK; afterEach stops it whatever the test did. */
function start(options: InstrumentOptions = {}): () => void {
  const stop = instrument({ tracerProvider, meterProvider, ...options });
  stops.push(stop);
  return stop;
}

beforeEach(() => {
  exporter.reset();
  reader = new CollectingReader();
  meterProvider = new MeterProvider({ readers: [reader] });
});
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await meterProvider.shutdown();
});

/** The spans Retryline recorded, in start order. */
function retrylineSpans(kind: SpanKind): ReadableSpan[] {
  const byStart = (a: ReadableSpan, b: ReadableSpan) =>
    a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1];
  return exporter
    .getFinishedSpans()
    .filter((span) => span.instrumentationScope.name === SCOPE_NAME && span.kind === kind)
    .sort(byStart);
}

/** Runs `body` inside an active span of the test's own, which it ends afterwards. */
function underTestSpan<T>(body: (parent: Span) => Promise<T>): Promise<T> {
  return testTracer.startActiveSpan('test', async (parent) => {
    try {
      return await body(parent);
    } finally {
      parent.end();
    }
  });
}

/** Every data point of the metric `name` at this moment (none when it was never recorded). */
async function points(name: string): Promise<DataPoint<unknown>[]> {
  const { resourceMetrics, errors } = await reader.collect();
  expect(errors).toEqual([]);
  return resourceMetrics.scopeMetrics
    .filter((scope) => scope.scope.name === SCOPE_NAME)
    .flatMap((scope) => scope.metrics)
    .filter((metric) => metric.descriptor.name === name)
    .flatMap((metric) => metric.dataPoints as DataPoint<unknown>[]);
}

/** The sum of a counter's points whose attributes include `where`. */
async function total(name: string, where: Record<string, unknown> = {}): Promise<number> {
  return (await points(name))
    .filter((point) => Object.entries(where).every(([key, value]) => point.attributes[key] === value))
    .reduce((sum, point) => sum + (point.value as number), 0);
}

const originOf = () => ({ 'server.address': '127.0.0.1', 'server.port': server.port, 'url.scheme': 'http' });

describe.each(drivers)('instrument() with $name', (driver: Driver) => {
  it('traces 503, 503, 200 as one INTERNAL span over three CLIENT spans, with trace context on each attempt', async () => {
    const stop = start();
    server.script('/flaky', [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    const url = `${server.url}/flaky?token=secret`;
    const options = { ...fast, store: memoryStore() };
    let parentId = '';
    const { outcome } = await underTestSpan((parent) => {
      parentId = parent.spanContext().spanId;
      return driver.send({ method: 'GET', url, options });
    });
    expect(outcome).toMatchObject({ kind: 'response', status: 200 });

    const [logical, ...others] = retrylineSpans(SpanKind.INTERNAL);
    expect(others).toEqual([]);
    if (!logical) throw new Error('no INTERNAL span');
    const traceId = logical.spanContext().traceId;
    expect(logical.name).toBe('retryline GET');
    expect(logical.parentSpanContext?.spanId).toBe(parentId);
    expect(logical.status.code).toBe(SpanStatusCode.UNSET);
    expect(logical.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.full': `${server.url}/flaky?token=***`,
      ...originOf(),
      'retryline.client': driver.name,
      'retryline.outcome': 'success',
      'retryline.attempts': 3,
      'retryline.total_delay_ms': 20,
      'http.response.status_code': 200,
    });
    expect(logical.attributes['error.type']).toBeUndefined();
    const requestId = logical.attributes['retryline.request_id'];
    expect(requestId).toEqual(expect.any(String));

    const attempts = retrylineSpans(SpanKind.CLIENT);
    expect(attempts).toHaveLength(3);
    for (const span of attempts) {
      expect(span.name).toBe('GET');
      expect(span.spanContext().traceId).toBe(traceId);
      expect(span.parentSpanContext?.spanId).toBe(logical.spanContext().spanId);
      expect(span.attributes).toMatchObject({
        'http.request.method': 'GET',
        'url.full': `${server.url}/flaky?token=***`,
        ...originOf(),
        'retryline.request_id': requestId,
        'retryline.client': driver.name,
      });
    }
    const attr = (name: string) => attempts.map((span) => span.attributes[name]);
    expect(attr('http.request.resend_count')).toEqual([undefined, 1, 2]);
    expect(attr('http.response.status_code')).toEqual([503, 503, 200]);
    expect(attr('error.type')).toEqual(['503', '503', undefined]);
    expect(attr('retryline.attempt.outcome')).toEqual(['retry', 'retry', 'success']);
    expect(attempts.map((span) => span.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
      SpanStatusCode.UNSET,
    ]);

    const retries = logical.events.filter((event) => event.name === 'retryline.retry_scheduled');
    expect(retries.map((event) => event.attributes)).toEqual([
      { 'retryline.delay_ms': 10, 'retryline.reason': 'backoff', 'retryline.next_attempt': 2 },
      { 'retryline.delay_ms': 10, 'retryline.reason': 'backoff', 'retryline.next_attempt': 3 },
    ]);

    // What the server received: each attempt's own CLIENT span as the parent of its server span.
    expect(server.requests('/flaky').map((request) => request.headers.traceparent)).toEqual(
      attempts.map((span) => `00-${traceId}-${span.spanContext().spanId}-01`),
    );

    const byOrigin = { ...originOf(), 'http.request.method': 'GET' };
    expect(await total('retryline.requests', byOrigin)).toBe(1);
    expect(await total('retryline.attempts', byOrigin)).toBe(3);
    expect(await total('retryline.retries', { ...byOrigin, 'retryline.reason': 'backoff' })).toBe(2);
    expect(await total('retryline.give_ups')).toBe(0);
    const waits = (await points('retryline.wait.duration')) as DataPoint<Histogram>[];
    expect(waits).toHaveLength(1);
    expect(waits[0]?.attributes).toEqual({ ...byOrigin, 'retryline.reason': 'backoff' });
    expect(waits[0]?.value).toMatchObject({ count: 2, sum: 20 });

    // Nothing was left behind: no state kept, and stopping ends no span.
    expect(trackedRequests()).toBe(0);
    const exported = exporter.getFinishedSpans().length;
    stop();
    expect(exporter.getFinishedSpans()).toHaveLength(exported);
  });

  it('gives up on a 503 throughout: give_ups counts it by outcome, the INTERNAL span is an ERROR', async () => {
    start();
    server.script('/down', [{ status: 503 }]);
    const { outcome } = await driver.send({
      method: 'GET',
      url: `${server.url}/down`,
      options: { ...fast, store: memoryStore() },
    });
    expect(outcome).toMatchObject({ kind: 'response', status: 503 });
    const [logical] = retrylineSpans(SpanKind.INTERNAL);
    expect(logical?.status.code).toBe(SpanStatusCode.ERROR);
    expect(logical?.attributes).toMatchObject({
      'retryline.outcome': 'exhausted',
      'retryline.attempts': 3,
      'error.type': '503',
    });
    expect(retrylineSpans(SpanKind.CLIENT).map((span) => span.status.code)).toEqual([
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
      SpanStatusCode.ERROR,
    ]);
    expect(await total('retryline.give_ups', { ...originOf(), 'retryline.outcome': 'exhausted' })).toBe(1);
    expect(await total('retryline.requests')).toBe(1);
  });
});

describe('instrument()', () => {
  it('names its tracer and meter @retryline/otel with the package version', async () => {
    const { version } = JSON.parse(
      readFileSync(new URL('../../packages/otel/package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(SCOPE_VERSION).toBe(version);
    start();
    server.script('/ok', [{ status: 200 }]);
    await fetchDriver.send({ method: 'GET', url: `${server.url}/ok`, options: fast });
    const scopes = exporter.getFinishedSpans().map((span) => span.instrumentationScope);
    expect(scopes).toEqual([
      expect.objectContaining({ name: '@retryline/otel', version }),
      expect.objectContaining({ name: '@retryline/otel', version }),
    ]);
    const { resourceMetrics } = await reader.collect();
    expect(resourceMetrics.scopeMetrics.map((scope) => scope.scope)).toContainEqual(
      expect.objectContaining({ name: '@retryline/otel', version }),
    );
  });

  it('shows a breaker opening as a span event and the breaker gauge at 2 (open), then refuses unsent', async () => {
    start();
    server.script('/broken', [{ status: 503 }]);
    const options: HttpRetryOptions = {
      ...fast,
      retries: 0,
      store: memoryStore(),
      breaker: circuitBreaker({ consecutiveFailures: 2, openMs: 60_000 }),
    };
    const send = () => fetchDriver.send({ method: 'GET', url: `${server.url}/broken`, options });
    await send();
    expect(await points('retryline.breaker.state')).toEqual([]); // no transition reported yet
    await send();
    const gauge = await points('retryline.breaker.state');
    expect(gauge.map((point) => [point.attributes['retryline.guard.key'], point.value])).toEqual([
      [server.url, 2],
    ]);
    const [, opener] = retrylineSpans(SpanKind.INTERNAL);
    expect(opener?.events.filter((event) => event.name === 'retryline.breaker_state')).toEqual([
      expect.objectContaining({
        attributes: {
          'retryline.breaker.from': 'closed',
          'retryline.breaker.to': 'open',
          'retryline.guard.key': server.url,
        },
      }),
    ]);

    const refused = await send();
    expect(refused.outcome).toMatchObject({ kind: 'retryline-error', name: 'CircuitOpenError' });
    const logical = retrylineSpans(SpanKind.INTERNAL);
    expect(logical).toHaveLength(3);
    expect(logical[2]?.attributes).toMatchObject({
      'retryline.outcome': 'breaker-open',
      'retryline.attempts': 0,
      'error.type': 'CircuitOpenError',
    });
    expect(logical[2]?.status.code).toBe(SpanStatusCode.ERROR);
    expect(retrylineSpans(SpanKind.CLIENT)).toHaveLength(2); // the refused call sent nothing
    expect(server.requests('/broken')).toHaveLength(2);
    expect(trackedRequests()).toBe(0);
    expect(await total('retryline.give_ups', { 'retryline.outcome': 'breaker-open' })).toBe(1);
  });

  it('records the retry budget as a span event and a gauge of the retries it still allows', async () => {
    start();
    server.script('/budget', [{ status: 503 }, { status: 200 }]);
    const budget = retryBudget({ ratio: 0.1, windowMs: 10_000, minPerSecond: 1 });
    await fetchDriver.send({
      method: 'GET',
      url: `${server.url}/budget`,
      options: { ...fast, store: memoryStore(), budget },
    });
    const [logical] = retrylineSpans(SpanKind.INTERNAL);
    const events = logical?.events.filter((event) => event.name === 'retryline.budget') ?? [];
    expect(events).toHaveLength(1);
    const remaining = events[0]?.attributes?.['retryline.budget.remaining'];
    expect(events[0]?.attributes).toMatchObject({
      'retryline.budget.allowed': true,
      'retryline.guard.key': server.url,
    });
    expect(remaining).toEqual(expect.any(Number));
    const gauge = await points('retryline.budget.remaining');
    expect(gauge.map((point) => [point.attributes['retryline.guard.key'], point.value])).toEqual([
      [server.url, remaining],
    ]);
  });

  it('with propagate: false records the same spans but sends no trace context', async () => {
    start({ propagate: false });
    server.script('/quiet', [{ status: 503 }, { status: 200 }]);
    await underTestSpan(() => fetchDriver.send({ method: 'GET', url: `${server.url}/quiet`, options: fast }));
    expect(retrylineSpans(SpanKind.CLIENT)).toHaveLength(2);
    expect(retrylineSpans(SpanKind.INTERNAL)).toHaveLength(1);
    expect(server.requests('/quiet').map((request) => request.headers.traceparent)).toEqual([
      undefined,
      undefined,
    ]);
  });

  it('keeps a traceparent the caller set on the request', async () => {
    start();
    server.script('/own', [{ status: 200 }]);
    const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await fetchDriver.send({
      method: 'GET',
      url: `${server.url}/own`,
      headers: { traceparent: own },
      options: fast,
    });
    expect(server.requests('/own')[0]?.headers.traceparent).toBe(own);
  });

  it('stop() ends tracing: no more spans or metrics, no more headers', async () => {
    const stop = start();
    server.script('/s', [{ status: 200 }]);
    const send = () => fetchDriver.send({ method: 'GET', url: `${server.url}/s`, options: fast });
    await send();
    expect(exporter.getFinishedSpans()).toHaveLength(2);
    stop();
    stop(); // a second stop does nothing
    await send();
    expect(exporter.getFinishedSpans()).toHaveLength(2);
    expect(server.requests('/s').map((request) => request.headers.traceparent)).toEqual([
      expect.stringMatching(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/),
      undefined,
    ]);
    expect(await total('retryline.requests')).toBe(1);
  });

  it('stop() ends the spans of a request still running with ERROR "instrumentation stopped"', async () => {
    const stop = start();
    server.script('/slow', [{ status: 200, delayMs: 200 }]);
    const running = fetchDriver.send({ method: 'GET', url: `${server.url}/slow`, options: fast });
    while (server.requests('/slow').length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(trackedRequests()).toBe(1);
    stop();
    expect(trackedRequests()).toBe(0);
    const ended = exporter.getFinishedSpans();
    expect(ended.map((span) => [span.kind, span.status])).toEqual([
      [SpanKind.CLIENT, { code: SpanStatusCode.ERROR, message: 'instrumentation stopped' }],
      [SpanKind.INTERNAL, { code: SpanStatusCode.ERROR, message: 'instrumentation stopped' }],
    ]);
    expect((await running).outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(exporter.getFinishedSpans()).toHaveLength(2); // its later events are ignored
  });

  it('leaves nothing open after many concurrent requests settle', async () => {
    const stop = start();
    const paths = Array.from({ length: 20 }, (_, i) => `/many-${i}`);
    for (const path of paths) server.script(path, [{ status: 503 }, { status: 200 }]);
    await Promise.all(
      paths.map((path) => fetchDriver.send({ method: 'GET', url: `${server.url}${path}`, options: fast })),
    );
    expect(retrylineSpans(SpanKind.INTERNAL)).toHaveLength(20);
    expect(retrylineSpans(SpanKind.CLIENT)).toHaveLength(40);
    expect(trackedRequests()).toBe(0);
    const exported = exporter.getFinishedSpans().length;
    // stop() ends every span it still tracks: none, so nothing is exported by it.
    stop();
    expect(exporter.getFinishedSpans()).toHaveLength(exported);
    expect(
      exporter.getFinishedSpans().every((span) => span.status.message !== 'instrumentation stopped'),
    ).toBe(true);
  });

  it('ends every span when concurrent requests share one request id (the caller’s X-Request-Id)', async () => {
    let started = 0;
    let ended = 0;
    const counting = new BasicTracerProvider({
      spanProcessors: [
        {
          onStart: () => void started++,
          onEnd: () => void ended++,
          forceFlush: () => Promise.resolve(),
          shutdown: () => Promise.resolve(),
        },
      ],
    });
    start({ tracerProvider: counting });
    server.script('/same-a', [{ status: 503 }, { status: 200 }]);
    server.script('/same-b', [{ status: 503 }, { status: 200 }]);
    const options = { ...fast, requestIdHeader: 'X-Request-Id' };
    const headers = { 'X-Request-Id': 'upstream-7' };
    await Promise.all(
      ['/same-a', '/same-b'].map((path) =>
        fetchDriver.send({ method: 'GET', url: `${server.url}${path}`, headers, options }),
      ),
    );
    expect(started).toBeGreaterThan(0);
    expect(ended).toBe(started);
    expect(trackedRequests()).toBe(0);
  });

  it('uses the global providers when none is passed', async () => {
    trace.setGlobalTracerProvider(tracerProvider);
    metrics.setGlobalMeterProvider(meterProvider);
    try {
      stops.push(instrument());
      server.script('/global', [{ status: 200 }]);
      await fetchDriver.send({ method: 'GET', url: `${server.url}/global`, options: fast });
      expect(retrylineSpans(SpanKind.CLIENT)).toHaveLength(1);
      expect(await total('retryline.requests')).toBe(1);
    } finally {
      trace.disable();
      metrics.disable();
    }
  });

  it('without any SDK, works as a no-op and requests still succeed', async () => {
    propagation.disable();
    try {
      stops.push(instrument());
      server.script('/plain', [{ status: 503 }, { status: 200, body: 'ok' }]);
      const response = await retryFetch(fetch, fast)(`${server.url}/plain`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe('ok');
      expect(exporter.getFinishedSpans()).toEqual([]);
      expect(server.requests('/plain').map((request) => request.headers.traceparent)).toEqual([
        undefined,
        undefined,
      ]);
    } finally {
      propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    }
  });
});
