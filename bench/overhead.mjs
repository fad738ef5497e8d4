// Happy-path overhead of each Retryline adapter against its bare client, and of the peers' own
// retry (axios-retry, ky's built-in retry), side by side in one process against a loopback server.
// Variants run interleaved in rounds so drift on a noisy machine hits them all alike; the ratio is
// the median over rounds of (this round's median latency / the bare client's in the same round),
// with the 25th and 75th percentiles of those ratios to show the spread.
// Run after `pnpm build`: `node bench/overhead.mjs` (ROUNDS, PER_ROUND to change the sample); writes
// bench/results/overhead.json.
import { createServer } from 'node:http';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import axios from 'axios';
import axiosRetry from 'axios-retry';
import ky from 'ky';
import { attachRetry } from '../packages/axios/dist/index.js';
import { memoryStore } from '../packages/core/dist/index.js';
import { retryFetch } from '../packages/fetch/dist/index.js';
import { retryline } from '../packages/ky/dist/index.js';
import { instrument } from '../packages/otel/dist/index.js';
import { writeResult } from './lib/results.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 80);
const PER_ROUND = Number(process.env.PER_ROUND ?? 100);

const server = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
  response.end('ok');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/ok`;

const store = memoryStore();
const retrylineAxios = axios.create();
attachRetry(retrylineAxios, { store });
const peerAxios = axios.create();
axiosRetry(peerAxios, { retries: 3 });
const fetchWithRetry = retryFetch(fetch, { store });
// What the guard that is on by default (the retry budget) costs a request.
const fetchUnguarded = retryFetch(fetch, { store, budget: false });
// A per-attempt timeout, against fetch with the same timeout (what an application without
// Retryline would pass): the loop's path, with an AbortController and a timer per attempt.
const fetchWithTimeout = retryFetch(fetch, { store, timeout: 10_000 });
const kyRetryline = ky.create(retryline({ store }));
const kyBuiltin = ky.create({ retry: 2 });
const kyBare = ky.create({ retry: 0 });

// Tracing as an app runs it: the SDK's tracer with a batching processor (spans dropped at export)
// and a meter whose reader never exports. instrument() is global, so it runs only around its own
// variant's requests.
const tracerProvider = new BasicTracerProvider({
  spanProcessors: [
    new BatchSpanProcessor({ export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} }),
  ],
});
class SilentReader extends MetricReader {
  onForceFlush = async () => {};
  onShutdown = async () => {};
}
const meterProvider = new MeterProvider({ readers: [new SilentReader()] });
const scoped = {
  '@retryline/fetch + tracing': () => instrument({ tracerProvider, meterProvider }),
};

/** Each variant sends one GET and reads the body, as an application would. */
const variants = {
  'fetch (bare)': async () => (await fetch(url)).text(),
  '@retryline/fetch': async () => (await fetchWithRetry(url)).text(),
  '@retryline/fetch + tracing': async () => (await fetchWithRetry(url)).text(),
  '@retryline/fetch + { budget: false }': async () => (await fetchUnguarded(url)).text(),
  'fetch + AbortSignal.timeout(10000)': async () =>
    (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text(),
  '@retryline/fetch + { timeout: 10000 }': async () => (await fetchWithTimeout(url)).text(),
  'axios (bare)': async () => (await axios.get(url)).data,
  '@retryline/axios': async () => (await retrylineAxios.get(url)).data,
  'axios + axios-retry': async () => (await peerAxios.get(url)).data,
  'ky (retry 0)': async () => kyBare.get(url).text(),
  '@retryline/ky': async () => kyRetryline.get(url).text(),
  "ky's own retry": async () => kyBuiltin.get(url).text(),
};
const baseline = {
  '@retryline/fetch': 'fetch (bare)',
  '@retryline/fetch + tracing': 'fetch (bare)',
  '@retryline/fetch + { budget: false }': 'fetch (bare)',
  '@retryline/fetch + { timeout: 10000 }': 'fetch + AbortSignal.timeout(10000)',
  '@retryline/axios': 'axios (bare)',
  'axios + axios-retry': 'axios (bare)',
  '@retryline/ky': 'ky (retry 0)',
  "ky's own retry": 'ky (retry 0)',
};

const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
// Each round's median per variant: a round's ratio compares variants measured within seconds of
// each other, and the median of those ratios shrugs off a round that a noisy neighbour disturbed.
const roundMedians = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
for (const [name, send] of Object.entries(variants)) {
  const stop = scoped[name]?.();
  for (let i = 0; i < 50; i++) await send(); // warm up
  stop?.();
}
const names = Object.keys(variants);
for (let round = 0; round < ROUNDS; round++) {
  // Every other round runs the variants in reverse, so none always follows the same neighbour.
  for (const name of round % 2 === 0 ? names : [...names].reverse()) {
    const send = variants[name];
    const stop = scoped[name]?.();
    const times = [];
    for (let i = 0; i < PER_ROUND; i++) {
      const start = process.hrtime.bigint();
      await send();
      times.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    stop?.();
    samples[name].push(...times);
    roundMedians[name].push(quantile(times, 0.5));
  }
}
server.close();

const rows = Object.entries(samples).map(([name, values]) => {
  const base = baseline[name];
  const ratios = base
    ? roundMedians[name].map((median, round) => median / roundMedians[base][round])
    : roundMedians[name].map(() => 1);
  return {
    variant: name,
    baseline: base ?? null,
    requests: values.length,
    medianMs: Number(quantile(values, 0.5).toFixed(4)),
    p99Ms: Number(quantile(values, 0.99).toFixed(4)),
    ratioToBare: Number(quantile(ratios, 0.5).toFixed(3)),
    ratioP25: Number(quantile(ratios, 0.25).toFixed(3)),
    ratioP75: Number(quantile(ratios, 0.75).toFixed(3)),
  };
});
const result = { command: 'node bench/overhead.mjs', rounds: ROUNDS, perRound: PER_ROUND, rows };
console.log(JSON.stringify(rows, null, 2));
console.log(`written to ${writeResult('overhead', result)}`);
