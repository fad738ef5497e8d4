import { describe, expect, it } from 'vitest';
import { RETRY, retry } from '../retry';
import { seededRandom } from '../time/random';
import { virtualClock } from '../time/virtual-clock';
import { recordEvents } from './recorder';

describe('recordEvents', () => {
  it('records every event of the realm as a recording, until stopped', async () => {
    const clock = virtualClock(1_700_000_000_000);
    const recorder = recordEvents({ source: 'unit test', origin: 'node://worker-1' });
    const first = retry(({ attempt }) => (attempt < 2 ? RETRY : 'ok'), { clock, random: seededRandom(1) });
    await clock.runAll();
    await first;
    const recording = recorder.stop();
    const after = retry(async () => 'late', { clock });
    await after;
    expect(recording).toMatchObject({
      format: 'retryline-recording',
      version: 1,
      source: 'unit test',
      recordedAt: new Date(1_700_000_000_000).toISOString(),
    });
    expect(recording.entries).toHaveLength(7);
    expect(
      recording.entries.every((entry) => entry.type === 'event' && entry.origin === 'node://worker-1'),
    ).toBe(true);
    // Plain JSON: what the panel and `retryline view` read back.
    expect(JSON.parse(JSON.stringify(recording))).toEqual(recording);
    expect(recorder.recording().entries).toHaveLength(7); // nothing after stop()
  });

  it('keeps the newest events when over its limit', async () => {
    const recorder = recordEvents({ limit: 3 });
    await retry(async () => 'ok');
    const { entries } = recorder.stop();
    expect(entries.map((entry) => (entry.type === 'event' ? entry.event.type : entry.type))).toEqual([
      'attempt-start',
      'attempt-end',
      'request-end',
    ]);
  });
});
