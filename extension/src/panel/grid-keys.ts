/**
 * The request grid's keyboard: the arrows, Home/End and Page Up/Down move the selection (skipping
 * navigation separators), Enter (or Space) opens the selected row's details, Escape closes them.
 * The focus follows the selection, and comes back to the selected row when the details close.
 */

import type { RefObject } from 'preact';
import { useLayoutEffect, useRef } from 'preact/hooks';
import type { ListItem } from './request-list';

/** The keys that move the selection, and where to: a place in the list from the current one. */
function target(key: string, at: number, count: number, page: number): number | undefined {
  switch (key) {
    case 'ArrowDown':
      return at + 1;
    case 'ArrowUp':
      return at < 0 ? 0 : at - 1;
    case 'Home':
      return 0;
    case 'End':
      return count - 1;
    case 'PageDown':
      return Math.max(0, at) + page;
    case 'PageUp':
      return at - page;
    default:
      return undefined;
  }
}

/** The nearest request row to `index` in the direction `step` (navigation separators are skipped). */
function rowNear(items: readonly ListItem[], index: number, step: 1 | -1): string | undefined {
  const from = Math.min(Math.max(index, 0), items.length - 1);
  for (let i = from; i >= 0 && i < items.length; i += step) {
    const item = items[i];
    if (item?.kind === 'row') return item.row.key;
  }
  // Past the last row (or the first): the nearest row the other way.
  for (let i = from; i >= 0 && i < items.length; i -= step) {
    const item = items[i];
    if (item?.kind === 'row') return item.row.key;
  }
  return undefined;
}

export interface GridKeysOptions {
  readonly items: readonly ListItem[];
  readonly selectedKey: string | undefined;
  /** The selected row's place in `items`, or -1. */
  readonly selectedAt: number;
  /** How many rows Page Up/Down move. */
  readonly page: number;
  /** Bumped to hand the focus back to the selected row. */
  readonly focusToken: number | undefined;
  /** The element the rows are drawn in (each with its key as `data-key`). */
  readonly scroller: RefObject<HTMLElement | null>;
  readonly onSelect: (key: string) => void;
  readonly onOpen: (key: string) => void;
  readonly onClose: () => void;
}

/** The grid's keydown handler; focuses the row the keyboard moved to once it is drawn. */
export function useGridKeys(options: GridKeysOptions): (event: KeyboardEvent) => void {
  const { items, selectedKey, selectedAt, scroller } = options;
  // The row that should take the focus once it is drawn. A key, not a flag: a later key press
  // must not focus an earlier row (a render can come after the next key).
  const focusWanted = useRef<string | undefined>(undefined);

  // Before the effect below, which then moves the focus in the same commit.
  useLayoutEffect(() => {
    if (options.focusToken === undefined || options.focusToken === 0) return;
    focusWanted.current = selectedKey;
  }, [options.focusToken]);

  useLayoutEffect(() => {
    const key = focusWanted.current;
    if (key === undefined) return;
    const row = scroller.current?.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`);
    if (!row) return;
    focusWanted.current = undefined;
    row.focus({ preventScroll: true });
  });

  return (event: KeyboardEvent) => {
    // A header's sort button takes Enter itself.
    if ((event.target as HTMLElement | null)?.closest?.('[role="columnheader"]')) return;
    if (event.key === 'Escape') {
      focusWanted.current = selectedKey;
      options.onClose();
      return;
    }
    if (event.key === 'Enter' || event.key === ' ') {
      if (selectedKey === undefined) return;
      event.preventDefault();
      options.onOpen(selectedKey);
      return;
    }
    const to = target(event.key, selectedAt, items.length, options.page);
    if (to === undefined || items.length === 0) return;
    event.preventDefault();
    const step = to < selectedAt || event.key === 'End' ? -1 : 1;
    const key = rowNear(items, to, step);
    if (key === undefined) return;
    focusWanted.current = key;
    options.onSelect(key);
  };
}
