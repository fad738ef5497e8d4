import { describe, expect, it } from 'vitest';
import { gateScenario, scenario } from './fixtures';
import { nextSort, parseSort, sortRows } from './sort';
import { foldTimeline } from './timeline';

const rows = [...foldTimeline(scenario()).rows, ...foldTimeline(gateScenario()).rows].map((row, index) => ({
  ...row,
  index,
}));
const ids = (sorted: readonly { requestId: string }[]) => sorted.map((row) => row.requestId);

describe('sorting the list', () => {
  it('sorts by attempts, most first, ties in start order', () => {
    const sorted = sortRows(rows, { column: 'attempts', direction: 'descending' });
    const counts = sorted.map((row) => row.attempts.length);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(sorted[sorted.length - 1]?.requestId).toBe('r2');
  });

  it('sorts by method then keeps ties in their order', () => {
    expect(ids(sortRows(rows, { column: 'method', direction: 'ascending' })).slice(0, 2)).toEqual([
      'r1',
      'r3',
    ]);
  });

  it('returns the list itself without a sort, and reuses the last result for the same list', () => {
    expect(sortRows(rows, undefined)).toBe(rows);
    const sort = { column: 'status', direction: 'ascending' } as const;
    const first = sortRows(rows, sort);
    expect(sortRows(rows, { ...sort })).toBe(first);
    expect(sortRows([...rows], sort)).not.toBe(first);
  });

  it('cycles a header: ascending, descending, none', () => {
    const a = nextSort(undefined, 'time');
    expect(a).toEqual({ column: 'time', direction: 'ascending' });
    const d = nextSort(a, 'time');
    expect(d).toEqual({ column: 'time', direction: 'descending' });
    expect(nextSort(d, 'time')).toBeUndefined();
    expect(nextSort(d, 'status')).toEqual({ column: 'status', direction: 'ascending' });
  });

  it('reads only a valid stored sort', () => {
    expect(parseSort('{"column":"time","direction":"descending"}')).toEqual({
      column: 'time',
      direction: 'descending',
    });
    expect(parseSort('{"column":"nope","direction":"descending"}')).toBeUndefined();
    expect(parseSort('not json')).toBeUndefined();
    expect(parseSort(null)).toBeUndefined();
  });
});
