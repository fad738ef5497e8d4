import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify, stripVTControlCharacters } from 'node:util';
import { run as runCli } from '@retryline/cli';
import { transform } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer } from '../redis/redis-server';

/**
 * What a user gets from npm, before anything is published: every public package is packed with
 * `pnpm pack` (as `pnpm release` packs it), and the tarballs, all together, are installed into an
 * empty project with npm and into another with pnpm, with the registry packages they need (the
 * peer dependencies, at the versions this repository tests with). In each project every entry
 * point loads with `import` and with `require`, and the first example of each package's README
 * (the README in the tarball, as npm shows it) runs: hosts it names are pointed at a loopback
 * server, which fails the first request so the example's retry shows.
 *
 * Needs `pnpm build` first (`pnpm test` does it). The registry is reached only for the peer
 * dependencies, from the machine's npm and pnpm caches where they are.
 */

const exec = promisify(execFile);
/** An install from warm caches takes some 10 s; from cold ones, whatever the registry takes. */
const INSTALL_TIMEOUT = 240_000;
const root = fileURLToPath(new URL('../../', import.meta.url));
const managers = ['npm', 'pnpm'] as const;
type Manager = (typeof managers)[number];

interface Manifest {
  readonly name: string;
  readonly private?: boolean;
  readonly exports?: Readonly<Record<string, unknown>>;
  readonly peerDependencies?: Readonly<Record<string, string>>;
  readonly devDependencies?: Readonly<Record<string, string>>;
}

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as Manifest;
const packages = readdirSync(join(root, 'packages'))
  .map((dir) => ({
    dir: join(root, 'packages', dir),
    manifest: readJson(join(root, 'packages', dir, 'package.json')),
  }))
  .filter((each) => !each.manifest.private);
const names = packages.map((each) => each.manifest.name);

/** The registry packages the tarballs need, at the versions the repository itself tests with. */
const registryDependencies = (() => {
  const tested = readJson(join(root, 'package.json')).devDependencies ?? {};
  // vitest: @retryline/msw's matchers and its README's example, which is a vitest test file.
  const wanted = new Set([
    'vitest',
    ...packages.flatMap((each) => Object.keys(each.manifest.peerDependencies ?? {})),
  ]);
  return Object.fromEntries(
    [...wanted].sort().map((name) => {
      const version = tested[name];
      if (!version) throw new Error(`${name} is a peer dependency no root devDependency pins a version of`);
      return [name, version];
    }),
  );
})();

/**
 * Entry points that differ from the rule (export names, load both ways) by design, and how.
 * `@retryline/msw/vitest` registers the matchers (`expect.extend`) and exports nothing; and vitest
 * itself refuses `require()`, so it loads only with `import`, as test files do.
 */
const ENTRY_EXCEPTIONS: Readonly<
  Record<string, { readonly exportsNothing?: true; readonly cjsError?: string }>
> = {
  '@retryline/msw/vitest': {
    exportsNothing: true,
    cjsError: 'Vitest cannot be imported in a CommonJS module using require()',
  },
};

/**
 * What each README's first example leaves to the reader, keyed by package: code before it (a
 * function it calls, a value it sends), code after it (use what it made, print what it did, close
 * it), and what the run must print. Hosts are pointed at the loopback server unless msw
 * intercepts them.
 */
interface Example {
  readonly before?: string;
  readonly after?: (origin: string) => string;
  readonly stdout?: RegExp;
  /** Whether the example sends its requests to the loopback server (and so must retry there). */
  readonly loopback: boolean;
}

const EXAMPLES: Readonly<Record<string, Example>> = {
  '@retryline/core': {
    before: `let calls = 0;\nconst findLeader = async (signal) => (++calls < 3 ? undefined : 'node-1');`,
    after: () => 'console.log(JSON.stringify({ leader, calls }));',
    stdout: /^\{"leader":"node-1","calls":3\}\n$/,
    loopback: false,
  },
  '@retryline/fetch': { loopback: true },
  '@retryline/axios': { loopback: true },
  '@retryline/ky': { loopback: true },
  '@retryline/otel': { loopback: true },
  '@retryline/redis': {
    // The block builds the client; this sends one request through it (guard state in Redis).
    after: (origin) =>
      `const response = await api('${origin}/orders');\nconsole.log('status', response.status);\nawait redis.quit();`,
    stdout: /^status 200\n$/,
    loopback: true,
  },
  '@retryline/msw': { loopback: false },
  '@retryline/cli': { loopback: false },
};

/** Hosts an example may name: `.example` is reserved (RFC 2606), so they can only be examples. */
const EXAMPLE_ORIGIN = /https?:\/\/(?:[a-z\d-]+\.)*example(?=[/'"`])/g;

/** The environment of this test run, without what vitest and pnpm set for themselves. */
// Under `pnpm test`, pnpm hands its own settings to every child as npm_config_* (some unknown to
// npm, which warns about each): a user's project has none of them. Where to fetch packages from
// and through what stays.
const KEPT_NPM_CONFIG =
  /^npm_config_(registry|cache|userconfig|proxy|https_proxy|noproxy|strict_ssl|cafile)$/i;
const childEnv = Object.fromEntries(
  Object.entries(process.env).filter(
    ([key]) =>
      !/^(VITEST|TEST$|NODE_ENV$|npm_(lifecycle|package|command)|PNPM_PACKAGE)/.test(key) &&
      (!/^npm_config_/i.test(key) || KEPT_NPM_CONFIG.test(key)),
  ),
);

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

async function sh(command: string, args: readonly string[], cwd: string, env = childEnv): Promise<Result> {
  try {
    const { stdout, stderr } = await exec(command, args, {
      cwd,
      env,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 150_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

async function must(command: string, args: readonly string[], cwd: string): Promise<string> {
  const result = await sh(command, args, cwd);
  if (result.code !== 0) {
    throw new Error(
      `\`${command} ${args.join(' ')}\` failed (${result.code}) in ${cwd}:\n${result.stdout}${result.stderr}`,
    );
  }
  return result.stdout;
}

/** The loopback API the examples talk to: the first request after `reset()` gets a 503, the rest 200. */
interface Api {
  readonly origin: string;
  readonly seen: Array<{ readonly request: string; readonly key: string | undefined }>;
  reset(): void;
  close(): Promise<void>;
}

async function startApi(): Promise<Api> {
  const seen: Array<{ request: string; key: string | undefined }> = [];
  const server: Server = createServer((request, response) => {
    const key = request.headers['idempotency-key'];
    seen.push({
      request: `${request.method} ${request.url}`,
      key: typeof key === 'string' ? key : undefined,
    });
    const first = seen.length === 1;
    request.resume();
    request.on('end', () => {
      response.writeHead(first ? 503 : 200, {
        'content-type': 'application/json',
        ...(first && { 'retry-after': '0' }),
      });
      response.end(first ? '{"error":"unavailable"}' : '{"ok":true}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    reset: () => {
      seen.length = 0;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

let work = '';
let api: Api;
/** name → tarball path */
const tarballs = new Map<string, string>();
const projects = new Map<Manager, Promise<string>>();

/** An empty project with every tarball and the registry dependencies installed by `manager`. */
async function installProject(manager: Manager): Promise<string> {
  const project = join(work, `with-${manager}`);
  await mkdir(project);
  const fromTarballs = Object.fromEntries([...tarballs].map(([name, tarball]) => [name, `file:${tarball}`]));
  // The tarballs' own dependencies on each other (`@retryline/core: ^0.1.0`) are to these same
  // tarballs, never to the registry: nothing is published yet, and nothing published may stand in.
  const overrides = manager === 'npm' ? { overrides: fromTarballs } : { pnpm: { overrides: fromTarballs } };
  const manifest = {
    name: `retryline-tarballs-${manager}`,
    private: true,
    dependencies: { ...fromTarballs, ...registryDependencies },
    ...overrides,
  };
  await writeFile(join(project, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  if (manager === 'npm')
    await must('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], project);
  // CI=true makes pnpm insist on a lockfile; an empty project has none.
  else await must('pnpm', ['install', '--prefer-offline', '--no-frozen-lockfile'], project);
  await copyFile(
    fileURLToPath(new URL('./fixtures/load-entries.mjs', import.meta.url)),
    join(project, 'load-entries.mjs'),
  );
  return project;
}

beforeAll(async () => {
  for (const { dir, manifest } of packages) {
    for (const file of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts']) {
      expect(existsSync(join(dir, file)), `${manifest.name}: ${file} is missing: run pnpm build`).toBe(true);
    }
  }
  work = await mkdtemp(join(tmpdir(), 'retryline-tarballs-'));
  const destination = join(work, 'tarballs');
  await mkdir(destination);
  for (const { dir, manifest } of packages) {
    const output = await must('pnpm', ['pack', '--pack-destination', destination], dir);
    tarballs.set(manifest.name, output.trim().split('\n').at(-1)?.trim() ?? '');
  }
  api = await startApi();
  for (const manager of managers) {
    const installed = installProject(manager);
    // Judged in that manager's tests; a failed install must not be an unhandled rejection meanwhile.
    installed.catch(() => {});
    projects.set(manager, installed);
  }
}, 120_000);

afterAll(async () => {
  await Promise.allSettled(projects.values());
  await api?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/** The first fenced code block of a README: its language and its code. */
function firstBlock(readme: string) {
  const match = /^```(\w*)\n([\s\S]*?)^```$/m.exec(readme);
  return { lang: match?.[1] ?? '', code: match?.[2] ?? '' };
}

/** Every entry point in a package's `exports` (but package.json), as specifiers. */
function entryPoints(name: string): string[] {
  const manifest = packages.find((each) => each.manifest.name === name)?.manifest;
  return Object.keys(manifest?.exports ?? { '.': null })
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => (subpath === '.' ? name : `${name}/${subpath.slice(2)}`));
}

describe.each(managers)('the packed tarballs installed with %s into an empty project', (manager) => {
  let dir = '';
  // Both installs started together (above); this waits for this manager's, however long a cold
  // cache makes it, and fails this manager's tests alone if it fails.
  beforeAll(async () => {
    dir = (await projects.get(manager)) ?? '';
  }, INSTALL_TIMEOUT);

  it('takes every @retryline package from its tarball, LICENSE included, none from the registry', async () => {
    const license = readFileSync(join(root, 'LICENSE'), 'utf8');
    for (const name of names) {
      expect(await readFile(join(dir, 'node_modules', name, 'LICENSE'), 'utf8'), name).toBe(license);
    }
    const lock = await readFile(
      join(dir, manager === 'npm' ? 'package-lock.json' : 'pnpm-lock.yaml'),
      'utf8',
    );
    // npm: "resolved" of every node_modules/.../@retryline/x; pnpm: the version of every
    // @retryline/x package entry.
    const sources =
      manager === 'npm'
        ? Object.entries(JSON.parse(lock).packages as Record<string, { resolved?: string }>)
            .filter(([path]) => path.includes('node_modules/@retryline/'))
            .map(([, entry]) => entry.resolved ?? '')
        : [...lock.matchAll(/^ {2}'?@retryline\/[\w-]+@([^:\s']+:?[^\s']*)'?:$/gm)].map(
            (match) => match[1] ?? '',
          );
    expect(sources.length).toBeGreaterThanOrEqual(names.length);
    expect(sources.filter((source) => !source.startsWith('file:'))).toEqual([]);
  });

  it.each(names)('%s loads with import and with require, alike', async (name) => {
    const specifiers = entryPoints(name);
    const { stdout } = await sh(process.execPath, ['load-entries.mjs', ...specifiers], dir);
    const report = JSON.parse(stdout) as Record<
      string,
      Record<'esm' | 'cjs', { file?: string; names?: string[]; error?: string }>
    >;
    for (const specifier of specifiers) {
      const { esm, cjs } = report[specifier] ?? {};
      expect(esm?.error, `import('${specifier}')`).toBeUndefined();
      expect(esm?.file).toMatch(/\/dist\/[\w-]+\.js$/);
      const exception = ENTRY_EXCEPTIONS[specifier];
      if (exception?.exportsNothing) expect(esm?.names).toEqual([]);
      else expect(esm?.names?.length, `${specifier} exports nothing`).toBeGreaterThan(0);
      if (exception?.cjsError) {
        expect(cjs?.error).toContain(exception.cjsError);
        continue;
      }
      expect(cjs?.error, `require('${specifier}')`).toBeUndefined();
      expect(cjs?.file).toMatch(/\/dist\/[\w-]+\.cjs$/);
      expect(cjs?.names, `require('${specifier}') and import('${specifier}') export the same names`).toEqual(
        esm?.names,
      );
    }
  });

  it.each(names)("%s: the README's first example runs", async (name) => {
    const example = EXAMPLES[name];
    if (!example)
      throw new Error(`${name} has no entry in EXAMPLES: say what its README's first example needs`);
    const readme = await readFile(join(dir, 'node_modules', name, 'README.md'), 'utf8');
    const { lang, code } = firstBlock(readme);
    expect(code, `${name}'s README has no code block`).not.toBe('');
    api.reset();

    if (lang === 'console') {
      // A command to run: the first one, as written (npx of the scoped package, which runs the
      // installed copy; --no: never fetch one from the registry instead).
      const command = code.split('\n').find((line) => line.startsWith('$ ')) ?? '';
      const [npx, scoped, ...args] = command.slice(2).split(' ');
      expect([npx, scoped]).toEqual(['npx', name]);
      const result = await sh('npx', ['--no', name, ...args], dir);
      let expected = '';
      const exitCode = await runCli(args, { stdout: (text) => (expected += text), stderr: () => {} });
      expect(result).toEqual({ code: exitCode, stdout: expected, stderr: '' });
      expect(exitCode).toBe(0);
      return;
    }

    expect(['ts', 'js']).toContain(lang);
    const source = [
      example.before ?? '',
      example.loopback ? code.replaceAll(EXAMPLE_ORIGIN, api.origin) : code,
      example.after?.(api.origin) ?? '',
    ].join('\n');
    const { code: javascript } = await transform(source, {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
      // Keep every import as written, as TypeScript with verbatimModuleSyntax would.
      tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true } },
    });
    const slug = name.replace('@retryline/', '');

    if (/from 'vitest'/.test(code)) {
      // A vitest test file: run it with vitest, as its reader would.
      const file = `readme-${slug}.test.mjs`;
      await writeFile(join(dir, file), javascript);
      const result = await sh(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', file], dir);
      expect(result.code, `${result.stdout}${result.stderr}`).toBe(0);
      const tests = (code.match(/^\s*it\(/gm) ?? []).length;
      expect(stripVTControlCharacters(result.stdout)).toMatch(
        new RegExp(`Tests +${tests} passed \\(${tests}\\)`),
      );
      return;
    }

    const file = `readme-${slug}.mjs`;
    await writeFile(join(dir, file), javascript);
    const redis = name === '@retryline/redis' ? await startRedisServer() : undefined;
    try {
      const env = redis ? { ...childEnv, REDIS_URL: redis.url } : childEnv;
      const result = await sh(process.execPath, [file], dir, env);
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      if (example.stdout) expect(result.stdout).toMatch(example.stdout);
    } finally {
      await redis?.stop();
    }
    if (example.loopback) {
      // The loopback API failed the first request with a 503: the example's client sent it again.
      const [first, second] = api.seen;
      expect(first, 'the example sent no request to the loopback API').toBeDefined();
      expect(second?.request).toBe(first?.request);
      if (first?.request.startsWith('POST')) {
        expect(first.key, 'a retried POST carries an idempotency key').toBeDefined();
        expect(second?.key).toBe(first.key);
      }
    } else {
      expect(api.seen).toEqual([]);
    }
  });
});
