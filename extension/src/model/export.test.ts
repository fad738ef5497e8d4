import { describe, expect, it } from 'vitest';
import type { TimelineEntry } from '../shared/protocol';
import {
  ANSWERED_BY_HEDGE_COMMENT,
  type Har,
  HEDGE_COMMENT,
  INJECTED_COMMENT,
  parseImport,
  RETRYLINE_VERSION,
  rowEvents,
  toHar,
  toRecording,
} from './export';
import {
  API,
  crossFrameScenario,
  EU,
  ev,
  FRAME_ORIGIN,
  gateScenario,
  hedgeScenario,
  injectedScenario,
  ORIGIN,
  scenario,
  US,
} from './fixtures';
import { foldTimeline, type Timeline } from './timeline';

function imported(text: string): TimelineEntry[] {
  const result = parseImport(text);
  if ('error' in result) throw new Error(result.error);
  return result.entries;
}

/** Everything the panel shows of a timeline (not its bookkeeping). */
function shown(timeline: Timeline) {
  return { rows: timeline.rows, navigations: timeline.navigations, lanes: timeline.lanes };
}

describe('toRecording', () => {
  it('wraps the entries as a version 1 recording', () => {
    const entries = scenario();
    const recording = toRecording(entries, 'tab 7', new Date(Date.UTC(2025, 0, 2, 3, 4, 5)));
    expect(recording).toEqual({
      format: 'retryline-recording',
      version: 1,
      recordedAt: '2025-01-02T03:04:05.000Z',
      source: 'tab 7',
      entries,
    });
  });
});

describe('toHar', () => {
  const har = toHar(foldTimeline(scenario()));

  it('is a HAR 1.2 log created by Retryline', () => {
    expect(har.log.version).toBe('1.2');
    expect(har.log.creator).toEqual({ name: 'Retryline', version: RETRYLINE_VERSION });
    expect(RETRYLINE_VERSION).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('has one entry per attempt', () => {
    expect(har.log.entries.map((e) => [e._retry.requestId, e._retry.attempt])).toEqual([
      ['r1', 1],
      ['r1', 2],
      ['r1', 3],
      ['r3', 1],
    ]);
  });

  it('describes each attempt in HAR’s own fields', () => {
    const [first] = har.log.entries;
    expect(first).toMatchObject({
      startedDateTime: new Date(1100).toISOString(),
      time: 50,
      request: {
        method: 'GET',
        url: `${API}/orders?page=*`,
        httpVersion: '',
        headers: [
          { name: 'accept', value: 'application/json' },
          { name: 'authorization', value: '[redacted]' },
        ],
        queryString: [{ name: 'page', value: '*' }],
        cookies: [],
        headersSize: -1,
        bodySize: -1,
      },
      response: {
        status: 503,
        statusText: '',
        httpVersion: '',
        headers: [
          { name: 'retry-after', value: '2' },
          { name: 'set-cookie', value: '[redacted]' },
        ],
        cookies: [],
        content: { size: 0, mimeType: '' },
        redirectURL: '',
        headersSize: -1,
        bodySize: -1,
      },
      cache: {},
      timings: { send: 0, wait: 50, receive: 0 },
    });
  });

  it('gives a transport failure status 0 and its error', () => {
    const second = har.log.entries[1];
    expect(second?.response.status).toBe(0);
    expect(second?.response._error).toBe('TypeError: fetch failed');
    expect(second?._retry).toMatchObject({ attemptOutcome: 'error', phase: 'unknown' });
  });

  it('tells the retry story in _retry: the request, the attempt, and the wait before it', () => {
    expect(har.log.entries[0]?._retry).toMatchObject({
      requestId: 'r1',
      attempt: 1,
      attempts: 3,
      outcome: 'success',
      client: 'fetch',
      guardWaits: [{ guard: 'limiter', key: API, waited: 100, t: 1099 }],
    });
    expect(har.log.entries[0]?._retry.waitBefore).toBeUndefined();
    expect(har.log.entries[1]?._retry.waitBefore).toEqual({
      start: 1150,
      delay: 2000,
      reason: 'retry-after',
      strategy: 'exponential',
      jitter: 'full',
      raw: 100,
      capped: 100,
      hint: { source: 'retry-after', delay: 2000 },
    });
    expect(har.log.entries[2]?._retry.waitBefore).toMatchObject({ delay: 412, reason: 'backoff' });
  });

  it('keeps what has no attempt (a refused request, lanes, navigations) in the log’s _retry', () => {
    expect(har.log._retry.rows).toEqual([
      { index: 1, source: ORIGIN, events: rowEvents(foldTimeline(scenario()).rows[1] as never) },
    ]);
    expect(har.log._retry.navigations).toEqual([{ url: `${ORIGIN}/checkout`, t: 3800, beforeRow: 2 }]);
    expect(har.log._retry.lanes[0]?.breaker).toEqual([
      { t: 3700, from: 'closed', to: 'open' },
      { t: 8700, from: 'open', to: 'half-open' },
    ]);
  });

  it('survives JSON (an unbounded backoff becomes null)', () => {
    const timeline = foldTimeline([
      ev('x', {
        type: 'retry-scheduled',
        t: 1,
        attempt: 2,
        retry: 1,
        delay: 5,
        reason: 'backoff',
        strategy: 'exponential',
        jitter: 'none',
        raw: Number.POSITIVE_INFINITY,
        capped: 5,
      }),
      ev('x', { type: 'attempt-start', t: 6, attempt: 2 }),
    ]);
    const parsed = JSON.parse(JSON.stringify(toHar(timeline)));
    expect(parsed.log.entries[0]._retry.waitBefore.raw).toBeNull();
  });
});

describe('export → import round trip', () => {
  it('gives identical rows through a JSON recording', () => {
    const entries = scenario();
    const text = JSON.stringify(toRecording(entries, 'test'));
    expect(shown(foldTimeline(imported(text)))).toEqual(shown(foldTimeline(entries)));
  });

  it('keeps when an open breaker lets its trial through, in JSON and in HAR', () => {
    const entries = [
      ...scenario(),
      ev('r9', { type: 'breaker-state', t: 9000, key: API, from: 'half-open', to: 'open', retryAt: 39_000 }),
    ];
    const timeline = foldTimeline(entries);
    const last = (t: Timeline) => t.lanes.find((l) => l.key === API)?.breaker.at(-1);
    expect(last(timeline)).toMatchObject({ to: 'open', retryAt: 39_000 });
    const har = JSON.stringify(toHar(timeline));
    expect(JSON.parse(har).log._retry.lanes[0].breaker.at(-1)).toEqual({
      t: 9000,
      from: 'half-open',
      to: 'open',
      retryAt: 39_000,
    });
    expect(last(foldTimeline(imported(har)))).toMatchObject({ to: 'open', retryAt: 39_000 });
    const json = JSON.stringify(toRecording(entries, 'test'));
    expect(last(foldTimeline(imported(json)))).toMatchObject({ to: 'open', retryAt: 39_000 });
  });

  it('gives identical rows, lanes and separators through HAR', () => {
    const timeline = foldTimeline(scenario());
    const text = JSON.stringify(toHar(timeline));
    const result = parseImport(text);
    expect(result).toMatchObject({ format: 'har', skipped: 0 });
    expect(shown(foldTimeline(imported(text)))).toEqual(shown(timeline));
  });

  it('keeps the recovery gate’s lane (parked spans and probes) and parked waits through JSON and HAR', () => {
    const timeline = foldTimeline(gateScenario());
    expect(timeline.lanes[0]?.probes.map((probe) => probe.result)).toEqual(['failed', 'recovered']);
    const json = JSON.stringify(toRecording(gateScenario(), 'tab 1'));
    expect(shown(foldTimeline(imported(json)))).toEqual(shown(timeline));
    const har = toHar(timeline);
    expect(har.log._retry.lanes[0]?.gate?.[3]).toEqual({
      type: 'retry-released',
      t: 1400,
      requestId: 'g1',
      attempt: 2,
      reason: 'probe',
      waited: 280,
    });
    const text = JSON.stringify(har);
    expect(parseImport(text)).toMatchObject({ format: 'har', skipped: 0 });
    const fromHar = foldTimeline(imported(text));
    expect(shown(fromHar)).toEqual(shown(timeline));
    expect([fromHar.start, fromHar.end]).toEqual([timeline.start, timeline.end]);
  });

  it('takes only parks and releases from a HAR lane’s gate list', () => {
    const har = toHar(foldTimeline(gateScenario())) as unknown as {
      log: { _retry: { lanes: { gate: unknown[] }[] } };
    };
    const lane = har.log._retry.lanes[0];
    lane?.gate.push(
      { type: 'request-start', t: 1, requestId: 'smuggled', client: 'fetch' },
      { type: 'retry-released', t: 2, requestId: 'bad', attempt: 2, reason: 'teleport', waited: 1 },
      { type: 'retry-parked', t: 3, attempt: 2, failures: 3 },
      'not a mark',
    );
    const fromHar = foldTimeline(imported(JSON.stringify(har)));
    expect(fromHar.rows.map((row) => row.requestId)).toEqual(['g1', 'g2', 'g3', 'g4']);
    expect(fromHar.lanes[0]?.gate).toHaveLength(10);
  });

  it('keeps partial rows through HAR: a dropped start, a running attempt, a wait no attempt followed', () => {
    const entries = [
      ...scenario().slice(3, 6), // r1 without its start: attempt 1's end, a budget sample, a wait
      ev('r4', { type: 'request-start', t: 5000, client: 'retry', operation: 'sync' }),
      ev('r4', { type: 'attempt-start', t: 5001, attempt: 1 }),
      ev('r5', {
        type: 'retry-scheduled',
        t: 6000,
        attempt: 2,
        retry: 1,
        delay: 10,
        reason: 'rate-limit-reset',
        strategy: 'custom',
        jitter: 'none',
        raw: Number.POSITIVE_INFINITY,
        capped: 10,
        hint: { source: 'x-ratelimit-reset', delay: 10 },
      }),
      ev('r5', { type: 'guard-wait', t: 6015, attempt: 2, guard: 'pacing', key: API, waited: 5 }),
    ];
    const timeline = foldTimeline(entries);
    const text = JSON.stringify(toHar(timeline));
    expect(shown(foldTimeline(imported(text)))).toEqual(shown(timeline));
  });

  it('keeps two frames’ requests under one id apart, through JSON and through HAR', () => {
    const timeline = foldTimeline(crossFrameScenario());
    const outcomes = (t: Timeline) => t.rows.map((row) => [row.source, row.requestId, row.outcome]);
    const expected = [
      [ORIGIN, 'shared', 'exhausted'],
      [FRAME_ORIGIN, 'shared', 'success'],
    ];
    expect(outcomes(timeline)).toEqual(expected);
    const json = JSON.stringify(toRecording(crossFrameScenario(), 'tab 1'));
    expect(shown(foldTimeline(imported(json)))).toEqual(shown(timeline));
    const har = JSON.stringify(toHar(timeline));
    expect(outcomes(foldTimeline(imported(har)))).toEqual(expected);
    expect(shown(foldTimeline(imported(har)))).toEqual(shown(timeline));
  });

  it('reads exports older than frame origins: a HAR without source, entries without origin', () => {
    const timeline = foldTimeline(scenario());
    const har = toHar(timeline) as unknown as {
      log: { entries: { _retry: { request: { source?: string } } }[]; _retry: Record<string, unknown[]> };
    };
    for (const entry of har.log.entries) delete entry._retry.request.source;
    for (const key of ['rows', 'lanes'] as const) {
      for (const item of har.log._retry[key] as { source?: string }[]) delete item.source;
    }
    const fromHar = foldTimeline(imported(JSON.stringify(har)));
    expect(fromHar.rows.map((row) => [row.requestId, row.source, row.attempts.length, row.outcome])).toEqual(
      timeline.rows.map((row) => [row.requestId, 'import', row.attempts.length, row.outcome]),
    );
    expect(fromHar.lanes.map((lane) => [lane.key, lane.source, lane.breaker.length])).toEqual([
      [API, 'import', 2],
    ]);

    const entries = scenario().map((entry) => {
      if (entry.type !== 'event') return entry;
      const { origin: _, ...rest } = entry;
      return rest;
    });
    const recording = JSON.stringify({ format: 'retryline-recording', version: 1, entries });
    const fromJson = foldTimeline(imported(recording));
    expect(fromJson.rows.map((row) => [row.requestId, row.source])).toEqual([
      ['r1', 'import'],
      ['r2', 'import'],
      ['r3', 'import'],
    ]);
    expect(fromJson.rows.map((row) => row.attempts)).toEqual(timeline.rows.map((row) => row.attempts));
  });

  it('reads a HAR that has only the basic _retry fields', () => {
    const har = {
      log: {
        version: '1.2',
        entries: [
          {
            startedDateTime: new Date(1000).toISOString(),
            time: 20,
            request: { method: 'GET', url: `${API}/x`, headers: [] },
            response: { status: 503, headers: [{ name: 'Retry-After', value: '1' }] },
            _retry: { requestId: 'q', attempt: 1, attempts: 2, outcome: 'success', client: 'fetch' },
          },
          {
            startedDateTime: new Date(2020).toISOString(),
            time: 10,
            request: { method: 'GET', url: `${API}/x`, headers: [] },
            response: { status: 200, headers: [] },
            _retry: {
              requestId: 'q',
              attempt: 2,
              attempts: 2,
              outcome: 'success',
              client: 'fetch',
              waitBefore: { delay: 1000, reason: 'retry-after', strategy: 'exponential', jitter: 'full' },
            },
          },
        ],
      },
    };
    const [row] = foldTimeline(imported(JSON.stringify(har))).rows;
    expect(row).toMatchObject({
      requestId: 'q',
      client: 'fetch',
      method: 'GET',
      outcome: 'success',
      status: 200,
    });
    expect(row?.attempts.map((a) => [a.n, a.status, a.outcome])).toEqual([
      [1, 503, 'retry'],
      [2, 200, 'success'],
    ]);
    expect(row?.attempts[0]?.responseHeaders).toEqual({ 'retry-after': '1' });
    expect(row?.waits[0]).toMatchObject({ afterAttempt: 1, delay: 1000, start: 1020, raw: 1000 });
  });
});

describe('parseImport', () => {
  it('reads a bare array of events or entries', () => {
    const events = scenario().flatMap((e) => (e.type === 'event' ? [e.event] : []));
    const result = parseImport(JSON.stringify(events));
    expect(result).toMatchObject({ format: 'events', skipped: 0 });
    expect(foldTimeline(imported(JSON.stringify(events))).rows.map((r) => r.requestId)).toEqual([
      'r1',
      'r2',
      'r3',
    ]);
  });

  it.each([
    ['not JSON', 'not json {', /not JSON/],
    ['a number', '42', /got a JSON value/],
    ['null', 'null', /got a JSON value/],
    ['an unrelated object', '{"hello":"world"}', /found neither/],
    ['another recording version', '{"format":"retryline-recording","version":2,"entries":[]}', /version 2/],
    ['a recording without entries', '{"format":"retryline-recording","version":1}', /no entries/],
    ['a HAR without _retry', '{"log":{"version":"1.2","entries":[{"request":{}}]}}', /no Retryline data/],
    ['only invalid entries', '[{"type":"event","event":{"v":1}}, 3, "x"]', /None of the file's 3 entries/],
  ])('rejects %s with a message', (_, text, message) => {
    const result = parseImport(text);
    expect(result).toHaveProperty('error');
    expect('error' in result && result.error).toMatch(message);
  });

  it('rejects a file over the size cap before parsing it', () => {
    const result = parseImport(' '.repeat(64 * 1024 * 1024 + 1));
    expect('error' in result && result.error).toMatch(/too large/);
  });

  it('skips and counts invalid entries, keeping the valid ones', () => {
    const entries: unknown[] = [
      ...scenario().slice(0, 3),
      {
        type: 'event',
        event: { v: 2, type: 'request-start', requestId: 'z', t: 1, client: 'x' },
        origin: ORIGIN,
      },
      {
        type: 'event',
        event: { v: 1, type: 'attempt-start', requestId: 'z', t: 'soon', attempt: 1 },
        origin: ORIGIN,
      },
      { type: 'event', event: { v: 1, type: 'no-such-event', requestId: 'z', t: 1 }, origin: ORIGIN },
      {
        type: 'event',
        event: { v: 1, type: 'attempt-start', requestId: 'z', t: 1e300, attempt: 1 },
        origin: ORIGIN,
      },
      { type: 'navigation', url: 42, t: 1 },
      'string',
      null,
    ];
    const result = parseImport(JSON.stringify({ format: 'retryline-recording', version: 1, entries }));
    expect(result).toMatchObject({ skipped: 7 });
    expect('entries' in result && result.entries).toHaveLength(3);
  });

  it('keeps imported data as inert text: no prototype pollution, no code run', () => {
    // Raw JSON: JSON.parse makes "__proto__" an own property, which a careless copy would turn into a prototype.
    const text = `[
      {"v":1,"type":"request-start","requestId":"evil","t":1,"client":"<script>alert(1)</script>",
       "url":"javascript:alert(1)","__proto__":{"polluted":true}},
      {"v":1,"type":"attempt-start","requestId":"evil","t":2,"attempt":1,
       "headers":{"__proto__":{"polluted":true},"ok":"y"}}
    ]`;
    const rows = foldTimeline(imported(text)).rows;
    expect(rows[0]?.client).toBe('<script>alert(1)</script>');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(rows[0]?.attempts[0]?.requestHeaders)).toBe(Object.prototype);
    expect(rows[0]?.attempts[0]?.requestHeaders).toEqual({ ok: 'y' });
    expect((rows[0] as unknown as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('removes credentials from imported URLs', () => {
    const text = JSON.stringify([
      {
        v: 1,
        type: 'request-start',
        requestId: 'a',
        t: 1,
        client: 'fetch',
        url: 'https://user:pw@api.example/x',
      },
    ]);
    expect(foldTimeline(imported(text)).rows[0]?.url).toBe('https://api.example/x');
  });

  it('masks query values of imported navigation URLs, as core masks request URLs', () => {
    const nav = {
      type: 'navigation',
      url: 'https://u:p@shop.example/cb?code=s3cret&state=x#token=t0k',
      t: 5,
    };
    const fromJson = imported(JSON.stringify(toRecording([nav as TimelineEntry], 'old')));
    expect(fromJson).toEqual([
      { type: 'navigation', url: 'https://shop.example/cb?code=***&state=***', t: 5 },
    ]);
    const har = toHar(foldTimeline(scenario()));
    const hostile = {
      log: {
        ...har.log,
        _retry: { ...har.log._retry, navigations: [{ url: nav.url, t: 5, beforeRow: 0 }] },
      },
    };
    const fromHar = imported(JSON.stringify(hostile)).filter((e) => e.type === 'navigation');
    expect(fromHar).toEqual([
      { type: 'navigation', url: 'https://shop.example/cb?code=***&state=***', t: 5 },
    ]);
  });
});

describe('navigation URLs on export', () => {
  it('leave with their query values masked, in JSON and in HAR', () => {
    const entries: TimelineEntry[] = [
      { type: 'navigation', url: 'https://shop.example/cb?code=s3cret&state=xyz', t: 1 },
      ...scenario(),
    ];
    const json = JSON.stringify(toRecording(entries, 'tab'));
    const har = JSON.stringify(toHar(foldTimeline(entries)));
    for (const text of [json, har]) {
      expect(text).not.toMatch(/s3cret|xyz/);
      expect(text).toContain('https://shop.example/cb?code=***&state=***');
    }
  });
});

describe('HAR of a retry() that is not an HTTP request', () => {
  const entries = [
    ev('op', { type: 'request-start', t: 1000, client: 'retry', operation: 'sync ledger/eu' }),
    ev('op', { type: 'attempt-start', t: 1000, attempt: 1 }),
    ev('op', {
      type: 'attempt-end',
      t: 1010,
      attempt: 1,
      outcome: 'retry',
      duration: 10,
      error: { name: 'Error', message: 'busy' },
    }),
    ev('op', {
      type: 'retry-scheduled',
      t: 1010,
      attempt: 2,
      retry: 1,
      delay: 5,
      reason: 'backoff',
      strategy: 'constant',
      jitter: 'none',
      raw: 5,
      capped: 5,
    }),
    ev('op', { type: 'attempt-start', t: 1015, attempt: 2 }),
    ev('op', { type: 'attempt-end', t: 1020, attempt: 2, outcome: 'success', duration: 5 }),
    ev('op', { type: 'request-end', t: 1020, outcome: 'success', attempts: 2, totalDelay: 5, duration: 20 }),
    ev('anon', { type: 'request-start', t: 2000, client: 'retry' }),
    ev('anon', { type: 'attempt-start', t: 2000, attempt: 1 }),
  ];
  const timeline = foldTimeline(entries);
  const har = toHar(timeline);

  it('gets a stable, clearly synthetic absolute URL and a method', () => {
    const requests = har.log.entries.map((e) => e.request);
    expect(requests.map((r) => [r.method, r.url])).toEqual([
      ['RETRY', 'https://retryline.invalid/operation/sync%20ledger%2Feu'],
      ['RETRY', 'https://retryline.invalid/operation/sync%20ledger%2Feu'],
      ['RETRY', 'https://retryline.invalid/operation'],
    ]);
    for (const { url } of requests) expect(new URL(url).href).toBe(url);
    expect(toHar(foldTimeline(entries)).log.entries.map((e) => e.request.url)).toEqual(
      requests.map((r) => r.url),
    );
  });

  it('imports back to the same rows: no method, no URL, the operation', () => {
    expect(shown(foldTimeline(imported(JSON.stringify(har))))).toEqual(shown(timeline));
    // A HAR with only the basic _retry fields reads the operation from the synthetic URL.
    const basic: Har = {
      log: {
        ...har.log,
        entries: har.log.entries.map((entry) => {
          const { request: _summary, ...retry } = entry._retry;
          return { ...entry, _retry: retry as Har['log']['entries'][number]['_retry'] };
        }),
      },
    };
    const rows = foldTimeline(imported(JSON.stringify(basic))).rows;
    expect(rows.map((r) => [r.requestId, r.method, r.url, r.operation, r.path])).toEqual([
      ['op', '', '', 'sync ledger/eu', 'sync ledger/eu'],
      ['anon', '', '', undefined, ''],
    ]);
  });
});

describe('a request the extension cut', () => {
  it('keeps its mark through JSON and HAR', () => {
    const entries: TimelineEntry[] = [
      ...scenario(),
      { ...ev('cut', { type: 'attempt-start', t: 9000, attempt: 1 }), truncated: { dropped: 0 } },
      {
        ...ev('cut', {
          type: 'request-end',
          t: 9100,
          outcome: 'exhausted',
          attempts: 700,
          totalDelay: 0,
          duration: 100,
        }),
        truncated: { dropped: 1234 },
      },
    ];
    const timeline = foldTimeline(entries);
    expect(timeline.rows.at(-1)?.truncated).toEqual({ dropped: 1234 });
    for (const text of [JSON.stringify(toRecording(entries, 'x')), JSON.stringify(toHar(timeline))]) {
      expect(shown(foldTimeline(imported(text)))).toEqual(shown(timeline));
    }
  });
});

describe('attempts answered by a fault injected from the panel', () => {
  const timeline = foldTimeline(injectedScenario());
  const marks = (t: Timeline) =>
    t.rows.map((row) => [row.requestId, row.injected, row.attempts.map((a) => a.injected ?? false)]);
  const expected = [
    ['f1', 2, [true, true, false]],
    ['f2', 0, [false]],
  ];

  it('are marked in the HAR: each such attempt’s entry, and the count in its request’s summary', () => {
    const har = toHar(timeline);
    expect(har.log.entries.map((entry) => [entry._retry.requestId, entry._retry.injected])).toEqual([
      ['f1', true],
      ['f1', true],
      ['f1', undefined],
      ['f2', undefined],
    ]);
    expect(har.log.entries[2]?._retry).not.toHaveProperty('injected');
    expect(har.log.entries.map((entry) => entry._retry.request.injected)).toEqual([2, 2, 2, undefined]);
    // HAR's own comment, for tools that know nothing of `_retry`.
    expect(har.log.entries.map((entry) => entry.comment)).toEqual([
      INJECTED_COMMENT,
      INJECTED_COMMENT,
      undefined,
      undefined,
    ]);
    expect(
      toHar(foldTimeline(scenario())).log.entries.some((entry) => '_retry' in entry && entry._retry.injected),
    ).toBe(false);
  });

  it('stay marked through HAR export and import', () => {
    const text = JSON.stringify(toHar(timeline));
    expect(parseImport(text)).toMatchObject({ format: 'har', skipped: 0 });
    const fromHar = foldTimeline(imported(text));
    expect(marks(fromHar)).toEqual(expected);
    expect(shown(fromHar)).toEqual(shown(timeline));
  });

  it('stay marked through a JSON recording, whose events keep the mark as core sent it', () => {
    const text = JSON.stringify(toRecording(injectedScenario(), 'tab 1'));
    const entries = imported(text);
    const flagged = entries.flatMap((entry) =>
      entry.type === 'event' && 'injected' in entry.event ? [[entry.event.type, entry.event.injected]] : [],
    );
    expect(flagged).toEqual([
      ['attempt-start', true],
      ['attempt-end', true],
      ['attempt-end', true],
    ]);
    const fromJson = foldTimeline(entries);
    expect(marks(fromJson)).toEqual(expected);
    expect(shown(fromJson)).toEqual(shown(timeline));
  });

  it('fold back from a row’s events with the mark on both of each such attempt’s events', () => {
    const [f1] = timeline.rows;
    if (!f1) throw new Error('fixture');
    const injected = rowEvents(f1).filter((event) => 'injected' in event && event.injected);
    expect(injected.map((event) => [event.type, 'attempt' in event ? event.attempt : 0])).toEqual([
      ['attempt-start', 1],
      ['attempt-end', 1],
      ['attempt-start', 2],
      ['attempt-end', 2],
    ]);
  });

  it('skip on import an attempt whose mark is anything but true, as the schema skips such an event', () => {
    const har = JSON.parse(JSON.stringify(toHar(timeline)));
    har.log.entries[0]._retry.injected = 'yes';
    const result = parseImport(JSON.stringify(har));
    expect(result).toMatchObject({ format: 'har', skipped: 1 });
    const [f1] = foldTimeline(imported(JSON.stringify(har))).rows;
    expect(f1?.attempts.map((a) => [a.n, a.injected ?? false])).toEqual([
      [2, true],
      [3, false],
    ]);
  });
});

describe('attempts sent to endpoints, and their hedges', () => {
  const timeline = foldTimeline(hedgeScenario());
  /** Each attempt and hedge of each row: its number, whether a hedge, its endpoint, who answered it. */
  const sent = (t: Timeline) =>
    t.rows.map((row) => [
      row.requestId,
      [...row.attempts, ...row.hedges].map((a) => [a.n, a.hedge ?? false, a.endpoint, a.answeredBy]),
    ]);

  it('give a hedge its own HAR entry after its attempt’s, not counted among the attempts', () => {
    const entries = toHar(timeline).log.entries;
    expect(
      entries.map(({ _retry: r }) => [r.requestId, r.attempt, r.hedge ?? false, r.endpoint, r.attempts]),
    ).toEqual([
      ['h1', 1, false, EU, 2],
      ['h1', 2, false, US, 2],
      ['h1', 2, true, EU, 2],
      ['h2', 1, false, US, 1],
      ['h2', 1, true, EU, 1],
      ['h3', 1, false, undefined, 1],
    ]);
    expect(entries[5]?._retry).not.toHaveProperty('endpoint');
  });

  it('say in the HAR which attempt its hedge answered for, and which entries are hedges', () => {
    const entries = toHar(timeline).log.entries;
    expect(entries.map((entry) => entry._retry.answeredBy)).toEqual([
      undefined,
      'hedge',
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect(entries.map((entry) => entry.comment)).toEqual([
      undefined,
      ANSWERED_BY_HEDGE_COMMENT,
      HEDGE_COMMENT,
      undefined,
      HEDGE_COMMENT,
      undefined,
    ]);
    // The wait before attempt 2 is told on its entry, not again on its hedge's.
    expect(entries[1]?._retry.waitBefore?.delay).toBe(100);
    expect(entries[2]?._retry).not.toHaveProperty('waitBefore');
    expect(entries[4]?._retry).toMatchObject({ attemptOutcome: 'aborted', start: 6350, end: 6372 });
  });

  it('survive HAR export and import, and a JSON recording', () => {
    const har = JSON.stringify(toHar(timeline));
    expect(parseImport(har)).toMatchObject({ format: 'har', skipped: 0 });
    const fromHar = foldTimeline(imported(har));
    expect(sent(fromHar)).toEqual(sent(timeline));
    expect(shown(fromHar)).toEqual(shown(timeline));
    const fromJson = foldTimeline(imported(JSON.stringify(toRecording(hedgeScenario(), 'tab 1'))));
    expect(shown(fromJson)).toEqual(shown(timeline));
  });

  it('fold back from a row’s events, each hedge as its own pair beside its attempt', () => {
    const [h1] = timeline.rows;
    if (!h1) throw new Error('fixture');
    expect(
      foldTimeline(rowEvents(h1).map((event) => ({ type: 'event', event, origin: ORIGIN }))).rows,
    ).toEqual([h1]);
    const pairs = rowEvents(h1).flatMap((event) =>
      event.type === 'attempt-start' || event.type === 'attempt-end'
        ? [[event.type, event.attempt, event.hedge ?? false, event.endpoint]]
        : [],
    );
    expect(pairs).toEqual([
      ['attempt-start', 1, false, EU],
      ['attempt-end', 1, false, EU],
      ['attempt-start', 2, false, US],
      ['attempt-end', 2, false, US],
      ['attempt-start', 2, true, EU],
      ['attempt-end', 2, true, EU],
    ]);
  });

  it.each([
    ['an endpoint that is no string', { endpoint: { toString: 'https://evil.example' } }],
    ['a hedge mark that is no true', { hedge: 'yes' }],
    ['an answerer core does not name', { answeredBy: '<img src=x onerror=alert(1)>' }],
  ])('skip on import a HAR entry’s events with %s, as the schema skips such an event', (_, patch) => {
    const har = JSON.parse(JSON.stringify(toHar(timeline)));
    Object.assign(har.log.entries[1]._retry, patch);
    const text = JSON.stringify(har);
    expect(parseImport(text)).toMatchObject({ format: 'har', skipped: 1 });
    expect(text).toContain('_retry');
    const [h1] = foldTimeline(imported(text)).rows;
    expect(JSON.stringify(h1)).not.toContain('evil');
    expect(JSON.stringify(h1)).not.toContain('onerror');
  });

  it('cut an imported endpoint as a URL is cut, and strip its credentials', () => {
    const har = JSON.parse(JSON.stringify(toHar(timeline)));
    har.log.entries[0]._retry.endpoint = `https://svc:s3cret@eu.api.example/${'a'.repeat(5000)}`;
    const [h1] = foldTimeline(imported(JSON.stringify(har))).rows;
    const endpoint = h1?.attempts[0]?.endpoint ?? '';
    expect(endpoint).toHaveLength(2048);
    expect(endpoint.startsWith('https://eu.api.example/aaa')).toBe(true);
    expect(endpoint).not.toContain('s3cret');
  });
});
