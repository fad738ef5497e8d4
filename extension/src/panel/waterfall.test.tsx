// @vitest-environment happy-dom
import { cleanup, render, screen } from '@testing-library/preact';
import { afterEach, describe, expect, it } from 'vitest';
import { ev, scenario } from '../model/fixtures';
import { foldTimeline } from '../model/timeline';
import { formatMs, waitComputation, waitLabel } from './format';
import { axisFor, Waterfall } from './waterfall';

afterEach(cleanup);

const timeline = foldTimeline(scenario());
const r1 = timeline.rows[0];
if (!r1) throw new Error('fixture');

describe('Waterfall', () => {
  it('draws one bar per attempt, coloured by status class', () => {
    const axis = axisFor([r1], 0);
    if (!axis) throw new Error('axis');
    render(<Waterfall row={r1} axis={axis} now={0} />);
    const bars = screen.getAllByTestId('attempt-bar');
    expect(bars.map((bar) => bar.dataset.status)).toEqual(['503', 'transport', '200']);
    expect(bars.map((bar) => bar.className)).toEqual([
      'rl-bar rl-bar--server-error',
      'rl-bar rl-bar--transport',
      'rl-bar rl-bar--ok',
    ]);
  });

  it('labels each wait with its reason: the guard, the Retry-After hint, the backoff', () => {
    const axis = axisFor([r1], 0);
    if (!axis) throw new Error('axis');
    render(<Waterfall row={r1} axis={axis} now={0} />);
    expect(screen.getAllByTestId('wait').map((wait) => wait.textContent)).toEqual([
      'limiter 100 ms',
      'Retry-After 2 s',
      'backoff 412 ms (exponential, full)',
    ]);
  });

  it('places bars and waits on the shared axis', () => {
    // r1 spans 1000 (the limiter wait's start) to 3640.
    const axis = { start: 1000, end: 3640 };
    render(<Waterfall row={r1} axis={axis} now={0} />);
    const retryAfter = screen.getByText('Retry-After 2 s');
    expect(retryAfter.style.left).toBe(`${Math.round((150 / 2640) * 100 * 1000) / 1000}%`);
    expect(retryAfter.style.width).toBe(`${Math.round((2000 / 2640) * 100 * 1000) / 1000}%`);
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
    const axis = axisFor([row], 100);
    expect(axis).toEqual({ start: 0, end: 100 });
    if (!axis) return;
    render(<Waterfall row={row} axis={axis} now={100} />);
    const [aborted, running] = screen.getAllByTestId('attempt-bar');
    expect(aborted?.className).toContain('rl-bar--aborted');
    expect(aborted?.dataset.status).toBe('aborted');
    expect(running?.dataset.status).toBe('pending');
    expect(running?.style.width).toBe('90%');
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
