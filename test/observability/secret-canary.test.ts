import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import {
  type HttpRetryOptions,
  logEvents,
  memoryStore,
  type RetrylineEvent,
  recordEvents,
  subscribe,
} from '@retryline/core';
import { DEVTOOLS_HOOK, type EventLogLine } from '@retryline/core/instrument';
import { instrument, SCOPE_NAME } from '@retryline/otel';
import { afterEach, describe, expect, it } from 'vitest';
import { drivers } from '../conformance/drivers';
import { useTracing } from '../support/otel';
import { useFaultServer } from '../support/use-fault-server';

// Redaction happens in core before any event leaves, as an allowlist. A request carries
// secrets everywhere a request can (a dozen credential headers, query values with and without `=`,
// a path parameter, URL userinfo), and its server answers with secrets in response headers and the
// body; it is retried through each adapter with every way of watching attached: onEvent, subscribe,
// the devtools hook, recordEvents (a file), logEvents and @retryline/otel (spans and metrics). No
// canary may show up in anything they produce, and every one must have reached the server (or the
// test would pass by sending nothing).
const server = useFaultServer();
const { exporter, tracerProvider } = useTracing();

/** A reader that exports nothing: the test collects when it wants to look. */
class CollectingReader extends MetricReader {
  protected override onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

// Each canary names where it travels; all share one prefix, so a search for it finds any of them.
const REQUEST_HEADERS: Readonly<Record<string, string>> = {
  Authorization: 'Bearer CANARY-authorization',
  'X-Api-Key': 'CANARY-x-api-key',
  'X-Auth-Token': 'CANARY-x-auth-token',
  'Private-Token': 'CANARY-private-token',
  'Api-Key': 'CANARY-api-key',
  'X-Amz-Security-Token': 'CANARY-x-amz-security-token',
  Cookie: 'session=CANARY-cookie',
  'Proxy-Authorization': 'Basic CANARY-proxy-authorization',
  'X-Secret': 'CANARY-x-secret',
  'X-Goog-Api-Key': 'CANARY-x-goog-api-key',
  'X-Session-Token': 'CANARY-x-session-token',
  'X-Csrf-Token': 'CANARY-x-csrf-token',
};
const QUERY_VALUE = 'CANARY-query-value';
const BARE_QUERY = 'CANARY-bare-query';
const PATH_PARAMETER = 'CANARY-path-parameter';
const USERINFO = 'CANARY-userinfo';
const RESPONSE_HEADERS: Readonly<Record<string, string>> = {
  'WWW-Authenticate': 'Bearer realm="CANARY-www-authenticate"',
  'Set-Cookie': 'session=CANARY-set-cookie; HttpOnly',
  'X-Debug-Token': 'CANARY-x-debug-token',
};
const BODY = 'CANARY-body';
/** The secret part of every canary: none of the outputs may contain it, in any case. */
const CANARY = /canary/i;

const PATH = `/p;jsessionid=${PATH_PARAMETER}/x`;
const QUERY = `?token=${QUERY_VALUE}&${BARE_QUERY}`;

const fast: HttpRetryOptions = {
  retries: 2,
  backoff: { strategy: 'constant', base: 5 },
  jitter: 'none',
  requestIdHeader: 'x-request-id',
};

/** What each way of watching produced, as the text a user would ship or save. */
type Outputs = Record<
  'onEvent' | 'subscribe' | 'devtools' | 'recording' | 'logs' | 'spans' | 'metrics',
  string
>;

/** Every way of watching a request, attached; `collect()` detaches them and serializes all they saw. */
function watchEverything() {
  const subscribed: RetrylineEvent[] = [];
  const pushed: unknown[] = [];
  const logged: unknown[] = [];
  const stopSubscribe = subscribe((event) => subscribed.push(event));
  // As the extension defines it (extension/src/page/hook.ts): a frozen object with `push`, whose
  // events cross to the relay by postMessage, so by structured clone.
  Object.defineProperty(globalThis, DEVTOOLS_HOOK, {
    value: Object.freeze({ push: (event: unknown) => pushed.push(structuredClone(event)) }),
    configurable: true,
    enumerable: false,
    writable: false,
  });
  const recorder = recordEvents({ source: 'node' });
  const stopLogs = logEvents({
    info: (line: EventLogLine, message: string) => logged.push({ line, message }),
    warn: (line: EventLogLine, message: string) => logged.push({ line, message }),
  });
  exporter.reset();
  const reader = new CollectingReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const stopTracing = instrument({ tracerProvider, meterProvider });
  let stopped = false;

  const stop = () => {
    if (stopped) return;
    stopped = true;
    stopTracing();
    stopLogs();
    stopSubscribe();
    delete (globalThis as { [DEVTOOLS_HOOK]?: unknown })[DEVTOOLS_HOOK];
  };
  stops.push(stop);

  return {
    /**
     * Each output as the text a user would ship or save; `onEvent` is what the drivers' own
     * onEvent listeners received.
     */
    async collect(onEvent: readonly RetrylineEvent[]): Promise<Outputs> {
      const recording = recorder.stop();
      const { resourceMetrics } = await reader.collect();
      stop();
      await meterProvider.shutdown();
      const directory = mkdtempSync(join(tmpdir(), 'retryline-canary-'));
      const file = join(directory, 'recording.json');
      try {
        writeFileSync(file, JSON.stringify(recording));
        const spans = exporter
          .getFinishedSpans()
          .filter((span) => span.instrumentationScope.name === SCOPE_NAME)
          .map((span) => ({
            name: span.name,
            attributes: span.attributes,
            status: span.status,
            events: span.events.map((event) => ({ name: event.name, attributes: event.attributes })),
            links: span.links,
          }));
        return {
          onEvent: JSON.stringify(onEvent),
          subscribe: JSON.stringify(subscribed),
          devtools: JSON.stringify(pushed),
          recording: readFileSync(file, 'utf8'),
          logs: JSON.stringify(logged),
          spans: JSON.stringify(spans),
          metrics: JSON.stringify(resourceMetrics.scopeMetrics),
        };
      } finally {
        rmSync(directory, { recursive: true, force: true });
      }
    },
  };
}

const stops: Array<() => void> = [];
afterEach(() => {
  for (const stop of stops.splice(0)) stop();
});

/** What the server received, as one text: the request lines and every header value. */
function received(path: string): string {
  return server
    .requests(path)
    .map((request) => `${request.url}\n${JSON.stringify(request.headers)}`)
    .join('\n');
}

describe.each(drivers)('no secret reaches any output ($name)', (driver) => {
  it('a request with secrets in headers, query, path and userinfo, retried after a 503 that answers with secrets', async () => {
    // axios takes userinfo and sends it as Basic credentials; fetch (and so ky) refuses such a URL.
    const userinfo = driver.name === 'axios' ? `user:${USERINFO}@` : '';
    const origin = server.url.replace('http://', `http://${userinfo}`);
    server.script(PATH, [
      { status: 503, headers: RESPONSE_HEADERS, body: BODY },
      { status: 200, headers: RESPONSE_HEADERS, body: BODY },
    ]);
    server.script('/down', [{ status: 503, headers: RESPONSE_HEADERS, body: BODY }]);
    const watch = watchEverything();
    const options = { ...fast, store: memoryStore() };

    const retried = await driver.send({
      method: 'GET',
      url: `${origin}${PATH}${QUERY}`,
      headers: { ...REQUEST_HEADERS },
      options,
    });
    // A request that gives up reports an error too: its message must be as clean.
    const exhausted = await driver.send({
      method: 'GET',
      url: `${origin}/down${QUERY}`,
      headers: { ...REQUEST_HEADERS },
      options,
    });
    const outputs = await watch.collect([...retried.events, ...exhausted.events]);

    expect(retried.outcome).toMatchObject({ kind: 'response', status: 200 });
    expect(exhausted.outcome).toMatchObject({ kind: 'response', status: 503 });
    // Not vacuous: every canary reached the server, on every attempt …
    const sent = server.requests(PATH);
    expect(sent).toHaveLength(2);
    expect(server.requests('/down')).toHaveLength(3);
    const seen = received(PATH);
    const headerCanaries = Object.entries(REQUEST_HEADERS)
      // axios sends userinfo as the Authorization header, in place of the caller's.
      .filter(([name]) => !(userinfo && name === 'Authorization'))
      .map(([, value]) => value);
    for (const canary of [QUERY_VALUE, BARE_QUERY, PATH_PARAMETER, ...headerCanaries]) {
      expect(seen, canary).toContain(canary);
    }
    if (userinfo) {
      const basic = `Basic ${Buffer.from(`user:${USERINFO}`).toString('base64')}`;
      expect(sent.map((request) => request.headers.authorization)).toEqual([basic, basic]);
    }
    // … and every output saw the request: the test watched the right things.
    for (const [name, text] of Object.entries(outputs)) {
      // Metrics are per origin, never per path.
      expect(text, name).toContain(name === 'metrics' ? '127.0.0.1' : '/p;jsessionid=***/x');
    }
    const events = JSON.parse(outputs.onEvent) as RetrylineEvent[];
    expect(events.filter((event) => event.type === 'attempt-end')).toHaveLength(5);
    const firstStart = events.find((event) => event.type === 'attempt-start');
    expect(Object.keys(firstStart?.headers ?? {})).toEqual(
      expect.arrayContaining(Object.keys(REQUEST_HEADERS).map((name) => name.toLowerCase())),
    );
    const firstEnd = events.find((event) => event.type === 'attempt-end');
    expect(Object.keys(firstEnd?.headers ?? {})).toEqual(
      expect.arrayContaining(Object.keys(RESPONSE_HEADERS).map((name) => name.toLowerCase())),
    );

    // No canary anywhere, not even base64-encoded userinfo.
    const encoded = Buffer.from(`user:${USERINFO}`).toString('base64');
    for (const [name, text] of Object.entries(outputs)) {
      expect(text.match(CANARY)?.[0], `${name} holds a canary`).toBeUndefined();
      expect(text, name).not.toContain(encoded);
    }
    // The URL every output carries is the request's, with every secret masked.
    const masked = `${server.url}/p;jsessionid=***/x?token=***&***`;
    expect(events[0]).toMatchObject({ type: 'request-start', url: masked });
    expect(outputs.spans).toContain(JSON.stringify(masked));
  });

  it('an error message quoting a URL with credentials is redacted in every output', async () => {
    server.script(PATH, [{ status: 200 }]);
    const watch = watchEverything();
    const url = `${server.url.replace('http://', `http://user:${USERINFO}@`)}${PATH}${QUERY}`;
    // fetch refuses the URL (`Request cannot be constructed from a URL that includes credentials:
    // <the URL>`); axios sends it. Either way, what the outputs say of it holds no canary.
    const sent = await driver
      .send({ method: 'GET', url, headers: { ...REQUEST_HEADERS }, options: fast })
      .catch(() => undefined);
    const outputs = await watch.collect(sent?.events ?? []);
    // Not vacuous: fetch's refusal was reported (its message quotes the URL), axios's request sent;
    // ky refuses the URL itself, before Retryline sees the request, so nothing is emitted.
    if (driver.name === 'fetch') {
      expect(outputs.subscribe).toContain(
        `includes credentials: ${server.url}/p;jsessionid=***/x?token=***&***`,
      );
    }
    if (driver.name === 'axios') expect(server.requests(PATH)).toHaveLength(1);
    for (const [name, text] of Object.entries(outputs)) {
      expect(text.match(CANARY)?.[0], `${name} holds a canary`).toBeUndefined();
    }
  });
});
