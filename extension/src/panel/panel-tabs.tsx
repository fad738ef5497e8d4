/**
 * The panel's tabs, Requests and Faults, shown where a tab feeds the panel: an ARIA tablist with
 * one tab stop, whose tabs the arrow keys, Home and End move between (moving selects, as in the
 * tab strips of DevTools itself).
 */

import { useRef } from 'preact/hooks';

export type PanelTab = 'requests' | 'faults';

const TABS: readonly PanelTab[] = ['requests', 'faults'];

const tabId = (tab: PanelTab) => `rl-tab-${tab}`;

/** What makes an element the panel of `tab`. */
export function tabPanelProps(tab: PanelTab) {
  return { role: 'tabpanel', id: `rl-tabpanel-${tab}`, 'aria-labelledby': tabId(tab) } as const;
}

/** The tab the key moves to from `tab`, if it is one the strip takes. */
function tabAfter(tab: PanelTab, key: string): PanelTab | undefined {
  const at = TABS.indexOf(tab);
  switch (key) {
    case 'ArrowRight':
      return TABS[(at + 1) % TABS.length];
    case 'ArrowLeft':
      return TABS[(at + TABS.length - 1) % TABS.length];
    case 'Home':
      return TABS[0];
    case 'End':
      return TABS[TABS.length - 1];
    default:
      return undefined;
  }
}

export interface PanelTabsProps {
  readonly tab: PanelTab;
  readonly onTab: (tab: PanelTab) => void;
  /** How many fault rules the tab has (shown on the Faults tab when there are some). */
  readonly rules: number;
}

export function PanelTabs({ tab, onTab, rules }: PanelTabsProps) {
  const strip = useRef<HTMLDivElement>(null);
  const onKeyDown = (event: KeyboardEvent) => {
    const next = tabAfter(tab, event.key);
    if (next === undefined) return;
    event.preventDefault();
    onTab(next);
    strip.current?.querySelector<HTMLElement>(`#${tabId(next)}`)?.focus();
  };
  const labels: Record<PanelTab, string> = {
    requests: 'Requests',
    faults: rules > 0 ? `Faults (${rules})` : 'Faults',
  };
  return (
    <div class="rl-tabs" role="tablist" aria-label="Panel" ref={strip} onKeyDown={onKeyDown}>
      {TABS.map((each) => (
        <button
          key={each}
          type="button"
          role="tab"
          class="rl-tab"
          id={tabId(each)}
          aria-selected={each === tab}
          aria-controls={tabPanelProps(each).id}
          tabIndex={each === tab ? 0 : -1}
          data-testid={`tab-${each}`}
          onClick={() => onTab(each)}
        >
          {labels[each]}
        </button>
      ))}
    </div>
  );
}
