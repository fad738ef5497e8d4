// What redisStore() adds to each guarded attempt on loopback: the same GET through retryFetch with
// no guards, with budget + breaker + limiter on memoryStore(), and with them on redisStore(). Each
// request succeeds at once, so every request is one attempt. Modes alternate in rounds so drift
// (JIT, GC, CPU frequency) hits all alike. Starts its own redis-server (127.0.0.1, free port, no
// persistence) and stops it. Run after `pnpm build`: `node bench/redis-latency.mjs`; prints JSON and
// writes bench/results/redis-latency.json.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { circuitBreaker, memoryStore, rateLimiter, retryBudget } from '@retryline/core';
import { normalizeBreaker } from '@retryline/core/store';
import { retryFetch } from '@retryline/fetch';
import { redisStore } from '@retryline/redis';
import { Redis } from 'ioredis';
import { writeResult } from './lib/results.mjs';

const REQUESTS = Number(process.env.REQUESTS ?? 5000);
const ROUNDS = 10;
const WARMUP = 500;

for (const name of ['core', 'fetch', 'redis']) {
  const dist = fileURLToPath(new URL(`../packages/${name}/dist/index.js`, import.meta.url));
  if (!existsSync(dist)) throw new Error(`${dist} is missing: run 'pnpm build' first`);
}

async function freePort() {
  const server = createNetServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function startRedis() {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`redis-server not ready:\n${output}`)), 10_000);
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}):\n${output}`)));
  });
  return {
    port,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', resolve);
        child.kill('SIGTERM');
      }),
  };
}

const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
const round = (ms) => Math.round(ms * 1000) / 1000;
function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: round(quantile(sorted, 0.5)), p99: round(quantile(sorted, 0.99)), n: sorted.length };
}

const redisServer = await startRedis();
const http = createServer((_request, response) => response.end('ok'));
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${http.address().port}/item`;
const client = new Redis(redisServer.port, '127.0.0.1');
await client.ping();

try {
  const guards = {
    retries: 2,
    // Values with no store of their own: each client's store (memory or Redis) keeps their state.
    budget: retryBudget(),
    breaker: circuitBreaker(),
    limiter: rateLimiter({ capacity: 1_000_000, refillPerSecond: 1_000_000 }),
  };
  const modes = {
    none: retryFetch(fetch, { retries: 2, budget: false }),
    memoryStore: retryFetch(fetch, { ...guards, store: memoryStore() }),
    redisStore: retryFetch(fetch, { ...guards, store: redisStore(client, { prefix: 'bench' }) }),
  };
  const samples = Object.fromEntries(Object.keys(modes).map((mode) => [mode, []]));
  for (const api of Object.values(modes)) for (let i = 0; i < WARMUP; i++) await (await api(url)).text();
  for (let r = 0; r < ROUNDS; r++) {
    for (const [mode, api] of Object.entries(modes)) {
      for (let i = 0; i < REQUESTS / ROUNDS; i++) {
        const started = performance.now();
        await (await api(url)).text();
        samples[mode].push(performance.now() - started);
      }
    }
  }

  // One store operation on its own: a breakerAdmit script round trip.
  const store = redisStore(client, { prefix: 'bench-op' });
  const breaker = normalizeBreaker();
  const ops = [];
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    await store.breakerAdmit('https://api.example', breaker, Date.now());
    ops.push(performance.now() - started);
  }

  const results = Object.fromEntries(Object.entries(samples).map(([mode, list]) => [mode, summary(list)]));
  const added = (mode) => ({
    median: round(results[mode].median - results.none.median),
    p99: round(results[mode].p99 - results.none.p99),
  });
  const result = {
    what: 'ms per request (one attempt, 200 on loopback); guards: budget + breaker + limiter (+ pacing read, on by default for HTTP)',
    node: process.version,
    requestsPerMode: REQUESTS,
    perRequest: results,
    addedPerAttempt: { memoryStore: added('memoryStore'), redisStore: added('redisStore') },
    redisScriptRoundTrip: summary(ops),
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(
    `written to ${writeResult('redis-latency', { command: 'node bench/redis-latency.mjs', ...result })}`,
  );
} finally {
  client.disconnect();
  http.close();
  await redisServer.stop();
}
