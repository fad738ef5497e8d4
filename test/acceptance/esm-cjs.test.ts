import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

/**
 * No process-wide state, so two copies of the built
 * packages in one process (the ES module an `import` loads and the CommonJS build a `require`
 * loads) behave alike, and nothing one client learns or spends reaches another client.
 *
 * The scenarios run in a child process (fixtures/esm-cjs-child.mjs) that loads the BUILT packages
 * (dist/, as `pnpm test` builds them first) both ways, on a loopback server and a virtual clock of
 * its own; it prints what it saw, and this file judges it.
 */

const child = fileURLToPath(new URL('./fixtures/esm-cjs-child.mjs', import.meta.url));
const built = ['core', 'fetch'].flatMap((name) =>
  ['index.js', 'index.cjs'].map((file) => `packages/${name}/dist/${file}`),
);

interface Info {
  readonly attempts: number;
  readonly totalDelay: number;
  readonly delays: ReadonlyArray<{ readonly delay: number; readonly reason: string }>;
  readonly outcome: string;
  readonly stoppedBy: string | null;
}

interface Sequence {
  readonly status: number;
  readonly body: string;
  readonly info: Info;
  readonly elapsed: number;
  readonly served: number;
}

type Later =
  | { readonly held: true }
  | { readonly held: false; readonly status: number; readonly info: Info; readonly clockMoved: number };

interface Hint {
  readonly hintedWaits: boolean;
  readonly stillWaiting: boolean;
  readonly later: {
    readonly sameCopy?: Later;
    readonly otherCopy?: Later;
    readonly sameClientOtherPath: Later;
  };
  readonly hinted: { readonly status: number; readonly info: Info };
}

type BudgetInfo = Omit<Info, 'delays'> & { readonly waits: number };

interface Report {
  readonly modules: {
    readonly coreObjectsDiffer: boolean;
    readonly coreClassesDiffer: boolean;
    readonly coreFunctionsDiffer: boolean;
    readonly fetchFunctionsDiffer: boolean;
    readonly esmFetchOnEsmCore: boolean;
    readonly cjsFetchOnCjsCore: boolean;
    readonly files: Readonly<Record<'esmCore' | 'cjsCore' | 'esmFetch' | 'cjsFetch', string>>;
  };
  readonly sequence: Readonly<Record<'esm' | 'cjs', Sequence>>;
  readonly hint: Readonly<Record<'esm' | 'cjs', Hint>>;
  readonly pacingControl: Readonly<Record<'esm' | 'cjs', Hint>>;
  readonly budget: Readonly<
    Record<'spent' | 'spentAgain' | 'fresh' | 'freshOtherCopy', BudgetInfo> & { elapsed: number }
  >;
}

let report: Report;

beforeAll(async () => {
  const root = new URL('../../', import.meta.url);
  for (const file of built) {
    expect(existsSync(new URL(file, root)), `${file} is missing: run pnpm build`).toBe(true);
  }
  const { stdout } = await promisify(execFile)(process.execPath, [child], { timeout: 10_000 });
  report = JSON.parse(stdout) as Report;
});

const copies = ['esm', 'cjs'] as const;
const other = (copy: 'esm' | 'cjs') => (copy === 'esm' ? 'cjs' : 'esm');

describe('the ESM and the CommonJS build of @retryline/fetch in one process', () => {
  it('are two copies: import loads dist/index.js, require loads dist/index.cjs, and they share no module instance', () => {
    const { files, ...copiesDiffer } = report.modules;
    expect(files.esmCore).toMatch(/\/packages\/core\/dist\/index\.js$/);
    expect(files.cjsCore).toMatch(/\/packages\/core\/dist\/index\.cjs$/);
    expect(files.esmFetch).toMatch(/\/packages\/fetch\/dist\/index\.js$/);
    expect(files.cjsFetch).toMatch(/\/packages\/fetch\/dist\/index\.cjs$/);
    // Not just two namespace objects: two instances of the code (each has its own classes and
    // functions), and each adapter copy runs on the core of its own kind.
    expect(copiesDiffer).toEqual({
      coreObjectsDiffer: true,
      coreClassesDiffer: true,
      coreFunctionsDiffer: true,
      fetchFunctionsDiffer: true,
      esmFetchOnEsmCore: true,
      cjsFetchOnCjsCore: true,
    });
  });

  it('give the same result for the same scenario: 503, 503, 200 with the same seed', () => {
    const { esm, cjs } = report.sequence;
    expect(cjs).toEqual(esm);
    expect(esm).toMatchObject({ status: 200, body: 'ok', served: 3 });
    expect(esm.info).toMatchObject({ attempts: 3, outcome: 'success', stoppedBy: null });
    expect(esm.info.delays.map((each) => each.reason)).toEqual(['backoff', 'backoff']);
    // Full jitter over the default exponential backoff: retry n waits U(0, 100 × 2^n) ms.
    const [first, second] = esm.info.delays.map((each) => each.delay);
    expect(first).toBeGreaterThan(0);
    expect(first).toBeLessThan(200);
    expect(second).toBeGreaterThan(0);
    expect(second).toBeLessThan(400);
    expect(esm.info.totalDelay).toBeCloseTo((first ?? 0) + (second ?? 0), 6);
  });

  it.each(copies)(
    'a 429 with Retry-After: 30 to a %s client holds neither another client (of either copy) nor its own next request to another path',
    (copy) => {
      const { hintedWaits, stillWaiting, later, hinted } = report.hint[copy];
      expect(hintedWaits, 'the hinted request waits out its Retry-After').toBe(true);
      expect(stillWaiting, 'the others were answered while it still waited').toBe(true);
      const answeredAtOnce = { held: false, status: 200, clockMoved: 0 };
      const oneAttempt = { attempts: 1, totalDelay: 0, delays: [], outcome: 'success' };
      expect(later.sameCopy, `another ${copy} client`).toMatchObject(answeredAtOnce);
      expect(later.otherCopy, `a ${other(copy)} client`).toMatchObject(answeredAtOnce);
      expect(later.sameClientOtherPath, 'the same client, another path').toMatchObject(answeredAtOnce);
      for (const each of [later.sameCopy, later.otherCopy, later.sameClientOtherPath]) {
        expect(each?.held === false && each.info).toMatchObject(oneAttempt);
      }
      // The request that got the hint waited at least what the server asked, then succeeded.
      expect(hinted.status).toBe(200);
      expect(hinted.info).toMatchObject({ attempts: 2, outcome: 'success' });
      expect(hinted.info.delays).toHaveLength(1);
      expect(hinted.info.delays[0]?.reason).toBe('retry-after');
      expect(hinted.info.delays[0]?.delay).toBeGreaterThanOrEqual(30_000);
    },
  );

  it.each(copies)(
    'the control: with pacing opted into, a %s client does hold its next request for the 429 (so the check above can see a hold)',
    (copy) => {
      const { hintedWaits, later } = report.pacingControl[copy];
      expect(hintedWaits).toBe(true);
      expect(later.sameClientOtherPath).toEqual({ held: true });
    },
  );

  it("keeps each client's retry budget its own: one client's spent budget leaves another's whole", () => {
    const { spent, spentAgain, fresh, freshOtherCopy, elapsed } = report.budget;
    // The default budget's floor, 10 retries/s over 10 s, plus 0.1 × 1 request: 100 retries, then refused.
    const whole = { attempts: 101, waits: 100, outcome: 'budget-exhausted', stoppedBy: 'budget' };
    expect(spent).toMatchObject(whole);
    // Still in the window (all of it took 300 ms of virtual time): its next request gets no retry.
    expect(elapsed).toBeLessThan(10_000);
    expect(spentAgain).toMatchObject({ attempts: 1, waits: 0, stoppedBy: 'budget' });
    // Another client of the same copy, and one of the other copy, same origin, same options: a whole budget.
    expect(fresh).toMatchObject(whole);
    expect(freshOtherCopy).toMatchObject(whole);
  });
});
