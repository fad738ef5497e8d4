// The closed-loop retry storm of `retryline simulate storm --clients 400` (packages/cli/src/simulate/
// closed-storm.ts), on a real server in real time, through each Retryline adapter and the peers'
// real code: what each client's retries do to a server of fixed capacity after a 2-second stall.
//
// The server (bench/lib/storm-server.mjs) runs in a child process on 127.0.0.1, keep-alive on: a FIFO
// queue in front of 8 workers, each request holding a worker 5 ms (a timer): 1,600 req/s. It does not
// notice a client giving up (such a request still takes a worker: wasted work). During [5 s, 7 s)
// after the run's start (sent over IPC, with the two processes' clock offset measured) no request
// starts, and one in service finishes 2 s late. It records every attempt (arrival, start and end of
// service, whether the client had gone) under the logical request's `x-storm-request` header and
// reports the records at the end. A fresh server for each policy, so runs share no state.
//
// The clients: CLIENTS (400) closed-loop clients in this process, sharing the policy's one client as
// an app's callers do. Each thinks Exp(THINK_MS = 412 ms; one seeded PRNG, as in the simulator), sends
// one logical GET, waits for it to settle, and again, while a request would start before DURATION_MS
// (15 s); then the run waits (at most SETTLE_MS, 30 s, after which the rest are aborted and count as
// unfinished) for the last ones to settle. 400 clients thinking 412 ms offer 60 % of capacity. Every
// attempt times out after 1 s: Retryline's `timeout: 1000`, axios's and ky's own `timeout: 1000`, and
// `AbortSignal.timeout(1000)` per attempt for bare fetch and p-retry. The policies, one after another:
// no retries (bare fetch); Retryline's defaults (retry budget and recovery gate included) through
// @retryline/fetch, @retryline/axios and @retryline/ky; axios-retry's defaults and with
// `retryDelay: exponentialDelay`; ky's defaults; p-retry's defaults around fetch. Each gets the run's
// signal, to abort what is left at SETTLE_MS (bare fetch: its attempt's own 1 s bounds it). Before
// the runs, each client sends 400 requests to a server without a stall, so that the first run does
// not pay alone for compiling the code they share (without it, bare fetch, first, ran at 55 %).
// A request's attempts are sequential, so the order in which the server sees them numbers them. The
// peers also say the number in `x-storm-attempt` (axios-retry through an interceptor, ky through a
// `beforeRequest` hook, p-retry from its attempt number), as a check on that; Retryline does not:
// its `addAttemptHeaders` hook costs some 70 µs of CPU per attempt here (measured against
// bench/lib/ok-server.mjs: 346 → 421 µs), enough to slow a closed loop down, and its
// `attemptHeader` option would change its options.
//
// The measures (bench/lib/storm-measures.mjs, exactly as closed-storm.ts defines them): amplification
// of the requests whose first attempt arrived in the stall's 4 s window, peak arrivals per 100 ms
// after the stall vs the steady mean before it (from 1 s), success, p50/p99 of logical-request
// latency, recovery after the stall (from when no started request had waited 250 ms), wasted work;
// and the steady load as a share of capacity (≈ 60 % if the scenario held). Real time brings noise
// the simulator has none of (timers, the two processes sharing the CPU, the peers' jitter): each row
// also says how late the server's answers were, this process's event-loop delay and its CPU per
// attempt. A client that needs more CPU waits longer between requests and so offers less load; and
// a burst of first attempts (clients all answered at once after the stall, or a pause of this
// process) can make the peak bucket, so each row says how many of the peak's attempts were retries.
// Run after `pnpm build`: `node bench/storm-real.mjs` (about 2 minutes); DURATION_MS, CLIENTS,
// THINK_MS, SEED, SETTLE_MS and POLICIES (ids, comma-separated: none, retryline-fetch,
// retryline-axios, retryline-ky, axios-retry, axios-retry-exp, ky, p-retry) for a quicker run;
// writes bench/results/storm-real.json and prints a table.
import { getEventListeners, setMaxListeners } from 'node:events';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import axios from 'axios';
import axiosRetry from 'axios-retry';
import ky from 'ky';
import pRetry from 'p-retry';
import { attachRetry } from '../packages/axios/dist/index.js';
import { seededRandom } from '../packages/core/dist/index.js';
import { retryFetch } from '../packages/fetch/dist/index.js';
import { retryline } from '../packages/ky/dist/index.js';
import { writeResult } from './lib/results.mjs';
import { BUCKET_MS, closedStormMeasures, WARM_UP_MS, WINDOW_MS } from './lib/storm-measures.mjs';
import { ATTEMPT_HEADER, epochNow, REQUEST_HEADER, startStormServer } from './lib/storm-server.mjs';

/** A non-negative number from the environment, or `fallback`. */
function setting(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, got '${raw}'`);
  return value;
}

const SCENARIO = {
  clients: setting('CLIENTS', 400),
  thinkMs: setting('THINK_MS', 412),
  workers: 8,
  serviceMs: 5,
  timeoutMs: 1_000,
  stallAt: 5_000,
  stallMs: 2_000,
  durationMs: setting('DURATION_MS', 15_000),
  settleMs: setting('SETTLE_MS', 30_000),
  seed: setting('SEED', 1),
};
if (SCENARIO.stallAt + SCENARIO.stallMs > SCENARIO.durationMs) {
  throw new Error(
    `DURATION_MS must be at least ${SCENARIO.stallAt + SCENARIO.stallMs}: the stall must end while requests still start`,
  );
}
const TIMEOUT_MS = SCENARIO.timeoutMs;

const idHeader = (id) => ({ [REQUEST_HEADER]: String(id) });
const headers = (id, attempt) => ({ [REQUEST_HEADER]: String(id), [ATTEMPT_HEADER]: String(attempt) });

// Each policy: `make(url, signal)` builds its client once per run and returns `send(id)`, which sends
// logical request `id` and resolves with the final status (reading the body) or rejects.
const POLICIES = [
  {
    id: 'none',
    name: 'no retries (fetch)',
    make: (url) => async (id) => {
      const response = await fetch(url, { headers: headers(id, 1), signal: AbortSignal.timeout(TIMEOUT_MS) });
      await response.text();
      return response.status;
    },
  },
  {
    id: 'retryline-fetch',
    name: '@retryline/fetch defaults',
    make: (url, signal) => {
      const api = retryFetch(fetch, { timeout: TIMEOUT_MS });
      return async (id) => {
        const response = await api(url, { headers: idHeader(id), signal });
        await response.text();
        return response.status;
      };
    },
  },
  {
    id: 'retryline-axios',
    name: '@retryline/axios defaults',
    make: (url, signal) => {
      const instance = axios.create();
      attachRetry(instance, { timeout: TIMEOUT_MS });
      return async (id) => (await instance.get(url, { headers: idHeader(id), signal })).status;
    },
  },
  {
    id: 'retryline-ky',
    name: '@retryline/ky defaults',
    make: (url, signal) => {
      const client = ky.create(retryline({ timeout: TIMEOUT_MS }));
      return async (id) => {
        const response = await client.get(url, { headers: idHeader(id), signal });
        await response.text();
        return response.status;
      };
    },
  },
  ...[
    { id: 'axios-retry', name: 'axios-retry defaults', options: undefined },
    {
      id: 'axios-retry-exp',
      name: 'axios-retry exponentialDelay',
      options: { retryDelay: axiosRetry.exponentialDelay },
    },
  ].map(({ id, name, options }) => ({
    id,
    name,
    make: (url, signal) => {
      const instance = axios.create({ timeout: TIMEOUT_MS });
      axiosRetry(instance, options);
      // axios-retry sends a retry through the instance again, its count in the config.
      instance.interceptors.request.use((config) => {
        config.headers.set(ATTEMPT_HEADER, String((config['axios-retry']?.retryCount ?? 0) + 1));
        return config;
      });
      return async (requestId) => (await instance.get(url, { headers: idHeader(requestId), signal })).status;
    },
  })),
  {
    id: 'ky',
    name: 'ky defaults',
    make: (url, signal) => {
      const client = ky.create({
        timeout: TIMEOUT_MS,
        hooks: {
          beforeRequest: [
            (request, _options, { retryCount }) => {
              request.headers.set(ATTEMPT_HEADER, String(retryCount + 1));
            },
          ],
        },
      });
      return async (id) => {
        const response = await client.get(url, { headers: idHeader(id), signal });
        await response.text();
        return response.status;
      };
    },
  },
  {
    id: 'p-retry',
    name: 'p-retry defaults (fetch)',
    make: (url, signal) => async (id) => {
      const response = await pRetry(
        (attempt) =>
          fetch(url, { headers: headers(id, attempt), signal: AbortSignal.timeout(TIMEOUT_MS) }).then(
            (result) => {
              if (!result.ok) throw new Error(`HTTP ${result.status}`);
              return result;
            },
          ),
        { signal },
      );
      await response.text();
      return response.status;
    },
  },
];

const chosen = process.env.POLICIES?.split(',').map((id) => id.trim()) ?? POLICIES.map((p) => p.id);
const unknown = chosen.filter((id) => !POLICIES.some((policy) => policy.id === id));
if (unknown.length > 0) {
  throw new Error(`unknown POLICIES ${unknown.join(', ')}; known: ${POLICIES.map((p) => p.id).join(', ')}`);
}

/** How a failed request ended: an HTTP status, or the error's name (with axios's code, and a cause's name). */
function failureOf(error) {
  const status = error?.response?.status;
  if (typeof status === 'number') return `HTTP ${status}`;
  if (!(error instanceof Error) && !(error instanceof DOMException)) return typeof error;
  const code = typeof error.code === 'string' ? ` ${error.code}` : '';
  const cause =
    error.cause instanceof Error || error.cause instanceof DOMException ? ` (${error.cause.name})` : '';
  return `${error.name}${code}${cause}`;
}

const LOOP_RESOLUTION_MS = 10;
/** A sample of the event-loop delay histogram (ns) as the delay past its interval, in ms. */
const loopDelayMs = (ns) => Number(Math.max(0, ns / 1e6 - LOOP_RESOLUTION_MS).toFixed(2));

/** One policy through the scenario: its clients' log and the server's records, then the measures. */
async function runPolicy(policy) {
  const { clients, thinkMs, durationMs, settleMs, seed } = SCENARIO;
  const server = await startStormServer(SCENARIO);
  const run = new AbortController();
  setMaxListeners(0, run.signal); // every outstanding request listens to it
  const send = policy.make(server.url, run.signal);
  const thinking = seededRandom(seed);

  const startedAt = [];
  const settledAt = [];
  const failure = [];
  let open = 0;
  let maxOutstanding = 0;
  let cutOff = false;

  const t0 = epochNow();
  await server.start(t0); // before any client can send
  const now = () => epochNow() - t0;

  async function client() {
    for (;;) {
      // Exponential think times, by inversion of a uniform draw (1 − u, never 0).
      const think = -Math.log(1 - thinking()) * thinkMs;
      if (now() + think >= durationMs) return;
      await sleep(think);
      if (now() >= durationMs) return; // a late timer must not start a request after the window
      const id = startedAt.length;
      startedAt.push(now());
      settledAt.push(Number.NaN);
      failure.push(undefined);
      open++;
      maxOutstanding = Math.max(maxOutstanding, open);
      let outcome;
      try {
        const status = await send(id);
        if (status < 200 || status > 299) outcome = `HTTP ${status}`;
      } catch (error) {
        outcome = failureOf(error);
      }
      open--;
      if (cutOff) return; // aborted at the cap: unfinished
      settledAt[id] = now();
      failure[id] = outcome;
    }
  }

  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  const loopDelay = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  loopDelay.enable();
  const settled = Promise.all(Array.from({ length: clients }, client));
  const cap = new AbortController();
  const capped = await Promise.race([
    settled.then(() => false),
    sleep(durationMs + settleMs, true, { signal: cap.signal }).catch(() => false),
  ]);
  cap.abort();
  const endAt = now();
  const cpu = process.cpuUsage(cpuBefore);
  // Once every request has settled, nothing should still listen to the run's signal.
  const listenersLeft = getEventListeners(run.signal, 'abort').length;
  loopDelay.disable();
  if (capped) {
    cutOff = true;
    run.abort(new Error('the run ended'));
    await settled;
  }
  const { records, stats } = await server.report();
  await server.close();
  const seconds = (performance.now() - started) / 1000;

  const measures = closedStormMeasures(SCENARIO, { startedAt, settledAt, failure, endAt }, records);
  return {
    policy: policy.name,
    id: policy.id,
    ...measures,
    maxOutstanding,
    runSignalListenersLeft: listenersLeft,
    runSeconds: Number(seconds.toFixed(1)),
    endedAtMs: Math.round(endAt),
    // This process's CPU (user + system) per attempt that reached the server: what the client costs.
    clientCpuUsPerAttempt: Math.round((cpu.user + cpu.system) / Math.max(1, measures.attempts)),
    // This process's event-loop delay over the run: how late its timers and callbacks ran (the
    // histogram samples whole intervals of LOOP_RESOLUTION_MS, which is taken off).
    clientLoopDelayMs: {
      p50: loopDelayMs(loopDelay.percentile(50)),
      p99: loopDelayMs(loopDelay.percentile(99)),
      max: loopDelayMs(loopDelay.max),
    },
    server: {
      peakQueue: stats.peakQueue,
      waitingAtEnd: stats.waiting,
      // How long after its nominal end each answer was written (timer lateness in the child).
      latenessMs: Object.fromEntries(
        Object.entries(stats.lateness).map(([k, v]) => [k, Number(v.toFixed(2))]),
      ),
      clockOffsetMs: Number(server.clockOffsetMs.toFixed(3)),
    },
  };
}

/**
 * Every chosen client sends WARM_UP requests (20 at a time) to a server without a stall before any
 * run, so the first run does not pay for loading and compiling the code all of them share (fetch's
 * undici, axios) on its own.
 */
async function warmUp(policies) {
  const server = await startStormServer({ ...SCENARIO, stallAt: 1e9, stallMs: 0 });
  await server.start(epochNow());
  const signal = new AbortController().signal;
  setMaxListeners(0, signal);
  for (const policy of policies) {
    const send = policy.make(server.url, signal);
    let next = 0;
    const lane = async () => {
      while (next < WARM_UP) await send(next++);
    };
    await Promise.all(Array.from({ length: 20 }, lane));
  }
  await server.close();
}
const WARM_UP = 400;

const selected = POLICIES.filter((p) => chosen.includes(p.id));
const loadBefore = loadavg();
const started = performance.now();
await warmUp(selected);
const rows = [];
for (const policy of selected) {
  const row = await runPolicy(policy);
  rows.push(row);
  console.log(
    `${policy.name}: ${row.logicalRequests} requests, ${row.attempts} attempts, ` +
      `steady load ${(row.steadyLoad * 100).toFixed(1)} % (${row.runSeconds} s)`,
  );
}
const seconds = (performance.now() - started) / 1000;
const round = (value, digits) => (value === null ? null : Number(value.toFixed(digits)));

const path = writeResult('storm-real', {
  command: 'node bench/storm-real.mjs',
  what: 'closed-loop retry storm on a real loopback server in real time, one run per policy',
  scenario: {
    ...SCENARIO,
    capacityPerSecond: (SCENARIO.workers / SCENARIO.serviceMs) * 1000,
    windowMs: WINDOW_MS,
    warmUpMs: WARM_UP_MS,
    bucketMs: BUCKET_MS,
  },
  server: 'child process (bench/lib/storm-server.mjs), a fresh one per policy',
  runSeconds: round(seconds, 1),
  loadAverage1m: { before: round(loadBefore[0], 2), after: round(loadavg()[0], 2) },
  policies: rows.map((row) => ({
    ...row,
    windowAmplification: round(row.windowAmplification, 3),
    steadyPerBucket: round(row.steadyPerBucket, 2),
    steadyLoad: round(row.steadyLoad, 3),
    peakVsSteady: round(row.peakVsSteady, 3),
    successRate: round(row.successRate, 4),
    p50Ms: round(row.p50Ms, 1),
    p99Ms: round(row.p99Ms, 1),
  })),
});

const columns = [
  ['policy', 30],
  ['requests', 9],
  ['attempts', 9],
  ['steady load', 12],
  ['amp. (4 s)', 11],
  ['peak/steady', 12],
  ['success', 9],
  ['p50 ms', 8],
  ['p99 ms', 8],
  ['recovery ms', 12],
  ['wasted', 14],
];
const line = (cells) =>
  cells.map((text, i) => (i === 0 ? text.padEnd(columns[i][1]) : text.padStart(columns[i][1]))).join('');
console.log(
  `\nClosed-loop storm on a real server: ${SCENARIO.clients} clients thinking ${SCENARIO.thinkMs} ms, ` +
    `${SCENARIO.workers} workers × ${SCENARIO.serviceMs} ms (${(SCENARIO.workers / SCENARIO.serviceMs) * 1000} req/s), ` +
    `a ${SCENARIO.stallMs / 1000} s stall at ${SCENARIO.stallAt / 1000} s, requests start for ` +
    `${SCENARIO.durationMs / 1000} s, attempts time out after ${TIMEOUT_MS / 1000} s, seed ${SCENARIO.seed}\n`,
);
console.log(line(columns.map(([name]) => name)));
for (const row of rows) {
  console.log(
    line([
      row.policy,
      String(row.logicalRequests),
      String(row.attempts),
      `${(row.steadyLoad * 100).toFixed(1)} %`,
      `${row.windowAmplification.toFixed(2)}×`,
      row.peakVsSteady === null ? 'n/a' : `${row.peakVsSteady.toFixed(2)}×`,
      `${(row.successRate * 100).toFixed(1)} %`,
      row.p50Ms.toFixed(0),
      row.p99Ms.toFixed(0),
      row.recoveredAfterMs === null ? 'never' : String(row.recoveredAfterMs),
      `${row.wasted} (${((row.wasted / Math.max(1, row.served)) * 100).toFixed(1)} %)`,
    ]),
  );
}
console.log('\nHow requests failed, and the server side:');
for (const row of rows) {
  const failures = Object.entries(row.failures)
    .map(([kind, n]) => `${kind} ×${n}`)
    .join(', ');
  console.log(
    `  ${row.policy}: ${failures || 'none'}; most attempts for one request ${row.maxAttemptsPerRequest}; ` +
      `peak bucket at ${row.peakAtMs} ms (${row.peakRetries} of its ${row.peakPerBucket} attempts retries); ` +
      `peak queue ${row.server.peakQueue}; answers late by p50 ${row.server.latenessMs.p50} ms, ` +
      `p99 ${row.server.latenessMs.p99} ms; client CPU ${row.clientCpuUsPerAttempt} µs per attempt, ` +
      `event-loop delay p99 ${row.clientLoopDelayMs.p99} ms, ` +
      `max ${row.clientLoopDelayMs.max} ms; ` +
      (row.attemptHeaders === 0
        ? 'no attempt headers'
        : `attempt headers disagreeing with the server's order: ${row.attemptHeaderMismatches} of ${row.attemptHeaders}`),
  );
}
console.log(`\n${rows.length} runs in ${seconds.toFixed(1)} s; written to ${path}`);
