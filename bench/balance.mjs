// Endpoint balancing: how each `balance` strategy of @retryline/fetch spreads requests over three
// endpoints when one of them is slow, and what that does to latency.
//
// Three loopback servers in a child process (bench/lib/latency-server.mjs): `a` and `b` answer after
// BASE_MS (20 ms, ± 10 %), `slow` after 5 × BASE_MS (100 ms, ± 10 %); no errors, no capacity limit (a
// timer per request), so nothing but the strategy decides where requests go. Each variant is its own
// `retryFetch(fetch, { endpoints: failover([a, b, slow], { balance }) })` client sending `GET /ok` (a
// relative URL, joined onto the endpoint it picks) through LANES (16) concurrent lanes, each sending
// its next request when the last one's body is read: 16 requests are always outstanding, so a
// load-aware strategy has load to see. Variants: 'two-choices' (the default), a second, identical
// 'two-choices' client (the A/A pair: their difference is the noise floor), 'round-robin', and
// 'weighted' with equal weights (smooth weighted round robin, so a third each, in turn). They run
// interleaved, ROUNDS (6) rounds of PER_ROUND (500) requests each, the order reversed every other
// round, so drift on the machine hits them all alike; every client first sends WARM_UP requests (the
// two-choices EWMA learns the latencies there, as a running client's would have).
//
// Why 20 ms and not less: fetch costs this process some 0.45 ms of CPU per request (bench/cpu-
// overhead.mjs), so 16 lanes at 4 ms (about 2,700 requests a second) keep a core 80 % busy, and the
// latencies then measure the client's own queue more than the endpoints (two-choices' p95 came out
// as round-robin's). At 20 ms the client uses about 30 % of a core; the result records how busy it
// was and how late its event loop ran (BASE_MS=4 reproduces the saturated case).
//
// Per variant: p50, p95, p99 and p99.9 of the request latency (call to body read), and the share of
// requests each endpoint got, counted by the servers (the `x-bench-variant` header names the
// variant), with the range of the slow endpoint's share over rounds. The retry loop's events count
// attempts per request (a check that no request was retried) and time each endpoint's attempts as
// the client saw them.
// Run after `pnpm build`: `node bench/balance.mjs` (about 35 s; BASE_MS, LANES, ROUNDS, PER_ROUND,
// WARM_UP, SEED to change the setup); writes bench/results/balance.json and prints a table.
import { loadavg } from 'node:os';
import { failover, retryFetch } from '../packages/fetch/dist/index.js';
import { latencySummary, runLanes, setting, watchProcess } from './lib/latency-run.mjs';
import { startLatencyServers, VARIANT_HEADER } from './lib/latency-server.mjs';
import { writeResult } from './lib/results.mjs';

/** A non-negative number from the environment, or `fallback`. */

const SETUP = {
  baseMs: setting('BASE_MS', 20),
  slowFactor: 5,
  spread: 0.1,
  lanes: setting('LANES', 16),
  rounds: setting('ROUNDS', 6),
  perRound: setting('PER_ROUND', 500),
  warmUp: setting('WARM_UP', 300),
  seed: setting('SEED', 1),
};

const servers = await startLatencyServers({
  seed: SETUP.seed,
  servers: [
    { name: 'a', baseMs: SETUP.baseMs, spread: SETUP.spread },
    { name: 'b', baseMs: SETUP.baseMs, spread: SETUP.spread },
    { name: 'slow', baseMs: SETUP.baseMs * SETUP.slowFactor, spread: SETUP.spread },
  ],
});
const { a, b, slow } = servers.urls;
const ENDPOINT_NAMES = { [a]: 'a', [b]: 'b', [slow]: 'slow' };

/** The variants: each its own client (and its own failover() value), so no two share a balancer's state. */
const VARIANTS = [
  { id: 'two-choices', name: 'two-choices (default)', balance: 'two-choices', endpoints: () => [a, b, slow] },
  {
    id: 'two-choices-copy',
    name: 'two-choices (A/A copy)',
    balance: 'two-choices',
    endpoints: () => [a, b, slow],
    copyOf: 'two-choices',
  },
  { id: 'round-robin', name: 'round-robin', balance: 'round-robin', endpoints: () => [a, b, slow] },
  {
    id: 'weighted',
    name: 'weighted (equal weights)',
    balance: 'weighted',
    endpoints: () => [a, b, slow].map((url) => ({ url, weight: 1 })),
  },
];

const endpointName = (base) => ENDPOINT_NAMES[base?.replace(/\/+$/, '')] ?? String(base);

for (const variant of VARIANTS) {
  variant.attempts = 0;
  variant.requestsSeen = 0;
  variant.endpointsSeen = {};
  variant.attemptMs = {}; // endpoint name → attempt latencies (attempt-start to attempt-end), ms
  const startedAt = new Map(); // requestId → performance.now() at its attempt's start
  const api = retryFetch(fetch, {
    endpoints: failover(variant.endpoints(), { balance: variant.balance }),
    onEvent: (event) => {
      if (event.type === 'attempt-start') {
        variant.attempts++;
        const name = endpointName(event.endpoint);
        variant.endpointsSeen[name] = (variant.endpointsSeen[name] ?? 0) + 1;
        startedAt.set(event.requestId, performance.now());
      } else if (event.type === 'attempt-end') {
        const at = startedAt.get(event.requestId);
        startedAt.delete(event.requestId);
        if (at !== undefined) {
          const name = endpointName(event.endpoint);
          variant.attemptMs[name] ??= [];
          variant.attemptMs[name].push(performance.now() - at);
        }
      } else if (event.type === 'request-start') variant.requestsSeen++;
    },
  });
  const headers = { [VARIANT_HEADER]: variant.id };
  const warmHeaders = { [VARIANT_HEADER]: `warm-up ${variant.id}` };
  variant.send = async (warm) => {
    const response = await api('/ok', { headers: warm ? warmHeaders : headers });
    await response.text();
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  };
  variant.latencies = [];
  variant.errors = {};
  variant.slowSharePerRound = [];
}

/** Arrivals of `variant` at each server, from the servers' counts. */
const arrivals = (stats, id) =>
  Object.fromEntries(Object.entries(stats).map(([name, s]) => [name, s.byVariant[id]?.arrived ?? 0]));

const loadBefore = loadavg();
const started = performance.now();
for (const variant of VARIANTS) await runLanes(SETUP.lanes, SETUP.warmUp, () => variant.send(true));
for (const variant of VARIANTS) {
  variant.attempts = 0;
  variant.requestsSeen = 0;
  variant.endpointsSeen = {};
  variant.attemptMs = {};
}
let before = await servers.stats();
const watch = watchProcess();
for (let round = 0; round < SETUP.rounds; round++) {
  for (const variant of round % 2 === 0 ? VARIANTS : [...VARIANTS].reverse()) {
    const { latencies, errors } = await runLanes(SETUP.lanes, SETUP.perRound, () => variant.send(false));
    variant.latencies.push(...latencies);
    for (const [name, n] of Object.entries(errors)) variant.errors[name] = (variant.errors[name] ?? 0) + n;
    const after = await servers.stats();
    const was = arrivals(before, variant.id);
    const now = arrivals(after, variant.id);
    const total = Object.keys(now).reduce((sum, name) => sum + now[name] - was[name], 0);
    variant.slowSharePerRound.push((now.slow - was.slow) / total);
    before = after;
  }
}
const seconds = (performance.now() - started) / 1000;
const client = watch();
const stats = await servers.stats();
await servers.close();

const r = (value, digits = 4) => (Number.isFinite(value) ? Number(value.toFixed(digits)) : null);
const rows = VARIANTS.map((variant) => {
  const served = arrivals(stats, variant.id);
  const total = Object.values(served).reduce((sum, n) => sum + n, 0);
  const perRound = [...variant.slowSharePerRound].sort((x, y) => x - y);
  return {
    id: variant.id,
    variant: variant.name,
    balance: variant.balance,
    copyOf: variant.copyOf ?? null,
    requests: variant.latencies.length + Object.values(variant.errors).reduce((s, n) => s + n, 0),
    errors: variant.errors,
    attemptsPerRequest: r(variant.attempts / Math.max(1, variant.requestsSeen), 4),
    latencyMs: latencySummary(variant.latencies),
    serverArrivals: served,
    share: Object.fromEntries(Object.entries(served).map(([name, n]) => [name, r(n / total)])),
    slowShareRounds: {
      min: r(perRound[0]),
      median: r(perRound[Math.floor(perRound.length / 2)]),
      max: r(perRound.at(-1)),
    },
    // What the client's events say it sent where (a check on the servers' counts).
    eventEndpoints: variant.endpointsSeen,
    // Each endpoint's attempts as this client saw them (attempt-start to attempt-end events).
    attemptLatencyMs: Object.fromEntries(
      Object.entries(variant.attemptMs).map(([name, values]) => [name, latencySummary(values)]),
    ),
  };
});

const path = writeResult('balance', {
  command: 'node bench/balance.mjs',
  what: 'latency and the slow endpoint’s share of traffic per balance strategy, three loopback endpoints, one 5× slower',
  setup: {
    ...SETUP,
    servers: {
      a: `${SETUP.baseMs} ms ± ${SETUP.spread * 100} %`,
      b: `${SETUP.baseMs} ms ± ${SETUP.spread * 100} %`,
      slow: `${SETUP.baseMs * SETUP.slowFactor} ms ± ${SETUP.spread * 100} %`,
    },
  },
  server: 'child process (bench/lib/latency-server.mjs), three servers on 127.0.0.1',
  serverTimerLatenessMs: Object.fromEntries(Object.entries(stats).map(([n, s]) => [n, s.timerLatenessMs])),
  // This process over the measured rounds: how busy the client was, and how late its event loop ran.
  client,
  runSeconds: r(seconds, 1),
  loadAverage1m: { before: r(loadBefore[0], 2), after: r(loadavg()[0], 2) },
  rows,
});

const pad = (text, width, left = false) => (left ? text.padEnd(width) : text.padStart(width));
const fixed = (value, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '—');
const pct = (value) => (Number.isFinite(value) ? `${(value * 100).toFixed(1)} %` : '—');
console.log(
  `\n${SETUP.rounds} rounds × ${SETUP.perRound} requests per variant, ${SETUP.lanes} lanes; a, b ${SETUP.baseMs} ms, slow ${SETUP.baseMs * SETUP.slowFactor} ms\n`,
);
console.log(
  ['variant', 'p50 ms', 'p95 ms', 'p99 ms', 'p99.9 ms', 'slow share', 'rounds min–max', 'a / b', 'att/req']
    .map((h, i) => pad(h, i === 0 ? 26 : [0, 12, 12, 12, 12, 12, 16, 14, 12][i], i === 0))
    .join(''),
);
for (const row of rows) {
  console.log(
    [
      pad(row.variant, 26, true),
      pad(fixed(row.latencyMs.p50), 12),
      pad(fixed(row.latencyMs.p95), 12),
      pad(fixed(row.latencyMs.p99), 12),
      pad(fixed(row.latencyMs.p999), 12),
      pad(pct(row.share.slow), 12),
      pad(`${fixed(row.slowShareRounds.min * 100, 1)}–${pct(row.slowShareRounds.max)}`, 16),
      pad(`${fixed(row.share.a * 100, 0)}/${pct(row.share.b)}`, 14),
      pad(fixed(row.attemptsPerRequest, 3), 12),
    ].join(''),
  );
  if (Object.keys(row.errors).length > 0) console.log(`  errors: ${JSON.stringify(row.errors)}`);
}
console.log(`\n${seconds.toFixed(1)} s; written to ${path}`);
