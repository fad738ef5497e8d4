/**
 * The panel's toolbar, laid out like the Network panel's: Record, Clear, Preserve log, the filter
 * box and selects, then export and import. It keeps to one line at any width: where the panel is
 * narrow (docked at the side), Record and Clear become icons (their names stay their accessible
 * names) and Preserve log, the selects, export and import move into the "More" menu. Each control
 * is rendered once; the stylesheet places it in the bar or in the menu.
 */

import { useEffect, useRef, useState } from 'preact/hooks';
import { FILTER_HELP, type FilterChoices, type FilterCriteria } from '../model/filter';
import type { RowOutcome } from '../model/timeline';
import type { TabSettings } from '../shared/protocol';
import { outcomeLabel } from './format';

export interface ToolbarProps {
  /** Whether a tab feeds the panel now (Record and Preserve log act on it). */
  readonly live: boolean;
  /**
   * Whether the panel can record at all: false in the standalone viewer (and the panel opened
   * without a tab), which then shows neither Record nor Preserve log.
   */
  readonly attached: boolean;
  /** Whether there is anything to export. */
  readonly canExport: boolean;
  readonly settings: TabSettings;
  readonly criteria: FilterCriteria;
  readonly choices: FilterChoices;
  /** Why the text filter is not applied (an invalid regex). */
  readonly filterError: string | undefined;
  readonly onCriteria: (criteria: FilterCriteria) => void;
  readonly onSettings: (settings: Partial<TabSettings>) => void;
  readonly onClear: () => void;
  readonly onExportJson: () => void;
  readonly onExportHar: () => void;
  readonly onImport: () => void;
}

export function Toolbar(props: ToolbarProps) {
  const { criteria, filterError, onCriteria } = props;
  return (
    <div class="rl-toolbar" role="toolbar" aria-label="Retryline">
      {props.attached && <RecordButton {...props} />}
      <button
        type="button"
        class="rl-button rl-clear"
        data-testid="clear"
        title="Clear"
        onClick={props.onClear}
      >
        <span class="rl-icon" aria-hidden="true">
          ⊘
        </span>
        <span class="rl-button__label">Clear</span>
      </button>
      <input
        type="search"
        class={`rl-filter${filterError ? ' rl-filter--invalid' : ''}`}
        data-testid="filter"
        placeholder="Filter: text, is:retried, -word, re:… (/)"
        aria-label="Filter requests"
        aria-keyshortcuts="/ Control+F"
        aria-invalid={filterError !== undefined}
        title={filterError ?? FILTER_HELP}
        value={criteria.text}
        onInput={(event) => onCriteria({ ...criteria, text: event.currentTarget.value })}
      />
      {filterError ? (
        <span class="rl-toolbar__error" role="alert" data-testid="filter-error" title={filterError}>
          {filterError}
        </span>
      ) : null}
      <MoreMenu {...props} />
    </div>
  );
}

/** Record, as a dot and a word (the word only for screen readers where the panel is narrow). */
function RecordButton({ live, settings, onSettings }: ToolbarProps) {
  const recording = settings.record && live;
  return (
    <button
      type="button"
      class={`rl-button rl-record${recording ? ' rl-record--on' : ''}`}
      data-testid="record"
      aria-pressed={recording}
      disabled={!live}
      title={live ? (settings.record ? 'Stop recording' : 'Record') : 'Recording needs the inspected page'}
      onClick={() => onSettings({ record: !settings.record })}
    >
      <span class="rl-record__dot" aria-hidden="true" />
      <span class="rl-button__label">{recording ? 'Recording' : 'Record'}</span>
    </button>
  );
}

/**
 * Preserve log, the selects, export and import: in the bar where it is wide, else in a menu
 * opened by "⋯" (the stylesheet decides which; the items are the same elements either way).
 */
function MoreMenu(props: ToolbarProps) {
  const { live, attached, settings } = props;
  const [open, setOpen] = useState(false);
  const menu = useRef<HTMLDivElement>(null);
  useDismiss(menu, open, () => setOpen(false));
  // A menu item that acts closes the menu, as menus do.
  const act = (action: () => void) => () => {
    setOpen(false);
    action();
  };
  return (
    <div class="rl-toolbar__more" ref={menu}>
      <button
        type="button"
        class="rl-button rl-toolbar__more-button"
        data-testid="more"
        aria-label="More: filters, export and import"
        aria-expanded={open}
        aria-controls="rl-toolbar-menu"
        title="Filters, export and import"
        onClick={() => setOpen(!open)}
      >
        ⋯
      </button>
      <div id="rl-toolbar-menu" class={`rl-toolbar__items${open ? ' rl-toolbar__items--open' : ''}`}>
        {attached && (
          <label class="rl-check" title="Keep requests across page reloads and navigations">
            <input
              type="checkbox"
              data-testid="preserve-log"
              checked={settings.preserveLog}
              disabled={!live}
              onChange={(event) => props.onSettings({ preserveLog: event.currentTarget.checked })}
            />
            Preserve log
          </label>
        )}
        <FilterSelects {...props} />
        <span class="rl-toolbar__spacer" />
        <button
          type="button"
          class="rl-button"
          data-testid="export-json"
          disabled={!props.canExport}
          onClick={act(props.onExportJson)}
        >
          Export JSON
        </button>
        <button
          type="button"
          class="rl-button"
          data-testid="export-har"
          disabled={!props.canExport}
          onClick={act(props.onExportHar)}
        >
          Export HAR
        </button>
        <button type="button" class="rl-button" data-testid="import" onClick={act(props.onImport)}>
          Import
        </button>
      </div>
    </div>
  );
}

/**
 * Closes the open menu on a press outside it, or on Escape (focus then goes back to its button,
 * if it was in the menu).
 */
function useDismiss(menu: { current: HTMLElement | null }, open: boolean, close: () => void): void {
  useEffect(() => {
    if (!open) return;
    const onPointer = (event: Event) => {
      if (!menu.current?.contains(event.target as Node)) close();
    };
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      if (menu.current?.contains(document.activeElement)) menu.current.querySelector('button')?.focus();
      close();
    };
    document.addEventListener('pointerdown', onPointer);
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('pointerdown', onPointer);
      document.removeEventListener('keydown', onKey);
    };
  }, [open]);
}

// Select values are prefixed, so "any" (`''`) cannot collide with a real value such as the empty origin.
const ANY = '';
const encode = (value: string) => `=${value}`;
const decode = (value: string) => (value === ANY ? undefined : value.slice(1));

function FilterSelects({ criteria, choices, onCriteria }: ToolbarProps) {
  const set = (change: Partial<Record<'origin' | 'client' | 'outcome', string | undefined>>) => {
    const next: Record<string, unknown> = { ...criteria, ...change };
    for (const key of Object.keys(change)) if (next[key] === undefined) delete next[key];
    onCriteria(next as unknown as FilterCriteria);
  };
  return (
    <>
      <select
        class="rl-select"
        data-testid="origin-filter"
        aria-label="Origin"
        value={criteria.origin === undefined ? ANY : encode(criteria.origin)}
        onChange={(event) => set({ origin: decode(event.currentTarget.value) })}
      >
        <option value={ANY}>All origins</option>
        {choices.origins.map((origin) => (
          <option key={origin} value={encode(origin)}>
            {origin === '' ? '(no URL)' : origin}
          </option>
        ))}
      </select>
      <select
        class="rl-select"
        data-testid="client-filter"
        aria-label="Client"
        value={criteria.client === undefined ? ANY : encode(criteria.client)}
        onChange={(event) => set({ client: decode(event.currentTarget.value) })}
      >
        <option value={ANY}>All clients</option>
        {choices.clients.map((client) => (
          <option key={client} value={encode(client)}>
            {client}
          </option>
        ))}
      </select>
      <select
        class="rl-select"
        data-testid="outcome-filter"
        aria-label="Outcome"
        value={criteria.outcome === undefined ? ANY : encode(criteria.outcome)}
        onChange={(event) => set({ outcome: decode(event.currentTarget.value) as RowOutcome | undefined })}
      >
        <option value={ANY}>All outcomes</option>
        {choices.outcomes.map((outcome) => (
          <option key={outcome} value={encode(outcome)}>
            {outcomeLabel(outcome)}
          </option>
        ))}
      </select>
    </>
  );
}
