// Retryline's size budget: each Retryline entry point, bundled and minified the way an app ships it,
// must stay within its min+gzip budget in bench/size-budget.json. Measures the built packages
// (packages/*/dist), so it runs after a build: `pnpm test`, or `pnpm build && pnpm vitest run
// test/size-budget.test.ts`. `node bench/size.mjs` prints the same numbers next to the peer libraries.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bundleSize, ENTRY_POINTS, OPT_IN_GUARD_MODULES, sourceBundle } from '../bench/lib/bundle-size.mjs';

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
  });

  it('every Retryline entry point has a budget, and every budget names one', () => {
    const entryNames = retrylineEntries.map((entry) => entry.name).sort();
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
