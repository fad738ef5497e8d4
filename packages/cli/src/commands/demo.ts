import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { runDemo } from '../demo/run-demo';
import { commandLine } from '../how-to-run';
import { parseFlags } from '../parse-flags';
import { parseCount } from '../parse-number';
import type { CommandIo } from '../run';
import { UsageError } from '../usage-error';

const FLAGS = {
  seed: { type: 'string' },
  out: { type: 'string' },
  quick: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Where `retryline demo` saves its recording unless `--out` says otherwise. */
export const DEMO_RECORDING = 'retryline-demo.json';

/** `seededRandom` reads a number seed as a 32-bit unsigned integer. */
const MAX_SEED = 0xffff_ffff;

const HELP = `Usage: retryline demo [--seed N] [--out FILE] [--quick]

Starts a flaky API on 127.0.0.1 that plays a failure story (a 429 with Retry-After, a burst
of 503s, connection resets, a 2-second outage) and sends the same workload through fetch,
axios and ky, with Retryline's defaults and without retries. Shows live progress, the
timeline of a few requests and a table per client and policy, and saves a recording of the
Retryline runs that 'retryline view' opens. Takes about 6 s.

Options
  --seed N     which requests fail, and how (default: a random seed, printed)
  --out FILE   where the recording is saved (default: ${DEMO_RECORDING})
  --quick      a shorter story (about 4 s): 2 requests a wave, a 0.8 s outage
`;

/** Throws a {@link UsageError} when the recording could not be saved to `out`. */
function checkWritable(out: string): void {
  if (out.trim() === '') throw new UsageError(`Expected --out to be a file path, got '${out}'`);
  if (existsSync(out) && statSync(out).isDirectory()) {
    throw new UsageError(`--out ${out} is a folder: give a file path, such as ${join(out, DEMO_RECORDING)}`);
  }
  const folder = dirname(resolve(out));
  if (!existsSync(folder) || !statSync(folder).isDirectory()) {
    throw new UsageError(`Cannot save the recording to ${out}: the folder ${folder} does not exist`);
  }
  try {
    accessSync(existsSync(out) ? out : folder, constants.W_OK);
  } catch {
    throw new UsageError(`Cannot save the recording to ${out}: not writable`);
  }
}

/** `retryline demo`: returns the exit code. */
export async function demoCommand(args: readonly string[], io: CommandIo): Promise<number> {
  const { values, positionals } = parseFlags(args, FLAGS, 'retryline demo');
  if (values.help) {
    io.stdout(HELP);
    return 0;
  }
  if (positionals.length > 0)
    throw new UsageError(`Unexpected argument '${positionals[0]}': see 'retryline demo --help'`);
  const seed =
    values.seed === undefined
      ? Math.floor(io.random() * 2 ** 32) >>> 0
      : parseCount(values.seed, '--seed', MAX_SEED);
  const out = values.out ?? DEMO_RECORDING;
  // Checked before the run, not after its 6 s: the recording is the run's last step.
  checkWritable(out);
  await runDemo({
    seed,
    out,
    quick: values.quick === true,
    live: process.stdout.isTTY === true && process.env.CI === undefined,
    write: (text) => io.stdout(text),
  });
  // A command that works where the user is: `retryline` alone is on no one's PATH after `pnpm demo`
  // or `npx @retryline/cli demo`.
  io.stdout(`Open it with: ${commandLine(['view'], out)}\n`);
  return 0;
}
