import { trace } from '@opentelemetry/api';
import type { EventLogLine } from '@retryline/core/instrument';
import { SCOPE_NAME } from '@retryline/otel';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { api, observeRetries } from '../../examples/observability';
import { useTracing } from '../support/otel';
import { useFaultServer } from '../support/use-fault-server';

// The README's Observability example, run as written: an SDK registered globally (as the Node SDK
// does), then observeRetries() and the example's client against the loopback fault server.
const server = useFaultServer();
const { exporter, tracerProvider } = useTracing();

beforeAll(() => {
  trace.setGlobalTracerProvider(tracerProvider);
});
afterAll(() => {
  trace.disable();
});

it('examples/observability.ts: spans, trace context, and a log line per retry with the request id', async () => {
  const lines: Array<[level: string, line: EventLogLine, message: string]> = [];
  const stop = observeRetries({
    info: (line, message) => lines.push(['info', line, message]),
    warn: (line, message) => lines.push(['warn', line, message]),
  });
  server.script('/orders', [{ status: 503 }, { status: 200, body: '[]' }]);
  try {
    expect((await api(`${server.url}/orders`)).status).toBe(200);
  } finally {
    stop();
  }

  const [first, second] = server.requests('/orders');
  const id = first?.headers['x-request-id'];
  expect(second?.headers['x-request-id']).toBe(id);
  expect(first?.headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  expect(second?.headers.traceparent).not.toBe(first?.headers.traceparent); // one span per attempt

  const spans = exporter.getFinishedSpans().filter((span) => span.instrumentationScope.name === SCOPE_NAME);
  expect(spans.map((span) => span.name).sort()).toEqual(['GET', 'GET', 'retryline GET']);

  expect(lines.map(([level, line]) => [level, line.event, line.requestId])).toEqual([
    ['warn', 'retryline.retry-scheduled', id],
    ['info', 'retryline.request-end', id],
  ]);
  expect(lines[0]?.[2]).toMatch(/^\[retryline\] attempt 2 in \d+ ms \(backoff\)$/);
});
