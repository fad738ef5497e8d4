// CPU per request that each Retryline adapter adds to its bare client on the happy path, against the
// performance contract: at most +10 µs for fetch and ky, and for axios no more than axios-retry adds
// in the same run. Latency on loopback (bench/overhead.mjs) is mostly waiting; this counts only the
// work the client process does.
//
// The server (bench/lib/ok-server.mjs) runs in a child process, so process.cpuUsage() (user +
// system, every thread of this process: JS, GC, the compiler) sees the client alone. In each round
// every variant sends PER_ROUND sequential GETs and reads each body, in slices of SLICE requests
// taken in turn, so a burst of load from elsewhere on the machine falls on all of them alike; a
// variant's CPU per request in a round is the CPU time of its slices over PER_ROUND. The order of a
// turn rotates as a Williams design: over as many turns as there are variants, each takes every slot
// once and follows every other variant exactly once. Plain rotation gives each variant the same
// predecessor every turn, and going from an axios variant to a fetch one costs the fetch one a few
// microseconds (colder caches): with it, the A/A pair measured −11 µs [−21, −6], a bias the size of
// the target. Garbage is left to V8's own collections (a forced gc() between slices would keep
// allocation's cost out of the window): a scavenge lands on whichever variant fills the young
// generation, so in expectation in proportion to what each allocates.
//
// A variant's figure is the median over rounds of (its CPU µs per request − its bare client's in the
// same round), with the 25th and 75th percentiles (one round's spread) and a 95 % interval of the
// median (a bootstrap over the rounds). The noise floor is an A/A pair: bare fetch against a copy of
// itself in another slot, whose delta would be 0 without noise. On Linux the main thread's own CPU
// time (/proc/self/task/<pid>/schedstat, in ns) is recorded beside it: the JavaScript and syscalls
// without V8's helper threads, a steadier if partial view. Wall-clock latency is context only.
// Run after `pnpm build`: `node bench/cpu-overhead.mjs` (ROUNDS, PER_ROUND, SLICE to change the
// sample); writes bench/results/cpu-overhead.json.
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import axios from 'axios';
import axiosRetry from 'axios-retry';
import ky from 'ky';
import { attachRetry } from '../packages/axios/dist/index.js';
import { retryFetch } from '../packages/fetch/dist/index.js';
import { retryline } from '../packages/ky/dist/index.js';
import { startOkServer } from './lib/ok-server.mjs';
import { writeResult } from './lib/results.mjs';

const ROUNDS = Number(process.env.ROUNDS ?? 100);
const PER_ROUND = Number(process.env.PER_ROUND ?? 200);
const SLICE = Number(process.env.SLICE ?? 25);
const WARMUP = 300;

const loadBefore = loadavg();
const server = await startOkServer();
const url = server.url;

// Every client with its defaults, as an application would first write it.
const fetchWithRetry = retryFetch(fetch);
const kyBare = ky.create({ retry: 0 });
const kyRetryline = ky.create(retryline());
const axiosBare = axios.create();
const axiosRetryline = axios.create();
attachRetry(axiosRetryline);
const axiosPeer = axios.create();
axiosRetry(axiosPeer);

const AA = 'fetch (bare, A/A copy)';
/** Each variant sends one GET and reads the body. The A/A copy is the same code in its own closure. */
const variants = {
  'fetch (bare)': async () => (await fetch(url)).text(),
  [AA]: async () => (await fetch(url)).text(),
  '@retryline/fetch': async () => (await fetchWithRetry(url)).text(),
  'ky (retry 0)': async () => kyBare.get(url).text(),
  '@retryline/ky': async () => kyRetryline.get(url).text(),
  'axios (bare)': async () => (await axiosBare.get(url)).data,
  '@retryline/axios': async () => (await axiosRetryline.get(url)).data,
  'axios + axios-retry': async () => (await axiosPeer.get(url)).data,
};
const baseline = {
  [AA]: 'fetch (bare)',
  '@retryline/fetch': 'fetch (bare)',
  '@retryline/ky': 'ky (retry 0)',
  '@retryline/axios': 'axios (bare)',
  'axios + axios-retry': 'axios (bare)',
};
/** Pairs compared head to head, round by round. */
const versus = [['@retryline/axios', 'axios + axios-retry']];

const quantile = (values, q) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
};
const round2 = (value) => Number(value.toFixed(2));
/** mulberry32: a seeded random, so the bootstrap below gives the same interval for the same data. */
const seeded = (seed) => () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
/**
 * The 95 % interval of the median, by bootstrap over rounds: how far this run's median could be from
 * another run's on the same machine. The 25th–75th percentiles are the spread of one round's value.
 */
function medianInterval(values) {
  const random = seeded(1);
  const medians = Array.from({ length: 2000 }, () =>
    quantile(
      values.map(() => values[Math.floor(random() * values.length)]),
      0.5,
    ),
  );
  return [round2(quantile(medians, 0.025)), round2(quantile(medians, 0.975))];
}
const spread = (values) => ({
  median: round2(quantile(values, 0.5)),
  p25: round2(quantile(values, 0.25)),
  p75: round2(quantile(values, 0.75)),
  ci95: medianInterval(values),
});

// The main thread's id is the process id; the first field of its schedstat is its time on a CPU in ns.
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
const hasMainThread = existsSync(SCHEDSTAT);
const mainThreadUs = hasMainThread
  ? () => Number(readFileSync(SCHEDSTAT, 'utf8').split(' ', 1)[0]) / 1000
  : () => Number.NaN;

/**
 * One slice of `count` requests: the process's and the main thread's CPU µs it took in all; each
 * request's wall µs goes to `wall`.
 */
async function slice(send, count, wall) {
  const mainBefore = mainThreadUs();
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    await send();
    wall.push((performance.now() - start) * 1000);
  }
  const cpu = process.cpuUsage(before);
  return { process: cpu.user + cpu.system, main: mainThreadUs() - mainBefore };
}

const names = Object.keys(variants);
// Williams' base sequence 0, 1, n−1, 2, n−2, 3 …; turn t adds t to each index (mod n). For an odd
// number of variants the balance needs the mirrored square too: every other pass runs reversed.
const williams = names.map((_, i) => (i % 2 === 1 ? (i + 1) / 2 : (names.length - i / 2) % names.length));
const orderOf = (turn) => {
  const order = williams.map((index) => names[(index + turn) % names.length]);
  return names.length % 2 === 1 && Math.floor(turn / names.length) % 2 === 1 ? order.reverse() : order;
};

// Warm-up, interleaved too, so the JIT and the connection pools settle before anything counts.
for (let turn = 0; turn < 3; turn++) {
  for (const name of orderOf(turn)) await slice(variants[name], WARMUP / 3, []);
}

const cpu = Object.fromEntries(names.map((name) => [name, []]));
const mainCpu = Object.fromEntries(names.map((name) => [name, []]));
const wallRoundMedian = Object.fromEntries(names.map((name) => [name, []]));
const wallAll = Object.fromEntries(names.map((name) => [name, []]));
const started = performance.now();
let turn = 0;
for (let round = 0; round < ROUNDS; round++) {
  const cpuUs = Object.fromEntries(names.map((name) => [name, 0]));
  const mainUs = Object.fromEntries(names.map((name) => [name, 0]));
  const wall = Object.fromEntries(names.map((name) => [name, []]));
  for (let done = 0; done < PER_ROUND; done += SLICE, turn++) {
    const count = Math.min(SLICE, PER_ROUND - done);
    for (const name of orderOf(turn)) {
      const used = await slice(variants[name], count, wall[name]);
      cpuUs[name] += used.process;
      mainUs[name] += used.main;
    }
  }
  for (const name of names) {
    cpu[name].push(cpuUs[name] / PER_ROUND);
    mainCpu[name].push(mainUs[name] / PER_ROUND);
    wallRoundMedian[name].push(quantile(wall[name], 0.5));
    wallAll[name].push(...wall[name]);
  }
}
const seconds = (performance.now() - started) / 1000;
await server.close();

/** Per round, a's figure minus b's. */
const minus = (series, a, b) => series[a].map((value, round) => value - series[b][round]);

const rows = names.map((name) => {
  const base = baseline[name];
  return {
    variant: name,
    baseline: base ?? null,
    requests: cpu[name].length * PER_ROUND,
    cpuUsPerRequest: spread(cpu[name]),
    cpuDeltaUs: base ? spread(minus(cpu, name, base)) : null,
    mainThreadUsPerRequest: hasMainThread ? spread(mainCpu[name]) : null,
    mainThreadDeltaUs: hasMainThread && base ? spread(minus(mainCpu, name, base)) : null,
    wallMedianUs: round2(quantile(wallAll[name], 0.5)),
    wallDeltaUs: base ? round2(quantile(minus(wallRoundMedian, name, base), 0.5)) : null,
  };
});
const aa = rows.find((row) => row.variant === AA);
const result = {
  command: 'node bench/cpu-overhead.mjs',
  what: 'CPU µs (user + system) per sequential GET on loopback, client process only',
  rounds: ROUNDS,
  perRound: PER_ROUND,
  slice: SLICE,
  server: 'child process (bench/lib/ok-server.mjs)',
  seconds: round2(seconds),
  loadAverage1m: { before: round2(loadBefore[0]), after: round2(loadavg()[0]) },
  noiseFloor: {
    variant: aa.variant,
    baseline: aa.baseline,
    cpuDeltaUs: aa.cpuDeltaUs,
    mainThreadDeltaUs: aa.mainThreadDeltaUs,
    wallDeltaUs: aa.wallDeltaUs,
  },
  versus: versus.map(([a, b]) => ({
    variant: a,
    against: b,
    cpuDeltaUs: spread(minus(cpu, a, b)),
    mainThreadDeltaUs: hasMainThread ? spread(minus(mainCpu, a, b)) : null,
  })),
  rows,
};

const pad = (text, width, right = true) =>
  right ? String(text).padStart(width) : String(text).padEnd(width);
const signed = (value) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`;
const withSpread = (d) => (d ? `${signed(d.median)} [${signed(d.ci95[0])}…${signed(d.ci95[1])}]` : '—');
console.log(
  `CPU per request, client process only: ${ROUNDS} interleaved rounds × ${PER_ROUND} requests per variant, in slices of ${SLICE} (${seconds.toFixed(0)} s)\n`,
);
console.log(
  `${pad('variant', 24, false)} ${pad('compared with', 14, false)} ${pad('CPU µs/req', 10)} ${pad('Δ CPU µs [95 % CI]', 26)} ${pad('Δ main thread µs', 26)} ${pad('wall µs', 8)} ${pad('Δ wall', 7)}`,
);
for (const row of rows) {
  console.log(
    `${pad(row.variant, 24, false)} ${pad(row.baseline ?? '—', 14, false)} ${pad(row.cpuUsPerRequest.median.toFixed(1), 10)} ${pad(withSpread(row.cpuDeltaUs), 26)} ${pad(withSpread(row.mainThreadDeltaUs), 26)} ${pad(row.wallMedianUs.toFixed(0), 8)} ${pad(row.wallDeltaUs === null ? '—' : signed(row.wallDeltaUs), 7)}`,
  );
}
console.log(
  `\nA/A noise floor (${aa.variant} − ${aa.baseline}): process ${withSpread(aa.cpuDeltaUs)} µs, main thread ${withSpread(aa.mainThreadDeltaUs)} µs`,
);
for (const pair of result.versus) {
  console.log(
    `${pair.variant} − ${pair.against}, round by round: process ${withSpread(pair.cpuDeltaUs)} µs, main thread ${withSpread(pair.mainThreadDeltaUs)} µs`,
  );
}
console.log(`written to ${writeResult('cpu-overhead', result)}`);
