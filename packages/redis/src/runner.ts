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
 * answer (the store then answers from its local memory, or fails). Keeps the outage state: the
 * first failure starts an outage and emits `store-unavailable`; while it lasts, one operation per
 * `probeMs` goes to Redis and the rest fail at once (no timeout to wait out per request); the first
 * success ends it with `store-recovered`.
 *
 * Redis is judged by its own answers, never by how long a caller waited (a busy process is not a
 * slow Redis): an operation fails when the connection is down, when Redis answers nothing at all
 * for `timeoutMs` (see `liveness.ts`), or when Redis itself started the script more than
 * `timeoutMs` after it was written, twice (the script's deadline, on Redis's clock).
 */
export type Runner = (
  script: Script,
  operation: StoreOperation,
  key: string,
  redisKey: string,
  now: number,
  args: readonly string[],
) => Promise<Answer>;

// A script must start this long before we could give up on it, or it does nothing: its answer then
// has that long to come back, so an operation the store answered for is not applied behind its
// back. The clock offset is pinned only by round trips this short (error ≤ half).
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
      ? "The store answers from this process's memory until Redis is back."
      : 'The store was made with failOpen: false, so the request fails; failOpen: true answers from local memory while Redis is unavailable.';
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
    if (!outage) {
      // Another store on this connection gave up on Redis and nothing was heard since: no need to
      // wait timeoutMs again to learn the same.
      const silent = connection.silentSince;
      return silent === undefined
        ? undefined
        : `Redis has answered nothing since ${new Date(silent).toISOString()}`;
    }
    if (probing) return 'Redis is unavailable and another operation is checking whether it is back';
    const reconnected = connection.readyCount !== outage.readyCount;
    if (!reconnected && localNow() < outage.nextProbe) {
      return `Redis is unavailable since ${new Date(outage.since).toISOString()} (checked again every ${probeMs} ms)`;
    }
    return undefined;
  };

  /** Moves the estimate of Redis's clock into what an answer proves about it. */
  const learnOffset = (redisNow: number, sent: number, received: number) => {
    // Redis read its clock between our writing the command and our reading the reply: its clock
    // minus ours lies in [redisNow − received, redisNow − sent]. A short round trip pins it (the
    // midpoint); a long one (a busy process reads replies late) only bounds it, so the estimate
    // moves only as far as that bound requires.
    if (received - sent <= slack) connection.offset = redisNow - (sent + received) / 2;
    else connection.offset = Math.min(Math.max(connection.offset, redisNow - received), redisNow - sent);
  };

  const send = async (script: Script, redisKey: string, now: number, args: readonly string[]) => {
    // Counted from when the command is written, on Redis's clock: a script Redis starts later than
    // this does nothing, so one we gave up on (never before timeoutMs after it was written) is
    // never applied late.
    const build = (sent: number) => [
      clock,
      String(now),
      String(Math.floor(sent + timeoutMs + connection.offset - slack)),
      ...args,
    ];
    for (let attempt = 1; ; attempt++) {
      const { value: reply, sent, received } = await connection.call(script, redisKey, build, timeoutMs);
      if (!Array.isArray(reply) || reply.length < 2 || !reply.every((x) => typeof x === 'string')) {
        throw new Error(`Redis answered ${script.name} with ${JSON.stringify(reply)}`);
      }
      const [status, redisNow, ...values] = reply as string[];
      const rnow = Number(redisNow);
      learnOffset(rnow, sent, received);
      if (status === 'ok') return { values, shift: clock === 'redis' ? now - rnow : 0 };
      // 'late' once: our estimate of Redis's clock was off (now corrected), or the command waited
      // in a queue. Twice: Redis takes longer than timeoutMs to start what it is sent.
      if (attempt > 1) {
        throw new Error(
          `Redis started ${script.name} more than ${timeoutMs - slack} ms after it was sent, twice (its clock is about ${Math.round(connection.offset)} ms from ours)`,
        );
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
