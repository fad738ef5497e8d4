import { describe, expect, it } from 'vitest';
import { createLiveness } from './liveness';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createLiveness', () => {
  it('gives a command up once Redis has answered nothing for timeoutMs, once', async () => {
    const liveness = createLiveness(() => performance.now());
    const given: number[] = [];
    const done = liveness.watch(30, (silentMs) => given.push(silentMs));
    expect(liveness.silentSince).toBeUndefined();
    await sleep(150);
    expect(given).toHaveLength(1);
    expect(given[0]).toBeGreaterThanOrEqual(30);
    expect(liveness.silentSince).toBeDefined();
    expect(done()).toBe(false); // it settled after it was given up
    liveness.heard();
    expect(liveness.silentSince).toBeUndefined();
  });

  it('keeps waiting while answers to other commands arrive', async () => {
    // Its own clock, moved 20 ms per answer: a busy machine's late timers cannot make a silence.
    let now = 0;
    const liveness = createLiveness(() => now);
    const given: string[] = [];
    const done = liveness.watch(60, () => given.push('given up'));
    for (let i = 0; i < 8; i++) {
      await sleep(20);
      now += 20;
      liveness.heard(); // Redis answers something every 20 ms: 160 ms in all, alive throughout
    }
    expect(given).toEqual([]);
    expect(done()).toBe(true);
  });
});
