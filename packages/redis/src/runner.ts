import { type Connection, localNow } from './connection';
import { StoreUnavailableError } from './errors';
import { type RedisStoreEvent, type StoreOperation, summarize } from './events';
import type { Script } from './scripts/lua';

/** How the store asks Redis: settled once by `redisStore()`. */
export interface RunnerOptions {
  readonly connection: Connection;
  readonly prefix: string;
  readonly clock: 'redis' | 'caller';
  readonly timeoutMs: number;
  readonly probeMs: number;
  readonly failOpen: boolean;
  readonly onEvent: ((event: RedisStoreEvent) => void) | undefined;
}

/** A script's answer after `ok` and Redis's `now`, with the shift into the caller's clock. */
export interface Answer {
  readonly values: readonly string[];
  /** Add to a time in the store's clock to get the caller's: `callerNow − redisNow`, or 0. */
  readonly shift: number;
}

/**
 * Runs one store operation, or refuses to: throws {@link StoreUnavailableError} when Redis cannot
 * answer in time (the store then fails open or not). Keeps the outage state: the first failure
 * starts an outage and emits `store-unavailable`; while it lasts, one operation per `probeMs`
 * goes to Redis and the rest fail at once (no timeout to wait out per request); the first success
 * ends it with `store-recovered`.
 */
export type Runner = (
  script: Script,
  operation: StoreOperation,
  key: string,
  redisKey: string,
  now: number,
  args: readonly string[],
) => Promise<Answer>;

// A script must start this long before we give up on it, or it does nothing: its answer then has
// that long to come back, so an operation the store answered for (failing open) is not applied
// behind its back. The clock offset is estimated only from round trips this short (error ≤ half).
const MAX_SLACK_MS = 50;

export function createRunner(options: RunnerOptions): Runner {
  const { connection, prefix, clock, timeoutMs, probeMs, failOpen, onEvent } = options;
  const slack = Math.min(MAX_SLACK_MS, timeoutMs / 5);
  let outage: { since: number; failed: number; readyCount: number; nextProbe: number } | undefined;
  let probing = false;

  const emit = (event: RedisStoreEvent) => {
    try {
      onEvent?.(event);
    } catch {
      // A faulty listener must not change how a request is guarded.
    }
  };

  const fail = (operation: StoreOperation, key: string, reason: string, cause: unknown) => {
    const at = localNow();
    if (outage) {
      outage.failed++;
    } else {
      outage = { since: at, failed: 1, readyCount: connection.readyCount, nextProbe: at + probeMs };
      emit({
        v: 1,
        type: 'store-unavailable',
        t: at,
        store: 'redis',
        prefix,
        operation,
        key,
        failOpen,
        error: summarize(cause),
      });
    }
    const then = failOpen
      ? 'The store fails open: the request goes on without this guard.'
      : 'The store was made with failOpen: false, so the request fails; failOpen: true lets requests through while Redis is unavailable.';
    return new StoreUnavailableError(
      `[@retryline/redis] ${operation} for ${key} failed: ${reason}. ${then}`,
      {
        operation,
        key,
        cause,
      },
    );
  };

  /** Why this operation must not go to Redis now, or undefined to send it. */
  const gate = (): string | undefined => {
    const blocked = connection.blocked();
    if (blocked) return blocked;
    if (!outage) return undefined;
    if (probing) return 'Redis is unavailable and another operation is checking whether it is back';
    const reconnected = connection.readyCount !== outage.readyCount;
    if (!reconnected && localNow() < outage.nextProbe) {
      return `Redis is unavailable since ${new Date(outage.since).toISOString()} (checked again every ${probeMs} ms)`;
    }
    return undefined;
  };

  const send = async (script: Script, redisKey: string, now: number, args: readonly string[]) => {
    const giveUpAt = localNow() + timeoutMs;
    for (let attempt = 1; ; attempt++) {
      const sent = localNow();
      const deadline = Math.floor(giveUpAt + connection.offset - slack);
      const reply = await within(
        connection.call(script, redisKey, [clock, String(now), String(deadline), ...args]),
        giveUpAt - sent,
        () => new Error(`Redis did not answer within ${timeoutMs} ms`),
      );
      const received = localNow();
      if (!Array.isArray(reply) || reply.length < 2 || !reply.every((x) => typeof x === 'string')) {
        throw new Error(`Redis answered ${script.name} with ${JSON.stringify(reply)}`);
      }
      const [status, redisNow, ...values] = reply as string[];
      const rnow = Number(redisNow);
      if (received - sent <= slack || status === 'late') connection.offset = rnow - (sent + received) / 2;
      if (status === 'ok') return { values, shift: clock === 'redis' ? now - rnow : 0 };
      // 'late' while we still wait: our estimate of Redis's clock was behind; it is now corrected.
      if (attempt > 1 || localNow() >= giveUpAt) {
        throw new Error(`Redis's clock is ${Math.round(connection.offset)} ms off ours and moving`);
      }
    }
  };

  return async (script, operation, key, redisKey, now, args) => {
    const refused = gate();
    if (refused) throw fail(operation, key, refused, new Error(refused));
    const probe = outage !== undefined;
    if (probe) probing = true;
    try {
      const answer = await send(script, redisKey, now, args);
      if (outage) {
        const at = localNow();
        const { since, failed } = outage;
        outage = undefined;
        emit({ v: 1, type: 'store-recovered', t: at, store: 'redis', prefix, downtime: at - since, failed });
      }
      return answer;
    } catch (error) {
      if (outage) {
        // A failed probe waits probeMs for the next, even if it was sent because ioredis reconnected.
        outage.nextProbe = localNow() + probeMs;
        outage.readyCount = connection.readyCount;
      }
      throw fail(operation, key, error instanceof Error ? error.message : String(error), error);
    } finally {
      if (probe) probing = false;
    }
  };
}

/**
 * `promise`, or a rejection after `ms`. Either way `promise` is handled: a command that fails
 * after its timeout never becomes an unhandled rejection.
 */
function within<T>(promise: Promise<T>, ms: number, timeout: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timeout()), Math.max(0, ms));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
