import { describe, expect, it } from 'vitest';
import { axisTicks, niceStep, percentAt, sessionAxis, spanOn, tickLabel } from './axis';
import { ev, manyRequests, scenario } from './fixtures';
import { appendTimeline, foldTimeline } from './timeline';

describe('the session’s axis', () => {
  it('spans everything recorded: every row’s waits and attempts, and the lanes’ events', () => {
    const timeline = foldTimeline(scenario());
    // From r1's limiter wait (its event at 1099 says it waited 100 ms) to the breaker half-opening.
    expect(sessionAxis(timeline)).toEqual({ start: 999, end: 8700 });
    const axis = sessionAxis(timeline);
    if (!axis) throw new Error('axis');
    for (const row of timeline.rows) {
      expect(row.start).toBeGreaterThanOrEqual(axis.start);
      expect(row.last).toBeLessThanOrEqual(axis.end);
    }
  });

  it('is one for the whole session: a row is placed by its own times only, wherever the list is scrolled', () => {
    const timeline = foldTimeline(manyRequests(10_000));
    const axis = sessionAxis(timeline);
    if (!axis) throw new Error('axis');
    // The rows in view at the top, and 5 000 rows down: each drawn where its time falls in the session.
    const place = (n: number) => {
      const row = timeline.rows[n];
      const first = row?.attempts[0];
      if (!first?.end) throw new Error('fixture');
      return spanOn(axis, first.start, first.end);
    };
    expect(place(10)).toEqual({ left: 0.1, width: 0.002 });
    expect(place(5000)).toEqual({ left: 50.002, width: 0.002 });
  });

  it('runs to now while a live request runs, and only then', () => {
    const running = foldTimeline([
      ev('a', { type: 'request-start', t: 0, client: 'fetch' }),
      ev('a', { type: 'attempt-start', t: 10, attempt: 1 }),
    ]);
    expect(sessionAxis(running, 500)).toEqual({ start: 0, end: 500 });
    expect(sessionAxis(running)).toEqual({ start: 0, end: 10 });
    expect(sessionAxis(foldTimeline([]))).toBeUndefined();
    // One instant still has a width to draw in.
    expect(sessionAxis(foldTimeline([ev('b', { type: 'request-start', t: 5, client: 'fetch' })]))).toEqual({
      start: 5,
      end: 6,
    });
  });

  it('grows as a live session appends, moving the bars only then (not when the list scrolls)', () => {
    const first = foldTimeline(manyRequests(2));
    const later = appendTimeline(first, manyRequests(4).slice(14));
    expect(sessionAxis(later)?.end).toBeGreaterThan(sessionAxis(first)?.end ?? 0);
  });

  it('places times in percent, clamped to the axis', () => {
    const axis = { start: 1000, end: 3000 };
    expect([500, 1000, 1500, 3000, 4000].map((t) => percentAt(axis, t))).toEqual([0, 0, 25, 100, 100]);
    expect(spanOn(axis, 2000, 1500)).toEqual({ left: 50, width: 0 });
    expect(spanOn(axis, 2500, 9000)).toEqual({ left: 75, width: 25 });
  });
});

describe('ticks', () => {
  it.each([
    [0.3, 1],
    [1, 1],
    [1.4, 2],
    [3, 5],
    [7, 10],
    [140, 200],
    [1_400, 2_000],
    [4_267, 5_000],
    [30_000, 50_000],
    [55_000, 60_000],
    [61_000, 120_000],
    [4 * 60_000, 5 * 60_000],
    [17 * 60_000, 20 * 60_000],
  ])('steps %i ms up to %i ms (1, 2 or 5 × 10^n; minutes past a minute)', (raw, step) => {
    expect(niceStep(raw)).toBe(step);
  });

  it('puts at most the ticks asked for, a nice step apart from the start', () => {
    expect(axisTicks({ start: 0, end: 12_800 }, 3)).toEqual({ step: 5000, at: [0, 5000, 10_000] });
    expect(axisTicks({ start: 100, end: 1500 }, 4)).toEqual({ step: 500, at: [0, 500, 1000] });
    expect(axisTicks({ start: 0, end: 7000 }, 7)).toEqual({
      step: 1000,
      at: [0, 1000, 2000, 3000, 4000, 5000, 6000],
    });
  });

  it.each([
    [0, 200, '0'],
    [400, 200, '+400 ms'],
    [1400, 200, '+1.4 s'],
    [2000, 200, '+2 s'],
    [1050, 50, '+1.05 s'],
    [10_000, 5000, '+10 s'],
    [120_000, 60_000, '+2 min'],
  ])('labels %i ms (step %i) %j', (at, step, label) => {
    expect(tickLabel(at, step)).toBe(label);
  });
});
