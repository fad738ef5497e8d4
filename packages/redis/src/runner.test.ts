import { describe, expect, it } from 'vitest';
import type { Connection } from './connection';
import type { RedisStoreEvent } from './events';
import { createRunner } from './runner';
import { script } from './scripts/lua';

/**
 * A connection whose answers the test scripts: each call gets the next handler's answer. A handler
 * that never answers is given up after the call's timeoutMs, as the real connection's liveness
 * check gives up on a Redis that answers nothing.
 */
function fakeConnection(handlers: ((args: readonly string[]) => Promise<unknown>)[]) {
  const calls: string[][] = [];
  let readyCount = 0;
  let blocked: string | undefined;
  const connection: Connection & { silentSince: number | undefined } = {
    blocked: () => blocked,
    get readyCount() {
      return readyCount;
    },
    silentSince: undefined,
    offset: 0,
    call(_script, _key, build, timeoutMs) {
      const sent = Date.now();
      const args = build(sent);
      calls.push([...args]);
      const handler = handlers.shift();
      const reply = handler ? handler(args) : Promise.reject(new Error('no answer scripted'));
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`Redis answered nothing for ${timeoutMs} ms`)),
          timeoutMs,
        );
        reply.then(
          (value) => {
            clearTimeout(timer);
            resolve({ value, sent, received: Date.now() });
          },
          (error: unknown) => {
            clearTimeout(timer);
            reject(error);
          },
        );
      });
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

  it('gives up once, then fails at once until a probe is due, and reports the outage once', async () => {
    const events: RedisStoreEvent[] = [];
    const fake = fakeConnection([never, never, never, ok]);
    const run = runnerFor(fake, events);
    const attempt = () => run(SCRIPT, 'budgetRetry', 'k', 'p:budget:k', Date.now(), []);

    const started = Date.now();
    await expect(attempt()).rejects.toMatchObject({
      name: 'StoreUnavailableError',
      message: expect.stringContaining('Redis answered nothing for 40 ms'),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    // Failing at once is shown by count, not by a time on a busy machine: none of these five went
    // to Redis, and none waited for a timeout of its own (each would have sent a command).
    for (let i = 0; i < 5; i++) await expect(attempt()).rejects.toMatchObject({ operation: 'budgetRetry' });
    expect(fake.calls).toHaveLength(1);

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

  it("a slow round trip only bounds Redis's clock: a command that waited in line does not move the estimate", async () => {
    let placedAt = Number.NaN;
    // Redis's clock is ours. It starts the first command 150 ms after it was sent (a queue ahead of
    // it), past its deadline; the answer is read at once. Its clock reading proves nothing more than
    // that Redis's clock is within [0, 150] ms of ours, and 0 is within.
    const fake = fakeConnection([
      async () => {
        await sleep(150);
        return ['late', String(Date.now())];
      },
      async (args) => {
        // Its deadline: sent + timeoutMs − slack (1000 − 50) + the estimate.
        placedAt = Number(args[2]) - (Date.now() + 950);
        return ['ok', String(Date.now()), 'answer'];
      },
    ]);
    const run = createRunner({
      connection: fake.connection,
      prefix: 'p',
      clock: 'redis',
      timeoutMs: 1000,
      probeMs: 300,
      failOpen: true,
      onEvent: undefined,
    });
    await run(SCRIPT, 'budgetRetry', 'k', 'p:budget:k', Date.now(), []);
    expect(fake.calls).toHaveLength(2); // sent again after 'late'
    // The second command's deadline is placed on an unmoved estimate (a midpoint would have moved
    // it 75 ms ahead, and every later deadline with it).
    expect(Math.abs(placedAt)).toBeLessThan(20);
    expect(Math.abs(fake.connection.offset)).toBeLessThan(20);
  });

  it('another store on the connection found Redis silent: fails at once, without sending', async () => {
    const events: RedisStoreEvent[] = [];
    const fake = fakeConnection([ok]);
    fake.connection.silentSince = Date.now() - 500;
    const run = runnerFor(fake, events);
    await expect(run(SCRIPT, 'breakerAdmit', 'k', 'p:breaker:k', Date.now(), [])).rejects.toMatchObject({
      name: 'StoreUnavailableError',
      message: expect.stringContaining('Redis has answered nothing since'),
    });
    expect(fake.calls).toHaveLength(0);
    expect(events.map((event) => event.type)).toEqual(['store-unavailable']);
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
