// Retryline's size budget: each Retryline entry point, bundled and minified the way an app ships it,
// must stay within its min+gzip budget in bench/size-budget.json. Measures the built packages
// (packages/*/dist), so it runs after a build: `pnpm test`, or `pnpm build && pnpm vitest run
// test/size-budget.test.ts`. `node bench/size.mjs` prints the same numbers next to the peer libraries.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bundleSize, ENTRY_POINTS } from '../bench/lib/bundle-size.mjs';

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
