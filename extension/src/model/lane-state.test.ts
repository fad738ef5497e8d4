import { describe, expect, it } from 'vitest';
import { frameKey } from '../shared/frame-key';
import { API, ev, gateScenario, ORIGIN, scenario } from './fixtures';
import { laneState, pacingEnds } from './lane-state';
import { foldTimeline, type OriginLane } from './timeline';

const laneOf = (timeline: ReturnType<typeof foldTimeline>, key = API): OriginLane => {
  const lane = timeline.lanes.find((l) => l.key === key);
  if (!lane) throw new Error(`no lane ${key}`);
  return lane;
};

describe('a lane’s guards now', () => {
  it('says the breaker is half-open from its last transition, and nothing once it closed', () => {
    const timeline = foldTimeline(scenario());
    expect(laneState(laneOf(timeline), 10_000)).toEqual([{ kind: 'breaker-half-open', since: 8700 }]);
    const closed = foldTimeline([
      ...scenario(),
      ev('r2', { type: 'breaker-state', t: 9000, key: API, from: 'half-open', to: 'closed' }),
    ]);
    expect(laneState(laneOf(closed), 10_000)).toEqual([]);
  });

  it('says until when an open breaker holds requests (its event’s retryAt), then since when once that passed', () => {
    const timeline = foldTimeline([
      ev('r1', { type: 'breaker-state', t: 1000, key: API, from: 'closed', to: 'open', retryAt: 31_000 }),
    ]);
    expect(laneState(laneOf(timeline), 2000)).toEqual([{ kind: 'breaker-open', since: 1000, until: 31_000 }]);
    // Past its trial time the next request goes out as the trial: no "until" in the past.
    expect(laneState(laneOf(timeline), 31_000)).toEqual([{ kind: 'breaker-open', since: 1000 }]);
    // An event from a core without retryAt (an older recording) still says since when.
    const older = foldTimeline([
      ev('r1', { type: 'breaker-state', t: 1000, key: API, from: 'closed', to: 'open' }),
    ]);
    expect(laneState(laneOf(older), 2000)).toEqual([{ kind: 'breaker-open', since: 1000 }]);
  });

  it('says the budget is spent when its last sample refused', () => {
    const timeline = foldTimeline([
      ev('r1', { type: 'budget', t: 5, key: API, remaining: 0, allowed: false }),
    ]);
    expect(laneState(laneOf(timeline), 10)).toEqual([{ kind: 'budget-spent', since: 5 }]);
  });

  it('counts the retries still parked by the recovery gate', () => {
    const entries = gateScenario();
    const timeline = foldTimeline(entries);
    const lane = timeline.lanes.find((l) => l.gate.length > 0) as OriginLane;
    // The scenario releases every parked retry by its end; cut it before the last release.
    const lastRelease = Math.max(...lane.gate.filter((m) => m.type === 'retry-released').map((m) => m.t));
    const cut = foldTimeline(
      entries.filter(
        (e) => e.type !== 'event' || e.event.type !== 'retry-released' || e.event.t < lastRelease,
      ),
    );
    const states = laneState(cut.lanes.find((l) => l.key === lane.key) as OriginLane, lastRelease);
    expect(states.find((s) => s.kind === 'parked')).toMatchObject({
      kind: 'parked',
      retries: expect.any(Number),
    });
    expect(laneState(lane, lastRelease).some((s) => s.kind === 'parked')).toBe(false);
  });

  it('says the quota is spent until the latest pacing hold ends, and not after', () => {
    const timeline = foldTimeline([
      ev('p1', { type: 'request-start', t: 0, client: 'fetch', method: 'GET', url: `${API}/x` }),
      ev('p1', { type: 'guard-wait', t: 1000, attempt: 1, guard: 'pacing', key: API, waited: 1000 }),
      ev('p1', { type: 'budget', t: 0, key: API, remaining: 5, allowed: true }),
    ]);
    const ends = pacingEnds(timeline.rows);
    const end = ends.get(frameKey(ORIGIN, API));
    expect(end).toBe(1000);
    expect(laneState(laneOf(timeline), 500, end)).toEqual([{ kind: 'quota-spent', until: 1000 }]);
    expect(laneState(laneOf(timeline), 1500, end)).toEqual([]);
  });
});
