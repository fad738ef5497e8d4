import { systemClock } from '@retryline/core/adapter';
import { createLiveness } from './liveness';
import type { Script } from './scripts/lua';

/**
 * The part of an ioredis client (`Redis` or `Cluster`, ioredis 5 or 6) the store uses. Structural,
 * so the declarations do not depend on one ioredis version's types.
 */
export interface RedisClient {
  /** ioredis's connection status: `'ready'` when commands go straight out. */
  readonly status: string;
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  listenerCount(event: string): number;
  /** Connects a client made with `lazyConnect` (status `'wait'`). */
  connect?(): Promise<unknown>;
  /** Whether this is a Cluster, whose pipelines must keep to one hash slot. */
  readonly isCluster?: boolean;
  /** Starts an explicit pipeline: its commands go out in one write when it is executed. */
  pipeline?(): { exec(): Promise<unknown> };
}

/** A script's reply, with when its command was written and when the reply was read (local clock). */
export interface Reply {
  readonly value: unknown;
  readonly sent: number;
  readonly received: number;
}

/** What the stores on one client share about its connection. */
export interface Connection {
  /**
   * Why a command should not be sent now, or undefined when it may be. Only a ready connection, or
   * the very first connect (nothing sent yet has been lost), takes commands: otherwise ioredis would
   * queue them until it reconnects, and the store has long answered for them by then.
   */
  blocked(): string | undefined;
  /** How many times the client became ready: a store down since an older count may probe at once. */
  readonly readyCount: number;
  /**
   * Since when Redis has answered nothing, if a command was given up for that (see
   * {@link Liveness}) and nothing was heard since: a store that finds it so need not wait again.
   */
  readonly silentSince: number | undefined;
  /** Redis's clock minus ours (ms), estimated from answers: places each script's deadline. */
  offset: number;
  /**
   * Runs a script on `key`; resolves with its reply. `args` is called when the command is written
   * (a command asked for during the first connect waits for it), with the local time, so a
   * deadline in the arguments counts from then. Rejects when Redis has answered nothing for
   * `timeoutMs`, when the connection closes before the command was written, or with ioredis's error.
   */
  call(
    script: Script,
    key: string,
    args: (sent: number) => readonly string[],
    timeoutMs: number,
  ): Promise<Reply>;
}

const connections = new WeakMap<RedisClient, Connection>();

// ioredis reports every failed reconnect as an 'error' event; with no listener it logs each one.
// The store reports an outage once (store-unavailable), so a client nobody listens to gets a
// listener that drops them.
const ignore = () => {};

/** A command asked for before the first connect was ready: written once it is. */
interface Held {
  write(): void;
  fail(reason: string): void;
}

/** A command on its way out, written with the other commands asked for in the same tick. */
interface Outgoing {
  readonly script: Script;
  readonly key: string;
  readonly args: (sent: number) => readonly string[];
  /** Called once, with ioredis's answer and when the command was written. */
  answered(sent: number, error: unknown, value?: unknown): void;
}

/** The one {@link Connection} of `client`, created (and its listeners attached) on first use. */
export function connectionOf(client: RedisClient): Connection {
  const existing = connections.get(client);
  if (existing) return existing;

  let closedSinceReady = false;
  let readyCount = 0;
  const liveness = createLiveness(localNow);
  const held = new Set<Held>();
  // A connect or a ready check answered is Redis answering.
  client.on('connect', () => liveness.heard());
  client.on('ready', () => {
    liveness.heard();
    closedSinceReady = false;
    readyCount++;
    for (const command of [...held]) {
      held.delete(command);
      command.write();
    }
  });
  client.on('close', () => {
    closedSinceReady = true;
    // Never written, so never applied: these fail at once, and the store answers for them.
    for (const command of [...held]) {
      held.delete(command);
      command.fail(`the Redis connection closed before it was ready (${client.status})`);
    }
  });
  if (client.listenerCount('error') === 0) client.on('error', ignore);

  const defined = new Set<string>();
  const define = (script: Script): string => {
    const name = commandName(script);
    if (!defined.has(name)) {
      // ioredis sends EVAL the first time on each connection and EVALSHA after: one round trip
      // per operation, also after a Redis restart flushed the script cache.
      client.defineCommand(name, { lua: script.lua, numberOfKeys: 1 });
      defined.add(name);
    }
    return name;
  };

  let outgoing: Outgoing[] = [];
  const send = (command: Outgoing) => {
    if (outgoing.push(command) === 1) queueMicrotask(flush);
  };
  /**
   * Writes the tick's commands at once, in one explicit pipeline (one write, each command still its
   * own script and answer). At once matters: each carries a deadline counted from now, and
   * ioredis's enableAutoPipelining would write them only from setImmediate, after whatever else a
   * busy process does first. Not on a Cluster, whose pipelines must keep to one hash slot.
   */
  function flush() {
    const commands = outgoing;
    outgoing = [];
    const names = commands.map((command) => define(command.script));
    // Made after every script is defined: a pipeline takes the client's commands when it is made.
    const pipeline = client.isCluster ? undefined : client.pipeline?.();
    const target = (pipeline ?? client) as unknown as Record<string, unknown>;
    const sent = localNow();
    commands.forEach((command, i) => {
      const answer = (error: unknown, value?: unknown) => command.answered(sent, error, value);
      try {
        const name = names[i] ?? '';
        const method = target[name];
        if (typeof method !== 'function') throw new Error(`ioredis did not define ${name}`);
        const args = [command.key, ...command.args(sent)];
        // In a pipeline, a command's own answer comes through its callback.
        if (pipeline) method.call(pipeline, ...args, answer);
        else (method.call(client, ...args) as Promise<unknown>).then((value) => answer(null, value), answer);
      } catch (error) {
        answer(error);
      }
    });
    // Every answer has reached its command; exec's promise only repeats them.
    pipeline?.exec().catch(ignore);
  }

  const connection: Connection = {
    blocked() {
      const { status } = client;
      if (status === 'ready') return undefined;
      const first = status === 'wait' || status === 'connecting' || status === 'connect';
      return first && !closedSinceReady ? undefined : `the Redis connection is ${status}`;
    },
    get readyCount() {
      return readyCount;
    },
    get silentSince() {
      return liveness.silentSince;
    },
    offset: 0,
    call(script, key, args, timeoutMs) {
      return new Promise<Reply>((resolve, reject) => {
        const blocked = connection.blocked();
        if (blocked) return reject(new Error(blocked));
        let waiting: Held | undefined;
        const command: Outgoing = {
          script,
          key,
          args,
          answered(sent, error, value) {
            if (!error) {
              liveness.heard();
              if (settle()) resolve({ value, sent, received: localNow() });
              return;
            }
            // An error reply is Redis answering; a closed connection is not.
            if (error instanceof Error && error.name === 'ReplyError') liveness.heard();
            if (settle()) reject(error);
          },
        };
        const settle = liveness.watch(timeoutMs, (silentMs) => {
          if (waiting) held.delete(waiting);
          reject(new Error(`Redis answered nothing for ${Math.round(silentMs)} ms`));
        });
        if (client.status === 'ready') return send(command);
        // The first connect is under way: written when it is ready, so the command's deadline
        // counts from then, not from a connect the busy process took its time to finish.
        waiting = {
          write: () => send(command),
          fail: (reason) => {
            if (settle()) reject(new Error(reason));
          },
        };
        held.add(waiting);
        if (client.status === 'wait') client.connect?.().catch(ignore);
      });
    },
  };
  connections.set(client, connection);
  return connection;
}

const names = new WeakMap<Script, string>();

/**
 * The command a script is defined as: named for its content, so two copies of this package with
 * different scripts on one client never overwrite each other's.
 */
function commandName(script: Script): string {
  let name = names.get(script);
  if (name === undefined) {
    name = `retryline_${script.name}_${fnv1a(script.lua)}`;
    names.set(script, name);
  }
  return name;
}

/** FNV-1a, 32 bits, in hex: a name, not a checksum. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}

/** The local clock, for timeouts and deadlines (the guards' `now` is the caller's business). */
export const localNow = (): number => systemClock.now();
