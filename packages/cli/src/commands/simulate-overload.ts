import { formatDuration } from '../format-duration';
import { type Cell, formatTable } from '../format-table';
import { parseDuration } from '../parse-duration';
import { parseFlags } from '../parse-flags';
import { parseCount, parseNumber } from '../parse-number';
import type { CommandIo } from '../run';
import {
  OVERLOAD_DEFAULTS,
  type OverloadReport,
  type OverloadScenario,
  simulateOverloads,
} from '../simulate/overload';
import { OVERLOAD_POLICIES } from '../simulate/peers';
import { UsageError } from '../usage-error';

const FLAGS = {
  seed: { type: 'string' },
  load: { type: 'string' },
  'reject-cost': { type: 'string' },
  clients: { type: 'string' },
  duration: { type: 'string' },
  format: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const FORMATS = { table: true, json: true } as const;

/** `seededRandom` reads a number seed as a 32-bit unsigned integer. */
const MAX_SEED = 0xffff_ffff;
/** The highest `--load`: ten times what the server can serve. */
export const MAX_OVERLOAD_LOAD = 10;
/** The most `--clients`. */
export const MAX_OVERLOAD_CLIENTS = 1_000;
/**
 * The most logical requests one policy's run may bring (arrival rate × (warm-up + window)): each
 * runs a client's whole retry engine, some 0.1 ms of real time, so about 10 s for the three policies.
 */
export const MAX_OVERLOAD_REQUESTS = 40_000;

/**
 * `retryline simulate overload`: a server at `--load` × its capacity, once per policy of
 * `OVERLOAD_POLICIES` (no retries, Retryline's defaults, the same with adaptive throttling), one
 * row each: goodput, rejections at the server, attempts sent and refused, success and p99.
 * Returns the exit code. The output is a function of the flags alone.
 */
export async function overloadCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, FLAGS, 'retryline simulate overload');
  if (values.help === true) {
    io.stdout(overloadHelp());
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `Unexpected argument '${positionals[0]}': 'retryline simulate overload' takes only options`,
    );
  }
  const format = values.format ?? 'table';
  if (!Object.hasOwn(FORMATS, format)) {
    throw new UsageError(
      `Expected --format to be one of ${Object.keys(FORMATS).join(', ')}, got '${format}'`,
    );
  }
  const scenario: Partial<OverloadScenario> = {
    ...(values.seed === undefined ? {} : { seed: parseCount(values.seed, '--seed', MAX_SEED) }),
    ...(values.load === undefined ? {} : { offeredLoad: readLoad(values.load) }),
    ...(values['reject-cost'] === undefined ? {} : { rejectShare: readRejectCost(values['reject-cost']) }),
    ...(values.clients === undefined
      ? {}
      : { clients: parseCount(values.clients, '--clients', MAX_OVERLOAD_CLIENTS, 1) }),
    ...(values.duration === undefined ? {} : { durationMs: readDuration(values.duration) }),
  };
  checkCost(scenario);
  const reports = await simulateOverloads({ ...scenario, policies: OVERLOAD_POLICIES });
  io.stdout(format === 'json' ? renderJson(reports) : renderTable(reports));
  return 0;
}

function readLoad(text: string): number {
  const load = parseNumber(text, '--load');
  if (!(load > 0 && load <= MAX_OVERLOAD_LOAD)) {
    throw new UsageError(
      `Expected --load to be a multiple of the server's capacity above 0 and at most ${MAX_OVERLOAD_LOAD}, got '${text}'`,
    );
  }
  return load;
}

function readRejectCost(text: string): number {
  const share = parseNumber(text, '--reject-cost');
  if (!(share >= 0 && share <= 1)) {
    throw new UsageError(
      `Expected --reject-cost to be a share of a request's service time from 0 to 1, such as 0.1, got '${text}'`,
    );
  }
  return share;
}

function readDuration(text: string): number {
  const ms = parseDuration(text, '--duration');
  if (!(ms >= 1_000)) {
    throw new UsageError(`Expected --duration to be at least 1s (the window measured), got '${text}'`);
  }
  return ms;
}

/** Refuses a run that would bring more than {@link MAX_OVERLOAD_REQUESTS} requests per policy. */
function checkCost(scenario: Partial<OverloadScenario>): void {
  const s = { ...OVERLOAD_DEFAULTS, ...scenario };
  const perSecond = s.offeredLoad * (s.workers / s.serviceMs) * 1_000;
  const requests = (perSecond * (s.warmUpMs + s.durationMs)) / 1_000;
  if (requests <= MAX_OVERLOAD_REQUESTS) return;
  throw new UsageError(
    `Expected --load and --duration to bring at most ${MAX_OVERLOAD_REQUESTS.toLocaleString('en-US')} requests per policy (${perSecond} req/s for ${formatDuration(s.warmUpMs)} of warm-up and the window), got ${Math.round(requests).toLocaleString('en-US')}: lower --load or --duration`,
  );
}

const percent = (share: number) => `${(share * 100).toFixed(1)} %`;
const perSecond = (value: number) => `${value.toFixed(1)}/s`;
const countAndRate = (count: number, seconds: number) =>
  `${count.toLocaleString('en-US')} (${perSecond(count / seconds)})`;

function renderTable(reports: readonly OverloadReport[]): string {
  const first = reports[0];
  if (first === undefined) return '';
  const s = first.scenario;
  const seconds = s.durationMs / 1_000;
  const width = Math.max('Policy'.length, ...reports.map((report) => report.policy.length));
  const rows: Cell[][] = reports.map((report) => [
    report.policy.padEnd(width),
    perSecond(report.goodputPerSecond),
    countAndRate(report.rejected, seconds),
    countAndRate(report.attempts, seconds),
    countAndRate(report.refused, seconds),
    percent(report.successRate),
    formatDuration(report.p99Ms),
  ]);
  const headers = [
    'Policy'.padEnd(width),
    'Goodput',
    'Rejected at server',
    'Attempts sent',
    'Refused by client',
    'Success',
    'p99',
  ];
  const rejectMs = s.rejectShare * s.serviceMs;
  const lines = [
    `Overload, seed ${s.seed}: ${s.workers} workers × ${formatDuration(s.serviceMs)} (${first.capacityPerSecond} req/s), ` +
      `${first.capacityPerSecond * s.offeredLoad} req/s arriving (${s.offeredLoad}× capacity) through ${s.clients} client${s.clients === 1 ? '' : 's'}; ` +
      `a full queue (${s.queueLimit}) answers 503 at once, each costing a worker ${formatDuration(rejectMs)} (${percent(s.rejectShare)} of a request); ` +
      `measured for ${formatDuration(s.durationMs)} after ${formatDuration(s.warmUpMs)} of warm-up, attempts time out after ${formatDuration(s.timeoutMs)}.`,
    '',
    formatTable(headers, rows),
    '',
    'Goodput: 2xx responses the clients received per second of the window.',
    'Rejected at server: attempts answered 503 because the queue was full. Attempts sent: attempts that reached the server.',
    'Refused by client: attempts an adaptive throttle refused before sending (a refused first attempt fails with ThrottledError).',
    'Success, p99: of the requests that arrived in the window, those that ended with a 2xx, and the latency of all (failures included).',
  ];
  return `${lines.join('\n')}\n`;
}

function renderJson(reports: readonly OverloadReport[]): string {
  const json = {
    scenario: reports[0]?.scenario,
    capacityPerSecond: reports[0]?.capacityPerSecond,
    policies: reports.map(({ scenario: _scenario, ...report }) => report),
  };
  return `${JSON.stringify(json, null, 2)}\n`;
}

function overloadHelp(): string {
  const d = OVERLOAD_DEFAULTS;
  const capacity = (d.workers / d.serviceMs) * 1_000;
  return `Usage: retryline simulate overload [options]

Offers a server more than it can serve, for as long as the run lasts, in virtual time: once per
client policy, and prints what the server got done. The server: ${d.workers} workers × ${formatDuration(d.serviceMs)} (${capacity} req/s)
behind a queue of ${d.queueLimit}; an attempt that finds the queue full gets a 503 at once, and that answer
costs a worker a share of a request's time (--reject-cost), as rejecting does (Google SRE book,
"Handling Overload"). Requests arrive as a Poisson process at --load × capacity, dealt in turn to
${d.clients} client processes with clients of their own. Policies: no retries, Retryline's defaults (retries
with the budget and the recovery gate), and the same with adaptiveThrottle(). Prints goodput,
rejections at the server, attempts sent and refused by the client, success and p99 latency, over
the window measured after ${formatDuration(d.warmUpMs)} of warm-up.

Options
  --seed <n>             seeds the arrivals and the jitter, 0 to ${MAX_SEED} (default ${d.seed})
  --load <x>             arrivals as a multiple of capacity, above 0, at most ${MAX_OVERLOAD_LOAD} (default ${d.offeredLoad})
  --reject-cost <share>  what a 503 costs a worker, as a share of a request, 0 to 1 (default ${d.rejectShare})
  --clients <n>          client processes, 1 to ${MAX_OVERLOAD_CLIENTS} (default ${d.clients})
  --duration <duration>  the window measured, at least 1s (default ${formatDuration(d.durationMs)})
  --format <format>      table or json (default table)
  -h, --help             show this help

Durations: 250ms, 1s, 1.5s, 2m, 1h, or a bare number of milliseconds.

Examples
  retryline simulate overload
  retryline simulate overload --seed 3 --reject-cost 0 --format json
  retryline simulate overload --load 3 --duration 10s
`;
}
