// Happy-path overhead of each Retryline adapter against its bare client, and of the peers' own
// retry (axios-retry, ky's built-in retry), side by side in one process against a loopback server.
// Variants run interleaved in rounds so drift on a noisy machine hits them all alike; the figure is
// the median latency per request of each variant, and its ratio to the bare client's.
// Run after `pnpm build`: `node bench/overhead.mjs` (ROUNDS, PER_ROUND to change the sample); writes
// bench/results/overhead.json.
import { createServer } from 'node:http';
import axios from 'axios';
import axiosRetry from 'axios-retry';
import ky from 'ky';
import { attachRetry } from '../packages/axios/dist/index.js';
import { memoryStore } from '../packages/core/dist/index.js';
import { retryFetch } from '../packages/fetch/dist/index.js';
import { retryline } from '../packages/ky/dist/index.js';
import { writeResult } from './lib/results.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 20);
const PER_ROUND = Number(process.env.PER_ROUND ?? 200);

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
const kyRetryline = ky.create(retryline({ store }));
const kyBuiltin = ky.create({ retry: 2 });
const kyBare = ky.create({ retry: 0 });

/** Each variant sends one GET and reads the body, as an application would. */
const variants = {
  'fetch (bare)': async () => (await fetch(url)).text(),
  '@retryline/fetch': async () => (await fetchWithRetry(url)).text(),
  'axios (bare)': async () => (await axios.get(url)).data,
  '@retryline/axios': async () => (await retrylineAxios.get(url)).data,
  'axios + axios-retry': async () => (await peerAxios.get(url)).data,
  'ky (retry 0)': async () => kyBare.get(url).text(),
  '@retryline/ky': async () => kyRetryline.get(url).text(),
  "ky's own retry": async () => kyBuiltin.get(url).text(),
};
const baseline = {
  '@retryline/fetch': 'fetch (bare)',
  '@retryline/axios': 'axios (bare)',
  'axios + axios-retry': 'axios (bare)',
  '@retryline/ky': 'ky (retry 0)',
  "ky's own retry": 'ky (retry 0)',
};

const samples = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (const send of Object.values(variants)) for (let i = 0; i < 50; i++) await send(); // warm up
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, send] of Object.entries(variants)) {
    for (let i = 0; i < PER_ROUND; i++) {
      const start = process.hrtime.bigint();
      await send();
      samples[name].push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
}
server.close();

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const rows = Object.entries(samples).map(([name, values]) => {
  const median = quantile(values, 0.5);
  const base = baseline[name] ? quantile(samples[baseline[name]], 0.5) : median;
  return {
    variant: name,
    baseline: baseline[name] ?? null,
    requests: values.length,
    medianMs: Number(median.toFixed(4)),
    p99Ms: Number(quantile(values, 0.99).toFixed(4)),
    ratioToBare: Number((median / base).toFixed(3)),
  };
});
const result = { command: 'node bench/overhead.mjs', rounds: ROUNDS, perRound: PER_ROUND, rows };
console.log(JSON.stringify(rows, null, 2));
console.log(`written to ${writeResult('overhead', result)}`);
