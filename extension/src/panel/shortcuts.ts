/**
 * The panel's keyboard shortcuts: `/` (outside a text field) and Ctrl+F / ⌘F focus the filter, as
 * in the Network panel. Listened for on the panel's document, so they work wherever the focus is.
 */

import type { RefObject } from 'preact';
import { useEffect } from 'preact/hooks';

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

export function useShortcuts(root: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const document = root.current?.ownerDocument;
    if (!document) return;
    const onKeyDown = (event: KeyboardEvent) => {
      if (!isFilterShortcut(event)) return;
      const filter = root.current?.querySelector<HTMLInputElement>('input[data-testid="filter"]');
      if (!filter) return;
      event.preventDefault();
      filter.focus();
      filter.select();
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);
}
