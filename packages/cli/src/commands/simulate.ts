import { formatDuration } from '../format-duration';
import { type Cell, formatTable } from '../format-table';
import { type FlagValues, parseFlags } from '../parse-flags';
import { parseCount } from '../parse-number';
import type { CommandIo } from '../run';
import {
  HERD_DEFAULTS,
  HERD_STRATEGIES,
  type HerdResult,
  type HerdStrategy,
  MAX_HERD_CLIENTS,
  MAX_HERD_WORK,
  simulateHerds,
  sweepCounts,
  sweepWork,
} from '../simulate/herd';
import { UsageError } from '../usage-error';
import { overloadCommand } from './simulate-overload';
import { stormCommand } from './simulate-storm';

/** A `retryline simulate` subcommand. */
export type SimulateSubcommand = (args: readonly string[], io: CommandIo) => number | Promise<number>;

/** The subcommands of `retryline simulate`, in the order the help lists them. */
export const SIMULATE_SUBCOMMANDS: Readonly<Record<string, { summary: string; run: SimulateSubcommand }>> = {
  herd: {
    summary: 'many clients contend on one row: calls and completion time per jitter (Brooker, AWS 2015)',
    run: herdCommand,
  },
  storm: {
    summary: 'a stalled server under retrying clients: added load and recovery',
    run: stormCommand,
  },
  overload: {
    summary:
      'a server offered twice its capacity: goodput and rejections, with and without adaptive throttling',
    run: overloadCommand,
  },
};

/**
 * `retryline simulate <herd|storm|overload>`: dispatches to the subcommand. Returns the exit code. Without a
 * subcommand it prints the help on stderr and returns 2, as `retryline` does without a command.
 */
export function simulateCommand(args: readonly string[], io: CommandIo): number | Promise<number> {
  const [name, ...rest] = args;
  if (name === undefined) {
    io.stderr(simulateHelp());
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    const topic = rest[0];
    if (topic !== undefined) return findSubcommand(topic)(['--help'], io);
    io.stdout(simulateHelp());
    return 0;
  }
  return findSubcommand(name)(rest, io);
}

function findSubcommand(name: string): SimulateSubcommand {
  const entry = Object.hasOwn(SIMULATE_SUBCOMMANDS, name) ? SIMULATE_SUBCOMMANDS[name] : undefined;
  if (entry !== undefined) return entry.run;
  const names = Object.keys(SIMULATE_SUBCOMMANDS).join(', ');
  throw new UsageError(
    name.startsWith('-')
      ? `Unknown option '${name}' before a subcommand: see 'retryline simulate --help'`
      : `Unknown simulation '${name}' (simulations: ${names}): see 'retryline simulate --help'`,
  );
}

function simulateHelp(): string {
  const names = Object.keys(SIMULATE_SUBCOMMANDS);
  const width = Math.max(...names.map((name) => name.length));
  const lines = Object.entries(SIMULATE_SUBCOMMANDS).map(
    ([name, entry]) => `  ${name.padEnd(width)}  ${entry.summary}`,
  );
  return `Usage: retryline simulate <simulation> [options]

Runs a retry policy against a model in virtual time: deterministic for a seed, and done in seconds.

Simulations
${lines.join('\n')}

Run 'retryline simulate <simulation> --help' for a simulation's options.
`;
}

const HERD_FLAGS = {
  clients: { type: 'string' },
  step: { type: 'string' },
  seed: { type: 'string' },
  format: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

const FORMATS = { table: true, json: true, csv: true } as const;
type Format = keyof typeof FORMATS;

/** The client count the table's closing ratio line is read at: none vs full jitter at 100 clients. */
const RATIO_CLIENTS = 100;

interface HerdRequest {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly seed: number;
  readonly format: Format;
}

/** `retryline simulate herd`: the thundering-herd comparison of backoff jitters. */
export async function herdCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, HERD_FLAGS, 'retryline simulate herd');
  if (values.help === true) {
    io.stdout(herdHelp());
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(
      `Unexpected argument '${positionals[0]}': 'retryline simulate herd' takes only options`,
    );
  }
  const request = readHerdRequest(values);
  const rows = await simulateHerds({
    from: request.from,
    to: request.to,
    step: request.step,
    seed: request.seed,
  });
  if (request.format === 'json') io.stdout(renderHerdJson(request, rows));
  else if (request.format === 'csv') io.stdout(renderHerdCsv(rows));
  else io.stdout(renderHerdTable(request, rows));
  return 0;
}

function readHerdRequest(values: FlagValues<typeof HERD_FLAGS>): HerdRequest {
  let from: number = HERD_DEFAULTS.from;
  let to: number = HERD_DEFAULTS.to;
  if (values.clients !== undefined) {
    const text = values.clients;
    const range = /^([^.]*)\.\.([^.]*)$/.exec(text);
    if (range === null) {
      from = readClients(text, text);
      to = from;
    } else {
      from = readClients(range[1] ?? '', text);
      to = readClients(range[2] ?? '', text);
      if (to < from) {
        throw new UsageError(
          `Expected --clients to be a range from low to high such as 10..200, got '${text}'`,
        );
      }
    }
  }
  if (values.step !== undefined && from === to) {
    throw new UsageError(
      `--step spaces a range of client counts, and --clients ${values.clients} is one count: use a range such as ${from}..${from * 10}`,
    );
  }
  const step =
    values.step === undefined ? HERD_DEFAULTS.step : parseCount(values.step, '--step', MAX_HERD_CLIENTS, 1);
  const counts = sweepCounts(from, to, step);
  const work = sweepWork(counts);
  if (work > MAX_HERD_WORK) {
    // The none and no-backoff strategies cost about clients² calls: one run at 2000 clients takes
    // some 20 s, and the sum of a sweep's runs is refused past that rather than run for hours.
    throw new UsageError(
      `That sweep would run ${counts.length} herds of up to ${to} clients, about ${Math.ceil(work / MAX_HERD_WORK)}× the most one command simulates (one herd of ${MAX_HERD_CLIENTS} clients, some 20 s): raise --step or narrow --clients`,
    );
  }
  const seed =
    values.seed === undefined ? HERD_DEFAULTS.seed : parseCount(values.seed, '--seed', 0xffff_ffff);
  const format = values.format ?? 'table';
  if (!Object.hasOwn(FORMATS, format)) {
    throw new UsageError(
      `Expected --format to be one of ${Object.keys(FORMATS).join(', ')}, got '${format}'`,
    );
  }
  return { from, to, step, seed, format: format as Format };
}

function readClients(part: string, text: string): number {
  const expected = `Expected --clients to be a count from 1 to ${MAX_HERD_CLIENTS} or a range such as 10..200, got '${text}'`;
  if (!/^\d+$/.test(part)) throw new UsageError(expected);
  const value = Number(part);
  if (value < 1 || value > MAX_HERD_CLIENTS) throw new UsageError(expected);
  return value;
}

function byClients(rows: readonly HerdResult[]): Map<number, Map<HerdStrategy, HerdResult>> {
  const table = new Map<number, Map<HerdStrategy, HerdResult>>();
  for (const row of rows) {
    let line = table.get(row.clients);
    if (line === undefined) {
      line = new Map();
      table.set(row.clients, line);
    }
    line.set(row.strategy, row);
  }
  return table;
}

/** `none` calls over `full` calls at 100 clients, or at the largest count when 100 is not run. */
function callRatio(rows: readonly HerdResult[]): { clients: number; ratio: number } | undefined {
  const table = byClients(rows);
  const counts = [...table.keys()];
  const clients = counts.includes(RATIO_CLIENTS) ? RATIO_CLIENTS : Math.max(...counts);
  const none = table.get(clients)?.get('none');
  const full = table.get(clients)?.get('full');
  if (none === undefined || full === undefined) return undefined;
  return { clients, ratio: none.calls / full.calls };
}

function renderHerdTable(request: HerdRequest, rows: readonly HerdResult[]): string {
  const table = byClients(rows);
  const headers = ['Clients', ...HERD_STRATEGIES];
  const body = (cell: (row: HerdResult) => string): Cell[][] =>
    [...table].map(([clients, line]) => [
      String(clients),
      ...HERD_STRATEGIES.map((strategy) => {
        const row = line.get(strategy);
        return row === undefined ? '' : cell(row);
      }),
    ]);
  const ratio = callRatio(rows);
  const ratioLine =
    ratio === undefined
      ? ''
      : `\nnone (no jitter) makes ${ratio.ratio.toFixed(2)}× the calls of full jitter at ${ratio.clients} clients.\n`;
  return `Thundering herd: clients contend on one versioned row (read, then write if unchanged), seed ${request.seed}
Network hop ${HERD_DEFAULTS.hopMs}ms ± ${HERD_DEFAULTS.hopMs / 5}ms; exponential backoff base ${formatDuration(HERD_DEFAULTS.base)}, cap ${formatDuration(HERD_DEFAULTS.cap)}

Calls (read-then-write tries of all clients)
${formatTable(
  headers,
  body((row) => String(row.calls)),
)}

Completion (the last client's write acknowledged)
${formatTable(
  headers,
  body((row) => formatDuration(Math.round(row.completionMs))),
)}
${ratioLine}`;
}

function renderHerdJson(request: HerdRequest, rows: readonly HerdResult[]): string {
  const ratio = callRatio(rows);
  const model = {
    seed: request.seed,
    hopMs: HERD_DEFAULTS.hopMs,
    base: HERD_DEFAULTS.base,
    cap: HERD_DEFAULTS.cap,
  };
  const results = rows.map((row) => ({ ...row, completionMs: Math.round(row.completionMs * 1000) / 1000 }));
  return `${JSON.stringify(
    { model, rows: results, ...(ratio === undefined ? {} : { noneToFullCalls: ratio }) },
    null,
    2,
  )}\n`;
}

function renderHerdCsv(rows: readonly HerdResult[]): string {
  const lines = rows.map(
    (row) => `${row.clients},${row.strategy},${row.calls},${Math.round(row.completionMs * 1000) / 1000}`,
  );
  return `clients,strategy,calls,completion_ms\n${lines.join('\n')}\n`;
}

function herdHelp(): string {
  return `Usage: retryline simulate herd [options]

The thundering herd of Marc Brooker's "Exponential Backoff And Jitter" (AWS Architecture Blog,
2015), in virtual time. N clients each update one versioned row with optimistic concurrency: read
the version, write with it; a stale write conflicts, and the client backs off and tries again.
Network hops take ${HERD_DEFAULTS.hopMs}ms ± ${HERD_DEFAULTS.hopMs / 5}ms; the server answers at once. Backoff is Retryline's own
(exponential, base ${formatDuration(HERD_DEFAULTS.base)}, cap ${formatDuration(HERD_DEFAULTS.cap)}) with each jitter:

  none          exponential backoff, no jitter
  full          U(0, backoff)
  equal         backoff/2 + U(0, backoff/2)
  decorrelated  min(cap, U(base, 3 · previous delay))
  no-backoff    retry at once

Prints the calls (read-then-write tries) of all clients and the time until the last one wrote.

Options
  --clients <n|a..b>  client counts to run (default ${HERD_DEFAULTS.from}..${HERD_DEFAULTS.to}, at most ${MAX_HERD_CLIENTS})
  --step <n>          step between client counts, the range's end always run (default ${HERD_DEFAULTS.step})
  --seed <n>          seed for the network and the jitter (default ${HERD_DEFAULTS.seed})
  --format <format>   table, json or csv (default table)
  -h, --help          show this help

Examples
  retryline simulate herd
  retryline simulate herd --clients 100 --seed 3
  retryline simulate herd --clients 50..500 --step 50 --format csv
`;
}
