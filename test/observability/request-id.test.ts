import { logEvents, memoryStore } from '@retryline/core';
import type { EventLogLine } from '@retryline/core/instrument';
import { instrument, SCOPE_NAME } from '@retryline/otel';
import { describe, expect, it } from 'vitest';
import { drivers } from '../conformance/drivers';
import { useTracing } from '../support/otel';
import { useFaultServer } from '../support/use-fault-server';

// A request id in every log line on both sides: one logical request, retried once, has
// one id — in its events, its spans, its log lines and the header the server received on every
// attempt — through each adapter.
const server = useFaultServer();
const { exporter, tracerProvider } = useTracing();

describe.each(drivers)('one request id everywhere ($name)', (driver) => {
  it('in events, spans, log lines and the x-request-id header of both attempts', async () => {
    exporter.reset();
    const lines: EventLogLine[] = [];
    const logger = {
      info: (line: EventLogLine) => lines.push(line),
      warn: (line: EventLogLine) => lines.push(line),
    };
    const stopLogs = logEvents(logger);
    const stopTracing = instrument({ tracerProvider });
    const path = `/request-id-${driver.name}`;
    server.script(path, [{ status: 503 }, { status: 200, body: 'ok' }]);
    let events: Awaited<ReturnType<typeof driver.send>>['events'];
    try {
      ({ events } = await driver.send({
        method: 'GET',
        url: `${server.url}${path}`,
        options: {
          retries: 2,
          backoff: { strategy: 'constant', base: 5 },
          jitter: 'none',
          requestIdHeader: 'x-request-id',
          store: memoryStore(),
        },
      }));
    } finally {
      stopTracing();
      stopLogs();
    }

    const sent = server.requests(path).map((request) => request.headers['x-request-id']);
    expect(sent).toHaveLength(2);
    const [id] = sent;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(sent).toEqual([id, id]);

    expect(events.length).toBeGreaterThanOrEqual(6);
    expect(new Set(events.map((event) => event.requestId))).toEqual(new Set([id]));

    const spans = exporter.getFinishedSpans().filter((span) => span.instrumentationScope.name === SCOPE_NAME);
    expect(spans).toHaveLength(3); // the request's span and one per attempt
    expect(new Set(spans.map((span) => span.attributes['retryline.request_id']))).toEqual(new Set([id]));

    // One line per event, every one with the id.
    expect(lines.map((line) => line.event)).toEqual(events.map((event) => `retryline.${event.type}`));
    expect(new Set(lines.map((line) => line.requestId))).toEqual(new Set([id]));
  });
});

describe.each(drivers)('one id the caller gave concurrent requests ($name)', (driver) => {
  it('is sent on each as given, and their events and spans stay apart (id, id#2)', async () => {
    exporter.reset();
    const stopTracing = instrument({ tracerProvider });
    const paths = [`/shared-id-a-${driver.name}`, `/shared-id-b-${driver.name}`];
    for (const path of paths) server.script(path, [{ status: 503 }, { status: 200, body: 'ok' }]);
    const options = {
      retries: 2,
      backoff: { strategy: 'constant', base: 20 },
      jitter: 'none',
      requestIdHeader: 'x-request-id',
      store: memoryStore(),
    } as const;
    let results: Awaited<ReturnType<typeof driver.send>>[];
    try {
      results = await Promise.all(
        paths.map((path) =>
          driver.send({
            method: 'GET',
            url: `${server.url}${path}`,
            headers: { 'x-request-id': 'upstream-7' },
            options,
          }),
        ),
      );
    } finally {
      stopTracing();
    }
    for (const path of paths) {
      expect(server.requests(path).map((request) => request.headers['x-request-id'])).toEqual([
        'upstream-7',
        'upstream-7',
      ]);
    }
    const ids = results.map(({ events }) => [...new Set(events.map((event) => event.requestId))]);
    expect(ids.flat().sort()).toEqual(['upstream-7', 'upstream-7#2']);
    const requestSpans = exporter
      .getFinishedSpans()
      .filter(
        (span) => span.instrumentationScope.name === SCOPE_NAME && span.parentSpanContext === undefined,
      );
    expect(requestSpans.map((span) => String(span.attributes['url.full'])).sort()).toEqual(
      paths.map((path) => `${server.url}${path}`).sort(),
    );
    // Both released at their end: the next request with the id carries it as it is.
    const next = await driver.send({
      method: 'GET',
      url: `${server.url}${paths[0]}`,
      headers: { 'x-request-id': 'upstream-7' },
      options,
    });
    expect(new Set(next.events.map((event) => event.requestId))).toEqual(new Set(['upstream-7']));
  });
});
