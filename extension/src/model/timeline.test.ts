import { describe, expect, it } from 'vitest';
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
import { parkedSpans } from './gate-lane';
import {
  appendTimeline,
  attemptClass,
  attemptsAndHedges,
  emptyTimeline,
  foldTimeline,
  type RequestRow,
} from './timeline';

describe('foldTimeline', () => {
  it('makes one row per request, in the order requests first appeared', () => {
    const timeline = foldTimeline(scenario());
    expect(timeline.rows.map((row) => row.requestId)).toEqual(['r1', 'r2', 'r3']);
    expect(timeline.rows.map((row) => row.index)).toEqual([0, 1, 2]);
  });

  it('collects every attempt of a request with its status, phase, error and headers', () => {
    const [r1] = foldTimeline(scenario()).rows;
    expect(r1).toMatchObject({
      client: 'fetch',
      method: 'GET',
      url: `${API}/orders?page=*`,
      origin: API,
      path: '/orders?page=*',
      source: ORIGIN,
      complete: true,
      start: 1000,
      end: 3640,
      outcome: 'success',
      status: 200,
      totalDelay: 2412,
    });
    expect(r1?.attempts).toEqual([
      {
        n: 1,
        start: 1100,
        end: 1150,
        outcome: 'retry',
        status: 503,
        phase: 'response',
        requestHeaders: { accept: 'application/json', authorization: '[redacted]' },
        responseHeaders: { 'retry-after': '2', 'set-cookie': '[redacted]' },
      },
      {
        n: 2,
        start: 3150,
        end: 3180,
        outcome: 'error',
        phase: 'unknown',
        error: { name: 'TypeError', message: 'fetch failed', code: 'ECONNRESET' },
      },
      { n: 3, start: 3592, end: 3640, outcome: 'success', status: 200, phase: 'response' },
    ]);
  });

  it('records each wait with how it was computed, starting when it was scheduled', () => {
    const [r1] = foldTimeline(scenario()).rows;
    expect(r1?.waits).toEqual([
      {
        afterAttempt: 1,
        start: 1150,
        delay: 2000,
        reason: 'retry-after',
        strategy: 'exponential',
        jitter: 'full',
        raw: 100,
        capped: 100,
        hint: { source: 'retry-after', delay: 2000 },
      },
      {
        afterAttempt: 2,
        start: 3180,
        delay: 412,
        reason: 'backoff',
        strategy: 'exponential',
        jitter: 'full',
        raw: 800,
        capped: 800,
      },
    ]);
  });

  it('draws a guard wait ending where the attempt it held back started', () => {
    const [r1] = foldTimeline(scenario()).rows;
    expect(r1?.guardWaits).toEqual([
      { attempt: 1, guard: 'limiter', key: API, waited: 100, t: 1099, end: 1100, start: 1000 },
    ]);
  });

  it('keeps a request refused before any attempt, with its outcome and error', () => {
    const r2 = foldTimeline(scenario()).rows[1];
    expect(r2).toMatchObject({
      method: 'POST',
      outcome: 'breaker-open',
      attempts: [],
      start: 3700,
      end: 3701,
    });
    expect(r2?.error?.name).toBe('CircuitOpenError');
    expect(r2?.status).toBeUndefined();
  });

  it('turns navigations into separators before the next request', () => {
    const timeline = foldTimeline(scenario());
    expect(timeline.navigations).toEqual([{ url: `${ORIGIN}/checkout`, t: 3800, beforeRow: 2 }]);
  });

  it('keeps breaker transitions and budget samples per key, in time order', () => {
    const timeline = foldTimeline(scenario());
    expect(timeline.lanes).toEqual([
      {
        key: API,
        source: ORIGIN,
        breaker: [
          { key: API, t: 3700, from: 'closed', to: 'open' },
          { key: API, t: 8700, from: 'open', to: 'half-open' },
        ],
        budget: [
          { key: API, t: 1150, remaining: 9, allowed: true },
          { key: API, t: 3180, remaining: 8, allowed: true },
        ],
        gate: [],
        probes: [],
      },
    ]);
  });

  it('spans the earliest and latest times, including the start of a guard wait', () => {
    const timeline = foldTimeline(scenario());
    expect(timeline.start).toBe(999);
    expect(timeline.end).toBe(8700);
    expect(timeline.entryCount).toBe(scenario().length);
  });

  it('shows a request whose start the ring dropped, inferring its start', () => {
    const [row] = foldTimeline(scenario().slice(3)).rows;
    expect(row).toMatchObject({
      requestId: 'r1',
      complete: false,
      client: 'unknown',
      method: '',
      url: '',
      start: 1000, // request-end (3640) minus the request's duration (2640)
      outcome: 'success',
    });
    expect(row?.attempts.map((a) => a.n)).toEqual([1, 2, 3]);
    expect(row?.attempts[0]).toMatchObject({ start: 1100, end: 1150 });
    expect(row?.attempts[0]?.requestHeaders).toBeUndefined();
  });

  it('infers a running request’s start from its earliest attempt when its start was dropped', () => {
    const [row] = foldTimeline(scenario().slice(3, 6)).rows;
    expect(row?.start).toBe(1100); // attempt 1's end (1150) minus its duration (50)
    expect(row?.outcome).toBe('pending');
  });

  it('folds events that arrive out of order to the same row', () => {
    const entries = scenario().filter((e) => e.type === 'event' && e.event.requestId === 'r1');
    const shuffled = [...entries].reverse();
    expect(foldTimeline(shuffled).rows).toEqual(foldTimeline(entries).rows);
  });

  it('shows a running request as pending, with the latest attempt status', () => {
    const entries = scenario().slice(0, 6);
    const [row] = foldTimeline(entries).rows;
    expect(row?.outcome).toBe('pending');
    expect(row?.status).toBe(503);
    expect(row?.end).toBeUndefined();
    expect(row?.last).toBe(3150); // the end of the scheduled Retry-After wait
  });

  it('keeps the attempt pending until its end arrives', () => {
    const [row] = foldTimeline([ev('x', { type: 'attempt-start', t: 5, attempt: 1 })]).rows;
    expect(row?.attempts).toEqual([{ n: 1, start: 5, outcome: 'pending' }]);
  });

  it('replaces a repeated event instead of duplicating its attempt or wait', () => {
    const entries = scenario();
    expect(foldTimeline([...entries, ...entries]).rows).toEqual(foldTimeline(entries).rows);
  });

  it('treats an empty header map as none', () => {
    const [row] = foldTimeline([ev('x', { type: 'attempt-start', t: 5, attempt: 1, headers: {} })]).rows;
    expect(row?.attempts[0]).not.toHaveProperty('requestHeaders');
  });
});

describe('attempts answered by a fault injected from the panel', () => {
  it('are marked from either of their events, and counted on the row', () => {
    const [f1, f2] = foldTimeline(injectedScenario()).rows;
    // Attempt 1: both events marked; attempt 2: only its end (its start was not recorded).
    expect(f1?.attempts.map((attempt) => attempt.injected)).toEqual([true, true, undefined]);
    expect(f1?.attempts[2]).not.toHaveProperty('injected');
    expect(f1?.injected).toBe(2);
    expect(f2?.injected).toBe(0);
    expect(foldTimeline(scenario()).rows.map((row) => row.injected)).toEqual([0, 0, 0]);
  });

  it('keep the mark of an attempt-start whose end carries none, in any order and across appends', () => {
    const start = ev('x', { type: 'attempt-start', t: 5, attempt: 1, injected: true });
    const end = ev('x', {
      type: 'attempt-end',
      t: 6,
      attempt: 1,
      outcome: 'success',
      duration: 1,
      status: 200,
    });
    const expected = { n: 1, start: 5, end: 6, outcome: 'success', status: 200, injected: true };
    expect(foldTimeline([start, end]).rows[0]?.attempts).toEqual([expected]);
    expect(foldTimeline([end, start]).rows[0]?.attempts).toEqual([expected]);
    const appended = appendTimeline(foldTimeline([start]), [end]);
    expect(appended.rows[0]?.attempts).toEqual([expected]);
    expect(appended.rows[0]?.injected).toBe(1);
  });

  it('fold the same one event at a time as all at once', () => {
    const entries = injectedScenario();
    const stepwise = entries.reduce((timeline, entry) => appendTimeline(timeline, [entry]), emptyTimeline());
    expect(stepwise.rows).toEqual(foldTimeline(entries).rows);
  });
});

describe('the recovery gate in its key’s lane', () => {
  it('keeps the parks and releases of the key’s retries, and each probe with how its attempt ended', () => {
    const [lane, ...others] = foldTimeline(gateScenario()).lanes;
    expect(others).toEqual([]);
    expect(lane).toMatchObject({ key: API, source: ORIGIN, breaker: [], budget: [] });
    expect(lane?.gate.map((mark) => [mark.type, mark.requestId, mark.attempt, mark.t])).toEqual([
      ['retry-parked', 'g1', 2, 1120],
      ['retry-parked', 'g2', 2, 1122],
      ['retry-parked', 'g3', 2, 1124],
      ['retry-released', 'g1', 2, 1400],
      ['retry-parked', 'g1', 3, 1520],
      ['retry-released', 'g2', 2, 1700],
      ['retry-released', 'g3', 2, 1730],
      ['retry-released', 'g1', 3, 1760],
      ['retry-parked', 'g4', 2, 3120],
      ['retry-released', 'g4', 2, 8120],
    ]);
    expect(parkedSpans(lane?.gate ?? [])).toEqual([
      { from: 1120, to: 1760, retries: 4, most: 3 },
      { from: 3120, to: 8120, retries: 1, most: 1 },
    ]);
    expect(lane?.probes).toEqual([
      { requestId: 'g1', attempt: 2, t: 1400, end: 1420, result: 'failed', status: 503 },
      { requestId: 'g2', attempt: 2, t: 1700, end: 1720, result: 'recovered', status: 200 },
    ]);
  });

  it('still draws each parked retry as a wait in its request’s row', () => {
    const g1 = foldTimeline(gateScenario()).rows.find((row) => row.requestId === 'g1');
    expect(g1?.guardWaits.map((wait) => [wait.guard, wait.attempt, wait.start, wait.end])).toEqual([
      ['parked', 2, 1120, 1400],
      ['parked', 3, 1520, 1760],
    ]);
  });

  it('gives a probe its result when the attempt ends in a later append, rebuilding only that lane', () => {
    const entries = gateScenario();
    const probeEnd = entries.findIndex(
      (e) =>
        e.type === 'event' &&
        e.event.type === 'attempt-end' &&
        e.event.requestId === 'g2' &&
        e.event.attempt === 2,
    );
    const other = ev('cdn', {
      type: 'budget',
      t: 900,
      key: 'https://cdn.example',
      remaining: 5,
      allowed: true,
    });
    const before = foldTimeline([other, ...entries.slice(0, probeEnd)]);
    expect(before.lanes.map((lane) => lane.key)).toEqual([API, 'https://cdn.example']);
    expect(before.lanes[0]?.probes.map((probe) => probe.result)).toEqual(['failed', 'pending']);
    const after = appendTimeline(before, entries.slice(probeEnd, probeEnd + 1));
    expect(after.lanes[0]?.probes.map((probe) => probe.result)).toEqual(['failed', 'recovered']);
    expect(after.lanes[0]).not.toBe(before.lanes[0]);
    expect(after.lanes[1]).toBe(before.lanes[1]);
    // The same from a branch, whose lookups are rebuilt from the timeline it appends to.
    const branch = appendTimeline(before, entries.slice(probeEnd, probeEnd + 1));
    expect(branch.lanes[0]?.probes.map((probe) => probe.result)).toEqual(['failed', 'recovered']);
  });

  it('gives the same lane one entry at a time, and after a branch, as folding everything at once', () => {
    const entries = gateScenario();
    const whole = foldTimeline(entries);
    let timeline = emptyTimeline();
    for (const entry of entries) timeline = appendTimeline(timeline, [entry]);
    expect(timeline.lanes).toEqual(whole.lanes);
    expect(timeline.rows).toEqual(whole.rows);
    // An append to an older timeline rebuilds its lookups, the probes' among them.
    const half = foldTimeline(entries.slice(0, 20));
    appendTimeline(half, entries.slice(20, 25));
    expect(appendTimeline(half, entries.slice(20)).lanes).toEqual(whole.lanes);
  });

  it('keeps each frame’s gate in its own lane: a frame’s success is no probe of the page’s key', () => {
    const fromFrame = gateScenario().map((entry) =>
      entry.type === 'event' && entry.event.requestId === 'g2' && entry.event.type !== 'retry-released'
        ? { ...entry, origin: FRAME_ORIGIN }
        : entry,
    );
    const lane = foldTimeline(fromFrame).lanes.find((l) => l.source === ORIGIN);
    // The page's g2 probe has no attempt of the page's own: the frame's 200 under that id is not it.
    expect(lane?.probes.map((probe) => [probe.requestId, probe.result])).toEqual([
      ['g1', 'failed'],
      ['g2', 'pending'],
    ]);
  });
});

describe('events of two frames under one request id', () => {
  const brief = (timeline: ReturnType<typeof foldTimeline>) =>
    timeline.rows.map((row) => ({
      source: row.source,
      requestId: row.requestId,
      outcome: row.outcome,
      status: row.status,
      attempts: row.attempts.map((a) => [a.n, a.outcome, a.status]),
    }));
  const expected = [
    { source: ORIGIN, requestId: 'shared', outcome: 'exhausted', status: 503, attempts: [[1, 'error', 503]] },
    {
      source: FRAME_ORIGIN,
      requestId: 'shared',
      outcome: 'success',
      status: 200,
      attempts: [[1, 'success', 200]],
    },
  ];

  it('make a row per frame origin: the other frame’s success leaves the page’s failed row failed', () => {
    const timeline = foldTimeline(crossFrameScenario());
    expect(brief(timeline)).toEqual(expected);
    const [page, frame] = timeline.rows;
    expect(page?.key).not.toBe(frame?.key);
    expect(page).toMatchObject({ method: 'POST', url: `${API}/pay`, complete: true, end: 1050 });
    // The frame sent no request-start: its row is its own partial one, not the page's completed.
    expect(frame).toMatchObject({ complete: false, method: '', url: '', end: 1100 });
  });

  it('do the same when they arrive one at a time, as a live tab sends them', () => {
    let timeline = emptyTimeline();
    for (const entry of crossFrameScenario()) timeline = appendTimeline(timeline, [entry]);
    expect(brief(timeline)).toEqual(expected);
    expect(timeline.rows).toEqual(foldTimeline(crossFrameScenario()).rows);
  });

  it('keep each frame’s breaker in a lane of its own', () => {
    const lanes = foldTimeline(crossFrameScenario()).lanes;
    expect(lanes.map((lane) => [lane.key, lane.source, lane.breaker.map((b) => b.to)])).toEqual([
      [API, ORIGIN, ['open']],
      [API, FRAME_ORIGIN, ['closed']],
    ]);
  });

  it('cannot be confused by an origin and an id that run into each other', () => {
    const entry = ev('b', { type: 'attempt-start', t: 1, attempt: 1 });
    const other = ev('a b', { type: 'attempt-start', t: 1, attempt: 1 });
    const rows = foldTimeline([
      { ...entry, origin: 'x a' },
      { ...other, origin: 'x' },
    ]).rows;
    expect(rows).toHaveLength(2);
  });
});

describe('appendTimeline', () => {
  it('gives the same rows, lanes and separators as folding everything at once', () => {
    const entries = scenario();
    let timeline = emptyTimeline();
    for (let i = 0; i < entries.length; i += 3) timeline = appendTimeline(timeline, entries.slice(i, i + 3));
    const whole = foldTimeline(entries);
    expect(timeline.rows).toEqual(whole.rows);
    expect(timeline.lanes).toEqual(whole.lanes);
    expect(timeline.navigations).toEqual(whole.navigations);
    expect([timeline.start, timeline.end, timeline.entryCount]).toEqual([
      whole.start,
      whole.end,
      whole.entryCount,
    ]);
  });

  it('leaves the timeline it was given unchanged', () => {
    const before = foldTimeline(scenario().slice(0, 5));
    const snapshot = structuredClone(before);
    appendTimeline(before, scenario().slice(5));
    expect(before).toEqual(snapshot);
  });

  it('keeps the identity of rows the new entries do not touch', () => {
    const before = foldTimeline(scenario());
    const after = appendTimeline(before, [ev('r3', { type: 'attempt-start', t: 9000, attempt: 2 })]);
    expect(after.rows[0]).toBe(before.rows[0]);
    expect(after.rows[1]).toBe(before.rows[1]);
    expect(after.rows[2]).not.toBe(before.rows[2]);
    expect(after.rows[2]?.attempts).toHaveLength(2);
  });

  it('returns the same timeline for no entries', () => {
    const timeline = foldTimeline(scenario());
    expect(appendTimeline(timeline, [])).toBe(timeline);
  });

  it('can branch: appending twice to the same timeline does not leak rows between the branches', () => {
    const base = foldTimeline(scenario().slice(0, 3));
    const a = appendTimeline(base, [ev('a', { type: 'attempt-start', t: 1, attempt: 1 })]);
    const b = appendTimeline(base, [ev('b', { type: 'attempt-start', t: 1, attempt: 1 })]);
    const a2 = appendTimeline(a, [ev('b', { type: 'attempt-start', t: 2, attempt: 1 })]);
    expect(a.rows.map((row) => row.requestId)).toEqual(['r1', 'a']);
    expect(b.rows.map((row) => row.requestId)).toEqual(['r1', 'b']);
    expect(a2.rows.map((row) => row.requestId)).toEqual(['r1', 'a', 'b']);
  });
});

describe('attempts sent to endpoints, and their hedges', () => {
  it('name the endpoint each attempt was sent to', () => {
    const [h1, h2, h3] = foldTimeline(hedgeScenario()).rows;
    expect(h1?.attempts.map((a) => a.endpoint)).toEqual([EU, US]);
    expect(h2?.attempts.map((a) => a.endpoint)).toEqual([US]);
    expect(h3?.attempts[0]).not.toHaveProperty('endpoint');
  });

  it('keep a hedge apart from the attempt it hedged, in parallel with it, and never count it as an attempt', () => {
    const [h1, h2, h3] = foldTimeline(hedgeScenario()).rows;
    expect(h1?.attempts.map((a) => [a.n, a.start, a.end])).toEqual([
      [1, 6000, 6040],
      [2, 6140, 6230],
    ]);
    expect(h1?.hedges).toEqual([
      {
        n: 2,
        start: 6190,
        end: 6230,
        outcome: 'success',
        phase: 'response',
        status: 200,
        endpoint: EU,
        hedge: true,
      },
    ]);
    // The hedge ran within its attempt's time: the two overlap.
    const [attempt2] = h1?.attempts.slice(1) ?? [];
    const [hedge] = h1?.hedges ?? [];
    expect(hedge && attempt2 && hedge.start > attempt2.start && hedge.start < (attempt2.end ?? 0)).toBe(true);
    expect(h2?.attempts).toHaveLength(1);
    expect(h2?.hedges.map((h) => [h.n, h.outcome, h.endpoint])).toEqual([[1, 'aborted', EU]]);
    expect(h3?.hedges).toEqual([]);
  });

  it('mark the attempt its hedge answered for, which keeps the endpoint it was sent to', () => {
    const [h1, h2] = foldTimeline(hedgeScenario()).rows;
    // Its end names the endpoint that answered (the hedge's, EU); it was sent to US.
    expect(h1?.attempts[1]).toMatchObject({ n: 2, answeredBy: 'hedge', endpoint: US, status: 200 });
    expect(h1?.attempts[0]).not.toHaveProperty('answeredBy');
    // The hedge lost: nothing is marked on the attempt, which answered itself.
    expect(h2?.attempts[0]).not.toHaveProperty('answeredBy');
    expect(attemptClass(h1?.attempts[1] ?? { outcome: 'pending' })).toBe('aborted');
  });

  it('take no answered-by mark on a hedge, nor a hedge’s fields onto its attempt', () => {
    const rows = foldTimeline([
      ev('x', { type: 'attempt-start', t: 1, attempt: 1, endpoint: US }),
      ev('x', { type: 'attempt-start', t: 2, attempt: 1, endpoint: EU, hedge: true, headers: { a: '1' } }),
      ev('x', {
        type: 'attempt-end',
        t: 3,
        attempt: 1,
        outcome: 'error',
        duration: 1,
        hedge: true,
        answeredBy: 'hedge',
      }),
    ]).rows;
    expect(rows[0]?.hedges[0]).not.toHaveProperty('answeredBy');
    expect(rows[0]?.hedges[0]?.requestHeaders).toEqual({ a: '1' });
    expect(rows[0]?.attempts).toEqual([{ n: 1, start: 1, outcome: 'pending', endpoint: US }]);
  });

  it('keep a hedge whose attempt’s events were not recorded, and widen the row to it', () => {
    const [row] = foldTimeline([
      ev('x', { type: 'attempt-start', t: 50, attempt: 3, endpoint: EU, hedge: true }),
      ev('x', { type: 'attempt-end', t: 80, attempt: 3, outcome: 'success', duration: 30, hedge: true }),
    ]).rows;
    expect(row?.attempts).toEqual([]);
    expect(row?.hedges.map((h) => [h.n, h.start, h.end])).toEqual([[3, 50, 80]]);
    expect([row?.start, row?.last]).toEqual([50, 80]);
  });

  it('fold the same one event at a time, in any order, as all at once', () => {
    const entries = hedgeScenario();
    const all = foldTimeline(entries).rows;
    const stepwise = entries.reduce((timeline, entry) => appendTimeline(timeline, [entry]), emptyTimeline());
    expect(stepwise.rows).toEqual(all);
    const hedges = (rows: readonly RequestRow[]) =>
      Object.fromEntries(rows.map((row) => [row.requestId, row.hedges]));
    expect(hedges(foldTimeline(entries.slice().reverse()).rows)).toEqual(hedges(all));
  });

  it('list each hedge after the attempt it hedged', () => {
    const [h1] = foldTimeline(hedgeScenario()).rows;
    if (!h1) throw new Error('fixture');
    expect(attemptsAndHedges(h1).map((a) => `${a.n}${a.hedge ? 'h' : ''}`)).toEqual(['1', '2', '2h']);
  });
});

describe('attemptClass', () => {
  it.each([
    [{ outcome: 'success', status: 200 }, 'ok'],
    [{ outcome: 'retry', status: 302 }, 'redirect'],
    [{ outcome: 'retry', status: 429 }, 'client-error'],
    [{ outcome: 'retry', status: 503 }, 'server-error'],
    [{ outcome: 'error' }, 'transport'],
    [{ outcome: 'timeout' }, 'transport'],
    [{ outcome: 'aborted' }, 'aborted'],
    [{ outcome: 'aborted', status: 200 }, 'aborted'],
    [{ outcome: 'pending' }, 'pending'],
    [{ outcome: 'success' }, 'ok'],
    [{ outcome: 'success', status: 200, answeredBy: 'hedge' }, 'aborted'],
  ] as const)('colours %o as %s', (attempt, expected) => {
    expect(attemptClass(attempt)).toBe(expected);
  });
});

describe('a request with very many events', () => {
  // 40,000 attempts of one request, each with its wait and a guard wait, arriving newest first.
  // Looking each attempt up in a list made this quadratic (40,000 attempt-ends alone took 5.5 s,
  // these 120,000 events over a minute, far past the timeout); keyed, it takes under a second.
  it('folds 120,000 events of one request in one pass, in any order', { timeout: 8_000 }, () => {
    const attempts = 40_000;
    const entries = [];
    for (let n = attempts; n >= 1; n--) {
      entries.push(
        ev('busy', { type: 'guard-wait', t: n * 10 - 2, attempt: n, guard: 'limiter', key: API, waited: 1 }),
        ev('busy', {
          type: 'retry-scheduled',
          t: n * 10 - 5,
          attempt: n,
          retry: n - 1,
          delay: 3,
          reason: 'backoff',
          strategy: 'constant',
          jitter: 'none',
          raw: 3,
          capped: 3,
        }),
        ev('busy', {
          type: 'attempt-end',
          t: n * 10 + 1,
          attempt: n,
          outcome: 'retry',
          duration: 1,
          status: 503,
        }),
      );
    }
    const [row] = foldTimeline(entries).rows;
    expect(row?.attempts).toHaveLength(attempts);
    expect(row?.attempts.every((a, i) => a.n === i + 1)).toBe(true);
    expect(row?.waits.every((w, i) => w.afterAttempt === i)).toBe(true);
    expect(row?.guardWaits.every((g, i) => g.attempt === i + 1 && g.end === g.attempt * 10)).toBe(true);
    expect(row?.attempts.at(-1)).toMatchObject({ n: attempts, start: attempts * 10, end: attempts * 10 + 1 });
  });

  it('still replaces an attempt, a wait or a guard wait told twice', () => {
    const [row] = foldTimeline([
      ev('x', { type: 'attempt-start', t: 10, attempt: 2 }),
      ev('x', { type: 'attempt-start', t: 1, attempt: 1 }),
      ev('x', { type: 'attempt-end', t: 12, attempt: 2, outcome: 'success', duration: 2, status: 200 }),
      ev('x', { type: 'guard-wait', t: 9, attempt: 2, guard: 'limiter', key: API, waited: 4 }),
      ev('x', { type: 'guard-wait', t: 9, attempt: 2, guard: 'limiter', key: API, waited: 5 }),
      ev('x', { type: 'guard-wait', t: 9, attempt: 2, guard: 'bulkhead', key: API, waited: 1 }),
    ]).rows;
    expect(row?.attempts.map((a) => [a.n, a.start, a.status])).toEqual([
      [1, 1, undefined],
      [2, 10, 200],
    ]);
    expect(row?.guardWaits.map((g) => [g.guard, g.waited])).toEqual([
      ['limiter', 5],
      ['bulkhead', 1],
    ]);
  });

  it('sorts lane samples that arrive out of time order', () => {
    const timeline = foldTimeline([
      ev('a', { type: 'budget', t: 30, key: API, remaining: 1, allowed: true }),
      ev('a', { type: 'budget', t: 10, key: API, remaining: 3, allowed: true }),
      ev('a', { type: 'budget', t: 20, key: API, remaining: 2, allowed: true }),
    ]);
    expect(timeline.lanes[0]?.budget.map((b) => b.t)).toEqual([10, 20, 30]);
    const more = appendTimeline(timeline, [
      ev('a', { type: 'budget', t: 15, key: API, remaining: 9, allowed: true }),
    ]);
    expect(more.lanes[0]?.budget.map((b) => b.t)).toEqual([10, 15, 20, 30]);
  });

  it('marks a row the extension cut, with the most events it said were dropped', () => {
    const timeline = foldTimeline([
      ev('cut', { type: 'attempt-start', t: 1, attempt: 1 }),
      { ...ev('cut', { type: 'attempt-start', t: 2, attempt: 2 }), truncated: { dropped: 0 } },
    ]);
    expect(timeline.rows[0]?.truncated).toEqual({ dropped: 0 });
    const ended = appendTimeline(timeline, [
      {
        ...ev('cut', {
          type: 'request-end',
          t: 3,
          outcome: 'exhausted',
          attempts: 900,
          totalDelay: 0,
          duration: 2,
        }),
        truncated: { dropped: 897 },
      },
    ]);
    expect(ended.rows[0]?.truncated).toEqual({ dropped: 897 });
    expect(foldTimeline(scenario()).rows.every((row) => row.truncated === undefined)).toBe(true);
  });
});
