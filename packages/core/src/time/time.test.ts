import { describe, expect, it } from 'vitest';
import { trackTimers } from '../../../../test/support/track-timers';
import { startTimer, systemClock } from './clock';
import { seededRandom } from './random';
import { virtualClock } from './virtual-clock';

describe('seededRandom', () => {
  it('repeats the same sequence for the same seed, numeric or string', () => {
    const take = (random: () => number) => Array.from({ length: 5 }, random);
    expect(take(seededRandom(7))).toEqual(take(seededRandom(7)));
    expect(take(seededRandom('herd'))).toEqual(take(seededRandom('herd')));
    expect(take(seededRandom(7))).not.toEqual(take(seededRandom(8)));
  });

  it('draws uniformly from [0, 1)', () => {
    const random = seededRandom(123);
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const r = random();
      expect(r >= 0 && r < 1).toBe(true);
      buckets[Math.floor(r * 10)]++;
    }
    for (const count of buckets) expect(Math.abs(count - 10_000)).toBeLessThan(500);
  });
});

describe('virtualClock', () => {
  it('wakes sleepers in time order as it advances, and only then', async () => {
    const clock = virtualClock(100);
    const woke: string[] = [];
    clock.sleep(30).then(() => woke.push(`b@${clock.now()}`));
    clock.sleep(10).then(() => woke.push(`a@${clock.now()}`));
    await clock.advance(5);
    expect(woke).toEqual([]);
    await clock.advance(25);
    expect(woke).toEqual(['a@110', 'b@130']);
    expect(clock.now()).toBe(130);
  });

  it('runs chains of sleeps to the end with runAll', async () => {
    const clock = virtualClock();
    const done = (async () => {
      for (let i = 0; i < 5; i++) await clock.sleep(1000);
      return clock.now();
    })();
    await clock.runAll();
    expect(await done).toBe(5000);
    expect(clock.pending()).toBe(0);
  });

  it('rejects a sleep with the abort reason and forgets it', async () => {
    const clock = virtualClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1000, controller.signal);
    expect(clock.pending()).toBe(1);
    controller.abort('stop');
    await expect(sleeping).rejects.toBe('stop');
    expect(clock.pending()).toBe(0);
    await expect(clock.sleep(5, AbortSignal.abort('early'))).rejects.toBe('early');
  });

  it('refuses to spin forever in runAll', async () => {
    const clock = virtualClock();
    (async () => {
      for (;;) await clock.sleep(1);
    })();
    await expect(clock.runAll(50)).rejects.toThrow('still 1 sleeps after 50 steps');
  });
});

describe('systemClock', () => {
  it('sleeps for real and stops at once on abort, leaving no timer', async () => {
    const timers = trackTimers();
    const started = systemClock.now();
    await systemClock.sleep(20);
    expect(systemClock.now() - started).toBeGreaterThanOrEqual(15);
    const controller = new AbortController();
    const long = systemClock.sleep(3_000_000_000, controller.signal); // past the 2^31 − 1 ms timer limit
    expect(timers.active()).toBe(1);
    controller.abort(new Error('enough'));
    await expect(long).rejects.toThrow('enough');
    expect(timers.active()).toBe(0);
    timers.restore();
  });
});

describe('startTimer', () => {
  it('on the real clock, fires once after ms; a cancelled one never fires and leaves no timer', async () => {
    const timers = trackTimers();
    try {
      const fired: string[] = [];
      startTimer(systemClock, 10, () => fired.push('kept'));
      const cancel = startTimer(systemClock, 10, () => fired.push('cancelled'));
      expect(timers.active()).toBe(2);
      cancel();
      expect(timers.active()).toBe(1);
      await systemClock.sleep(40);
      expect(fired).toEqual(['kept']);
      expect(timers.active()).toBe(0);
      // Past the 2^31 − 1 ms timer limit it does not fire at once (setTimeout would): it waits.
      const far = startTimer(systemClock, 3_000_000_000, () => fired.push('far'));
      await systemClock.sleep(20);
      expect(fired).toEqual(['kept']);
      far();
      expect(timers.active()).toBe(0);
    } finally {
      timers.restore();
    }
  });

  it('on any other clock, waits through its sleep: virtual time fires it, cancel leaves nothing', async () => {
    const clock = virtualClock(0);
    const fired: number[] = [];
    startTimer(clock, 100, () => fired.push(clock.now()));
    const cancel = startTimer(clock, 50, () => fired.push(-1));
    expect(clock.pending()).toBe(2);
    cancel();
    await clock.advance(99);
    expect(fired).toEqual([]);
    await clock.advance(1);
    expect(fired).toEqual([100]);
    expect(clock.pending()).toBe(0);
  });
});
