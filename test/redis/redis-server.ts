import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { requireProgram, TEST_PROGRAMS } from '../support/test-programs';

/**
 * A real redis-server for the Redis store's tests, not a mock: on 127.0.0.1, a free port, no
 * persistence (`--save ''`, `--appendonly no`), so each start is empty. `stop()` ends it cleanly,
 * `kill()` like a crash (SIGKILL); `start()` brings it back on the same port.
 */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Whether a redis-server is running on `port` right now. */
  readonly running: boolean;
  /** Starts redis-server on `port` again (after `stop()` or `kill()`); resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it with SIGTERM and waits for it to exit. */
  stop(): Promise<void>;
  /** Kills it with SIGKILL, as a crash would, and waits for it to exit. */
  kill(): Promise<void>;
}

/** A TCP port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (typeof address !== 'object' || address === null) throw new Error('no port');
  return address.port;
}

/**
 * Starts redis-server (`REDIS_SERVER`, else the one on PATH). Throws at once, naming the program and
 * how to get it, when it is not installed: the tests that need it fail rather than skip.
 */
export async function startRedisServer(): Promise<RedisServer> {
  const binary = requireProgram(TEST_PROGRAMS['redis-server']);
  const port = await freePort();
  let child: ChildProcess | undefined;

  const start = async () => {
    if (child) throw new Error(`[redis-server] already running on port ${port}`);
    const started = spawn(
      binary,
      [
        '--bind',
        '127.0.0.1',
        '--port',
        String(port),
        '--save',
        '',
        '--appendonly',
        'no',
        '--loglevel',
        'notice',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child = started;
    let output = '';
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`[redis-server] not ready on port ${port} after 10 s:\n${output}`)),
        10_000,
      );
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      };
      started.stdout?.on('data', onData);
      started.stderr?.on('data', onData);
      started.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`[redis-server] could not start ${binary}: ${error.message}`));
      });
      started.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`[redis-server] exited (${code ?? signal}) before it was ready:\n${output}`));
      });
    });
    started.once('exit', () => {
      if (child === started) child = undefined;
    });
    try {
      await ready;
    } catch (error) {
      started.kill('SIGKILL');
      throw error;
    }
  };

  const end = async (signal: NodeJS.Signals) => {
    const running = child;
    if (!running) return;
    const exited = once(running, 'exit');
    running.kill(signal);
    const timer = setTimeout(() => running.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
    child = undefined;
  };

  await start();
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    get running() {
      return child !== undefined;
    },
    start,
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
  };
}

/** One redis-server for a test file: started before its tests, stopped after them. */
export function useRedisServer(): RedisServer {
  let current: RedisServer | undefined;
  const running = (): RedisServer => {
    if (!current) throw new Error('[redis-server] used outside a test: the server starts in beforeAll');
    return current;
  };
  beforeAll(async () => {
    current = await startRedisServer();
  });
  afterAll(async () => {
    await current?.stop();
  });
  return {
    get port() {
      return running().port;
    },
    get url() {
      return running().url;
    },
    get running() {
      return running().running;
    },
    start: () => running().start(),
    stop: () => running().stop(),
    kill: () => running().kill(),
  };
}
