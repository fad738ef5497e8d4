import { runInNewContext } from 'node:vm';
import { backoffSchedule, type PolicyOptions, seededRandom } from '@retryline/core';
import { DEFAULTS } from '@retryline/core/adapter';
import { describe, expect, it } from 'vitest';
import { FRAME, niceTicks, yScale } from '../../docs/.vitepress/theme/playground/chart';
import {
  CLIENTS,
  type Client,
  formatOptions,
  initialForm,
  JITTER_NAMES,
  type PolicyForm,
  policyOptions,
  STRATEGY_NAMES,
} from '../../docs/.vitepress/theme/playground/policy';
import { scheduleView } from '../../docs/.vitepress/theme/playground/schedule';

/** Runs the pasted code with each client's function replaced by one that hands back its options. */
async function evaluate(code: string): Promise<unknown> {
  let captured: unknown = 'not called';
  const take = (options: unknown) => {
    captured = options === undefined ? {} : options;
    return {};
  };
  const body = code
    .split('\n')
    .filter((line) => !line.startsWith('import '))
    .join('\n');
  await runInNewContext(`(async () => {\n${body}\n})()`, {
    fetch: {},
    operation: () => undefined,
    retryFetch: (_fetch: unknown, options: unknown) => take(options),
    attachRetry: (_instance: unknown, options: unknown) => take(options),
    retry: (_operation: unknown, options: unknown) => take(options),
    retryline: (options: unknown) => take(options),
    axios: { create: () => ({}) },
    ky: { create: () => ({}) },
  });
  return captured;
}

const form = (changes: Partial<PolicyForm>): PolicyForm => ({ ...initialForm(), ...changes });

describe('the playground policy', () => {
  it('opens on the library defaults, with enough retries to draw a curve', () => {
    expect(policyOptions(initialForm())).toEqual({ retries: 8 });
    expect(policyOptions(form({ retries: DEFAULTS.retries }))).toEqual({});
  });

  it('writes only what differs from the defaults, and each strategy with its own parameter', () => {
    expect(policyOptions(form({ strategy: 'linear' }))).toEqual({
      retries: 8,
      backoff: { strategy: 'linear', base: 100 },
    });
    expect(policyOptions(form({ strategy: 'linear', step: 250, factor: 3 }))).toEqual({
      retries: 8,
      backoff: { strategy: 'linear', base: 100, step: 250 },
    });
    expect(policyOptions(form({ strategy: 'polynomial', exponent: 3 }))).toEqual({
      retries: 8,
      backoff: { strategy: 'polynomial', base: 100, exponent: 3 },
    });
    expect(
      policyOptions(form({ jitter: 'proportional', ratio: 0.1, maxDelay: 5_000, deadline: 30_000 })),
    ).toEqual({
      retries: 8,
      maxDelay: 5_000,
      jitter: { type: 'proportional', ratio: 0.1 },
      deadline: 30_000,
    });
    expect(policyOptions(form({ jitter: 'constant' }))).toEqual({ retries: 8, jitter: 'constant' });
  });

  it.each(Object.keys(CLIENTS) as Client[])(
    'pastes as %s code that passes exactly the charted options',
    async (client) => {
      const cases: PolicyForm[] = [
        initialForm(),
        form({ retries: DEFAULTS.retries }),
        form({ strategy: 'linear', step: 50, jitter: 'none', maxDelay: 123_456, onMaxDelay: 'give-up' }),
        form({ jitter: 'constant', spread: 250, deadline: 12_000 }),
      ];
      for (const policy of cases) {
        const options = policyOptions(policy);
        expect(await evaluate(formatOptions(options, client))).toEqual(options);
      }
    },
  );

  it('writes numbers as the README does', () => {
    expect(formatOptions({ maxDelay: 20_000, retries: 3 }, 'fetch')).toBe(
      [
        "import { retryFetch } from '@retryline/fetch';",
        '',
        'const api = retryFetch(fetch, {',
        '  maxDelay: 20_000,',
        '  retries: 3,',
        '});',
      ].join('\n'),
    );
  });
});

describe('the playground schedule', () => {
  it.each(STRATEGY_NAMES.flatMap((strategy) => JITTER_NAMES.map((jitter) => [strategy, jitter] as const)))(
    "%s backoff with %s jitter: the sampled delay lies in its jitter range, and the rows are core's",
    (strategy, jitter) => {
      const options: PolicyOptions = policyOptions(form({ strategy, jitter, retries: 12, maxDelay: 5_000 }));
      const view = scheduleView(options, 7);
      const core = backoffSchedule(options, { random: seededRandom(7) });
      expect(view.rows.map((row) => [row.retry, row.delay, row.cumulative])).toEqual(
        core.rows.map((row) => [row.retry, row.delay, row.cumulative]),
      );
      for (const row of view.rows) {
        expect(row.min).toBeLessThanOrEqual(row.delay);
        expect(row.delay).toBeLessThanOrEqual(row.max);
        expect(row.cumulativeMin ?? 0).toBeLessThanOrEqual(row.cumulativeMax ?? Number.POSITIVE_INFINITY);
      }
      if (jitter === 'none') expect(view.rows.every((row) => row.min === row.max)).toBe(true);
      else expect(view.rows.some((row) => row.min < row.max)).toBe(true);
    },
  );

  it('draws the full jitter range from 0 to the capped backoff', () => {
    const view = scheduleView({ retries: 3, maxDelay: 500 }, 1);
    expect(view.rows.map((row) => [row.min, row.max])).toEqual([
      [0, 200],
      [0, 400],
      [0, 500],
    ]);
  });

  it('stops where the deadline leaves no room, and says so', () => {
    const view = scheduleView({ retries: 10, jitter: 'none', deadline: 2_000 }, 1);
    expect(view.rows.map((row) => row.delay)).toEqual([200, 400, 800]);
    expect(view.stop).toMatchObject({ retry: 4, reason: 'deadline', delay: 1_600 });
  });

  it("passes core's validation message through for options it refuses", () => {
    expect(() => scheduleView(policyOptions(form({ base: -1 })), 1)).toThrow(/Expected backoff\.base to be/);
  });
});

describe('the playground charts', () => {
  it.each([
    [0, 900, [0, 200, 400, 600, 800, 1000]],
    [0, 1000, [0, 200, 400, 600, 800, 1000]],
    [0, 7, [0, 2, 4, 6, 8]],
    [10, 100, [0, 20, 40, 60, 80, 100]],
    [0, 0.3, [0, 0.1, 0.2, 0.3]],
  ])('ticks %d…%d in round steps, up to the first at or past the maximum', (min, max, ticks) => {
    expect(niceTicks(min, max, min === 10 ? 8 : 5)).toEqual(ticks);
  });

  it('keeps every value inside the frame of its y scale', () => {
    for (const max of [1, 7, 99, 900, 1001, 20_000, 123_456]) {
      const y = yScale(max);
      expect(y(max)).toBeGreaterThanOrEqual(FRAME.top - 1e-9);
      expect(y(0)).toBe(FRAME.height - FRAME.bottom);
    }
  });
});
