/**
 * The list's state as the panel derives it: the rows the filter keeps in the chosen order, the
 * selection and whether its details are open, and each lane's guards now. Hooks, so the panel's
 * component stays a list of its parts.
 */

import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { compileListFilter } from '../model/attempt-terms';
import type { CompiledFilter, FilterCriteria } from '../model/filter';
import { type GuardState, laneState, pacingEnds } from '../model/lane-state';
import { nextSort, type SortColumn, type SortState, sortRows } from '../model/sort';
import type { RequestRow, Timeline } from '../model/timeline';
import { frameKey } from '../shared/frame-key';
import { type ColumnWidths, type HideableColumn, MAX_COLUMN, MIN_COLUMN } from './column-menu';
import { loadHidden, loadSort, loadWidths, saveHidden, saveSort, saveWidths } from './preferences';
import { type ListItem, listItems } from './request-list';

export interface ListView {
  readonly filter: CompiledFilter;
  /** The rows the filter keeps, in the order they started. */
  readonly rows: readonly RequestRow[];
  /** What the list draws: the rows in the sort's order (with navigations when unsorted). */
  readonly items: readonly ListItem[];
}

/** Filters, then sorts; each step is kept until its inputs change (a clock tick redoes neither). */
export function useListView(
  timeline: Timeline,
  criteria: FilterCriteria,
  sort: SortState | undefined,
): ListView {
  const filter = useMemo(() => compileListFilter(criteria), [criteria]);
  const rows = useMemo(
    () => (filter.active ? timeline.rows.filter(filter.test) : timeline.rows),
    [timeline.rows, filter],
  );
  const sorted = useMemo(() => sortRows(rows, sort), [rows, sort]);
  // Sorted, the navigations have no place among the rows (the Network panel leaves them out too).
  const items = useMemo<ListItem[]>(
    () =>
      sort === undefined
        ? listItems(rows, timeline.navigations)
        : sorted.map((row) => ({ kind: 'row', row })),
    [sorted, sort, timeline.navigations],
  );
  return { filter, rows, items };
}

export interface Selection {
  /** The selected row's key (not its request id, which two frames may share). */
  readonly selectedKey: string | undefined;
  readonly setSelectedKey: (key: string | undefined) => void;
  /** The row whose details are open: the selected one, while open and while the filter keeps it. */
  readonly selected: RequestRow | undefined;
  /** Selects a row (or none, which closes the details). */
  readonly select: (key: string | undefined) => void;
  readonly openRow: (key: string) => void;
  /** Closes the details and hands the focus back to the selected row. */
  readonly closeDetail: () => void;
  /** Bumped by {@link closeDetail}: the list focuses the selected row. */
  readonly focusToken: number;
}

export function useSelection(rows: readonly RequestRow[]): Selection {
  const [selectedKey, setSelectedKey] = useState<string | undefined>(undefined);
  // Whether the selected row's details are open (the arrow keys move the selection either way).
  const [detailOpen, setDetailOpen] = useState(false);
  const [focusToken, setFocusToken] = useState(0);
  // The details show only a row the filter keeps: one it hides closes them.
  const shown = useMemo(
    () => (selectedKey === undefined ? undefined : rows.find((row) => row.key === selectedKey)),
    [rows, selectedKey],
  );
  useEffect(() => {
    if (detailOpen && shown === undefined) setDetailOpen(false);
  }, [detailOpen, shown]);
  const select = useCallback((key: string | undefined) => {
    setSelectedKey(key);
    if (key === undefined) setDetailOpen(false);
  }, []);
  const openRow = useCallback((key: string) => {
    setSelectedKey(key);
    setDetailOpen(true);
  }, []);
  const closeDetail = useCallback(() => {
    setDetailOpen(false);
    setFocusToken((token) => token + 1);
  }, []);
  const selected = detailOpen ? shown : undefined;
  return { selectedKey, setSelectedKey, selected, select, openRow, closeDetail, focusToken };
}

/** What each lane's guards are doing at `now` (the end of what is drawn), by `frameKey(source, key)`. */
export function useGuardStates(timeline: Timeline, now: number): ReadonlyMap<string, readonly GuardState[]> {
  const pacing = useMemo(() => pacingEnds(timeline.rows), [timeline.rows]);
  return useMemo(() => {
    const states = new Map<string, readonly GuardState[]>();
    for (const lane of timeline.lanes) {
      const key = frameKey(lane.source, lane.key);
      states.set(key, laneState(lane, now, pacing.get(key)));
    }
    return states;
  }, [timeline.lanes, pacing, now]);
}

type Point = { readonly x: number; readonly y: number };

export interface Columns {
  readonly sort: SortState | undefined;
  readonly onSort: (column: SortColumn) => void;
  readonly hidden: readonly HideableColumn[];
  readonly toggle: (column: HideableColumn) => void;
  /** Where the column menu is open, if it is. */
  readonly menu: Point | undefined;
  readonly openMenu: (at: Point) => void;
  readonly closeMenu: () => void;
  /** Widths the user dragged a column to, in px. */
  readonly widths: ColumnWidths;
  readonly resize: (column: HideableColumn, px: number) => void;
}

/** The view's custom properties for the widths: a hidden column keeps its 0 (its class sets it). */
export function widthStyle(widths: ColumnWidths, hidden: readonly HideableColumn[]): Record<string, string> {
  const style: Record<string, string> = {};
  for (const [column, px] of Object.entries(widths)) {
    if (px !== undefined && !hidden.includes(column as HideableColumn)) style[`--rl-w-${column}`] = `${px}px`;
  }
  return style;
}

/** The list's sort and hidden columns, remembered across panels (see preferences.ts). */
export function useColumns(): Columns {
  const [sort, setSort] = useState<SortState | undefined>(loadSort);
  const [hidden, setHidden] = useState<readonly HideableColumn[]>(loadHidden);
  const [menu, setMenu] = useState<Point | undefined>(undefined);
  const [widths, setWidths] = useState<ColumnWidths>(loadWidths);
  const resize = (column: HideableColumn, px: number) => {
    const next = { ...widths, [column]: Math.round(Math.min(MAX_COLUMN, Math.max(MIN_COLUMN, px))) };
    setWidths(next);
    saveWidths(next);
  };
  const onSort = (column: SortColumn) => {
    const next = nextSort(sort, column);
    setSort(next);
    saveSort(next);
  };
  const toggle = (column: HideableColumn) => {
    const next = hidden.includes(column) ? hidden.filter((id) => id !== column) : [...hidden, column];
    setHidden(next);
    saveHidden(next);
  };
  return {
    sort,
    onSort,
    hidden,
    toggle,
    menu,
    openMenu: setMenu,
    closeMenu: () => setMenu(undefined),
    widths,
    resize,
  };
}
