import {
  type BackoffStrategy,
  backoffSchedule,
  isRetrylineError,
  type JitterType,
  type PolicyOptions,
  type Random,
  seededRandom,
} from '@retryline/core';
import {
  type BackoffConfig,
  DEFAULTS,
  type JitterConfig,
  normalizePolicy,
  type OnMaxDelay,
} from '@retryline/core/adapter';
import { formatDuration } from '../format-duration';
import { parseDuration } from '../parse-duration';
import { type FlagValues, parseFlags } from '../parse-flags';
import { parseCount, parseNumber } from '../parse-number';
import type { CommandIo } from '../run';
import { UsageError } from '../usage-error';
import {
  renderScheduleCsv,
  renderScheduleJson,
  renderScheduleTable,
  type SchedulePreview,
} from './schedule-output';

const FLAGS = {
  strategy: { type: 'string' },
  base: { type: 'string' },
  step: { type: 'string' },
  factor: { type: 'string' },
  exponent: { type: 'string' },
  'max-delay': { type: 'string' },
  'on-max-delay': { type: 'string' },
  deadline: { type: 'string' },
  retries: { type: 'string' },
  jitter: { type: 'string' },
  spread: { type: 'string' },
  ratio: { type: 'string' },
  seed: { type: 'string' },
  format: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

// Keyed by core's unions, so a strategy or jitter added to core does not compile here until the
// CLI offers it too.
const STRATEGIES: Record<BackoffStrategy, true> = {
  constant: true,
  linear: true,
  polynomial: true,
  exponential: true,
};
const JITTERS: Record<JitterType, true> = {
  none: true,
  constant: true,
  equal: true,
  full: true,
  decorrelated: true,
  proportional: true,
};
const ON_MAX_DELAY: Record<OnMaxDelay, true> = { clamp: true, 'give-up': true };
const FORMATS = { table: true, json: true, csv: true } as const;
type Format = keyof typeof FORMATS;

/**
 * The most rows `retryline schedule` lists. A schedule is computed and printed whole, so a typo
 * such as `--retries 1000000000` must not run the machine out of memory.
 */
export const MAX_SCHEDULE_RETRIES = 100_000;

/** `seededRandom` reads a number seed as a 32-bit unsigned integer; larger ones would wrap. */
const MAX_SEED = 0xffff_ffff;

/** The jitter the CLI shows unless told otherwise: the backoff itself, not one random sample of it. */
const CLI_JITTER: JitterType = 'none';

interface ScheduleRequest {
  readonly options: PolicyOptions;
  readonly retries: number;
  readonly format: Format;
  readonly seed: number | string | undefined;
  readonly jitterDefaulted: boolean;
  readonly warnings: readonly string[];
}

/**
 * `retryline schedule`: previews a policy's delays (retry, backoff, running total, mean) as a table,
 * JSON or CSV. Returns the exit code. Output is a function of the flags and the jitter's seed alone.
 */
export function scheduleCommand(args: readonly string[], io: CommandIo): number {
  const { values, positionals } = parseFlags(args, FLAGS, 'retryline schedule');
  if (values.help === true) {
    io.stdout(scheduleHelp());
    return 0;
  }
  if (positionals.length > 0) {
    throw new UsageError(`Unexpected argument '${positionals[0]}': 'retryline schedule' takes only options`);
  }
  const request = readRequest(values);
  // Validated once here; the header shows the resolved values, defaults included.
  const policy = withFlagNames(() => normalizePolicy(request.options));
  let seed: SchedulePreview['seed'];
  let random: Random | undefined;
  if (policy.jitter.type !== 'none') {
    const value = request.seed ?? pickSeed(io.random);
    seed = { value, picked: request.seed === undefined };
    random = seededRandom(value);
  }
  const schedule = backoffSchedule(request.options, {
    retries: request.retries,
    ...(random === undefined ? {} : { random }),
  });
  const preview: SchedulePreview = {
    options: request.options,
    policy,
    schedule,
    jitterDefaulted: request.jitterDefaulted,
    ...(seed === undefined ? {} : { seed }),
  };
  for (const warning of request.warnings) io.stderr(`retryline: warning: ${warning}\n`);
  if (request.format === 'json') {
    io.stdout(renderScheduleJson(preview));
  } else if (request.format === 'csv') {
    io.stdout(renderScheduleCsv(preview));
    // CSV has no room for notes; say on stderr what a reader of the data needs to know.
    for (const note of csvNotes(preview)) io.stderr(`retryline: ${note}\n`);
  } else {
    io.stdout(renderScheduleTable(preview));
  }
  return 0;
}

function readRequest(values: FlagValues<typeof FLAGS>): ScheduleRequest {
  const strategy = choice('--strategy', values.strategy, STRATEGIES);
  const jitterType = choice('--jitter', values.jitter, JITTERS);
  const onMaxDelay = choice('--on-max-delay', values['on-max-delay'], ON_MAX_DELAY);
  const format = choice('--format', values.format, FORMATS) ?? 'table';

  const backoff: BackoffConfig = {};
  if (strategy !== undefined) backoff.strategy = strategy;
  if (values.base !== undefined) backoff.base = parseDuration(values.base, '--base');
  if (values.step !== undefined) backoff.step = parseDuration(values.step, '--step');
  if (values.factor !== undefined) backoff.factor = parseNumber(values.factor, '--factor');
  if (values.exponent !== undefined) backoff.exponent = parseNumber(values.exponent, '--exponent');

  const jitter: JitterConfig = { type: jitterType ?? CLI_JITTER };
  if (values.spread !== undefined) jitter.spread = parseDuration(values.spread, '--spread');
  if (values.ratio !== undefined) jitter.ratio = parseNumber(values.ratio, '--ratio');

  const options: PolicyOptions = {};
  if (values.retries !== undefined) {
    options.retries = readRetries(values.retries);
  }
  if (Object.keys(backoff).length > 0) options.backoff = backoff;
  if (values['max-delay'] !== undefined) options.maxDelay = parseDuration(values['max-delay'], '--max-delay');
  if (onMaxDelay !== undefined) options.onMaxDelay = onMaxDelay;
  if (values.deadline !== undefined) options.deadline = parseDuration(values.deadline, '--deadline');
  options.jitter = jitter;

  return {
    options,
    retries: options.retries ?? DEFAULTS.retries,
    format,
    seed: values.seed === undefined ? undefined : readSeed(values.seed),
    jitterDefaulted: jitterType === undefined,
    warnings: unusedFlags(values, strategy ?? DEFAULTS.strategy, jitter.type),
  };
}

function choice<T extends string>(
  flag: string,
  text: string | undefined,
  allowed: Record<T, true>,
): T | undefined {
  if (text === undefined) return undefined;
  if (Object.hasOwn(allowed, text)) return text as T;
  const names = Object.keys(allowed).join(', ');
  throw new UsageError(`Expected ${flag} to be one of ${names}, got '${text}'`);
}

function readRetries(text: string): number {
  // The library accepts `retries: Infinity` (paired with a deadline); a table cannot list it.
  if (/^\+?inf(inity)?$/i.test(text)) {
    throw new UsageError(
      `Expected --retries to be a finite whole number, got '${text}': a schedule lists every retry, so it needs a count`,
    );
  }
  return parseCount(text, '--retries', MAX_SCHEDULE_RETRIES);
}

function readSeed(text: string): number | string {
  if (/^\d+$/.test(text)) {
    const seed = Number(text);
    if (seed <= MAX_SEED) return seed;
  } else if (text !== '' && !/^[-+]?[\d.]+$/.test(text)) {
    // A word seeds too; something number-like that is no whole number (-1, 1.5) is a mistake.
    return text;
  }
  throw new UsageError(`Expected --seed to be a whole number from 0 to ${MAX_SEED} or a word, got '${text}'`);
}

/** A 32-bit seed from core's default random source, printed so the run can be repeated. */
function pickSeed(random: Random): number {
  return Math.floor(random() * 2 ** 32) >>> 0;
}

// Flags the chosen strategy or jitter ignores: likely a mistake, but a harmless one (a script may
// pass the same flags to every strategy), so it is a warning rather than an error.
function unusedFlags(
  values: FlagValues<typeof FLAGS>,
  strategy: BackoffStrategy,
  jitter: JitterType,
): readonly string[] {
  const warnings: string[] = [];
  const check = (flag: string, given: unknown, setting: string, current: string, owner: string): void => {
    if (given !== undefined && current !== owner) {
      warnings.push(`${flag} has no effect with ${setting} ${current} (only with ${setting} ${owner})`);
    }
  };
  check('--step', values.step, '--strategy', strategy, 'linear');
  check('--factor', values.factor, '--strategy', strategy, 'exponential');
  check('--exponent', values.exponent, '--strategy', strategy, 'polynomial');
  check('--spread', values.spread, '--jitter', jitter, 'constant');
  check('--ratio', values.ratio, '--jitter', jitter, 'proportional');
  if (values.seed !== undefined && jitter === 'none') {
    warnings.push('--seed has no effect with --jitter none (only a random jitter draws from it)');
  }
  return warnings;
}

// Core names options by their path; a command-line user knows them by their flags.
const FLAG_FOR_OPTION: Readonly<Record<string, string>> = {
  retries: '--retries',
  'backoff.strategy': '--strategy',
  'backoff.base': '--base',
  'backoff.step': '--step',
  'backoff.factor': '--factor',
  'backoff.exponent': '--exponent',
  maxDelay: '--max-delay',
  onMaxDelay: '--on-max-delay',
  deadline: '--deadline',
  jitter: '--jitter',
  'jitter.type': '--jitter',
  'jitter.spread': '--spread',
  'jitter.ratio': '--ratio',
};

/** Runs `validate`, restating core's `InvalidOptionsError` in terms of the flag at fault. */
function withFlagNames<T>(validate: () => T): T {
  try {
    return validate();
  } catch (error) {
    const option = isRetrylineError(error, 'InvalidOptionsError') ? error.option : undefined;
    const flag = option === undefined ? undefined : FLAG_FOR_OPTION[option];
    if (flag === undefined || !(error as Error).message.startsWith(`Expected ${option} `)) throw error;
    throw new UsageError((error as Error).message.replace(`Expected ${option} `, `Expected ${flag} `));
  }
}

function csvNotes(preview: SchedulePreview): string[] {
  const notes: string[] = [];
  if (preview.seed?.picked) {
    notes.push(`seed ${preview.seed.value} (pass --seed ${preview.seed.value} to reproduce)`);
  }
  if (preview.schedule.stop !== undefined) notes.push(`gives up before retry ${preview.schedule.stop.retry}`);
  return notes;
}

function scheduleHelp(): string {
  const d = formatDuration;
  return `Usage: retryline schedule [options]

Previews a retry policy: the wait before each retry, the running total and the mean, as if every
attempt failed at once. Retry n is attempt n + 1.

Backoff
  --strategy <name>        constant, linear, polynomial or exponential (default ${DEFAULTS.strategy})
  --base <duration>        base delay (default ${d(DEFAULTS.base)})
  --step <duration>        linear: added per retry (default: the base)
  --factor <number>        exponential: growth per retry, at least 1 (default ${DEFAULTS.factor})
  --exponent <number>      polynomial: the power of n (default ${DEFAULTS.exponent})

Limits
  --retries <n>            retries after the first attempt (default ${DEFAULTS.retries})
  --max-delay <duration>   cap on the backoff, applied before jitter (default ${d(DEFAULTS.maxDelay)})
  --on-max-delay <action>  past the cap: clamp (wait the cap) or give-up (default ${DEFAULTS.onMaxDelay})
  --deadline <duration>    stop before a wait that would end at or past this total (default none)

Jitter
  --jitter <type>          none, constant, equal, full, decorrelated or proportional
                           (default ${CLI_JITTER}, to show the backoff itself; the library default is ${DEFAULTS.jitter})
  --spread <duration>      constant jitter: adds up to this much (default ${d(DEFAULTS.spread)})
  --ratio <number>         proportional jitter: ± this share of the delay (default ${DEFAULTS.ratio})
  --seed <n|word>          seed for random jitter (default: a random seed, printed)

Output
  --format <format>        table, json or csv (default table)
  -h, --help               show this help

Durations: 250ms, 1s, 1.5s, 2m, 1h, or a bare number of milliseconds.

Examples
  retryline schedule --strategy exponential --base 1s --retries 10 --max-delay 64s
  retryline schedule --base 1s --retries 10 --max-delay 64s --jitter full --seed 7
  retryline schedule --strategy linear --base 1s --step 500ms --format csv
`;
}
