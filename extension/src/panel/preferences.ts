/**
 * The panel's remembered choices (the list's sort and hidden columns), in `localStorage` where the page has it. A
 * panel without storage (blocked, or a sandboxed viewer) works the same and forgets on close.
 */

import { parseSort, type SortState } from '../model/sort';
import { HIDEABLE_COLUMNS, type HideableColumn, parseHidden } from './column-menu';

const SORT_KEY = 'retryline.panel.sort';
const HIDDEN_KEY = 'retryline.panel.hiddenColumns';
const WIDTHS_KEY = 'retryline.panel.columnWidths';

function storage(): Storage | undefined {
  try {
    return globalThis.localStorage ?? undefined;
  } catch {
    // Reading `localStorage` throws where storage is blocked.
    return undefined;
  }
}

export function loadSort(): SortState | undefined {
  try {
    return parseSort(storage()?.getItem(SORT_KEY));
  } catch {
    return undefined;
  }
}

export function saveSort(sort: SortState | undefined): void {
  try {
    const store = storage();
    if (sort === undefined) store?.removeItem(SORT_KEY);
    else store?.setItem(SORT_KEY, JSON.stringify(sort));
  } catch {
    // Full or blocked: the sort lasts as long as the panel.
  }
}

export function loadHidden(): HideableColumn[] {
  try {
    return parseHidden(storage()?.getItem(HIDDEN_KEY));
  } catch {
    return [];
  }
}

export function saveHidden(hidden: readonly HideableColumn[]): void {
  try {
    storage()?.setItem(HIDDEN_KEY, JSON.stringify(hidden));
  } catch {
    // Full or blocked: the choice lasts as long as the panel.
  }
}

export function loadWidths(): Partial<Record<HideableColumn, number>> {
  try {
    const raw: unknown = JSON.parse(storage()?.getItem(WIDTHS_KEY) ?? '{}');
    const widths: Partial<Record<HideableColumn, number>> = {};
    if (typeof raw !== 'object' || raw === null) return widths;
    for (const { id } of HIDEABLE_COLUMNS) {
      const px = (raw as Record<string, unknown>)[id];
      if (typeof px === 'number' && Number.isFinite(px) && px >= 0 && px <= 1000) widths[id] = px;
    }
    return widths;
  } catch {
    return {};
  }
}

export function saveWidths(widths: Partial<Record<HideableColumn, number>>): void {
  try {
    storage()?.setItem(WIDTHS_KEY, JSON.stringify(widths));
  } catch {
    // Full or blocked: the widths last as long as the panel.
  }
}
