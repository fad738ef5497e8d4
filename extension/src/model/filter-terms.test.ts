import { describe, expect, it } from 'vitest';
import { compileFilter, filterRows } from './filter';
import { hasTerm, retryTerms, toggleTerm, waitedMs } from './filter-terms';
import { gateScenario, scenario } from './fixtures';
import { foldTimeline } from './timeline';

// r1: GET, 503 then a TypeError then 200, after a Retry-After wait, a backoff and a limiter hold.
// r2: POST refused by the breaker. r3: GET 404, not retryable.
const rows = [...foldTimeline(scenario()).rows, ...foldTimeline(gateScenario()).rows];
const ids = (text: string) => filterRows(rows, { text }).rows.map((r) => r.requestId);

describe('filter terms', () => {
  it.each([
    ['backoff', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['retry-after', ['r1']],
    ['limiter', ['r1']],
    ['breaker', ['r2']],
    ['parked', ['g1', 'g2', 'g3', 'g4']],
    ['retried', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['pacing', []],
  ])('finds the requests that went through %j', (text, expected) => {
    expect(ids(text)).toEqual(expected);
  });

  it.each([
    ['is:retried', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['-is:retried', ['r2', 'r3']],
    ['is:failed', ['r2', 'r3', 'g4']],
    ['is:refused', ['r2', 'g4']],
    ['is:waited', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['status:503', ['r1', 'g1', 'g2', 'g3', 'g4']],
    ['status:4xx', ['r3']],
    ['status:404,503', ['r1', 'r3', 'g1', 'g2', 'g3', 'g4']],
    ['status:503 -parked', ['r1']],
    ['outcome:not-retryable,breaker-open', ['r2', 'r3']],
    ['method:post', ['r2']],
    ['client:ky', ['r3']],
    ['-backoff', ['r2', 'r3']],
    ['GET -retried', ['r3']],
    ['is:failed -is:refused', ['r3']],
    ['"api.example/pay"', ['r2']],
    ['https://cdn.example', ['r3']],
  ])('reads %j', (text, expected) => {
    expect(ids(text)).toEqual(expected);
  });

  it.each([
    ['is:maybe', /Unknown is:maybe/],
    ['status:abc', /Expected status:NNN/],
    ['outcome:fine', /Unknown outcome fine/],
  ])('explains a term it cannot read (%j) and then narrows nothing', (text, error) => {
    const filter = compileFilter({ text });
    expect(filter.error).toMatch(error);
    expect(ids(text)).toHaveLength(rows.length);
  });

  it('toggles a chip’s term in the query, keeping the rest', () => {
    expect(toggleTerm('', 'is:retried')).toBe('is:retried');
    expect(toggleTerm('GET is:retried', 'is:retried')).toBe('GET');
    expect(toggleTerm('GET', 'is:failed')).toBe('GET is:failed');
    expect(hasTerm('GET is:failed', 'is:failed')).toBe(true);
    expect(hasTerm('GET is:failedx', 'is:failed')).toBe(false);
  });

  it('names what a request went through and sums its waits', () => {
    const r1 = rows[0];
    if (!r1) throw new Error('no row');
    expect(retryTerms(r1)).toEqual(['retry-after', 'backoff', 'limiter', 'retried']);
    const sum = r1.waits.reduce((s, w) => s + w.delay, 0) + r1.guardWaits.reduce((s, w) => s + w.waited, 0);
    expect(sum).toBeGreaterThan(0);
    expect(waitedMs(r1)).toBe(sum);
  });
});
