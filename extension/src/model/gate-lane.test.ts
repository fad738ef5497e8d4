import { describe, expect, it } from 'vitest';
import { API } from './fixtures';
import { type AttemptLookup, type GateMark, parkedSpans, probeMarks } from './gate-lane';
import type { AttemptRow } from './timeline';

const park = (requestId: string, t: number, attempt = 2): GateMark => ({
  type: 'retry-parked',
  key: API,
  t,
  requestId,
  attempt,
  failures: 3,
});

const release = (
  requestId: string,
  t: number,
  waited: number,
  reason: 'probe' | 'released' | 'max-wait' | 'deadline' = 'released',
  attempt = 2,
): GateMark => ({ type: 'retry-released', key: API, t, requestId, attempt, reason, waited });

/** Attempts by request id, as the lane's rows would give them. */
function lookup(attempts: Record<string, readonly AttemptRow[]>): AttemptLookup {
  return (requestId, n) => attempts[requestId]?.find((attempt) => attempt.n === n);
}

describe('parkedSpans', () => {
  it('spans from the first park until the last parked retry is released, counting the most at once', () => {
    const marks = [
      park('a', 100),
      park('b', 110),
      release('a', 200, 100, 'probe'),
      park('c', 250),
      release('b', 300, 190),
      release('c', 320, 70),
    ];
    expect(parkedSpans(marks)).toEqual([{ from: 100, to: 320, retries: 3, most: 2 }]);
  });

  it('ends a span when the count drops to zero and starts another at the next park', () => {
    const marks = [park('a', 100), release('a', 150, 50), park('b', 400), release('b', 900, 500, 'max-wait')];
    expect(parkedSpans(marks)).toEqual([
      { from: 100, to: 150, retries: 1, most: 1 },
      { from: 400, to: 900, retries: 1, most: 1 },
    ]);
  });

  it('leaves a span open while a retry is still parked at the end of the recording', () => {
    expect(parkedSpans([park('a', 100), park('b', 120), release('a', 200, 100)])).toEqual([
      { from: 100, retries: 2, most: 2 },
    ]);
  });

  it('keeps one span when a retry is parked at the instant the last one is released', () => {
    const marks = [park('a', 100), release('a', 200, 100, 'probe'), park('b', 200)];
    expect(parkedSpans(marks)).toEqual([{ from: 100, retries: 2, most: 1 }]);
    // Whichever of the two was told first.
    const swapped = [park('a', 100), park('b', 200), release('a', 200, 100, 'probe'), release('b', 250, 50)];
    expect(parkedSpans(swapped)).toEqual([{ from: 100, to: 250, retries: 2, most: 1 }]);
  });

  it('counts a retry parked and released in one instant, in its own span when no other is parked', () => {
    expect(parkedSpans([park('a', 100), release('a', 100, 0, 'deadline')])).toEqual([
      { from: 100, to: 100, retries: 1, most: 1 },
    ]);
    const inside = [park('a', 100), park('b', 150), release('b', 150, 0, 'deadline'), release('a', 200, 100)];
    expect(parkedSpans(inside)).toEqual([{ from: 100, to: 200, retries: 2, most: 1 }]);
  });

  it('matches parks and releases by request and attempt: a retry told twice counts once', () => {
    const marks = [park('a', 100), park('a', 100), release('a', 300, 200), release('a', 300, 200)];
    expect(parkedSpans(marks)).toEqual([{ from: 100, to: 300, retries: 1, most: 1 }]);
    // Two attempts of one request are two retries; so are two requests, whatever their ids hold.
    const two = [
      park('a', 100, 2),
      park('a', 150, 3),
      park('a 3', 160, 2),
      release('a', 200, 100, 'probe', 2),
    ];
    expect(parkedSpans(two)).toEqual([{ from: 100, retries: 3, most: 3 }]);
  });

  it('counts a release whose park was not recorded from its time minus its wait', () => {
    // The ring dropped `a`'s early events: without its park, a count would go below zero and the
    // span would end at `b`'s release while `a` was still parked.
    const marks = [park('b', 150), release('b', 200, 50), release('a', 400, 300)];
    expect(parkedSpans(marks)).toEqual([{ from: 100, to: 400, retries: 2, most: 2 }]);
  });

  it('sorts what arrives out of time order, and gives nothing for no marks', () => {
    const marks = [release('b', 300, 190), park('b', 110), release('a', 200, 100), park('a', 100)];
    expect(parkedSpans(marks)).toEqual([{ from: 100, to: 300, retries: 2, most: 2 }]);
    expect(parkedSpans([])).toEqual([]);
  });
});

describe('probeMarks', () => {
  const attempts = lookup({
    a: [
      { n: 1, start: 0, end: 20, outcome: 'retry', status: 503 },
      { n: 2, start: 201, end: 230, outcome: 'retry', status: 503 },
    ],
    b: [{ n: 2, start: 401, end: 420, outcome: 'success', status: 200 }],
    c: [
      {
        n: 2,
        start: 501,
        end: 530,
        outcome: 'error',
        error: { name: 'TypeError', message: 'fetch failed', code: 'ECONNRESET' },
      },
    ],
    d: [{ n: 2, start: 601, outcome: 'pending' }],
    e: [{ n: 2, start: 701, end: 702, outcome: 'aborted' }],
  });

  it('marks each probe at its attempt’s start, by how the attempt ended', () => {
    const marks = [
      park('a', 100),
      park('b', 110),
      release('a', 200, 100, 'probe'),
      release('b', 400, 290, 'probe'),
      release('c', 500, 10, 'probe'),
      release('d', 600, 10, 'probe'),
      release('e', 700, 10, 'probe'),
    ];
    expect(probeMarks(marks, attempts)).toEqual([
      { requestId: 'a', attempt: 2, t: 201, end: 230, result: 'failed', status: 503 },
      { requestId: 'b', attempt: 2, t: 401, end: 420, result: 'recovered', status: 200 },
      {
        requestId: 'c',
        attempt: 2,
        t: 501,
        end: 530,
        result: 'failed',
        error: { name: 'TypeError', message: 'fetch failed', code: 'ECONNRESET' },
      },
      { requestId: 'd', attempt: 2, t: 601, result: 'pending' },
      { requestId: 'e', attempt: 2, t: 701, end: 702, result: 'aborted' },
    ]);
  });

  it('marks only probes: retries released together after a recovery, or given up, are not', () => {
    const marks = [
      release('a', 200, 100, 'released'),
      release('b', 400, 300, 'max-wait'),
      release('c', 500, 300, 'deadline'),
    ];
    expect(probeMarks(marks, attempts)).toEqual([]);
  });

  it('places a probe whose attempt is not recorded (yet) at its release, pending', () => {
    expect(probeMarks([release('gone', 900, 50, 'probe')], attempts)).toEqual([
      { requestId: 'gone', attempt: 2, t: 900, result: 'pending' },
    ]);
  });

  it('marks a probe told twice once', () => {
    const marks = [release('b', 400, 290, 'probe'), release('b', 400, 290, 'probe')];
    expect(probeMarks(marks, attempts)).toHaveLength(1);
  });
});
