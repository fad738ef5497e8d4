import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * A program some tests need that `pnpm install` does not bring: where the tests look for it and how
 * a newcomer gets it. `scripts/bootstrap.sh` installs the same programs and prints the same names
 * (test/newcomer/bootstrap.test.ts keeps the two in step).
 */
export interface TestProgram {
  /** The program, as messages name it. */
  readonly name: string;
  /** Which tests need it, for the message. */
  readonly neededBy: string;
  /** The environment variable that points the tests at another copy. */
  readonly env: string;
  /** Where the tests look on Linux, in order: an absolute path, or a bare name looked up on PATH. */
  readonly linux: readonly string[];
  /** Where the tests look on macOS (what Homebrew installs). */
  readonly macos: readonly string[];
  /** The Debian package that provides it (what `pnpm bootstrap` installs with apt-get). */
  readonly debian: string;
  /** The Homebrew arguments that install it: `brew install <homebrew>`. */
  readonly homebrew: string;
}

export type TestProgramName = 'chromium' | 'firefox-esr' | 'redis-server';

/** Every program the tests need beyond npm packages. */
export const TEST_PROGRAMS: Readonly<Record<TestProgramName, TestProgram>> = {
  chromium: {
    name: 'chromium',
    neededBy: 'The browser and extension tests',
    env: 'RETRYLINE_CHROMIUM',
    // Debian's Chromium, never a browser downloaded by a test tool.
    linux: ['/usr/bin/chromium'],
    macos: ['/Applications/Chromium.app/Contents/MacOS/Chromium'],
    debian: 'chromium',
    homebrew: '--cask chromium',
  },
  'firefox-esr': {
    name: 'firefox-esr',
    neededBy: 'The Firefox extension tests',
    env: 'RETRYLINE_FIREFOX',
    linux: ['/usr/bin/firefox-esr'],
    macos: ['/Applications/Firefox.app/Contents/MacOS/firefox'],
    debian: 'firefox-esr',
    homebrew: '--cask firefox@esr',
  },
  'redis-server': {
    name: 'redis-server',
    neededBy: "The Redis store's tests",
    env: 'REDIS_SERVER',
    linux: ['redis-server'],
    macos: ['redis-server'],
    debian: 'redis-server',
    homebrew: 'redis',
  },
};

/** What a lookup saw: the program's path when it was found, and where it looked, for the message. */
export interface Lookup {
  readonly path: string | undefined;
  readonly lookedFor: readonly string[];
}

/** Where the lookup runs: the environment (the override, PATH), the platform and the file system. */
export interface LookupContext {
  readonly env: NodeJS.ProcessEnv;
  readonly platform: NodeJS.Platform;
  readonly isExecutable: (path: string) => boolean;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const here: LookupContext = { env: process.env, platform: process.platform, isExecutable };

/**
 * Finds `program`: at the path its environment variable names when that is set (and only there),
 * else at the first of the platform's places; a bare name is looked up on PATH.
 */
export function findProgram(program: TestProgram, context: LookupContext = here): Lookup {
  const override = context.env[program.env];
  const places = override ? [override] : context.platform === 'darwin' ? program.macos : program.linux;
  const lookedFor: string[] = [];
  for (const place of places) {
    const onPath = !place.includes('/');
    lookedFor.push(onPath ? `${place} on PATH` : place);
    const candidates = onPath
      ? (context.env.PATH ?? '')
          .split(delimiter)
          .filter((folder) => folder !== '')
          .map((folder) => join(folder, place))
      : [place];
    const path = candidates.find((candidate) => context.isExecutable(candidate));
    if (path !== undefined) return { path, lookedFor };
  }
  if (override) lookedFor[0] = `${override} (${program.env})`;
  return { path: undefined, lookedFor };
}

/** What a test that needs `program` says when it is missing: what it looked for and how to get it. */
export function missingProgramMessage(program: TestProgram, lookedFor: readonly string[]): string {
  return (
    `${program.name} is not installed (looked for ${lookedFor.join(', ')}): run \`pnpm bootstrap\`, ` +
    `or install Debian's ${program.debian} (macOS: \`brew install ${program.homebrew}\`), ` +
    `or set ${program.env} to its path. ${program.neededBy} need it.`
  );
}

/**
 * The path of `program`; throws the message that names it and the fix when it is missing, so the
 * tests that need it fail (never skip) and say why.
 */
export function requireProgram(program: TestProgram, context: LookupContext = here): string {
  const { path, lookedFor } = findProgram(program, context);
  if (path === undefined) throw new Error(missingProgramMessage(program, lookedFor));
  return path;
}
