import { formatDuration } from '../format-duration';
import { type Cell, formatTable } from '../format-table';
import { parseDuration } from '../parse-duration';
import { parseFlags } from '../parse-flags';
import { parseCount, parseNumber } from '../parse-number';
import type { CommandIo } from '../run';
import {
  CLOSED_STORM_DEFAULTS,
  type ClosedStormReport,
  type ClosedStormScenario,
  simulateClosedStorms,
  WARM_UP_MS,
  WINDOW_MS,
} from '../simulate/closed-storm';
import { CLOSED_STORM_POLICIES, STORM_POLICIES } from '../simulate/peers';
import {
  BUCKET_MS,
  INCIDENT_TAIL_MS,
  STORM_DEFAULTS,
  type StormReport,
  type StormScenario,
  simulateStorms,
} from '../simulate/storm';
import { UsageError } from '../usage-error';

const FLAGS = {
  seed: { type: 'string' },
  format: { type: 'string' },
  rate: { type: 'string' },
  stall: { type: 'string' },
  clients: { type: 'string' },
  think: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const FORMATS = { table: true, json: true } as const;
type Format = keyof typeof FORMATS;

/** `seededRandom` reads a number seed as a 32-bit unsigned integer. */
const MAX_SEED = 0xffff_ffff;
/**
 * The highest `--rate`: every request runs a client's whole retry engine, so a run costs about
 * 0.2 ms of real time per request (some 8 s for the six policies at the default 240 req/s).
 */
export const MAX_STORM_RATE = 1_000;
/** The most `--clients` (the closed loop's cost is bounded by {@link MAX_STORM_START_RATE}). */
export const MAX_STORM_CLIENTS = 10_000;
/**
 * The most requests per second a closed loop's clients may start when every request fails at once
 * (a breaker's fast failures): `clients / think`. Bounds a run's cost as {@link MAX_STORM_RATE}
 * does the open loop's (the defaults, 400 clients thinking 412 ms, start at most some 970 a second).
 */
export const MAX_STORM_START_RATE = 2_000;

/**
 * `retryline simulate storm`: runs the retry-storm model once per policy and prints one row each.
 * Open loop by default (`simulate/storm.ts`, the policies of `STORM_POLICIES`: immediate retries,
 * axios-retry's defaults, ky's defaults, Retryline's defaults, Retryline with breaker, Retryline
 * with adaptive throttle); a closed loop
 * of `--clients` clients with `--clients` (`simulate/closed-storm.ts`, the policies of
 * `CLOSED_STORM_POLICIES`, which adds no retries, axios-retry's `exponentialDelay` and p-retry's
 * defaults). Returns the exit code. The output is a function of the flags alone: time is virtual
 * and every draw seeded.
 */
export async function stormCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, FLAGS, 'retryline simulate storm');
  if (values.help === true) {
    io.stdout(stormHelp());
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `Unexpected argument '${positionals[0]}': 'retryline simulate storm' takes only options`,
    );
  }
  const format = readFormat(values.format);
  const seed = values.seed === undefined ? STORM_DEFAULTS.seed : parseCount(values.seed, '--seed', MAX_SEED);
  if (values.clients !== undefined) {
    if (values.rate !== undefined) {
      throw new UsageError(
        "Expected --rate or --clients, not both: --rate sets the open loop's arrivals, --clients a closed loop's clients (their load is set by --think)",
      );
    }
    const closed: Partial<ClosedStormScenario> = {
      seed,
      clients: parseCount(values.clients, '--clients', MAX_STORM_CLIENTS, 1),
      ...(values.think === undefined ? {} : { thinkMs: parseDuration(values.think, '--think') }),
      ...(values.stall === undefined ? {} : { stallMs: readStall(values.stall, CLOSED_STORM_DEFAULTS) }),
    };
    checkClosedLoad(closed, values.clients, values.think);
    const reports = await simulateClosedStorms({ ...closed, policies: CLOSED_STORM_POLICIES });
    io.stdout(format === 'json' ? renderClosedJson(reports) : renderClosedTable(reports));
    return 0;
  }
  if (values.think !== undefined) {
    throw new UsageError(
      `Expected --think only with --clients: it is the closed loop's mean think time, got '${values.think}' without --clients`,
    );
  }
  const scenario: Partial<StormScenario> = {
    seed,
    ...(values.rate === undefined ? {} : { ratePerSecond: readRate(values.rate) }),
    ...(values.stall === undefined ? {} : { stallMs: readStall(values.stall, STORM_DEFAULTS) }),
  };
  checkIncidentLoad(scenario, values.rate);
  const reports = await simulateStorms({ ...scenario, policies: STORM_POLICIES });
  io.stdout(format === 'json' ? renderJson(reports) : renderTable(reports));
  return 0;
}

function readFormat(text: string | undefined): Format {
  if (text === undefined) return 'table';
  if (Object.hasOwn(FORMATS, text)) return text as Format;
  throw new UsageError(`Expected --format to be one of ${Object.keys(FORMATS).join(', ')}, got '${text}'`);
}

function readRate(text: string): number {
  const rate = parseNumber(text, '--rate');
  if (!(rate > 0 && rate <= MAX_STORM_RATE)) {
    throw new UsageError(
      `Expected --rate to be a number of requests per second above 0 and at most ${MAX_STORM_RATE}, got '${text}'`,
    );
  }
  return rate;
}

/** Requests the incident (the stall and the {@link INCIDENT_TAIL_MS} after it) must expect. */
export const MIN_INCIDENT_REQUESTS = 10;

/**
 * Refuses a rate so low that few or no requests arrive during the incident: its amplification,
 * recovery and success rate would be 0 or a handful of requests' chance, printed as if measured.
 */
function checkIncidentLoad(scenario: Partial<StormScenario>, rate: string | undefined): void {
  const windowMs = (scenario.stallMs ?? STORM_DEFAULTS.stallMs) + INCIDENT_TAIL_MS;
  const perSecond = scenario.ratePerSecond ?? STORM_DEFAULTS.ratePerSecond;
  if ((perSecond * windowMs) / 1000 >= MIN_INCIDENT_REQUESTS) return;
  const least = Math.ceil((MIN_INCIDENT_REQUESTS * 1000 * 100) / windowMs) / 100;
  throw new UsageError(
    `Expected --rate to bring at least ${MIN_INCIDENT_REQUESTS} requests into the incident (the stall and the ${formatDuration(INCIDENT_TAIL_MS)} after it, ${formatDuration(windowMs)}): at least ${least} per second, got '${rate}'`,
  );
}

function readStall(text: string, defaults: Pick<StormScenario, 'stallAt' | 'durationMs'>): number {
  const stall = parseDuration(text, '--stall');
  // The stall must end while requests still arrive (storm.ts checks the same and says it in its terms).
  const max = defaults.durationMs - defaults.stallAt;
  if (stall > max) {
    throw new UsageError(
      `Expected --stall to be at most ${formatDuration(max)}: requests arrive for ${formatDuration(defaults.durationMs)} and the stall begins at ${formatDuration(defaults.stallAt)}, got '${text}'`,
    );
  }
  return stall;
}

/**
 * Refuses a closed loop too costly to run, or too light to measure: its clients may start at most
 * {@link MAX_STORM_START_RATE} requests a second (`clients / think`, what they start when every
 * request fails at once), and must be expected to start at least {@link MIN_INCIDENT_REQUESTS} in
 * the stall's window (`clients × WINDOW_MS / (think + serviceMs)`).
 */
function checkClosedLoad(
  scenario: Partial<ClosedStormScenario>,
  clientsText: string,
  thinkText: string | undefined,
): void {
  const clients = scenario.clients ?? CLOSED_STORM_DEFAULTS.clients;
  const thinkMs = scenario.thinkMs ?? CLOSED_STORM_DEFAULTS.thinkMs;
  const given = `${clientsText} client${clients === 1 ? '' : 's'} thinking ${thinkText ?? formatDuration(thinkMs)}`;
  if (thinkMs === 0) {
    throw new UsageError(
      `Expected --think to be above 0 with --clients: a client whose requests fail at once would start them without end, got '${thinkText}'`,
    );
  }
  const startRate = (clients * 1_000) / thinkMs;
  if (startRate > MAX_STORM_START_RATE) {
    throw new UsageError(
      `Expected --clients / --think to be at most ${MAX_STORM_START_RATE} requests per second (a client whose requests fail at once starts one per think time), got ${given} (${Math.round(startRate)} per second)`,
    );
  }
  const expected = (clients * WINDOW_MS) / (thinkMs + CLOSED_STORM_DEFAULTS.serviceMs);
  if (expected < MIN_INCIDENT_REQUESTS) {
    throw new UsageError(
      `Expected --clients and --think to start at least ${MIN_INCIDENT_REQUESTS} requests in the stall's ${formatDuration(WINDOW_MS)} window (clients × ${formatDuration(WINDOW_MS)} / (think + ${formatDuration(CLOSED_STORM_DEFAULTS.serviceMs)})), got ${given} (about ${Math.round(expected)})`,
    );
  }
}

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
const recovery = (report: Pick<StormReport, 'recoveredAfterMs'>) =>
  report.recoveredAfterMs === null ? 'never' : `${report.recoveredAfterMs} ms`;
const ratioOrNone = (value: number | null) => (value === null ? 'n/a' : `${value.toFixed(2)}×`);
const wastedWork = (report: { wasted: number; served: number }) =>
  `${report.wasted} of ${report.served} served (${percent(report.served === 0 ? 0 : report.wasted / report.served)})`;

function renderTable(reports: readonly StormReport[]): string {
  const first = reports[0];
  if (first === undefined) return '';
  const s = first.scenario;
  const capacity = (s.workers / s.serviceMs) * 1_000;
  const headers = ['Policy', 'Incident amplification', 'Recovery after stall', 'Success', 'Wasted work'];
  // formatTable right-aligns every column; the names read better left-aligned.
  const width = Math.max('Policy'.length, ...reports.map((report) => report.policy.length));
  const rows: Cell[][] = reports.map((report) => [
    report.policy.padEnd(width),
    `${report.incidentAmplification.toFixed(2)}×`,
    recovery(report),
    percent(report.successRate),
    wastedWork(report),
  ]);
  const lines = [
    `Retry storm, seed ${s.seed}: ${s.workers} workers × ${formatDuration(s.serviceMs)} (${capacity} req/s), ` +
      `${s.ratePerSecond} req/s arriving for ${formatDuration(s.durationMs)}, ` +
      `a ${formatDuration(s.stallMs)} stall at ${formatDuration(s.stallAt)}, attempts time out after ${formatDuration(s.timeoutMs)}.`,
    '',
    formatTable(['Policy'.padEnd(width), ...headers.slice(1)], rows),
    '',
    `Incident amplification: attempts per first attempt of the requests that arrived from the stall's start until ${formatDuration(s.stallMs + 8_000)} later.`,
    `Recovery: from the stall's end until no request waits ${formatDuration(s.timeoutMs / 4)} or more for a worker ('never': not within the run).`,
    'Wasted work: requests served after their client had given up.',
    "axios-retry's and ky's defaults do not retry a timeout, and this server only times out (it sends no 5xx):",
    'with their defaults every request is sent once.',
  ];
  return `${lines.join('\n')}\n`;
}

function renderJson(reports: readonly StormReport[]): string {
  const json = {
    scenario: reports[0]?.scenario,
    policies: reports.map((report) => ({
      policy: report.policy,
      incidentAmplification: report.incidentAmplification,
      amplification: report.amplification,
      recoveredAfterMs: report.recoveredAfterMs,
      successRate: report.successRate,
      logicalRequests: report.logicalRequests,
      attempts: report.attempts,
      succeeded: report.succeeded,
      failed: report.failed,
      unfinished: report.unfinished,
      failures: report.failures,
      served: report.served,
      wasted: report.wasted,
      peakQueue: report.peakQueue,
      timeline: report.timeline,
    })),
  };
  // Infinity (the default queue limit) has no JSON form; say it in words.
  const replacer = (_key: string, value: unknown) =>
    value === Number.POSITIVE_INFINITY ? 'Infinity' : value;
  return `${JSON.stringify(json, replacer, 2)}\n`;
}

function renderClosedTable(reports: readonly ClosedStormReport[]): string {
  const first = reports[0];
  if (first === undefined) return '';
  const s = first.scenario;
  const capacity = (s.workers / s.serviceMs) * 1_000;
  const offered = (s.clients * 1_000) / (s.thinkMs + s.serviceMs) / capacity;
  const width = Math.max('Policy'.length, ...reports.map((report) => report.policy.length));
  const rows: Cell[][] = reports.map((report) => [
    report.policy.padEnd(width),
    String(report.logicalRequests),
    `${report.windowAmplification.toFixed(2)}×`,
    ratioOrNone(report.peakVsSteady),
    percent(report.successRate),
    formatDuration(report.p50Ms),
    formatDuration(report.p99Ms),
    recovery(report),
    wastedWork(report),
  ]);
  const headers = [
    'Policy'.padEnd(width),
    'Requests',
    `Amplification (${formatDuration(WINDOW_MS)})`,
    'Peak vs steady',
    'Success',
    'p50',
    'p99',
    'Recovery after stall',
    'Wasted work',
  ];
  const lines = [
    `Closed-loop retry storm, seed ${s.seed}: ${s.clients} clients thinking ${formatDuration(s.thinkMs)} on average ` +
      `(about ${(offered * 100).toFixed(offered < 0.1 ? 1 : 0)} % of capacity), ${s.workers} workers × ${formatDuration(s.serviceMs)} (${capacity} req/s), ` +
      `a ${formatDuration(s.stallMs)} stall at ${formatDuration(s.stallAt)}, requests start for ${formatDuration(s.durationMs)}, ` +
      `attempts time out after ${formatDuration(s.timeoutMs)}.`,
    '',
    formatTable(headers, rows),
    '',
    `Requests: logical requests the clients started (each waits for its last one to settle, then thinks).`,
    `Amplification: attempts per request, of the requests whose first attempt reached the server from the stall's start until ${formatDuration(WINDOW_MS)} later.`,
    `Peak vs steady: the most attempts in ${formatDuration(BUCKET_MS)} from the stall on, over the mean per ${formatDuration(BUCKET_MS)} from ${formatDuration(WARM_UP_MS)} to the stall.`,
    'Success: requests that ended with a 2xx. p50, p99: request latency, from start to settling, failures included.',
    `Recovery: from the stall's end until no request waits ${formatDuration(s.timeoutMs / 4)} or more for a worker ('never': not within the run).`,
    'Wasted work: requests served after their client had given up.',
    `Lower bounds for these arrivals (${first.policy}): amplification ${first.amplificationBound.toFixed(2)}× (a first attempt sent before ` +
      `the stall's last ${formatDuration(s.timeoutMs - s.serviceMs)} times out before a worker starts it), p99 ${formatDuration(first.p99BoundMs)} ` +
      '(nothing is served during the stall).',
    "axios-retry's and ky's defaults do not retry a timeout (nor does axios-retry with exponentialDelay), and this",
    'server only times out: with them every request is sent once. A breaker fails requests without sending them.',
  ];
  return `${lines.join('\n')}\n`;
}

function renderClosedJson(reports: readonly ClosedStormReport[]): string {
  const json = {
    scenario: reports[0]?.scenario,
    windowMs: WINDOW_MS,
    warmUpMs: WARM_UP_MS,
    bucketMs: BUCKET_MS,
    policies: reports.map((report) => ({
      policy: report.policy,
      logicalRequests: report.logicalRequests,
      windowRequests: report.windowRequests,
      windowAmplification: report.windowAmplification,
      peakPerBucket: report.peakPerBucket,
      steadyPerBucket: report.steadyPerBucket,
      peakVsSteady: report.peakVsSteady,
      steadyLoad: report.steadyLoad,
      successRate: report.successRate,
      p50Ms: report.p50Ms,
      p99Ms: report.p99Ms,
      amplificationBound: report.amplificationBound,
      p99BoundMs: report.p99BoundMs,
      recoveredAfterMs: report.recoveredAfterMs,
      served: report.served,
      wasted: report.wasted,
      attempts: report.attempts,
      succeeded: report.succeeded,
      failed: report.failed,
      unfinished: report.unfinished,
      failures: report.failures,
      maxOutstanding: report.maxOutstanding,
      peakQueue: report.peakQueue,
      timeline: report.timeline,
    })),
  };
  const replacer = (_key: string, value: unknown) =>
    value === Number.POSITIVE_INFINITY ? 'Infinity' : value;
  return `${JSON.stringify(json, replacer, 2)}\n`;
}

function stormHelp(): string {
  const d = formatDuration;
  const c = CLOSED_STORM_DEFAULTS;
  return `Usage: retryline simulate storm [options]

Replays a retry storm in virtual time: a server stalls, once per client policy, and each policy's
added load, recovery, success and wasted work are printed.

Open loop (the default): a server of ${STORM_DEFAULTS.workers} workers × ${d(STORM_DEFAULTS.serviceMs)} stalls for ${d(STORM_DEFAULTS.stallMs)} at ${d(STORM_DEFAULTS.stallAt)} under Poisson
arrivals, whatever it answers. Policies: immediate retries (×3), axios-retry's defaults, ky's
defaults, Retryline's defaults, Retryline with breaker, Retryline with adaptive throttle. Prints
incident amplification, recovery after the stall, success rate and wasted work.

Closed loop (--clients): each client sends a request, waits for it to settle, thinks (exponential,
mean --think), and sends the next; a server of ${c.workers} workers × ${d(c.serviceMs)} stalls for ${d(c.stallMs)} at ${d(c.stallAt)}. Adds
no retries, axios-retry with exponentialDelay and p-retry's defaults to the policies. Prints the
requests started, amplification in the stall's ${d(WINDOW_MS)} window, peak arrivals vs steady, success,
p50 and p99 latency, recovery after the stall and wasted work.

With --format json, both loops add each policy's timeline: attempts sent, requests served and
requests queued per ${d(BUCKET_MS)}.

Options
  --seed <n>           seeds the arrivals and the jitter, 0 to ${MAX_SEED} (default ${STORM_DEFAULTS.seed})
  --rate <n>           open loop: requests per second arriving, above 0, at most ${MAX_STORM_RATE} (default ${STORM_DEFAULTS.ratePerSecond})
  --clients <n>        closed loop with this many clients, 1 to ${MAX_STORM_CLIENTS} (default loop: open)
  --think <duration>   closed loop: mean think time between a client's requests (default ${d(c.thinkMs)},
                       about 60 % of capacity with ${c.clients} clients); clients / think at most ${MAX_STORM_START_RATE} per second
  --stall <duration>   how long the server stalls, at most ${d(STORM_DEFAULTS.durationMs - STORM_DEFAULTS.stallAt)} (default ${d(STORM_DEFAULTS.stallMs)})
  --format <format>    table or json (default table)
  -h, --help           show this help

Durations: 250ms, 1s, 1.5s, 2m, 1h, or a bare number of milliseconds.

Examples
  retryline simulate storm
  retryline simulate storm --seed 7 --stall 3s --format json
  retryline simulate storm --clients ${c.clients} --think ${d(c.thinkMs)}
`;
}
