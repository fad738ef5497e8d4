// Hedged requests against a heavy tail: what `hedge: hedging({ delay: 'p95' })` of @retryline/fetch
// does to p99 latency, and what it costs the server in extra requests.
//
// Two loopback servers in a child process (bench/lib/latency-server.mjs), `a` and `b`, each answering
// after BASE_MS (5 ms, ± 10 %) except that exactly 1 in every 100 requests of a variant (wherever it
// goes, a seeded random place in each run of 100) takes TAIL_MS (100 ms, 20×) instead. Exactly 1 %
// rather than a 1 % coin per request: a variant without hedges sends 5,000 requests and meets exactly
// 50 slow answers, so its p99 (nearest rank, `sorted[⌊0.99 n⌋]`, the smallest of them) is not decided
// by whether a binomial draw landed above or below 1 %. Each variant has its own sequence of draws, so
// the run repeats; a hedge is a request like any other and draws the next number of its variant's.
//
// The variants, each its own `retryFetch(fetch, …)` client sending `GET …/ok` through LANES (4) lanes
// that each send the next request once the last one's body is read:
// - no hedge, one URL (`a`), and an identical copy: the A/A pair, whose difference is the noise floor;
// - `hedge: hedging({ delay: 'p95' })`, one URL: the hedge goes to the same server;
// - no hedge, `endpoints: failover([a, b])` (two-choices), and the same with the hedge: the hedge goes
//   to the other endpoint.
// They run interleaved, ROUNDS (10) rounds of PER_ROUND (500) requests each, the order reversed every
// other round; every client first sends WARM_UP requests (their own draws) so the p95 is learned
// before anything is measured (a p95 delay needs 20 answers; with no `fallback` there is no hedge
// before that). Four lanes, not more: the p95 the client learns is the latency it observes, its own
// queue included, and at 8 lanes (some 1,400 requests a second, over half a core at ~0.45 ms of CPU
// each) that queue, not the servers, set the p95 and so the hedge delay. The result records the
// client's CPU and event-loop delay.
//
// Per variant: p50, p95, p99, p99.9 of the request latency (call to body read); the share of requests
// slower than half the tail latency; the extra load, server arrivals ÷ client requests − 1, against
// the retry budget's ratio (0.1 by default: each hedge takes one retry from the budget); from the
// client's events, hedges sent, won and cancelled, budget refusals, and how long after its primary a
// hedge started (a reading of the learned p95). Target (issue 24): the p99 falls at least 3× with a
// hedge at p95 while the extra load stays within the budget ratio.
//
// And whether a cancelled hedge frees its connection: after the run (and SETTLE_MS), the servers'
// requests in flight and busy connections must be 0 and their open connections all idle keep-alive
// ones; on the client, undici's diagnostics channels must show every request it created finished
// (its body read to the end, or errored by the abort), and the connections it holds (those undici's
// channel reported opened and that have not closed since) must be the servers' open ones. An aborted
// fetch destroys its socket, so each cancelled attempt that was still waiting shows at the server as
// an abandoned request and costs a new connection later. Every request of every variant also gets
// a class from the events (not hedged; hedged, answered by the primary; answered by the hedge) with
// its latency, to show where the quantiles come from.
// Run after `pnpm build`: `node bench/hedge.mjs` (about 45 s; BASE_MS, TAIL_MS, LANES, ROUNDS,
// PER_ROUND, WARM_UP, SEED, SETTLE_MS to change the setup); writes bench/results/hedge.json and
// prints a table.
import { subscribe as subscribeChannel } from 'node:diagnostics_channel';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { failover, hedging, retryFetch } from '../packages/fetch/dist/index.js';
import { latencySummary, runLanes, setting, watchProcess } from './lib/latency-run.mjs';
import { startLatencyServers, VARIANT_HEADER } from './lib/latency-server.mjs';
import { writeResult } from './lib/results.mjs';

/** A non-negative number from the environment, or `fallback`. */

const SETUP = {
  baseMs: setting('BASE_MS', 5),
  spread: 0.1,
  tailShare: 0.01,
  tailMs: setting('TAIL_MS', 100),
  lanes: setting('LANES', 4),
  rounds: setting('ROUNDS', 10),
  perRound: setting('PER_ROUND', 500),
  warmUp: setting('WARM_UP', 300),
  seed: setting('SEED', 1),
  settleMs: setting('SETTLE_MS', 300),
};
/** The retry budget's default ratio (BUDGET_DEFAULTS in packages/core/src/guard/retry-budget.ts). */
const BUDGET_RATIO = 0.1;
/** The target: p99 without a hedge ÷ p99 with one. */
const P99_TARGET = 3;

// Every request undici creates in this process, and how each ended: its body read to the end
// ('trailers') or an error (an abort among them). Created − ended = requests still holding a
// connection.
const undici = { created: 0, headers: 0, completed: 0, errored: 0, connected: 0 };
subscribeChannel('undici:request:create', () => undici.created++);
subscribeChannel('undici:request:headers', () => undici.headers++);
subscribeChannel('undici:request:trailers', () => undici.completed++);
subscribeChannel('undici:request:error', () => undici.errored++);
// The connections undici opened and has not closed yet (idle keep-alive ones are unref'd, so
// process.getActiveResourcesInfo() would not list them).
const clientSockets = new Set();
subscribeChannel('undici:client:connected', ({ socket }) => {
  undici.connected++;
  clientSockets.add(socket);
  socket.once('close', () => clientSockets.delete(socket));
});
const tcpSockets = () => clientSockets.size;

const servers = await startLatencyServers({
  seed: SETUP.seed,
  tailShare: SETUP.tailShare,
  tailMs: SETUP.tailMs,
  servers: [
    { name: 'a', baseMs: SETUP.baseMs, spread: SETUP.spread },
    { name: 'b', baseMs: SETUP.baseMs, spread: SETUP.spread },
  ],
});
const { a, b } = servers.urls;
const HEDGE = { delay: 'p95' };

// `options()` makes each client's options afresh: a failover() or hedging() value of its own.
const VARIANTS = [
  { id: 'none', name: 'no hedge, one URL', url: `${a}/ok`, options: () => ({}) },
  {
    id: 'none-copy',
    name: 'no hedge, one URL (A/A copy)',
    url: `${a}/ok`,
    options: () => ({}),
    copyOf: 'none',
  },
  {
    id: 'hedge-one',
    name: 'hedge p95, one URL',
    url: `${a}/ok`,
    hedge: HEDGE,
    options: () => ({ hedge: hedging(HEDGE) }),
    baseline: 'none',
  },
  {
    id: 'none-two',
    name: 'no hedge, endpoints [a, b]',
    url: '/ok',
    endpoints: 2,
    options: () => ({ endpoints: failover([a, b]) }),
  },
  {
    id: 'hedge-two',
    name: 'hedge p95, endpoints [a, b]',
    url: '/ok',
    endpoints: 2,
    hedge: HEDGE,
    options: () => ({ endpoints: failover([a, b]), hedge: hedging(HEDGE) }),
    baseline: 'none-two',
  },
];

/** Counts of what the client's events say, reset after the warm-up. */
const freshCounts = () => ({
  requests: 0,
  attempts: 0,
  retries: 0,
  hedges: 0,
  hedgesAborted: 0,
  answeredByHedge: 0,
  budgetAllowed: 0,
  budgetRefused: 0,
  outcomes: {},
  hedgeDelays: [],
  // Latency (request-start to request-end) of requests not hedged, hedged and answered by their
  // primary, and answered by the hedge.
  byClass: { notHedged: [], primaryWon: [], hedgeWon: [] },
});

for (const variant of VARIANTS) {
  variant.counts = freshCounts();
  const primaryStart = new Map(); // requestId → performance.now() of its latest primary attempt
  const requests = new Map(); // requestId → { at, hedged, byHedge }
  const api = retryFetch(fetch, {
    ...variant.options(),
    onEvent: (event) => {
      const c = variant.counts;
      switch (event.type) {
        case 'request-start':
          c.requests++;
          requests.set(event.requestId, { at: performance.now(), hedged: false, byHedge: false });
          break;
        case 'attempt-start':
          if (event.hedge) {
            c.hedges++;
            const request = requests.get(event.requestId);
            if (request) request.hedged = true;
            const at = primaryStart.get(event.requestId);
            if (at !== undefined) c.hedgeDelays.push(performance.now() - at);
          } else {
            c.attempts++;
            if (event.attempt > 1) c.retries++;
            primaryStart.set(event.requestId, performance.now());
          }
          break;
        case 'attempt-end':
          if (event.hedge && event.outcome === 'aborted') c.hedgesAborted++;
          if (!event.hedge && event.answeredBy === 'hedge') {
            c.answeredByHedge++;
            const request = requests.get(event.requestId);
            if (request) request.byHedge = true;
          }
          break;
        case 'budget':
          if (event.allowed) c.budgetAllowed++;
          else c.budgetRefused++;
          break;
        case 'request-end':
          c.outcomes[event.outcome] = (c.outcomes[event.outcome] ?? 0) + 1;
          primaryStart.delete(event.requestId);
          {
            const request = requests.get(event.requestId);
            requests.delete(event.requestId);
            if (request) {
              const kind = !request.hedged ? 'notHedged' : request.byHedge ? 'hedgeWon' : 'primaryWon';
              c.byClass[kind].push(performance.now() - request.at);
            }
          }
          break;
      }
    },
  });
  const headers = { [VARIANT_HEADER]: variant.id };
  const warmHeaders = { [VARIANT_HEADER]: `warm-up ${variant.id}` };
  variant.send = async (warm) => {
    const response = await api(variant.url, { headers: warm ? warmHeaders : headers });
    await response.text();
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  };
  variant.latencies = [];
  variant.errors = {};
}

const loadBefore = loadavg();
const started = performance.now();
for (const variant of VARIANTS) {
  await runLanes(SETUP.lanes, SETUP.warmUp, () => variant.send(true));
  variant.counts = freshCounts();
}
const watch = watchProcess();
for (let round = 0; round < SETUP.rounds; round++) {
  for (const variant of round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
    const { latencies, errors } = await runLanes(SETUP.lanes, SETUP.perRound, () => variant.send(false));
    variant.latencies.push(...latencies);
    for (const [name, n] of Object.entries(errors)) variant.errors[name] = (variant.errors[name] ?? 0) + n;
  }
}
const seconds = (performance.now() - started) / 1000;
const client = watch();

// Connections once everything has settled: nothing in flight, every open connection idle.
const atEnd = { undici: { ...undici }, tcpSockets: tcpSockets(), servers: await servers.stats() };
await sleep(SETUP.settleMs);
const settled = { undici: { ...undici }, tcpSockets: tcpSockets(), servers: await servers.stats() };
await servers.close();

const r = (value, digits = 4) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : null);
const serverTotals = (stats, id) => {
  const total = { arrived: 0, answered: 0, slow: 0, abandoned: 0 };
  for (const s of Object.values(stats)) {
    for (const key of Object.keys(total)) total[key] += s.byVariant[id]?.[key] ?? 0;
  }
  return total;
};
const rows = VARIANTS.map((variant) => {
  const requests = variant.latencies.length + Object.values(variant.errors).reduce((s, n) => s + n, 0);
  const server = serverTotals(settled.servers, variant.id);
  const perServer = Object.fromEntries(
    Object.entries(settled.servers).map(([name, s]) => [name, s.byVariant[variant.id]?.arrived ?? 0]),
  );
  const c = variant.counts;
  const delays = [...c.hedgeDelays].sort((x, y) => x - y);
  const delayAt = (q) =>
    delays.length === 0 ? null : r(delays[Math.min(delays.length - 1, Math.floor(q * delays.length))], 2);
  const tailThreshold = SETUP.tailMs / 2;
  return {
    id: variant.id,
    variant: variant.name,
    hedge: variant.hedge ?? false,
    endpoints: variant.endpoints ?? 1,
    copyOf: variant.copyOf ?? null,
    baseline: variant.baseline ?? null,
    requests,
    errors: variant.errors,
    latencyMs: latencySummary(variant.latencies),
    slowerThanHalfTail: r(variant.latencies.filter((v) => v > tailThreshold).length / requests, 5),
    server: { ...server, perServer },
    extraLoad: r(server.arrived / requests - 1, 4),
    events: {
      requests: c.requests,
      attempts: c.attempts,
      retries: c.retries,
      hedges: c.hedges,
      hedgeShare: r(c.hedges / Math.max(1, c.requests), 4),
      hedgesCancelled: c.hedgesAborted,
      answeredByHedge: c.answeredByHedge,
      budgetAllowed: c.budgetAllowed,
      budgetRefused: c.budgetRefused,
      outcomes: c.outcomes,
    },
    hedgeDelayMs: delays.length === 0 ? null : { p5: delayAt(0.05), p50: delayAt(0.5), p95: delayAt(0.95) },
    // The request's latency by how it went (from the client's events; context for the quantiles).
    byClass: Object.fromEntries(
      Object.entries(c.byClass).map(([kind, values]) => [kind, latencySummary(values)]),
    ),
  };
});
for (const row of rows) {
  const base = rows.find((other) => other.id === row.baseline);
  if (!base) continue;
  row.p99Reduction = r(base.latencyMs.p99 / row.latencyMs.p99, 2);
  row.meetsTarget = row.p99Reduction >= P99_TARGET && row.extraLoad <= BUDGET_RATIO;
}

const connections = (snapshot) => ({
  clientOpenConnections: snapshot.tcpSockets,
  undiciUnfinished: snapshot.undici.created - snapshot.undici.completed - snapshot.undici.errored,
  undici: snapshot.undici,
  servers: Object.fromEntries(
    Object.entries(snapshot.servers).map(([name, s]) => [
      name,
      {
        open: s.openConnections,
        busy: s.busyConnections,
        inFlight: s.inFlight,
        accepted: s.connectionsAccepted,
      },
    ]),
  ),
});
const end = connections(settled);
const serverOpen = Object.values(end.servers).reduce((sum, s) => sum + s.open, 0);
const freed =
  end.undiciUnfinished === 0 &&
  Object.values(end.servers).every((s) => s.inFlight === 0 && s.busy === 0) &&
  serverOpen === end.clientOpenConnections;

const path = writeResult('hedge', {
  command: 'node bench/hedge.mjs',
  what: 'latency and extra server load with and without hedge: hedging({ delay: "p95" }), 1 % of answers 20× slower',
  setup: { ...SETUP, budgetRatio: BUDGET_RATIO, p99Target: P99_TARGET },
  server: 'child process (bench/lib/latency-server.mjs), two servers on 127.0.0.1',
  serverTimerLatenessMs: Object.fromEntries(
    Object.entries(settled.servers).map(([n, s]) => [n, s.timerLatenessMs]),
  ),
  // This process over the measured rounds: how busy the client was, and how late its event loop ran.
  client,
  runSeconds: r(seconds, 1),
  loadAverage1m: { before: r(loadBefore[0], 2), after: r(loadavg()[0], 2) },
  rows,
  connections: { atEnd: connections(atEnd), afterSettle: end, settleMs: SETUP.settleMs, freed },
});

const pad = (text, width, left = false) => (left ? text.padEnd(width) : text.padStart(width));
const fixed = (value, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
console.log(
  `\n${SETUP.rounds} rounds × ${SETUP.perRound} requests per variant, ${SETUP.lanes} lanes; ${SETUP.baseMs} ms, 1 in ${Math.round(1 / SETUP.tailShare)} ${SETUP.tailMs} ms\n`,
);
console.log(
  [
    'variant',
    'p50',
    'p95',
    'p99',
    'p99.9',
    '>½ tail',
    'extra load',
    'hedges',
    'won',
    'refused',
    'delay p50',
    'p99 ÷',
  ]
    .map((h, i) => pad(h, i === 0 ? 30 : 10, i === 0))
    .join(''),
);
for (const row of rows) {
  console.log(
    [
      pad(row.variant, 30, true),
      pad(fixed(row.latencyMs.p50), 10),
      pad(fixed(row.latencyMs.p95), 10),
      pad(fixed(row.latencyMs.p99), 10),
      pad(fixed(row.latencyMs.p999), 10),
      pad(`${(row.slowerThanHalfTail * 100).toFixed(2)} %`, 10),
      pad(`${(row.extraLoad * 100).toFixed(2)} %`, 10),
      pad(String(row.events.hedges), 10),
      pad(String(row.events.answeredByHedge), 10),
      pad(String(row.events.budgetRefused), 10),
      pad(row.hedgeDelayMs ? row.hedgeDelayMs.p50.toFixed(2) : '—', 10),
      pad(row.baseline ? `${fixed(row.p99Reduction)}×${row.meetsTarget ? ' ✓' : ' ✗'}` : '', 10),
    ].join(''),
  );
  if (Object.keys(row.errors).length > 0) console.log(`  errors: ${JSON.stringify(row.errors)}`);
}
console.log(
  '\nConnections at the end and after settling:',
  JSON.stringify({ atEnd: connections(atEnd), end, freed }, null, 1),
);
console.log(`\n${seconds.toFixed(1)} s; written to ${path}`);
