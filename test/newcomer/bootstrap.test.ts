import { spawn } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findProgram, TEST_PROGRAMS, type TestProgram } from '../support/test-programs';

// A newcomer's machine without apt-get (macOS, a container without root): the README's first
// quick-start command must still run the demo, and say what to install for the tests.
const root = fileURLToPath(new URL('../../', import.meta.url));
const programs: readonly TestProgram[] = Object.values(TEST_PROGRAMS);

/** The README's first quick-start command from `pnpm bootstrap` on (what runs once pnpm is installed). */
function quickStartFromBootstrap(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = readme.split('<!-- quick-start:begin -->')[1]?.split('<!-- quick-start:end -->')[0] ?? '';
  const first = section.split('\n').find((line) => line.trim() !== '' && !line.startsWith('```')) ?? '';
  const from = first.indexOf('pnpm bootstrap');
  expect(from, `the first quick-start command runs pnpm bootstrap: ${first}`).toBeGreaterThan(-1);
  return first.slice(from);
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Where `name` is on this machine's PATH. */
function which(name: string): string {
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .map((folder) => join(folder, name))
    .find(isExecutable);
  if (path === undefined) throw new Error(`${name} is not on PATH: the newcomer's PATH links to it`);
  return path;
}

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** The tools the newcomer's PATH links to: node, pnpm, the shells, and what pnpm's `.bin` shims call. */
const TOOLS = ['node', 'pnpm', 'bash', 'sh', 'id', 'sed', 'dirname', 'uname'];

/**
 * The environment of a machine whose PATH is one folder of links to {@link TOOLS} — no apt-get, no
 * sudo, no Chromium, Firefox or redis-server — plus `scripts`, programs of its own (a shell script
 * each, in place of a tool of the same name).
 */
function newcomerMachine(scripts: Readonly<Record<string, string>> = {}): {
  folder: string;
  env: NodeJS.ProcessEnv;
} {
  const folder = mkdtempSync(join(tmpdir(), 'retryline-newcomer-'));
  folders.push(folder);
  const bin = join(folder, 'bin');
  mkdirSync(bin);
  for (const tool of TOOLS) if (!(tool in scripts)) symlinkSync(which(tool), join(bin, tool));
  for (const [name, body] of Object.entries(scripts)) {
    writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  }
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: bin,
    // The tests look for the browsers at fixed places, which this machine may have: their own
    // variables point at nothing here. redis-server is looked for on PATH, which lacks it.
    RETRYLINE_CHROMIUM: join(folder, 'chromium'),
    RETRYLINE_FIREFOX: join(folder, 'firefox-esr'),
    REDIS_SERVER: 'redis-server',
  };
  return { folder, env };
}

/** An apt-get that notes its arguments next to the PATH folder, then fails as one offline does. */
const APT_GET_FAILING =
  'echo "$@" >> "$(dirname "$0")/../apt-get-calls"; echo "E: Could not resolve deb.debian.org" >&2; exit 100';

/** What `pnpm bootstrap` runs (the first test runs it through pnpm, as the README does). */
const BOOTSTRAP = 'bash scripts/bootstrap.sh';

interface Ran {
  code: number | null;
  output: string;
}

/** Runs `command` with bash in the repository's root, stdout and stderr interleaved as a terminal shows them. */
function run(command: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(which('bash'), ['-c', command], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

/** What bootstrap prints for the missing programs, derived from the tests' own table. */
function whatToInstall(missing: readonly TestProgram[]): string[] {
  const casks = missing.filter((p) => p.homebrew.startsWith('--cask ')).map((p) => p.homebrew.slice(7));
  const formulae = missing.filter((p) => !p.homebrew.startsWith('--cask ')).map((p) => p.homebrew);
  const brew = [
    ...(casks.length > 0 ? [`brew install --cask ${casks.join(' ')}`] : []),
    ...(formulae.length > 0 ? [`brew install ${formulae.join(' ')}`] : []),
  ].join(' && ');
  return [
    `apt-get install ${missing.map((p) => p.debian).join(' ')}`,
    brew,
    `set ${missing.map((p) => p.env).join(', ')} to their paths`,
  ];
}

describe('the first quick-start command on a machine without apt-get', () => {
  it('prints what to install for the tests, exits 0, and runs the demo', async () => {
    const command = quickStartFromBootstrap();
    expect(command).toBe('pnpm bootstrap && pnpm demo');
    const { env } = newcomerMachine();
    // As the tests themselves see this machine: every program missing.
    for (const program of programs) {
      expect(findProgram(program, { env, platform: process.platform, isExecutable }).path).toBeUndefined();
    }
    // The demo writes its recording where a newcomer's would go: keep whatever is there.
    const recording = join(root, 'retryline-demo.json');
    const before = existsSync(recording) ? readFileSync(recording) : undefined;
    let ran: Ran;
    try {
      ran = await run(command, env);
    } finally {
      if (before === undefined) rmSync(recording, { force: true });
      else writeFileSync(recording, before);
    }
    const { code, output } = ran;
    expect(output).toContain(
      'bootstrap: not installed: chromium, firefox-esr, redis-server (no apt-get on this machine).',
    );
    for (const line of whatToInstall(programs)) expect(output).toContain(line);
    expect(output).toContain('brew install --cask chromium firefox@esr && brew install redis');
    // The demo ran to its end: its table, its recording, and a command that opens it from here.
    expect(output).toContain('$ pnpm retryline demo --seed 1');
    expect(output).toMatch(/Client +Policy +Success +Attempts/);
    expect(output).toMatch(/ fetch +retryline +\d+\/40/);
    expect(output).toContain('Saved ');
    expect(output).toContain('Open it with: pnpm retryline view retryline-demo.json\n');
    expect(code, output).toBe(0);
  }, 120_000);

  it('with apt-get but neither root nor sudo: never calls apt-get, prints what to install, exits 0', async () => {
    const { folder, env } = newcomerMachine({ id: 'echo 1000', 'apt-get': APT_GET_FAILING });
    const { code, output } = await run(BOOTSTRAP, env);
    expect(output).toContain(
      'bootstrap: not installed: chromium, firefox-esr, redis-server (apt-get needs root, and there is no sudo).',
    );
    for (const line of whatToInstall(programs)) expect(output).toContain(line);
    expect(existsSync(join(folder, 'apt-get-calls'))).toBe(false);
    expect(code, output).toBe(0);
  });

  it('with a sudo that would ask for a password: never prompts, prints what to install, exits 0', async () => {
    // `sudo -n` fails where a password is needed; the sudo itself is never run for apt-get.
    const { folder, env } = newcomerMachine({
      id: 'echo 1000',
      sudo: 'printf "%s\\n" "$*" >> "$(dirname "$0")/../sudo-calls"; exit 1',
      'apt-get': APT_GET_FAILING,
    });
    const { code, output } = await run(BOOTSTRAP, env);
    expect(output).toContain('(sudo needs a password: run sudo -v, then pnpm bootstrap again).');
    for (const line of whatToInstall(programs)) expect(output).toContain(line);
    expect(readFileSync(join(folder, 'sudo-calls'), 'utf8')).toBe('-n true\n');
    expect(existsSync(join(folder, 'apt-get-calls'))).toBe(false);
    expect(code, output).toBe(0);
  });

  it('as root with an apt-get that fails (offline): tried it, prints what to install, exits 0', async () => {
    const { folder, env } = newcomerMachine({ id: 'echo 0', 'apt-get': APT_GET_FAILING });
    const { code, output } = await run(BOOTSTRAP, env);
    expect(readFileSync(join(folder, 'apt-get-calls'), 'utf8')).toBe('update -qq\n');
    expect(output).toContain('E: Could not resolve deb.debian.org');
    expect(output).toContain(
      'bootstrap: not installed: chromium, firefox-esr, redis-server (apt-get did not install them all, see above).',
    );
    for (const line of whatToInstall(programs)) expect(output).toContain(line);
    expect(code, output).toBe(0);
  });

  it('names only what is missing, and finds each program where the tests do', async () => {
    const { folder, env } = newcomerMachine({ 'redis-server': 'exit 0' });
    const chromium = join(folder, 'chromium');
    writeFileSync(chromium, '#!/bin/sh\n', { mode: 0o755 });
    const { code, output } = await run(BOOTSTRAP, env);
    expect(output).toContain('bootstrap: not installed: firefox-esr (no apt-get on this machine).');
    expect(output).toContain('apt-get install firefox-esr\n');
    expect(output).toContain('brew install --cask firefox@esr\n');
    expect(output).toContain('set RETRYLINE_FIREFOX to their paths');
    expect(code, output).toBe(0);

    const firefox = join(folder, 'firefox-esr');
    writeFileSync(firefox, '#!/bin/sh\n', { mode: 0o755 });
    const installed = await run(BOOTSTRAP, env);
    const found = programs.map((program) => {
      const { path } = findProgram(program, { env, platform: process.platform, isExecutable });
      return `${program.name} (${path})`;
    });
    expect(found).toEqual([
      `chromium (${chromium})`,
      `firefox-esr (${firefox})`,
      `redis-server (${join(folder, 'bin', 'redis-server')})`,
    ]);
    expect(installed.output).toContain(`bootstrap: installed: ${found.join(', ')}\n`);
    expect(installed.code, installed.output).toBe(0);
  });
});
