// Soak: does a long run of requests through each Retryline adapter leave anything behind? For
// @retryline/fetch, @retryline/axios and @retryline/ky in turn, sends SOAK_REQUESTS GETs (100,000
// by default) with CONCURRENCY (32) in flight to a keep-alive loopback server on 127.0.0.1. Every
// 10th request is answered 503 on its first attempt (every 20th with `Retry-After: 0`), so
// Retryline's retries, backoff timers, retry budget and pacing checks run too; the backoff is set to
// 1 ms so the soak stays fast. Each adapter gets its own memoryStore() as `store` and one long-lived
// AbortSignal (from an AbortController never aborted) passed as `signal` to every request.
//
// After a 1,000-request warm-up, and after each quarter of the run, it forces gc() a few times and
// records: heapUsed; process.getActiveResourcesInfo() grouped by type (Timeout, TCPSocketWrap …);
// the 'abort' listeners on the long-lived signal (getEventListeners); the signals Node keeps as
// dependants of it (AbortSignal.any's bookkeeping, read from a Node internal for diagnosis only);
// and the store's size(). The report is the growth per adapter (heap in KB, per 1,000 requests, and
// the slope of heap over the quarters), timers and listeners before and after, and requests/s.
// These are benchmark figures from a noisy machine, not assertions.
//
// The server decides statelessly from Retryline's attempt header, so it holds nothing per request
// and its own heap stays flat.
// Run after `pnpm build`: `node --expose-gc bench/soak.mjs` (SOAK_REQUESTS, CONCURRENCY to change);
// writes bench/results/soak.json.
import { getEventListeners } from 'node:events';
import { createServer } from 'node:http';
import axios from 'axios';
import ky from 'ky';
import { attachRetry } from '../packages/axios/dist/index.js';
import { memoryStore } from '../packages/core/dist/index.js';
import { retryFetch } from '../packages/fetch/dist/index.js';
import { retryline } from '../packages/ky/dist/index.js';
import { writeResult } from './lib/results.mjs';

if (typeof globalThis.gc !== 'function') {
  console.error('bench/soak.mjs needs gc() to measure the heap: run it as `node --expose-gc bench/soak.mjs`');
  process.exit(1);
}

const REQUESTS = Number(process.env.SOAK_REQUESTS ?? 100_000);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 32);
const WARMUP = 1_000;
const SEGMENTS = 4;
const ATTEMPT_HEADER = 'x-retryline-attempt';

// The server: `/r/<n>` answers 200, except that the first attempt of every 10th n gets a 503.
// Retryline sends `attempt=1; max=3` in ATTEMPT_HEADER, so no per-request state is needed here.
const served = { total: 0, unavailable: 0 };
const server = createServer((request, response) => {
  served.total++;
  const n = Number(request.url.slice(3));
  const firstAttempt = request.headers[ATTEMPT_HEADER]?.startsWith('attempt=1;') ?? true;
  if (n % 10 === 0 && firstAttempt) {
    served.unavailable++;
    const headers = { 'content-type': 'text/plain', 'content-length': '11' };
    if (n % 20 === 0) headers['retry-after'] = '0';
    response.writeHead(503, headers);
    response.end('unavailable');
    return;
  }
  response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
  response.end('ok');
});
server.keepAliveTimeout = 60_000;
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

// Retryline options every adapter shares: a 1 ms base backoff (exponential, full jitter: the first
// retry waits U(0, 2) ms), the attempt header the server reads, and the default retry budget and
// pacing, which live in the store.
const policy = { backoff: { base: 1 }, attemptHeader: ATTEMPT_HEADER };

/** Each adapter: a client made once, and one GET that reads its body and returns the status. */
const adapters = {
  '@retryline/fetch': (store) => {
    const fetchWithRetry = retryFetch(fetch, { ...policy, store });
    return async (url, signal) => {
      const response = await fetchWithRetry(url, { signal });
      await response.text();
      return response.status;
    };
  },
  '@retryline/axios': (store) => {
    const instance = axios.create({ responseType: 'text' });
    attachRetry(instance, { ...policy, store });
    return async (url, signal) => (await instance.get(url, { signal })).status;
  },
  '@retryline/ky': (store) => {
    const api = ky.create(retryline({ ...policy, store }));
    return async (url, signal) => {
      const response = await api.get(url, { signal });
      await response.text();
      return response.status;
    };
  },
};

let sequence = 0;

/** Sends `count` requests, CONCURRENCY at a time; tallies statuses and errors into `outcomes`. */
async function drive(send, signal, count, outcomes) {
  let left = count;
  const worker = async () => {
    while (left > 0) {
      left--;
      const url = `${origin}/r/${++sequence}`;
      try {
        const status = await send(url, signal);
        outcomes[status] = (outcomes[status] ?? 0) + 1;
      } catch (error) {
        const name = error?.name ?? 'Error';
        outcomes[name] = (outcomes[name] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

// Node keeps the signals AbortSignal.any() derived from a signal in a set on it (weak references).
// Not an API: read only to say where growth comes from, `null` when this Node has no such set.
function dependantSignals(signal) {
  const symbol = Object.getOwnPropertySymbols(signal).find((s) => s.description === 'kDependantSignals');
  return symbol === undefined ? null : (signal[symbol]?.size ?? null);
}

const countBy = (names) => {
  const counts = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b)));
};

/** Collects what can be collected (and lets FinalizationRegistry callbacks run), then measures. */
async function snapshot(signal, store) {
  for (let i = 0; i < 4; i++) {
    globalThis.gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return {
    heapUsed: process.memoryUsage().heapUsed,
    resources: countBy(process.getActiveResourcesInfo()),
    abortListeners: getEventListeners(signal, 'abort').length,
    dependantSignals: dependantSignals(signal),
    store: store.size(),
  };
}

/** Least-squares slope of y over x. */
function slope(xs, ys) {
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const kb = (bytes) => Number((bytes / 1024).toFixed(1));
const rows = [];
for (const [adapter, make] of Object.entries(adapters)) {
  const store = memoryStore();
  const controller = new AbortController(); // never aborted: the user's long-lived signal
  const { signal } = controller;
  const send = make(store);
  const servedBefore = { ...served };
  const outcomes = {};
  await drive(send, signal, WARMUP, {});
  const before = await snapshot(signal, store);

  const points = [{ requests: 0, heapUsed: before.heapUsed }];
  const perSegment = Math.ceil(REQUESTS / SEGMENTS);
  let sent = 0;
  let elapsedNs = 0n;
  let after = before;
  while (sent < REQUESTS) {
    const count = Math.min(perSegment, REQUESTS - sent);
    const start = process.hrtime.bigint();
    await drive(send, signal, count, outcomes);
    elapsedNs += process.hrtime.bigint() - start;
    sent += count;
    after = await snapshot(signal, store);
    points.push({ requests: sent, heapUsed: after.heapUsed });
  }

  const heapDelta = after.heapUsed - before.heapUsed;
  const seconds = Number(elapsedNs) / 1e9;
  const row = {
    adapter,
    requests: REQUESTS,
    requestsPerSecond: Math.round(REQUESTS / seconds),
    outcomes,
    served503: served.unavailable - servedBefore.unavailable,
    serverRequests: served.total - servedBefore.total,
    heapBeforeKB: kb(before.heapUsed),
    heapAfterKB: kb(after.heapUsed),
    heapDeltaKB: kb(heapDelta),
    heapDeltaPer1000KB: Number((heapDelta / 1024 / (REQUESTS / 1000)).toFixed(3)),
    // Bytes of heap per request over the quarters; near 0 when growth is not linear in requests.
    heapSlopeBytesPerRequest: Number(
      slope(
        points.map((p) => p.requests),
        points.map((p) => p.heapUsed),
      ).toFixed(2),
    ),
    heapByQuarterKB: points.map((p) => kb(p.heapUsed)),
    timersBefore: before.resources.Timeout ?? 0,
    timersAfter: after.resources.Timeout ?? 0,
    resourcesBefore: before.resources,
    resourcesAfter: after.resources,
    abortListenersBefore: before.abortListeners,
    abortListenersAfter: after.abortListeners,
    dependantSignalsBefore: before.dependantSignals,
    dependantSignalsAfter: after.dependantSignals,
    storeSizeBefore: before.store,
    storeSizeAfter: after.store,
  };
  rows.push(row);
  console.log(`${adapter}: done in ${seconds.toFixed(1)} s`);
}
server.closeAllConnections();
server.close();

const table = rows.map((row) => ({
  adapter: row.adapter,
  'req/s': row.requestsPerSecond,
  'heap Δ KB': row.heapDeltaKB,
  'KB/1k req': row.heapDeltaPer1000KB,
  'slope B/req': row.heapSlopeBytesPerRequest,
  timers: `${row.timersBefore} → ${row.timersAfter}`,
  'abort listeners': `${row.abortListenersBefore} → ${row.abortListenersAfter}`,
  'dependant signals': `${row.dependantSignalsBefore} → ${row.dependantSignalsAfter}`,
  outcomes: JSON.stringify(row.outcomes),
}));
console.table(table);
for (const row of rows) {
  console.log(
    `${row.adapter}: heap by quarter (KB) ${row.heapByQuarterKB.join(' → ')}; resources ${JSON.stringify(row.resourcesBefore)} → ${JSON.stringify(row.resourcesAfter)}; store ${JSON.stringify(row.storeSizeAfter)}`,
  );
}

const result = {
  command: 'node --expose-gc bench/soak.mjs',
  requestsPerAdapter: REQUESTS,
  concurrency: CONCURRENCY,
  warmup: WARMUP,
  rows,
};
console.log(`written to ${writeResult('soak', result)}`);
