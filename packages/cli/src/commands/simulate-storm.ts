import { formatDuration } from '../format-duration';
import { type Cell, formatTable } from '../format-table';
import { parseDuration } from '../parse-duration';
import { parseFlags } from '../parse-flags';
import { parseCount, parseNumber } from '../parse-number';
import type { CommandIo } from '../run';
import { STORM_POLICIES } from '../simulate/peers';
import {
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
  help: { type: 'boolean', short: 'h' },
} as const;

const FORMATS = { table: true, json: true } as const;
type Format = keyof typeof FORMATS;

/** `seededRandom` reads a number seed as a 32-bit unsigned integer. */
const MAX_SEED = 0xffff_ffff;
/**
 * The highest `--rate`: every request runs a client's whole retry engine, so a run costs about
 * 0.2 ms of real time per request (some 7 s for the five policies at the default 240 req/s).
 */
export const MAX_STORM_RATE = 1_000;

/**
 * `retryline simulate storm`: runs the retry-storm model (see `simulate/storm.ts`) once per policy
 * in `STORM_POLICIES` — immediate retries, axios-retry's defaults, ky's defaults, Retryline's
 * defaults, Retryline with breaker — and prints one row each. Returns the exit code. The output is
 * a function of the flags alone: time is virtual and every draw seeded.
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
  const scenario: Partial<StormScenario> = {
    seed: values.seed === undefined ? STORM_DEFAULTS.seed : parseCount(values.seed, '--seed', MAX_SEED),
    ...(values.rate === undefined ? {} : { ratePerSecond: readRate(values.rate) }),
    ...(values.stall === undefined ? {} : { stallMs: readStall(values.stall) }),
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

function readStall(text: string): number {
  const stall = parseDuration(text, '--stall');
  // The stall must end while requests still arrive (storm.ts checks the same and says it in its terms).
  const max = STORM_DEFAULTS.durationMs - STORM_DEFAULTS.stallAt;
  if (stall > max) {
    throw new UsageError(
      `Expected --stall to be at most ${formatDuration(max)}: requests arrive for ${formatDuration(STORM_DEFAULTS.durationMs)} and the stall begins at ${formatDuration(STORM_DEFAULTS.stallAt)}, got '${text}'`,
    );
  }
  return stall;
}

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
const recovery = (report: StormReport) =>
  report.recoveredAfterMs === null ? 'never' : `${report.recoveredAfterMs} ms`;

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
    `${report.wasted} of ${report.served} served (${percent(report.served === 0 ? 0 : report.wasted / report.served)})`,
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
    })),
  };
  // Infinity (the default queue limit) has no JSON form; say it in words.
  const replacer = (_key: string, value: unknown) =>
    value === Number.POSITIVE_INFINITY ? 'Infinity' : value;
  return `${JSON.stringify(json, replacer, 2)}\n`;
}

function stormHelp(): string {
  const d = formatDuration;
  return `Usage: retryline simulate storm [options]

Replays a retry storm in virtual time: a server of ${STORM_DEFAULTS.workers} workers × ${d(STORM_DEFAULTS.serviceMs)} stalls for
${d(STORM_DEFAULTS.stallMs)} under open-loop Poisson load, once per client policy: immediate retries (×3),
axios-retry's defaults, ky's defaults, Retryline's defaults, Retryline with breaker. Prints each
policy's incident amplification, recovery after the stall, success rate and wasted work.

Options
  --seed <n>           seeds the arrivals and the jitter, 0 to ${MAX_SEED} (default ${STORM_DEFAULTS.seed})
  --rate <n>           requests per second arriving, above 0, at most ${MAX_STORM_RATE} (default ${STORM_DEFAULTS.ratePerSecond})
  --stall <duration>   how long the server stalls, at most ${d(STORM_DEFAULTS.durationMs - STORM_DEFAULTS.stallAt)} (default ${d(STORM_DEFAULTS.stallMs)})
  --format <format>    table or json (default table)
  -h, --help           show this help

Durations: 250ms, 1s, 1.5s, 2m, 1h, or a bare number of milliseconds.

Examples
  retryline simulate storm
  retryline simulate storm --seed 7 --stall 3s --format json
`;
}
