// @vitest-environment happy-dom
import { cleanup, render, screen } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { sessionAxis } from '../model/axis';
import { EU, ev, hedgeScenario, injectedScenario, scenario, US } from '../model/fixtures';
import { foldTimeline } from '../model/timeline';
import { formatMs, outcomeLabel, outcomeShort, waitComputation, waitLabel, waitLabels } from './format';
import { Waterfall, WaterfallAxis } from './waterfall';

afterEach(cleanup);

const timeline = foldTimeline(scenario());
const r1 = timeline.rows[0];
if (!r1) throw new Error('fixture');

describe('Waterfall', () => {
  // r1 spans 1000 (the limiter wait's start) to 3640.
  const r1Axis = { start: 1000, end: 3640 };

  it('draws one bar per attempt, coloured by status class', () => {
    render(<Waterfall row={r1} axis={r1Axis} now={0} />);
    const bars = screen.getAllByTestId('attempt-bar');
    expect(bars.map((bar) => bar.dataset.status)).toEqual(['503', 'transport', '200']);
    expect(bars.map((bar) => bar.className)).toEqual([
      'rl-bar rl-bar--server-error',
      'rl-bar rl-bar--transport',
      'rl-bar rl-bar--ok',
    ]);
  });

  it('labels each wait with its reason: the guard, the Retry-After hint, the backoff', () => {
    render(<Waterfall row={r1} axis={r1Axis} now={0} />);
    const labels = ['limiter 100 ms', 'Retry-After 2 s', 'backoff 412 ms (exponential, full)'];
    const waits = screen.getAllByTestId('wait');
    // In full for screen readers, and (before the waterfall is laid out) on screen.
    expect(waits.map((wait) => wait.querySelector('.rl-sr')?.textContent)).toEqual(labels);
    expect(waits.map((wait) => wait.querySelector('.rl-fit__text')?.textContent)).toEqual(labels);
    expect(waits.map((wait) => wait.title)).toEqual([
      `limiter 100 ms (${r1.guardWaits[0]?.key}) before attempt 1`,
      'Retry-After 2 s after attempt 1',
      'backoff 412 ms (exponential, full) after attempt 2',
    ]);
  });

  it('shows the longest label a wait has room for, else none, never a cut one (the title keeps it all)', () => {
    // 2640 ms over 330 px: 8 ms a pixel. The limiter's 100 ms are 12.5 px, Retry-After's 2 s
    // 250 px, the backoff's 412 ms 51.5 px.
    render(<Waterfall row={r1} axis={r1Axis} now={0} width={330} />);
    const waits = screen.getAllByTestId('wait');
    expect(waits.map((wait) => wait.querySelector('.rl-fit__text')?.textContent ?? '')).toEqual([
      '',
      'Retry-After 2 s',
      '412 ms',
    ]);
    expect(waits[2]?.title).toBe('backoff 412 ms (exponential, full) after attempt 2');
    expect(waits[0]?.querySelector('.rl-sr')?.textContent).toBe('limiter 100 ms');
  });

  it('places bars and waits on the shared axis', () => {
    render(<Waterfall row={r1} axis={r1Axis} now={0} />);
    const retryAfter = screen.getAllByTestId('wait')[1];
    expect(retryAfter?.style.left).toBe(`${Math.round((150 / 2640) * 100 * 1000) / 1000}%`);
    expect(retryAfter?.style.width).toBe(`${Math.round((2000 / 2640) * 100 * 1000) / 1000}%`);
    const last = screen.getAllByTestId('attempt-bar')[2];
    expect(last?.style.left).toBe(`${Math.round((2592 / 2640) * 100 * 1000) / 1000}%`);
  });

  it('stripes an aborted attempt and draws a running one up to now', () => {
    const row = foldTimeline([
      ev('a', { type: 'request-start', t: 0, client: 'fetch' }),
      ev('a', { type: 'attempt-start', t: 0, attempt: 1 }),
      ev('a', { type: 'attempt-end', t: 10, attempt: 1, outcome: 'aborted', duration: 10 }),
      ev('a', { type: 'attempt-start', t: 10, attempt: 2 }),
    ]).rows[0];
    if (!row) throw new Error('fixture');
    const axis = sessionAxis(foldTimeline([]), 100) ?? { start: 0, end: 100 };
    expect(axis).toEqual({ start: 0, end: 100 });
    if (!axis) return;
    render(<Waterfall row={row} axis={axis} now={100} />);
    const [aborted, running] = screen.getAllByTestId('attempt-bar');
    expect(aborted?.className).toContain('rl-bar--aborted');
    expect(aborted?.dataset.status).toBe('aborted');
    expect(running?.dataset.status).toBe('pending');
    expect(running?.style.width).toBe('90%');
  });

  it('draws a hedge as its own thin bar below the attempt it hedged, and the attempt it answered for as cancelled', () => {
    const [h1, h2, h3] = foldTimeline(hedgeScenario()).rows;
    if (!h1 || !h2 || !h3) throw new Error('fixture');
    render(<Waterfall row={h1} axis={{ start: 6000, end: 6230 }} now={0} />);
    const bars = screen.getAllByTestId('attempt-bar');
    expect(bars).toHaveLength(2);
    const [hedge] = screen.getAllByTestId('hedge-bar');
    expect(hedge?.dataset).toMatchObject({ hedge: 'true', attempt: '2', status: '200', endpoint: EU });
    expect(hedge?.className).toBe('rl-bar rl-bar--ok rl-bar--hedge');
    expect(hedge?.textContent).toBe('hedge');
    expect(hedge?.title).toMatch(/^hedge of attempt 2: 200 · 40 ms · .+ · to https:\/\/eu\.api\.example$/);
    // In parallel: the hedge starts within its attempt's span, on the same row.
    expect(hedge?.style.left).toBe(`${Math.round((190 / 230) * 100 * 1000) / 1000}%`);
    expect(bars[1]?.style.left).toBe(`${Math.round((140 / 230) * 100 * 1000) / 1000}%`);
    // The attempt it hedged keeps the top of the row; its hedge answered, so it was cancelled.
    expect(bars[1]?.className).toBe('rl-bar rl-bar--aborted rl-bar--hedged rl-bar--cancelled');
    expect(bars[1]?.dataset).toMatchObject({ status: 'cancelled', answeredBy: 'hedge', endpoint: US });
    expect(bars[1]?.title).toMatch(
      /^attempt 2: cancelled: hedge answered · 90 ms · .+ · to https:\/\/us\.api\.example$/,
    );
    expect(bars[0]?.className).toBe('rl-bar rl-bar--server-error');
    expect(bars[0]?.title).toMatch(/^attempt 1: 503 · 40 ms · .+ · to https:\/\/eu\.api\.example$/);
    cleanup();
    render(<Waterfall row={h2} axis={{ start: 6300, end: 6372 }} now={0} />);
    expect(screen.getByTestId('attempt-bar').className).toBe('rl-bar rl-bar--ok rl-bar--hedged');
    expect(screen.getByTestId('hedge-bar').className).toBe('rl-bar rl-bar--aborted rl-bar--hedge');
    cleanup();
    render(<Waterfall row={h3} axis={{ start: 6400, end: 6410 }} now={0} />);
    expect(document.querySelectorAll('[data-hedge], [data-endpoint]')).toHaveLength(0);
  });

  it('outlines each attempt the panel’s fault injection answered, and says so in its title', () => {
    const [f1, f2] = foldTimeline(injectedScenario()).rows;
    if (!f1 || !f2) throw new Error('fixture');
    render(<Waterfall row={f1} axis={{ start: 5000, end: 5340 }} now={0} />);
    const bars = screen.getAllByTestId('attempt-bar');
    expect(bars.map((bar) => bar.dataset.injected)).toEqual(['true', 'true', undefined]);
    expect(bars.map((bar) => bar.classList.contains('rl-bar--injected'))).toEqual([true, true, false]);
    // Its status colour stays: the outline is what is added.
    expect(bars[0]?.className).toBe('rl-bar rl-bar--server-error rl-bar--injected');
    expect(bars[0]?.title).toMatch(/^attempt 1: 503 · 1 ms · .+ · injected by the Retryline panel$/);
    expect(bars[2]?.title).not.toContain('injected');
    cleanup();
    render(<Waterfall row={f2} axis={{ start: 5000, end: 5420 }} now={0} />);
    expect(document.querySelectorAll('[data-injected]')).toHaveLength(0);
  });

  it('marks a request the breaker refused', () => {
    const r2 = timeline.rows[1];
    if (!r2) throw new Error('fixture');
    render(<Waterfall row={r2} axis={{ start: 3700, end: 3701 }} now={0} />);
    expect(screen.queryAllByTestId('attempt-bar')).toHaveLength(0);
    expect(screen.getByTestId('refusal').textContent).toBe('breaker');
  });

  it.each([
    ['rate-limited', 'limiter'],
    ['quota-spent', 'pacing'],
    ['budget-exhausted', 'budget'],
    ['bulkhead-rejected', 'bulkhead'],
    ['throttled', 'throttle'],
  ] as const)('names the guard that refused: %s is marked %s', (outcome, label) => {
    const [row] = foldTimeline([
      ev('q', {
        type: 'request-start',
        t: 0,
        client: 'fetch',
        method: 'GET',
        url: 'https://api.example/v1/x',
      }),
      ev('q', { type: 'request-end', t: 1, outcome, attempts: 0, totalDelay: 0, duration: 1 }),
    ]).rows;
    if (!row) throw new Error('fixture');
    render(<Waterfall row={row} axis={{ start: 0, end: 2 }} now={2} />);
    expect(screen.getByTestId('refusal').textContent).toBe(label);
  });

  it('says pacing, never limiter or rate limited, for an app whose pacing held or refused it', () => {
    // The app has pacing() and no rate limiter: one request waited for the quota, one was refused.
    const timeline = foldTimeline([
      ev('held', {
        type: 'request-start',
        t: 0,
        client: 'fetch',
        method: 'GET',
        url: 'https://api.example/a',
      }),
      ev('held', {
        type: 'guard-wait',
        t: 1000,
        attempt: 1,
        guard: 'pacing',
        key: 'https://api.example/a',
        waited: 1000,
      }),
      ev('held', { type: 'attempt-start', t: 1000, attempt: 1 }),
      ev('held', { type: 'attempt-end', t: 1010, attempt: 1, outcome: 'success', duration: 10, status: 200 }),
      ev('held', {
        type: 'request-end',
        t: 1010,
        outcome: 'success',
        attempts: 1,
        totalDelay: 1000,
        duration: 1010,
        status: 200,
      }),
      ev('refused', {
        type: 'request-start',
        t: 1100,
        client: 'fetch',
        method: 'GET',
        url: 'https://api.example/a',
      }),
      ev('refused', {
        type: 'request-end',
        t: 1101,
        outcome: 'quota-spent',
        attempts: 0,
        totalDelay: 0,
        duration: 1,
        error: {
          name: 'RateLimitedError',
          message: 'https://api.example/a was not sent: the server said the quota is spent',
        },
      }),
    ]);
    const axis = sessionAxis(timeline);
    if (!axis) throw new Error('axis');
    const { container } = render(
      <div>
        {timeline.rows.map((row) => (
          <Waterfall key={row.key} row={row} axis={axis} now={0} />
        ))}
      </div>,
    );
    expect(screen.getByTestId('wait').dataset.kind).toBe('pacing');
    expect(screen.getByTestId('wait').title).toMatch(/^pacing 1 s/);
    expect(screen.getByTestId('refusal').textContent).toBe('pacing');
    expect(container.textContent).not.toMatch(/limit/i);
    expect(outcomeLabel('quota-spent')).toBe('quota spent (pacing)');
    expect(outcomeShort('quota-spent')).toBe('quota spent');
    // A limiter's refusal names the limiter.
    expect(outcomeLabel('rate-limited')).toBe('rate limited (limiter)');
  });
});

describe('WaterfallAxis', () => {
  it('ticks at 1, 2 or 5 × 10^n from the session’s start', () => {
    // 7 s over 420 px: at most 7 ticks 60 px apart, so a 1 s step.
    render(<WaterfallAxis axis={{ start: 1000, end: 8000 }} width={420} />);
    expect(screen.getAllByTestId('tick').map((tick) => tick.textContent)).toEqual([
      '0',
      '+1 s',
      '+2 s',
      '+3 s',
      '+4 s',
      '+5 s',
      '+6 s',
    ]);
    cleanup();
    // 7 s over 200 px: 3 ticks at most, a 5 s step (not +2.3 s, +4.7 s).
    render(<WaterfallAxis axis={{ start: 1000, end: 8000 }} width={200} />);
    expect(screen.getAllByTestId('tick').map((tick) => [tick.textContent, tick.style.left])).toEqual([
      ['0', '0%'],
      ['+5 s', '71.429%'],
    ]);
  });

  it('puts the last label before its tick where the edge leaves no room after it, or leaves it out', () => {
    // +10 s at 78% of 170 px: 37 px to the edge, too few for its label; 133 px from the first tick.
    render(<WaterfallAxis axis={{ start: 0, end: 12_800 }} width={170} />);
    const ticks = screen.getAllByTestId('tick');
    expect(ticks.map((tick) => [tick.textContent, tick.className])).toEqual([
      ['0', 'rl-axis__tick'],
      ['+10 s', 'rl-axis__tick rl-axis__tick--end'],
    ]);
    cleanup();
    // At 90 px the steps are too close for it: left out.
    render(<WaterfallAxis axis={{ start: 0, end: 12_800 }} width={90} />);
    expect(screen.getAllByTestId('tick').map((tick) => tick.textContent)).toEqual(['0']);
  });
});

describe('wait labels', () => {
  const wait = {
    afterAttempt: 1,
    start: 0,
    delay: 412,
    reason: 'backoff',
    strategy: 'exponential',
    jitter: 'full',
    raw: 800,
    capped: 800,
  } as const;

  it.each([
    [wait, 'backoff 412 ms (exponential, full)'],
    [{ ...wait, reason: 'retry-after', delay: 2000 }, 'Retry-After 2 s'],
    [
      {
        ...wait,
        reason: 'rate-limit-reset',
        delay: 1500,
        hint: { source: 'x-ratelimit-reset', delay: 1500 },
      },
      'X-RateLimit-Reset 1.5 s',
    ],
    [
      { ...wait, reason: 'rate-limit-reset', delay: 90_000, hint: { source: 'ratelimit', delay: 90_000 } },
      'RateLimit 1.5 min',
    ],
  ] as const)('labels %o as %j', (w, label) => {
    expect(waitLabel(w)).toBe(label);
  });

  it('shortens a label in steps, for a narrow wait: the reason and the delay, then the delay', () => {
    expect(waitLabels(wait)).toEqual(['backoff 412 ms (exponential, full)', 'backoff 412 ms', '412 ms']);
    expect(waitLabels({ ...wait, reason: 'retry-after', delay: 2000 })).toEqual(['Retry-After 2 s', '2 s']);
    expect(
      waitLabels({
        ...wait,
        reason: 'rate-limit-reset',
        delay: 1500,
        hint: { source: 'ratelimit', delay: 1500 },
      }),
    ).toEqual(['RateLimit 1.5 s', '1.5 s']);
  });

  it('explains a backoff: raw → capped → jittered', () => {
    expect(waitComputation({ ...wait, raw: 1600, capped: 1000 })).toEqual([
      'exponential backoff 1.6 s → capped 1 s → full jitter → 412 ms',
    ]);
  });

  it('explains a hinted wait by its header: the hint plus its random spread', () => {
    expect(
      waitComputation({
        ...wait,
        reason: 'retry-after',
        delay: 2150,
        hint: { source: 'retry-after', delay: 2000 },
      }),
    ).toEqual([
      'Retry-After header asked for 2 s',
      'exponential backoff 800 ms → capped 800 ms (before full jitter): not longer than the hint’s wait',
      'waited 2.2 s: the 2 s asked plus 150 ms of random spread (up to 200 ms: a tenth of the hint, at most 1 s)',
    ]);
    expect(
      waitComputation({
        ...wait,
        reason: 'rate-limit-reset',
        delay: 30_700,
        hint: { source: 'ratelimit', delay: 30_000 },
      })[2],
    ).toBe(
      'waited 30.7 s: the 30 s asked plus 700 ms of random spread (up to 1 s: a tenth of the hint, at most 1 s)',
    );
  });

  it('explains a clamped hint: maxRetryAfter waited instead of what the server asked', () => {
    // onRetryAfterTooLong: 'clamp' with maxRetryAfter 60 s, the server asked for 2 minutes.
    expect(
      waitComputation({
        ...wait,
        reason: 'retry-after',
        delay: 60_400,
        hint: { source: 'retry-after', delay: 120_000 },
      }),
    ).toEqual([
      "Retry-After header asked for 2 min: more than maxRetryAfter, which took its place (onRetryAfterTooLong: 'clamp')",
      'exponential backoff 800 ms → capped 800 ms (before full jitter): not longer than the hint’s wait',
      'waited 1 min: maxRetryAfter plus its random spread (up to a tenth of it, at most 1 s)',
    ]);
  });

  it('explains a hint the backoff outlasted', () => {
    expect(
      waitComputation({
        ...wait,
        raw: 5000,
        capped: 5000,
        delay: 4000,
        hint: { source: 'retry-after', delay: 1000 },
      }),
    ).toEqual([
      'exponential backoff 5 s → capped 5 s → full jitter → 4 s',
      'Retry-After header asked for 1 s: the backoff was longer, so it set the wait',
    ]);
  });

  it('formats durations', () => {
    expect([0, 999, 1000, 1234, 60_000, 5_400_000, Number.POSITIVE_INFINITY].map(formatMs)).toEqual([
      '0 ms',
      '999 ms',
      '1 s',
      '1.2 s',
      '1 min',
      '1.5 h',
      '∞',
    ]);
  });
});
