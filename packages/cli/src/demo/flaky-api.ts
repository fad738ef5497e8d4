/**
 * The demo's flaky API: a `node:http` server on 127.0.0.1 that plays a scripted failure story.
 * Requests are `GET /<run>/orders/<n>`: `n` is the request's place in the workload, so every run
 * (each client, with and without retries) meets the same failures. Which requests fail, and how,
 * is drawn from `seededRandom` keyed by the run's seed, `n` and the attempt; only the outage is a
 * window of time, placed so that no attempt of the workload lands near its edges.
 */

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { seededRandom } from '@retryline/core';

/** What a wave of requests meets on its first attempts. */
export type WaveKind = 'healthy' | 'rate-limit' | 'burst-503' | 'resets' | 'outage';

/** One wave of the workload: `size` requests sent together `at` ms into the story. */
export interface Wave {
  readonly at: number;
  readonly kind: WaveKind;
}

/** A failure story: the waves, their size, and the outage window (ms from the story's start). */
export interface Story {
  readonly name: string;
  readonly waves: readonly Wave[];
  readonly perWave: number;
  readonly outage: { readonly from: number; readonly to: number };
}

/**
 * The full story, about 5 s: healthy; a burst of 503s; connection resets; a 2-second outage (503s
 * and resets on every attempt); a 429 with `Retry-After: 1` as the server recovers; healthy again.
 * Retryline's default backoff (2 retries: full jitter under 200 ms, then under 400 ms) spends at
 * most 600 ms between attempts, so every request but the outage's is decided by its place in the
 * workload, and no attempt lands within 200 ms of the outage's edges. The 429 comes last:
 * Retryline holds every request to the origin until its Retry-After has passed, so earlier it would
 * push the next waves into the outage.
 */
export const FULL_STORY: Story = {
  name: 'full',
  perWave: 5,
  waves: [
    { at: 0, kind: 'healthy' },
    { at: 600, kind: 'burst-503' },
    { at: 1200, kind: 'resets' },
    { at: 2100, kind: 'outage' },
    { at: 2650, kind: 'outage' },
    { at: 3200, kind: 'outage' },
    { at: 4150, kind: 'rate-limit' },
    { at: 4650, kind: 'healthy' },
  ],
  outage: { from: 2000, to: 4000 },
};

/** The same story, shorter (about 3.5 s, a 0.8 s outage, 2 requests a wave): for tests. */
export const QUICK_STORY: Story = {
  name: 'quick',
  perWave: 2,
  waves: [
    { at: 0, kind: 'healthy' },
    { at: 300, kind: 'burst-503' },
    { at: 600, kind: 'resets' },
    { at: 1400, kind: 'outage' },
    { at: 2250, kind: 'rate-limit' },
    { at: 2600, kind: 'healthy' },
  ],
  outage: { from: 1350, to: 2150 },
};

/** How the server answered one attempt. */
export type Fate = 'ok' | '429' | '503' | 'reset';

/** What happens to attempt `attempt` (1-based) of request `n`, arriving `elapsed` ms into the story. */
export function fateOf(story: Story, seed: number, n: number, attempt: number, elapsed: number): Fate {
  const random = seededRandom(`${seed}:${n}:${attempt}`);
  if (elapsed >= story.outage.from && elapsed < story.outage.to) return random() < 0.5 ? '503' : 'reset';
  const wave = story.waves[Math.floor(n / story.perWave)];
  const first = n % story.perWave === 0;
  const odds = seededRandom(`${seed}:${n}`)();
  switch (wave?.kind) {
    case 'rate-limit':
      // The first request of the wave always meets the limit; the others half the time.
      return attempt === 1 && (first || odds < 0.5) ? '429' : 'ok';
    case 'burst-503':
      // Most first attempts fail, some second ones too; a third always gets through.
      if (attempt === 1) return first || odds < 0.8 ? '503' : 'ok';
      return attempt === 2 && (first || odds < 0.3) ? '503' : 'ok';
    case 'resets':
      if (attempt === 1) return first || odds < 0.6 ? 'reset' : 'ok';
      return attempt === 2 && odds < 0.2 ? 'reset' : 'ok';
    default:
      return 'ok';
  }
}

/** A running flaky API. */
export interface FlakyApi {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Starts the story again: time zero is now, every request's attempts are forgotten. */
  restart(): void;
  /** Attempts that reached the server since the last restart (the load it carried). */
  arrivals(): number;
  /** Closes the server and every open socket. */
  stop(): Promise<void>;
}

/** Starts the flaky API on 127.0.0.1, on a free port. */
export async function startFlakyApi(story: Story, seed: number): Promise<FlakyApi> {
  let start = performance.now();
  let attempts = new Map<number, number>();
  let arrivals = 0;
  const sockets = new Set<Socket>();

  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const match = /^\/[\w-]+\/[\w-]+\/orders\/(\d+)$/.exec(request.url ?? '');
    if (request.method !== 'GET' || match === null) {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    const n = Number(match[1]);
    const attempt = (attempts.get(n) ?? 0) + 1;
    attempts.set(n, attempt);
    arrivals++;
    const fate = fateOf(story, seed, n, attempt, performance.now() - start);
    if (fate === 'reset') {
      // Before any header: the client sees the connection drop.
      request.socket.destroy();
      return;
    }
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (fate === '429') headers['retry-after'] = '1';
    const status = fate === 'ok' ? 200 : Number(fate);
    response.writeHead(status, headers).end(JSON.stringify(status === 200 ? { order: n } : { error: fate }));
  };

  const server = createServer(handle);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    restart() {
      start = performance.now();
      attempts = new Map();
      arrivals = 0;
    },
    arrivals: () => arrivals,
    stop() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
