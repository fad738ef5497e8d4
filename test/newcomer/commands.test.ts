import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '@retryline/cli';
import { describe, expect, it } from 'vitest';
import { commandLine } from '../../packages/cli/src/how-to-run';

// Every command a user is told to run works where they are told to run it. `retryline` is on no
// one's PATH: from npm it is `npx @retryline/cli …`, in a clone `pnpm retryline …`. An unscoped
// `npx retryline` asks npm for a package named `retryline`, which is not ours: a 404 today, and
// whoever registers the name would run on the reader's machine.
const root = fileURLToPath(new URL('../../', import.meta.url));

/** Installing or running the unscoped package `retryline` (not `@retryline/…`, not `pnpm retryline`). */
const UNSCOPED =
  /(?:^|[\s`'"(])(?:npx|pnpx|bunx|npm (?:i|install|add|exec|x)|pnpm (?:add|dlx)|yarn (?:add|dlx)|bun (?:add|x))(?:\s+-\S*)*\s+retryline(?![\w/-])/m;

/** A shell prompt line that runs a bare `retryline`, as if it were on PATH. */
const BARE_PROMPT = /^\$ retryline\b/m;

const SKIPPED = new Set(['node_modules', 'dist', '.git', 'test-output', 'coverage', 'cache', '.temp']);

/** Every Markdown file of the repository: READMEs, docs, changesets, results. */
function markdownFiles(folder = root): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED.has(entry.name) ? [] : markdownFiles(join(folder, entry.name));
    return entry.name.endsWith('.md') ? [join(folder, entry.name)] : [];
  });
}

/** What `retryline <args>` prints, stdout and stderr. */
async function output(args: readonly string[]): Promise<string> {
  let text = '';
  await run(args, { stdout: (chunk) => (text += chunk), stderr: (chunk) => (text += chunk) });
  return text;
}

/** The names listed under a usage text's "Commands" (or "Simulations") heading. */
function listed(usage: string): string[] {
  const [, list = ''] = usage.split(/\n(?:Commands|Simulations)\n/);
  return [...list.matchAll(/^ {2}(\S+) {2,}/gm)].map((match) => match[1] ?? '');
}

describe('the patterns', () => {
  it.each([
    'npx retryline view x.json',
    'run `npx retryline schedule`',
    'npx -y retryline',
    'npx retryline@latest demo',
    'npm i retryline',
    'npm install -D retryline',
    'pnpm dlx retryline schedule',
    'yarn add retryline',
  ])('finds the unscoped package in %j', (text) => {
    expect(text).toMatch(UNSCOPED);
  });

  it.each([
    'npx @retryline/cli view x.json',
    'npm i @retryline/fetch',
    'pnpm retryline view retryline-demo.json',
    'pnpm add @retryline/ky ky',
    'npm i -D @retryline/msw msw',
    'the retryline-monorepo workspace',
  ])('lets %j be', (text) => {
    expect(text).not.toMatch(UNSCOPED);
  });
});

describe('the documentation', () => {
  const files = markdownFiles();

  it('covers the READMEs', () => {
    const names = files.map((file) => relative(root, file));
    expect(names).toContain('README.md');
    expect(names).toContain(join('packages', 'cli', 'README.md'));
  });

  it('names no unscoped package, and no `$ retryline` prompt line, in any Markdown file', () => {
    const found = files.flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          UNSCOPED.test(line) || BARE_PROMPT.test(line)
            ? [`${relative(root, file)}:${index + 1}: ${line}`]
            : [],
        ),
    );
    expect(found).toEqual([]);
  });

  it("links only to headings that exist in each README's own links (#…)", () => {
    const broken = files
      .filter((file) => file.endsWith('README.md'))
      .flatMap((file) => {
        const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```$/gm, '');
        // GitHub's anchors: lower case, punctuation dropped, spaces as hyphens.
        const anchors = new Set(
          [...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) =>
            (match[1] ?? '')
              .toLowerCase()
              .replace(/[^\p{L}\p{N} _-]/gu, '')
              .replaceAll(' ', '-'),
          ),
        );
        return [...text.matchAll(/\]\(#([^)]+)\)/g)]
          .map((match) => match[1] ?? '')
          .filter((anchor) => !anchors.has(anchor))
          .map((anchor) => `${relative(root, file)}: #${anchor}`);
      });
    expect(broken).toEqual([]);
  });
});

describe("the CLI's output", () => {
  it('names no unscoped package in its usage or any help', async () => {
    const usage = await output(['--help']);
    const commands = listed(usage);
    expect(commands).toEqual(expect.arrayContaining(['demo', 'schedule', 'simulate', 'view']));
    const simulations = listed(await output(['simulate', '--help']));
    expect(simulations).toEqual(expect.arrayContaining(['herd', 'storm', 'overload']));
    const texts = await Promise.all([
      output([]),
      output(['nonsense']),
      ...commands.map((command) => output([command, '--help'])),
      ...simulations.map((simulation) => output(['simulate', simulation, '--help'])),
    ]);
    for (const text of [usage, ...texts]) expect(text).not.toMatch(UNSCOPED);
  });

  it("tells the demo's reader a command that runs where they are: npx from npm, pnpm in a clone", () => {
    const fromNpm = commandLine(['view'], 'retryline-demo.json', { root: undefined, cwd: '/home/me/app' });
    expect(fromNpm).toBe('npx @retryline/cli view retryline-demo.json');
    const inClone = commandLine(['view'], 'retryline-demo.json', { root, cwd: root });
    expect(inClone).toBe('pnpm retryline view retryline-demo.json');
    for (const command of [fromNpm, inClone]) expect(command).not.toMatch(UNSCOPED);
    // The clone's command is a script of the root package.json, running the CLI's binary.
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts.retryline).toMatch(/packages\/cli\//);
  });
});
