// What bench/balance.mjs and bench/hedge.mjs share: sending a batch of requests through a fixed
// number of lanes (closed loop: each lane sends its next request once its last has settled), and
// summarising the latencies. Quantiles are nearest-rank on the sorted sample, `sorted[floor(q·n)]`,
// as in bench/overhead.mjs: with 1 % of answers slow, the p99 of a sample is its smallest slow one.
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** The value at quantile `q` of `values` (sorted or not). */
export function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** p50, p95, p99, p99.9, max and mean of latencies in ms, rounded to µs (all `null` for none). */
export function latencySummary(values) {
  if (values.length === 0)
    return { n: 0, p50: null, p95: null, p99: null, p999: null, max: null, mean: null };
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const r = (v) => Number(v.toFixed(3));
  return {
    n: sorted.length,
    p50: r(at(0.5)),
    p95: r(at(0.95)),
    p99: r(at(0.99)),
    p999: r(at(0.999)),
    max: r(sorted.at(-1)),
    mean: r(sorted.reduce((sum, v) => sum + v, 0) / sorted.length),
  };
}

/**
 * Sends `count` requests through `lanes` concurrent lanes: `send(i)` sends request i and settles when
 * its body is read. Resolves with the latencies in ms of the requests that succeeded (in the order they
 * settled) and a count of the others' errors by name.
 */
export async function runLanes(lanes, count, send) {
  const latencies = [];
  const errors = {};
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const started = performance.now();
      try {
        await send(i);
        latencies.push(performance.now() - started);
      } catch (error) {
        const name = error?.name ?? typeof error;
        errors[name] = (errors[name] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  return { latencies, errors };
}

/**
 * Starts watching this process: its CPU (user + system, every thread) and its event loop's delay.
 * `stop()` returns the CPU used as a share of one core over the wall time, and the loop's delay past
 * its 10 ms sampling interval (p50, p99, max, in ms). A client near a full core queues its own
 * requests: then the latencies measure the client, not the servers or the strategy.
 */
export function watchProcess() {
  const resolution = 10;
  const delay = monitorEventLoopDelay({ resolution });
  delay.enable();
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  return () => {
    const cpu = process.cpuUsage(cpuBefore);
    const wall = performance.now() - wallBefore;
    delay.disable();
    const past = (ns) => Number(Math.max(0, ns / 1e6 - resolution).toFixed(2));
    return {
      cpuShareOfOneCore: Number(((cpu.user + cpu.system) / 1000 / wall).toFixed(3)),
      loopDelayMs: { p50: past(delay.percentile(50)), p99: past(delay.percentile(99)), max: past(delay.max) },
    };
  };
}

/** A bench's numeric setting from the environment (`BASE_MS=4 node bench/balance.mjs`), or `fallback`. */
export function setting(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, got '${raw}'`);
  return value;
}
