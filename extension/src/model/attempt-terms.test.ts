import { describe, expect, it } from 'vitest';
import { compileListFilter, isHedged } from './attempt-terms';
import { compileFilter } from './filter';
import { EU, hedgeScenario, scenario, US } from './fixtures';
import { foldTimeline } from './timeline';

// h1: attempt 1 to EU (503), attempt 2 to US hedged to EU, the hedge answering. h2: attempt 1 to
// US hedged to EU, the attempt answering. h3: no endpoints. r1–r3: the plain scenario.
const rows = [...foldTimeline(hedgeScenario()).rows, ...foldTimeline(scenario()).rows];
const ids = (text: string, criteria: { client?: string } = {}) => {
  const filter = compileListFilter({ text, ...criteria });
  return rows.filter(filter.test).map((row) => row.requestId);
};

describe('the request list’s terms about attempts', () => {
  it.each([
    ['endpoint:eu.api', ['h1', 'h2']],
    // h1's attempt 2 went to US; h2's only attempt went to US too, its hedge to EU.
    ['endpoint:us.api', ['h1', 'h2']],
    ['ENDPOINT:https://EU', ['h1', 'h2']],
    ['endpoint:eu.api.example', ['h1', 'h2']],
    ['endpoint:*.api.example', ['h1', 'h2']],
    ['endpoint:https*us', ['h1', 'h2']],
    ['endpoint:ap.example', []],
    ['endpoint:', ['h1', 'h2']],
    ['-endpoint:', ['h3', 'r1', 'r2', 'r3']],
    ['is:hedged', ['h1', 'h2']],
    ['-is:hedged', ['h3', 'r1', 'r2', 'r3']],
    ['is:hedged status:503', ['h1']],
    ['is:hedged -is:retried', ['h2']],
    ['endpoint:us.api /items/7', ['h2']],
    ['"endpoint:eu.api" GET', ['h1', 'h2']],
  ])('reads %j', (text, expected) => {
    expect(ids(text)).toEqual(expected);
  });

  it('matches a row by its hedges’ endpoints too', () => {
    const [h1, h2] = rows;
    expect(h2?.attempts.map((a) => a.endpoint)).toEqual([US]);
    expect(h2?.hedges.map((h) => h.endpoint)).toEqual([EU]);
    expect(h1 && isHedged(h1)).toBe(true);
    expect(ids('endpoint:eu -endpoint:us')).toEqual([]);
  });

  it('combines with the list’s other criteria', () => {
    expect(ids('is:hedged', { client: 'ky' })).toEqual([]);
    expect(ids('-is:hedged', { client: 'ky' })).toEqual(['h3', 'r3']);
    expect(compileListFilter({ text: 'is:hedged' }).active).toBe(true);
    expect(compileListFilter({ text: '' }).active).toBe(false);
  });

  it('leaves a regular expression whole, and an unreadable term narrowing nothing', () => {
    expect(ids('re:endpoint:eu')).toEqual([]);
    const filter = compileListFilter({ text: 'is:hedged status:abc' });
    expect(filter.error).toMatch(/Expected status:NNN/);
    expect(rows.filter(filter.test)).toHaveLength(rows.length);
  });

  it('are the list’s own: the filter a fault rule is read with knows neither', () => {
    expect(compileFilter({ text: 'is:hedged' }).error).toMatch(/^Unknown is:hedged/);
    // A word there, found in no row's search text.
    expect(rows.filter(compileFilter({ text: 'endpoint:eu' }).test)).toEqual([]);
  });
});
