import { describe, expect, it } from 'vitest';
import type { Connection } from './connection';
import type { RedisStoreEvent } from './events';
import { createRunner } from './runner';
import { script } from './scripts/lua';

/** A connection whose answers the test scripts: each call gets the next handler's answer. */
function fakeConnection(handlers: ((args: readonly string[]) => Promise<unknown>)[]) {
  const calls: string[][] = [];
  let readyCount = 0;
  let blocked: string | undefined;
  const connection: Connection = {
    blocked: () => blocked,
    get readyCount() {
      return readyCount;
    },
    offset: 0,
    call(_script, _key, args) {
      calls.push([...args]);
      const handler = handlers.shift();
      return handler ? handler(args) : Promise.reject(new Error('no answer scripted'));
    },
  };
  return {
    connection,
    calls,
    reconnect: () => {
      readyCount++;
    },
    block: (reason: string | undefined) => {
      blocked = reason;
    },
  };
}

const SCRIPT = script('test', "return {'ok'}");
const never = () => new Promise<never>(() => {});
const ok = () => Promise.resolve(['ok', String(Date.now()), 'answer']);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function runnerFor(fake: ReturnType<typeof fakeConnection>, events: RedisStoreEvent[] = []) {
  return createRunner({
    connection: fake.connection,
    prefix: 'p',
    clock: 'redis',
    timeoutMs: 40,
    probeMs: 300,
    failOpen: true,
    onEvent: (event) => events.push(event),
  });
}

describe('createRunner', () => {
  it("corrects its estimate of Redis's clock from a 'late' answer and sends once more", async () => {
    const HOUR = 3_600_000;
    const fake = fakeConnection([
      async ([, , deadline]) => {
        // Redis is an hour ahead: the deadline (in its time) has long passed.
        expect(Number(deadline)).toBeLessThan(Date.now() + HOUR);
        return ['late', String(Date.now() + HOUR)];
      },
      async ([, , deadline]) => {
        expect(Number(deadline)).toBeGreaterThan(Date.now() + HOUR);
        return ['ok', String(Date.now() + HOUR), 'answer'];
      },
      async ([, , deadline]) => ['ok', String(Date.now() + HOUR), deadline ?? ''],
    ]);
    const run = runnerFor(fake);
    const now = Date.now();
    const first = await run(SCRIPT, 'breakerAdmit', 'k', 'p:breaker:k', now, []);
    expect(first.values).toEqual(['answer']);
    // Answers in Redis's clock move back into ours.
    expect(first.shift).toBeGreaterThan(-HOUR - 1000);
    expect(first.shift).toBeLessThan(-HOUR + 1000);
    expect(fake.calls).toHaveLength(2);
    // Learned: the next operation goes through in one call.
    await run(SCRIPT, 'breakerAdmit', 'k', 'p:breaker:k', Date.now(), []);
    expect(fake.calls).toHaveLength(3);
    expect(fake.connection.offset).toBeGreaterThan(HOUR - 1000);
  });

  it('times out once, then fails at once until a probe is due, and reports the outage once', async () => {
    const events: RedisStoreEvent[] = [];
    const fake = fakeConnection([never, never, never, ok]);
    const run = runnerFor(fake, events);
    const attempt = () => run(SCRIPT, 'budgetRetry', 'k', 'p:budget:k', Date.now(), []);

    let started = Date.now();
    await expect(attempt()).rejects.toMatchObject({
      name: 'StoreUnavailableError',
      message: expect.stringContaining('Redis did not answer within 40 ms'),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    started = Date.now();
    for (let i = 0; i < 5; i++) await expect(attempt()).rejects.toMatchObject({ operation: 'budgetRetry' });
    expect(Date.now() - started).toBeLessThan(100);
    expect(fake.calls).toHaveLength(1); // none of those five went to Redis

    await sleep(310); // the probe is due: it times out too, and the next is 300 ms later
    await expect(attempt()).rejects.toMatchObject({ name: 'StoreUnavailableError' });
    expect(fake.calls).toHaveLength(2);
    await expect(attempt()).rejects.toMatchObject({ name: 'StoreUnavailableError' });
    expect(fake.calls).toHaveLength(2);

    fake.reconnect(); // ioredis is ready again: probe at once
    await expect(attempt()).rejects.toMatchObject({ name: 'StoreUnavailableError' });
    expect(fake.calls).toHaveLength(3);
    // That probe failed: the next waits probeMs again, reconnected or not.
    await expect(attempt()).rejects.toMatchObject({ name: 'StoreUnavailableError' });
    expect(fake.calls).toHaveLength(3);
    fake.reconnect();
    expect((await attempt()).values).toEqual(['answer']);
    expect(events.map((event) => event.type)).toEqual(['store-unavailable', 'store-recovered']);
    expect(events[0]).toMatchObject({ operation: 'budgetRetry', key: 'k', prefix: 'p', failOpen: true });
    expect(events[1]).toMatchObject({ failed: 10 }); // 1 + 5 + 2 + 2
  });

  it('sends nothing while the connection is down', async () => {
    const fake = fakeConnection([ok]);
    fake.block('the Redis connection is reconnecting');
    const run = runnerFor(fake);
    await expect(run(SCRIPT, 'pacingGet', 'k', 'p:pacing:k', 0, [])).rejects.toMatchObject({
      message: expect.stringContaining('the Redis connection is reconnecting'),
    });
    expect(fake.calls).toHaveLength(0);
  });

  it('leaves no unhandled rejection when a command fails after its timeout', async () => {
    let fail: (error: Error) => void = () => {};
    const fake = fakeConnection([
      () =>
        new Promise((_resolve, reject) => {
          fail = reject;
        }),
    ]);
    const run = runnerFor(fake);
    await expect(run(SCRIPT, 'limiterTake', 'k', 'p:limiter:k', 0, [])).rejects.toMatchObject({
      name: 'StoreUnavailableError',
    });
    fail(new Error('Connection is closed.')); // vitest fails the run on an unhandled rejection
    await sleep(10);
  });

  it('ignores a listener that throws', async () => {
    const fake = fakeConnection([]);
    fake.block('the Redis connection is end');
    const run = createRunner({
      connection: fake.connection,
      prefix: 'p',
      clock: 'caller',
      timeoutMs: 40,
      probeMs: 100,
      failOpen: true,
      onEvent: () => {
        throw new Error('listener bug');
      },
    });
    await expect(run(SCRIPT, 'pacingGet', 'k', 'p:pacing:k', 0, [])).rejects.toMatchObject({
      name: 'StoreUnavailableError',
    });
  });
});
