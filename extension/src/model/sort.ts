/**
 * Sorting the request list by a column, as the Network panel does: ascending, descending, then
 * back to the order requests started in. A sort is stable (ties keep that order), and the last
 * result is kept per input list, so a render that changes nothing but the clock sorts nothing.
 */

import type { RequestRow } from './timeline';

/** The columns a list can be sorted by. */
export type SortColumn = 'status' | 'method' | 'name' | 'client' | 'attempts' | 'outcome' | 'time' | 'start';

export interface SortState {
  readonly column: SortColumn;
  readonly direction: 'ascending' | 'descending';
}

export const SORT_COLUMNS: readonly SortColumn[] = [
  'status',
  'method',
  'name',
  'client',
  'attempts',
  'outcome',
  'time',
  'start',
];

type Key = (row: RequestRow) => number | string;

/** What each column sorts by: one table, so a new column cannot go without its key. */
const KEYS: Readonly<Record<SortColumn, Key>> = {
  status: (row) => row.status ?? -1,
  method: (row) => row.method,
  name: (row) => (row.url === '' ? row.path : row.url),
  client: (row) => row.client,
  attempts: (row) => row.attempts.length,
  outcome: (row) => row.outcome,
  time: (row) => (row.end === undefined ? Number.POSITIVE_INFINITY : row.end - row.start),
  start: (row) => row.start,
};

/** The sort a click on `column`'s header leads to from `current`: ascending, descending, none. */
export function nextSort(current: SortState | undefined, column: SortColumn): SortState | undefined {
  if (current?.column !== column) return { column, direction: 'ascending' };
  return current.direction === 'ascending' ? { column, direction: 'descending' } : undefined;
}

let last: { rows: readonly RequestRow[]; sort: SortState; sorted: readonly RequestRow[] } | undefined;

/** The rows in the sort's order (the same array without one); the last result is reused. */
export function sortRows(rows: readonly RequestRow[], sort: SortState | undefined): readonly RequestRow[] {
  if (sort === undefined) return rows;
  if (
    last &&
    last.rows === rows &&
    last.sort.column === sort.column &&
    last.sort.direction === sort.direction
  ) {
    return last.sorted;
  }
  const key = KEYS[sort.column];
  const sign = sort.direction === 'ascending' ? 1 : -1;
  // Keys read once per row, not once per comparison.
  const keyed = rows.map((row) => ({ row, key: key(row) }));
  keyed.sort((a, b) => (a.key < b.key ? -sign : a.key > b.key ? sign : a.row.index - b.row.index));
  const sorted = keyed.map((entry) => entry.row);
  last = { rows, sort, sorted };
  return sorted;
}

/** Reads a stored sort, or undefined for anything else. */
export function parseSort(raw: string | null | undefined): SortState | undefined {
  if (!raw) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<SortState>;
    if (
      SORT_COLUMNS.includes(value.column as SortColumn) &&
      (value.direction === 'ascending' || value.direction === 'descending')
    ) {
      return { column: value.column as SortColumn, direction: value.direction };
    }
  } catch {
    // A stored value from elsewhere: no sort.
  }
  return undefined;
}
