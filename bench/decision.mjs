// The cost of Retryline's per-attempt decision, in nanoseconds per call, against the performance
// contract's "well under a microsecond". Measured on the built core (packages/core/dist), with
// seeded randomness and a fixed clock, so every run computes the same delays:
//
// - computeDelay (backoff → maxDelay cap → jitter) for each named backoff strategy, full jitter;
// - decide() alone, the pure "retry, and after how long?" the attempt loop asks after a failure;
// - what core does after a failed HTTP attempt, in the order the HTTP engine does it: a 503
//   (hint parsing over the response headers, the default retryable verdict, then decide; the
//   pacing check too for a client given pacing()), a transport error (classifyTransportError, the verdict, decide), and a 503 or 429
//   whose Retry-After (delay-seconds or an HTTP-date) becomes the wait's floor;
// - resolveHttpOptions, which the engine runs once per request rather than per attempt (context).
//
// Each operation runs in a tight loop of ITERATIONS calls, results summed into a sink the script
// prints, so the JIT cannot drop the work. After a warm-up the operations run interleaved, one loop
// each per run, RUNS times; the figure is the median ns per call over the runs. The "empty loop"
// row is the harness itself (loop plus an indirect call), included in every other row.
// Run after `pnpm build`: `node bench/decision.mjs` (RUNS, ITERATIONS to change the sample);
// writes bench/results/decision.json.

import { loadavg } from 'node:os';
import {
  classifyTransportError,
  decide,
  initialState,
  isRetryableByDefault,
  normalizePolicy,
  quotaSpentUntil,
  resolveHttpOptions,
} from '../packages/core/dist/adapter.js';
import { computeDelay, parseRetryHint, seededRandom } from '../packages/core/dist/index.js';
import { writeResult } from './lib/results.mjs';

const loadBefore = loadavg();
const RUNS = Number(process.env.RUNS ?? 15);
const ITERATIONS = Number(process.env.ITERATIONS ?? 200_000);

// A clock that never moves: decide() and parseRetryHint() take `now` from it, as the engine takes
// it from the policy's clock. Its sleep is never called here.
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const clock = { now: () => NOW, sleep: () => Promise.resolve() };

const strategies = ['constant', 'linear', 'polynomial', 'exponential'];
const delayPolicies = Object.fromEntries(
  strategies.map((strategy) => [
    strategy,
    normalizePolicy({ backoff: { strategy }, jitter: 'full', random: seededRandom(7), clock }),
  ]),
);

// The HTTP engine's policy: the defaults, with room for three retries so every decision below
// retries (a stop is cheaper and would flatter the figures).
const policy = normalizePolicy({ retries: 3, random: seededRandom(11), clock });
// The lists behind Retryline's default verdict, as resolveHttpOptions builds them once per request.
const { rules } = resolveHttpOptions({ retries: 3 });

// The states a request is in after its first, second and third failed attempt.
const states = [1, 2, 3].map((attempts, i) => ({
  ...initialState(policy, NOW - 50 * (i + 1)),
  attempts,
}));

// Response headers as the fetch adapter sees them (a fetch Headers), and as axios hands them over
// (a plain record, which headerValue searches by own key).
const plain503 = new Headers({ 'content-type': 'text/plain', 'content-length': '11' });
const retryAfterSeconds = new Headers({ 'content-type': 'text/plain', 'retry-after': '2' });
const retryAfterDate = new Headers({
  'content-type': 'text/plain',
  'retry-after': new Date(NOW + 3000).toUTCString(),
});
const retryAfterRecord = { 'content-type': 'text/plain', 'retry-after': '2' };

// What undici throws for a reset connection: an opaque TypeError with the code on its cause.
const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
const fetchFailed = new TypeError('fetch failed', { cause: reset });
const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });

/**
 * A failed GET attempt as the default verdict reads it, in one literal as the engine builds it
 * (V8 in Node 20 takes a slow path of microseconds for `{ ...base, more }`).
 */
const failedGet = (state, failure) => ({
  attempt: state.attempts,
  method: 'GET',
  url: 'http://127.0.0.1/r/1',
  keyed: false,
  idempotent: true,
  phase: failure.phase,
  status: failure.status,
  hinted: failure.hinted,
  error: failure.error,
  code: failure.code,
});

/**
 * What the engine does after an attempt got a failed response: read any hint, give the default
 * verdict on a GET, then ask decide(); with `paced` (a client given pacing()), also check whether
 * the response says the quota is spent. Returns the wait.
 */
function afterResponse(status, headers, state, paced = false) {
  const now = clock.now();
  const hint = parseRetryHint(headers, now);
  const until = paced ? quotaSpentUntil(status, headers, hint) : undefined;
  const outcome = failedGet(state, { phase: 'response', status, hinted: hint !== undefined });
  if (!isRetryableByDefault(outcome, rules)) return -1;
  const decision = decide(policy, state, now, undefined, hint);
  return (decision.retry ? decision.delay : -2) + (until === undefined ? 0 : 1);
}

/** What the engine does after a send threw: classify the error, give the verdict, ask decide(). */
function afterTransportError(error, state) {
  const failure = classifyTransportError(error);
  if (!failure) return -1;
  const outcome = failedGet(state, { phase: failure.phase, hinted: false, error, code: failure.code });
  if (!isRetryableByDefault(outcome, rules)) return -1;
  const decision = decide(policy, state, clock.now(), error);
  return decision.retry ? decision.delay : -2;
}

/** Each operation takes the loop index (to vary the retry number) and returns a number to sink. */
const operations = {
  'empty loop (harness)': (i) => i & 3,
  ...Object.fromEntries(
    strategies.map((strategy) => {
      const resolved = delayPolicies[strategy];
      return [
        `computeDelay: ${strategy} backoff, full jitter`,
        (i) => {
          const n = (i & 3) + 1;
          return computeDelay(resolved, n, resolved.backoff.base, resolved.random).delay;
        },
      ];
    }),
  ),
  'decide: backoff only (exponential, full jitter)': (i) => {
    const decision = decide(policy, states[i % 3], clock.now());
    return decision.retry ? decision.delay : -1;
  },
  'after 503 (Headers, no hint): hint + verdict + decide': (i) => afterResponse(503, plain503, states[i % 3]),
  'after network error (fetch failed / ECONNRESET): classify + verdict + decide': (i) =>
    afterTransportError(fetchFailed, states[i % 3]),
  'after network error (ECONNREFUSED, not sent): classify + verdict + decide': (i) =>
    afterTransportError(refused, states[i % 3]),
  'after 503 + Retry-After: 2 (Headers): hint + verdict + decide': (i) =>
    afterResponse(503, retryAfterSeconds, states[i % 3]),
  'after 503 + Retry-After: <HTTP-date> (Headers)': (i) => afterResponse(503, retryAfterDate, states[i % 3]),
  'with pacing(): after 503 (Headers, no hint), the quota check too': (i) =>
    afterResponse(503, plain503, states[i % 3], true),
  'with pacing(): after 429 + Retry-After: 2 (plain record, pacing hit)': (i) =>
    afterResponse(429, retryAfterRecord, states[i % 3], true),
  'parseRetryHint alone: Retry-After: 2 (Headers)': () => parseRetryHint(retryAfterSeconds, NOW)?.delay ?? -1,
  'per client, once at creation: resolveHttpOptions({ retries: 3 })': () =>
    resolveHttpOptions({ retries: 3 }).policy.retries,
};

let sink = 0;

/** Runs one operation `iterations` times; returns ns per call. */
function time(operation, iterations) {
  let local = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) local += operation(i);
  const elapsed = Number(process.hrtime.bigint() - start);
  sink += local;
  return elapsed / iterations;
}

// Sanity: every HTTP row must have decided to retry (a negative result is a refusal or a stop).
for (const [name, operation] of Object.entries(operations)) {
  for (let i = 0; i < 3; i++) {
    if (operation(i) < 0)
      throw new Error(`${name} did not decide to retry: the bench measures the wrong path`);
  }
}

for (const operation of Object.values(operations)) time(operation, ITERATIONS); // warm up
const samples = Object.fromEntries(Object.keys(operations).map((name) => [name, []]));
for (let run = 0; run < RUNS; run++) {
  for (const [name, operation] of Object.entries(operations)) samples[name].push(time(operation, ITERATIONS));
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const rows = Object.entries(samples).map(([operation, values]) => ({
  operation,
  nsPerCall: Number(median(values).toFixed(1)),
  minNs: Number(Math.min(...values).toFixed(1)),
  maxNs: Number(Math.max(...values).toFixed(1)),
}));

const width = Math.max(...rows.map((row) => row.operation.length));
console.log(`${'operation'.padEnd(width)}  ns/call (median)   min     max`);
for (const row of rows) {
  console.log(
    `${row.operation.padEnd(width)}  ${String(row.nsPerCall).padStart(16)}  ${String(row.minNs).padStart(6)}  ${String(row.maxNs).padStart(6)}`,
  );
}
console.log(`(sink ${sink}: ${RUNS} runs × ${ITERATIONS} calls per operation)`);

const note =
  'Every function measured is exported by @retryline/core or @retryline/core/adapter. The engine does ' +
  'not export its judge step, so "after 503" / "after network error" compose the exported pieces in the ' +
  'order runHttpRequest calls them ' +
  '(parseRetryHint, quotaSpentUntil, isRetryableByDefault / classifyTransportError, decide); they leave ' +
  'out event emission, store calls (budget, breaker, pacing) and the attempt loop itself. nsPerCall ' +
  'includes the harness cost shown by the "empty loop" row. Medians on a noisy machine: compare rows, ' +
  'not machines.';
const result = {
  command: 'node bench/decision.mjs',
  runs: RUNS,
  iterationsPerRun: ITERATIONS,
  // The 1-minute load average before and after: above the core count, other work shared the CPU.
  loadAverage1m: { before: Number(loadBefore[0].toFixed(2)), after: Number(loadavg()[0].toFixed(2)) },
  note,
  rows,
};
console.log(`written to ${writeResult('decision', result)}`);
