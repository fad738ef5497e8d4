import { systemClock } from '@retryline/core';
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
  /** Redis's clock minus ours (ms), estimated from answers: places each script's deadline. */
  offset: number;
  /** Runs a script on `key`; resolves with its answer, an array of strings. */
  call(script: Script, key: string, args: readonly string[]): Promise<unknown>;
}

const connections = new WeakMap<RedisClient, Connection>();

// ioredis reports every failed reconnect as an 'error' event; with no listener it logs each one.
// The store reports an outage once (store-unavailable), so a client nobody listens to gets a
// listener that drops them.
const ignore = () => {};

/** The one {@link Connection} of `client`, created (and its listeners attached) on first use. */
export function connectionOf(client: RedisClient): Connection {
  const existing = connections.get(client);
  if (existing) return existing;

  let closedSinceReady = false;
  let readyCount = 0;
  const defined = new Set<string>();
  client.on('ready', () => {
    closedSinceReady = false;
    readyCount++;
  });
  client.on('close', () => {
    closedSinceReady = true;
  });
  if (client.listenerCount('error') === 0) client.on('error', ignore);

  const commands = client as unknown as Record<string, (...args: string[]) => Promise<unknown>>;
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
    offset: 0,
    call(script, key, args) {
      const name = commandName(script);
      if (!defined.has(name)) {
        // ioredis sends EVAL the first time on each connection and EVALSHA after: one round trip
        // per operation, also after a Redis restart flushed the script cache.
        client.defineCommand(name, { lua: script.lua, numberOfKeys: 1 });
        defined.add(name);
      }
      const command = commands[name];
      if (typeof command !== 'function') return Promise.reject(new Error(`ioredis did not define ${name}`));
      return command.call(client, key, ...args);
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
