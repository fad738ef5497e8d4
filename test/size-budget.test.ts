// Retryline's size budget: each Retryline entry point, bundled and minified the way an app ships it,
// and the devtools extension's page hook, which the browser injects into every page, must stay
// within its min+gzip budget in bench/size-budget.json. Measures the built packages
// (packages/*/dist) and extension (extension/dist), so it runs after a build: `pnpm test`, or
// `pnpm build && pnpm vitest run test/size-budget.test.ts`. `node bench/size.mjs` prints the same
// numbers next to the peer libraries.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  bundleSize,
  ENTRY_POINTS,
  fileSize,
  OPT_IN_GUARD_MODULES,
  PAGE_HOOK,
  pageHookBundle,
  sourceBundle,
} from '../bench/lib/bundle-size.mjs';

const budgetFile = JSON.parse(
  readFileSync(new URL('../bench/size-budget.json', import.meta.url), 'utf8'),
) as Record<string, unknown>;
// Keys starting with `$` (the `$comment`) are notes, not budgets.
const budgets = new Map(Object.entries(budgetFile).filter(([name]) => !name.startsWith('$')));
const retrylineEntries = ENTRY_POINTS.filter((entry) => entry.kind === 'retryline');

describe('size budget', () => {
  it('the packages are built (run `pnpm build` first)', () => {
    for (const name of ['core', 'fetch', 'axios', 'ky']) {
      const dist = new URL(`../packages/${name}/dist/index.js`, import.meta.url);
      expect(existsSync(dist), `packages/${name}/dist/index.js is missing: run pnpm build`).toBe(true);
    }
    const hook = new URL(`../${PAGE_HOOK.file}`, import.meta.url);
    expect(existsSync(hook), `${PAGE_HOOK.file} is missing: run pnpm build`).toBe(true);
  });

  it('every Retryline entry point has a budget, and every budget names one', () => {
    const entryNames = [...retrylineEntries.map((entry) => entry.name), PAGE_HOOK.name].sort();
    expect([...budgets.keys()].sort()).toEqual(entryNames);
    for (const [name, budget] of budgets) {
      expect(Number.isInteger(budget) && (budget as number) > 0, `${name}: budget ${budget}`).toBe(true);
    }
  });

  for (const entry of retrylineEntries) {
    it(`${entry.name} stays within its min+gzip budget`, async () => {
      const budget = budgets.get(entry.name);
      expect(budget, `${entry.name} has no budget in bench/size-budget.json`).toBeTypeOf('number');
      const { gzipBytes } = await bundleSize(entry.contents, {
        external: entry.external,
        ...(entry.platform ? { platform: entry.platform } : {}),
      });
      expect(
        gzipBytes,
        `${entry.name}: ${gzipBytes} B min+gz, budget ${budget} B (bench/size-budget.json)`,
      ).toBeLessThanOrEqual(budget as number);
    });
  }

  it(`${PAGE_HOOK.name} stays within its min+gzip budget`, () => {
    const budget = budgets.get(PAGE_HOOK.name);
    expect(budget, `${PAGE_HOOK.name} has no budget in bench/size-budget.json`).toBeTypeOf('number');
    const { gzipBytes } = fileSize(PAGE_HOOK.file);
    expect(
      gzipBytes,
      `${PAGE_HOOK.file}: ${gzipBytes} B min+gz, budget ${budget} B (bench/size-budget.json; ` +
        'a `--dev` build is not minified: run pnpm build:extension)',
    ).toBeLessThanOrEqual(budget as number);
  });
});

// Every page the user opens runs the page hook, Retryline or not. It matches fault rules with the
// panel's own filter (a rule's pattern typed in the filter box shows the rows it would fault), on
// the row of a request that has only started: the panel's timeline fold and lanes stay in the panel.
describe('what the page hook carries', () => {
  it("the panel's filter and the started row, and not the timeline fold", async () => {
    const { modules, text } = await pageHookBundle();
    const paths = modules.map((module) => module.path);
    expect(paths).toEqual(
      expect.arrayContaining(['extension/src/model/filter.ts', 'extension/src/model/start-row.ts']),
    );
    for (const panelOnly of [
      'extension/src/model/timeline.ts',
      'extension/src/model/gate-lane.ts',
      'extension/src/model/attempt-terms.ts',
    ]) {
      expect(paths, panelOnly).not.toContain(panelOnly);
    }
    // The filter box's hint (model/filter.ts's FILTER_HELP) is the panel's.
    expect(text).not.toContain('Words each narrow the list');
  });
});

// Guards are values, and a bundle carries only those it imports. Shown from the
// size bench's module breakdown (bench/size.mjs prints the same list), and from the bundle's text.
describe('what a default retryFetch carries', () => {
  const entry = (names: string) => `export { ${names} } from './packages/fetch/src/index.ts';`;
  // Words only each guard's code holds: its refusal messages.
  const MARKS = ['the circuit breaker for', 'the rate limiter for', 'the bulkhead for', 'the quota for'];

  it('the retry budget, and no breaker, limiter, bulkhead or pacing code', async () => {
    const { modules, text } = await sourceBundle(entry('retryFetch'));
    const paths = modules.map((module) => module.path);
    expect(paths).toContain('packages/core/src/guard/retry-budget.ts');
    expect(paths.filter((path) => OPT_IN_GUARD_MODULES.includes(path))).toEqual([]);
    for (const mark of MARKS) expect(text, mark).not.toContain(mark);
  });

  it.each([
    ['circuitBreaker', ['packages/core/src/guard/breaker.ts'], 'the circuit breaker for'],
    [
      'rateLimiter',
      ['packages/core/src/guard/rate-limiter.ts', 'packages/core/src/guard/token-bucket.ts'],
      'the rate limiter for',
    ],
    ['bulkhead', ['packages/core/src/guard/bulkhead.ts'], 'the bulkhead for'],
    ['pacing', ['packages/core/src/guard/pacing.ts', 'packages/core/src/http/quota.ts'], 'the quota for'],
  ])('importing %s brings its code, and only its own', async (factory, own, mark) => {
    const { modules, text } = await sourceBundle(entry(`retryFetch, ${factory}`));
    const carried = modules
      .map((module) => module.path)
      .filter((path) => OPT_IN_GUARD_MODULES.includes(path));
    expect(carried.sort()).toEqual([...own].sort());
    expect(text).toContain(mark);
  });
});
