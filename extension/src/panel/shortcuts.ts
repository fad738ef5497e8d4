/**
 * The panel's keyboard shortcuts: `/` (outside a text field) and Ctrl+F / ⌘F focus the filter, as
 * in the Network panel. Listened for on the panel's document, so they work wherever the focus is;
 * from the Faults tab, where the filter is out of view, they show the Requests tab first.
 */

import type { RefObject } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';

/** Whether the key goes to a text field (where `/` is typed, not a shortcut). */
function typing(target: EventTarget | null): boolean {
  const element = target as HTMLElement | null;
  if (!element || typeof element.closest !== 'function') return false;
  return element.closest('input, textarea, select, [contenteditable="true"]') !== null;
}

/** Whether the key event is the "focus the filter" shortcut. */
export function isFilterShortcut(event: KeyboardEvent): boolean {
  if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === 'f') return true;
  return event.key === '/' && !event.ctrlKey && !event.metaKey && !event.altKey && !typing(event.target);
}

const filterIn = (root: HTMLElement | null | undefined) =>
  root?.querySelector<HTMLInputElement>('input[data-testid="filter"]') ?? undefined;

function focusFilter(filter: HTMLInputElement): void {
  filter.focus();
  filter.select();
}

export interface FilterView {
  /** Whether the filter is out of view (another tab is shown), where focusing it would do nothing. */
  readonly hidden: boolean;
  /** Brings the filter into view (shows the Requests tab); the shortcut focuses it once it is drawn. */
  readonly show: () => void;
}

export function useShortcuts(root: RefObject<HTMLElement | null>, view?: FilterView): void {
  const latest = useRef(view);
  latest.current = view;
  // Bumped when the filter was brought into view: it is focused after that render.
  const [shown, setShown] = useState(0);
  useEffect(() => {
    const filter = filterIn(root.current);
    if (shown > 0 && filter) focusFilter(filter);
  }, [shown]);

  useEffect(() => {
    const document = root.current?.ownerDocument;
    if (!document) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (!isFilterShortcut(event)) return;
      const filter = filterIn(root.current);
      if (!filter) return;
      event.preventDefault();
      const view = latest.current;
      if (view?.hidden) {
        view.show();
        setShown((count) => count + 1);
      } else {
        focusFilter(filter);
      }
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);
}
