// The closed-loop storm's measures (packages/cli/src/simulate/closed-storm.ts, module comment), computed
// from what a real run leaves behind: the server's record of every attempt (bench/lib/storm-server.mjs)
// and the clients' own log of every logical request. Times in ms after the run's start; `BUCKET_MS`
// buckets over `[0, durationMs)`.
//
// 1. Amplification in the stall's window: the attempts (over the whole run) of the logical requests
//    whose first attempt reached the server in `[stallAt, stallAt + WINDOW_MS)`, per such request.
// 2. Peak arrivals vs steady: the most attempts reaching the server in one bucket among the buckets
//    that end after `stallAt`, over the mean per bucket of the buckets lying wholly in
//    `[WARM_UP_MS, stallAt)`; `steadyLoad` is that mean as a share of capacity (`workers / serviceMs`).
// 3. Success: logical requests that ended with a 2xx, over all logical requests (unfinished ones fail).
// 4. p50 / p99: nearest rank (`ceil(p · n)`-th smallest) of each logical request's start-to-settle
//    time, failures included; an unfinished one counts with its age at the run's end.
// 5. Recovery: the first instant after the stall from which, until `durationMs`, every request a worker
//    started had waited less than `timeoutMs / 4`, and none still queued at `durationMs` had waited
//    that long; ms from the stall's end (rounded up), `null` when the arrival window ended first.
//    Wasted work: requests the workers finished after their client had given up on them.

export const BUCKET_MS = 100;
export const WINDOW_MS = 4_000;
export const WARM_UP_MS = 1_000;

/** `part / whole`, 0 when `whole` is 0 (closed-storm.ts's `ratio`). */
const ratio = (part, whole) => (whole === 0 ? 0 : part / whole);

/** The nearest-rank percentile: the `ceil(p · n)`-th smallest of the `n` values; 0 when there are none. */
export function percentile(values, p) {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/**
 * The measures of one run.
 *
 * @param {object} scenario { workers, serviceMs, timeoutMs, stallAt, stallMs, durationMs }
 * @param {object} log the clients' log, by logical request id: `startedAt[]`, `settledAt[]` (NaN if
 *   unfinished), `failure[]` (undefined for a 2xx, else how it ended), plus `endAt` (when the run ended)
 * @param {object} records the server's columns: `id`, `attempt`, `arrival`, `start`, `end`,
 *   `goneAtEnd` (null while not finished)
 */
export function closedStormMeasures(scenario, log, records) {
  const { workers, serviceMs, timeoutMs, stallAt, stallMs, durationMs } = scenario;
  const stallEnd = stallAt + stallMs;
  const windowEnd = stallAt + WINDOW_MS;
  const slowWaitMs = timeoutMs / 4;
  const requests = log.startedAt.length;

  const timeline = Array.from({ length: Math.ceil(durationMs / BUCKET_MS) }, (_, i) => ({
    t: i * BUCKET_MS,
    sent: 0,
    retries: 0,
    served: 0,
    queue: 0,
  }));
  const bucketAt = (time) =>
    time >= 0 && time < durationMs ? timeline[Math.floor(time / BUCKET_MS)] : undefined;

  // Per logical request: attempts and the first one's arrival. Records come in order of arrival, so
  // an attempt's ordinal among its request's records is its number as the server saw it.
  const attemptsOf = new Array(requests).fill(0);
  const firstAttemptAt = new Array(requests).fill(Number.NaN);
  let unknownAttempts = 0;
  let withHeader = 0;
  let headerMismatches = 0;
  let served = 0;
  let wasted = 0;
  let lastSlowStart;
  let stillQueuedSlow = false;
  const starts = [];
  const count = records.arrival.length;
  for (let i = 0; i < count; i++) {
    const arrival = records.arrival[i];
    const id = records.id[i];
    const start = records.start[i];
    const arrivalBucket = bucketAt(arrival);
    if (arrivalBucket) arrivalBucket.sent++;
    if (id >= 0 && id < requests) {
      attemptsOf[id]++;
      if (attemptsOf[id] === 1) firstAttemptAt[id] = arrival;
      else if (arrivalBucket) arrivalBucket.retries++;
      if (records.attempt[i] > 0) {
        withHeader++;
        if (records.attempt[i] !== attemptsOf[id]) headerMismatches++;
      }
    } else unknownAttempts++;
    if (records.goneAtEnd[i] !== null) {
      served++;
      if (records.goneAtEnd[i]) wasted++;
      const servedBucket = bucketAt(records.end[i]);
      if (servedBucket) servedBucket.served++;
    }
    if (start !== null) {
      starts.push(start);
      if (start >= stallEnd && start < durationMs && start - arrival >= slowWaitMs)
        lastSlowStart = Math.max(lastSlowStart ?? start, start);
    }
    if (arrival <= durationMs - slowWaitMs && (start === null || start > durationMs)) stillQueuedSlow = true;
  }

  // The queue at each bucket's end: arrivals so far minus starts so far.
  starts.sort((a, b) => a - b);
  let arrived = 0;
  let started = 0;
  for (const bucket of timeline) {
    const end = Math.min(bucket.t + BUCKET_MS, durationMs);
    while (arrived < count && records.arrival[arrived] <= end) arrived++;
    while (started < starts.length && starts[started] <= end) started++;
    bucket.queue = arrived - started;
  }

  let windowRequests = 0;
  let windowAttempts = 0;
  let maxAttempts = 0;
  let succeeded = 0;
  let unfinished = 0;
  const failures = {};
  const latencies = log.startedAt.map((startedAt, id) => {
    const first = firstAttemptAt[id];
    if (first >= stallAt && first < windowEnd) {
      windowRequests++;
      windowAttempts += attemptsOf[id];
    }
    maxAttempts = Math.max(maxAttempts, attemptsOf[id]);
    const settledAt = log.settledAt[id];
    if (Number.isNaN(settledAt)) {
      unfinished++;
      failures.unfinished = (failures.unfinished ?? 0) + 1;
      return log.endAt - startedAt;
    }
    const failure = log.failure[id];
    if (failure === undefined) succeeded++;
    else failures[failure] = (failures[failure] ?? 0) + 1;
    return settledAt - startedAt;
  });

  let steadySum = 0;
  let steadyBuckets = 0;
  let peakPerBucket = 0;
  let peakBucket;
  for (const bucket of timeline) {
    const { t, sent } = bucket;
    if (t >= WARM_UP_MS && t + BUCKET_MS <= stallAt) {
      steadySum += sent;
      steadyBuckets++;
    }
    if (t + BUCKET_MS > stallAt && sent > peakPerBucket) {
      peakPerBucket = sent;
      peakBucket = bucket;
    }
  }
  const steadyPerBucket = ratio(steadySum, steadyBuckets);
  const capacityPerBucket = (workers / serviceMs) * BUCKET_MS;

  return {
    logicalRequests: requests,
    attempts: count,
    windowRequests,
    windowAmplification: ratio(windowAttempts, windowRequests),
    steadyPerBucket,
    steadyLoad: steadyPerBucket / capacityPerBucket,
    peakPerBucket,
    peakVsSteady: steadyBuckets === 0 || steadyPerBucket === 0 ? null : peakPerBucket / steadyPerBucket,
    // Where the peak bucket lies, and how many of its attempts were retries (the rest are first
    // attempts: a burst of them is the clients' own timing, not the policy's retries).
    peakAtMs: peakBucket?.t ?? null,
    peakRetries: peakBucket?.retries ?? 0,
    succeeded,
    failed: requests - succeeded - unfinished,
    unfinished,
    successRate: ratio(succeeded, requests),
    failures,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    recoveredAfterMs: stillQueuedSlow
      ? null
      : lastSlowStart === undefined
        ? 0
        : Math.ceil(lastSlowStart - stallEnd),
    served,
    wasted,
    maxAttemptsPerRequest: maxAttempts,
    // Sanity checks: attempts without a known request id, and attempt headers (where the client
    // sends one) that disagree with the order in which the server saw a request's attempts.
    unknownAttempts,
    attemptHeaders: withHeader,
    attemptHeaderMismatches: headerMismatches,
    timeline,
  };
}
