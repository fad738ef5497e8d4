import { seededRandom } from '@retryline/core';
import { describe, expect, it } from 'vitest';
import { simClock } from './sim-clock';

describe('simClock', () => {
  it('wakes sleepers in order of time, and in order of sleeping at the same time', async () => {
    const clock = simClock();
    const woke: string[] = [];
    const sleep = (label: string, ms: number) =>
      clock.sleep(ms).then(() => woke.push(`${label}@${clock.now()}`));
    sleep('c', 30);
    sleep('a', 10);
    sleep('b1', 20);
    sleep('b2', 20);
    sleep('zero', 0);
    await clock.run(100);
    expect(woke).toEqual(['zero@0', 'a@10', 'b1@20', 'b2@20', 'c@30']);
  });

  it('keeps (time, sequence) order across thousands of random sleeps and cancellations', async () => {
    const clock = simClock();
    const random = seededRandom(42);
    const expected: Array<{ at: number; seq: number }> = [];
    const fired: number[] = [];
    const cancels: Array<() => void> = [];
    for (let seq = 0; seq < 5_000; seq++) {
      const at = Math.floor(random() * 1_000);
      cancels.push(clock.schedule(at, () => fired.push(seq)));
      expected.push({ at, seq });
    }
    const cancelled = new Set<number>();
    for (let seq = 0; seq < 5_000; seq += 3) {
      cancels[seq]?.();
      cancelled.add(seq);
    }
    await clock.run(1_000);
    const order = expected
      .filter(({ seq }) => !cancelled.has(seq))
      .sort((a, b) => a.at - b.at || a.seq - b.seq)
      .map(({ seq }) => seq);
    expect(fired).toEqual(order);
    expect(clock.pending()).toBe(0);
  });

  it('lets the continuations of one instant run before time moves on', async () => {
    const clock = simClock();
    const seen: string[] = [];
    const chain = async () => {
      await clock.sleep(10);
      seen.push(`first@${clock.now()}`);
      await Promise.resolve();
      await clock.sleep(0);
      seen.push(`again@${clock.now()}`);
      await clock.sleep(5);
      seen.push(`last@${clock.now()}`);
    };
    chain();
    clock.sleep(11).then(() => seen.push(`other@${clock.now()}`));
    await clock.run(100);
    expect(seen).toEqual(['first@10', 'again@10', 'other@11', 'last@15']);
  });

  it('rejects a sleep at once with the abort reason and drops its sleeper', async () => {
    const clock = simClock();
    const controller = new AbortController();
    const sleeping = clock.sleep(1_000, controller.signal);
    clock.sleep(2_000);
    expect(clock.pending()).toBe(2);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    expect(clock.pending()).toBe(1);
    expect(clock.now()).toBe(0);
  });

  it('rejects a sleep on an already-aborted signal without queueing it', async () => {
    const clock = simClock();
    const reason = new Error('already');
    await expect(clock.sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(clock.pending()).toBe(0);
  });

  it('leaves no abort listener behind once a sleep has woken', async () => {
    const clock = simClock();
    const controller = new AbortController();
    let listeners = 0;
    const add = controller.signal.addEventListener.bind(controller.signal);
    const remove = controller.signal.removeEventListener.bind(controller.signal);
    controller.signal.addEventListener = (...args: Parameters<typeof add>) => {
      listeners++;
      add(...args);
    };
    controller.signal.removeEventListener = (...args: Parameters<typeof remove>) => {
      listeners--;
      remove(...args);
    };
    const sleeping = clock.sleep(5, controller.signal);
    expect(listeners).toBe(1);
    await clock.run(5);
    await sleeping;
    expect(listeners).toBe(0);
  });

  it('stops at the horizon, leaving later sleepers pending, and resumes from there', async () => {
    const clock = simClock(1_000);
    const woke: number[] = [];
    for (const ms of [100, 200, 300]) clock.sleep(ms).then(() => woke.push(clock.now()));
    await clock.run(1_250);
    expect(woke).toEqual([1_100, 1_200]);
    expect(clock.now()).toBe(1_250);
    expect(clock.pending()).toBe(1);
    await clock.run(1_200); // never runs back
    expect(clock.now()).toBe(1_250);
    await clock.run(2_000);
    expect(woke).toEqual([1_100, 1_200, 1_300]);
    expect(clock.now()).toBe(2_000);
  });

  it('cancels a scheduled callback, and cancelling twice or after it fired does nothing', async () => {
    const clock = simClock();
    const fired: string[] = [];
    const cancelA = clock.schedule(10, () => fired.push('a'));
    const cancelB = clock.schedule(20, () => fired.push('b'));
    cancelA();
    cancelA();
    await clock.run(30);
    cancelB();
    expect(fired).toEqual(['b']);
    expect(clock.pending()).toBe(0);
  });

  it('plays out fifty thousand chained sleeps', async () => {
    const clock = simClock();
    let done = 0;
    const worker = async (id: number) => {
      for (let step = 0; step < 50; step++) await clock.sleep(1 + ((id * 7 + step) % 13));
      done++;
    };
    for (let id = 0; id < 1_000; id++) worker(id);
    await clock.run(Number.POSITIVE_INFINITY);
    expect(done).toBe(1_000);
    expect(clock.pending()).toBe(0);
  });
});
