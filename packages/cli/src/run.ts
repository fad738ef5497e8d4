import { isRetrylineError, type Random } from '@retryline/core';
import { systemRandom } from '@retryline/core/adapter';
import { demoCommand } from './commands/demo';
import { scheduleCommand } from './commands/schedule';
import { simulateCommand } from './commands/simulate';
import { viewCommand } from './commands/view';
import { UsageError } from './usage-error';

/** Where `run` writes. Each call gets whole lines, newline included. */
export interface RunIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /**
   * Picks a seed when random jitter is asked for without `--seed`, and prints it so the run can be repeated.
   * @default systemRandom
   */
  random?: Random;
}

/** What a command is given: the output streams and a random source for picking seeds. */
export type CommandIo = Required<RunIo>;

interface Command {
  readonly summary: string;
  run(args: readonly string[], io: CommandIo): number | Promise<number>;
}

const COMMANDS: Readonly<Record<string, Command>> = {
  demo: {
    summary: 'send fetch, axios and ky through a flaky local API, with and without Retryline',
    run: demoCommand,
  },
  schedule: {
    summary: "preview a policy's delays: backoff, jitter and limits, as a table, JSON or CSV",
    run: scheduleCommand,
  },
  simulate: {
    summary:
      'simulate retry policies in virtual time: herd (jitter), storm (a stalled server) and overload (2× capacity)',
    run: simulateCommand,
  },
  view: {
    summary: 'open a recorded timeline in the standalone viewer, served on 127.0.0.1',
    run: (args, io) => viewCommand(args, io),
  },
};

const processIo: RunIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/**
 * Runs the `retryline` command line and returns its exit code: 0 on success, 2 for a usage or
 * validation error (printed as `retryline: <message>` on stderr, nothing on stdout), 1 for
 * anything unexpected. With no command it prints the usage on stderr and returns 2, since a
 * script that calls `retryline` alone has made a mistake; `retryline --help` prints it on stdout
 * and returns 0.
 *
 * @example
 * ```ts
 * const code = await run(['schedule', '--base', '1s', '--retries', '10'], {
 *   stdout: (text) => process.stdout.write(text),
 *   stderr: (text) => process.stderr.write(text),
 * });
 * ```
 */
export async function run(argv: readonly string[], io: RunIo = processIo): Promise<number> {
  const commandIo: CommandIo = {
    stdout: (text) => io.stdout(text),
    stderr: (text) => io.stderr(text),
    random: io.random ?? systemRandom,
  };
  try {
    const [name, ...args] = argv;
    if (name === undefined) {
      commandIo.stderr(usage());
      return 2;
    }
    if (name === '--help' || name === '-h' || name === 'help') {
      const topic = args[0];
      if (topic !== undefined) return await findCommand(topic).run(['--help'], commandIo);
      commandIo.stdout(usage());
      return 0;
    }
    return await findCommand(name).run(args, commandIo);
  } catch (error) {
    if (error instanceof UsageError || isRetrylineError(error, 'InvalidOptionsError')) {
      commandIo.stderr(`retryline: ${error.message}\n`);
      return 2;
    }
    const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
    commandIo.stderr(`retryline: unexpected error: ${detail}\n`);
    return 1;
  }
}

function findCommand(name: string): Command {
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (command !== undefined) return command;
  const names = Object.keys(COMMANDS).join(', ');
  throw new UsageError(
    name.startsWith('-')
      ? `Unknown option '${name}' before a command: see 'retryline --help'`
      : `Unknown command '${name}' (commands: ${names}): see 'retryline --help'`,
  );
}

function usage(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  const commands = Object.entries(COMMANDS).map(
    ([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`,
  );
  return `Usage: retryline <command> [options]

Commands
${commands.join('\n')}

Run 'retryline <command> --help' for a command's options.
`;
}
