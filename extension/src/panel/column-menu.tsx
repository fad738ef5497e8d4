/**
 * The column menu: which of the list's columns are shown, as the Network panel's header menu has
 * it. Opened by a right-click on the header, or from the keyboard with Shift+F10 (or the context
 * menu key) on a header; Escape or a click outside closes it, and the focus goes back.
 */

import { useEffect, useRef } from 'preact/hooks';

/** The columns that can be hidden (the name, URL and waterfall always stay). */
export type HideableColumn = 'status' | 'method' | 'client' | 'attempts' | 'outcome' | 'time';

export const HIDEABLE_COLUMNS: readonly { readonly id: HideableColumn; readonly label: string }[] = [
  { id: 'status', label: 'Status' },
  { id: 'method', label: 'Method' },
  { id: 'client', label: 'Client' },
  { id: 'attempts', label: 'Attempts' },
  { id: 'outcome', label: 'Outcome' },
  { id: 'time', label: 'Time' },
];

/** Widths the user dragged fixed columns to, in px. */
export type ColumnWidths = Readonly<Partial<Record<HideableColumn, number>>>;

/** The narrowest and widest a column can be dragged to. */
export const MIN_COLUMN = 24;
export const MAX_COLUMN = 400;

/** Reads stored hidden columns, keeping only known ones. */
export function parseHidden(raw: string | null | undefined): HideableColumn[] {
  if (!raw) return [];
  try {
    const value: unknown = JSON.parse(raw);
    if (!Array.isArray(value)) return [];
    return HIDEABLE_COLUMNS.map((column) => column.id).filter((id) => value.includes(id));
  } catch {
    return [];
  }
}

/** The classes that hide the columns in `hidden` (on the view that holds the lanes and the list). */
export function hiddenClasses(hidden: readonly HideableColumn[]): string {
  return hidden.map((id) => ` rl-hide-${id}`).join('');
}

export interface ColumnMenuProps {
  readonly hidden: readonly HideableColumn[];
  /** Where to open, in px from the top left of the view. */
  readonly at: { readonly x: number; readonly y: number };
  readonly onToggle: (column: HideableColumn) => void;
  readonly onClose: () => void;
}

export function ColumnMenu({ hidden, at, onToggle, onClose }: ColumnMenuProps) {
  const menu = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const returnTo = document.activeElement as HTMLElement | null;
    menu.current?.querySelector<HTMLElement>('[role="menuitemcheckbox"]')?.focus();
    const onPointer = (event: Event) => {
      if (!menu.current?.contains(event.target as Node)) onClose();
    };
    document.addEventListener('pointerdown', onPointer);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      returnTo?.focus?.();
    };
  }, []);
  const onKeyDown = (event: KeyboardEvent) => {
    const items = [...(menu.current?.querySelectorAll<HTMLElement>('[role="menuitemcheckbox"]') ?? [])];
    const at = items.indexOf(document.activeElement as HTMLElement);
    if (event.key === 'Escape' || event.key === 'Tab') {
      event.preventDefault();
      event.stopPropagation();
      onClose();
    } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      items[(at + step + items.length) % items.length]?.focus();
    }
  };
  return (
    <div
      ref={menu}
      class="rl-column-menu"
      role="menu"
      aria-label="Columns"
      data-testid="column-menu"
      style={{ left: `${at.x}px`, top: `${at.y}px` }}
      onKeyDown={onKeyDown}
    >
      {HIDEABLE_COLUMNS.map((column) => {
        const shown = !hidden.includes(column.id);
        return (
          <button
            key={column.id}
            type="button"
            role="menuitemcheckbox"
            aria-checked={shown}
            class="rl-column-menu__item"
            data-testid={`column-${column.id}`}
            onClick={() => onToggle(column.id)}
          >
            {shown ? '✓ ' : '\u2003'}
            {column.label}
          </button>
        );
      })}
    </div>
  );
}
