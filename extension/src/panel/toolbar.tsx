/**
 * The panel's toolbar, laid out like the Network panel's: Record, Clear, Preserve log, the filter
 * box and selects, then export and import.
 */

import { FILTER_HELP, type FilterChoices, type FilterCriteria } from '../model/filter';
import type { RowOutcome } from '../model/timeline';
import type { TabSettings } from '../shared/protocol';
import { outcomeLabel } from './format';

export interface ToolbarProps {
  /** Whether a tab feeds the panel (Record and Preserve log act on it). */
  readonly live: boolean;
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

// Select values are prefixed, so "any" (`''`) cannot collide with a real value such as the empty origin.
const ANY = '';
const encode = (value: string) => `=${value}`;
const decode = (value: string) => (value === ANY ? undefined : value.slice(1));

export function Toolbar(props: ToolbarProps) {
  const { live, settings, criteria, choices, filterError, onCriteria, onSettings } = props;
  const set = (change: Partial<Record<'origin' | 'client' | 'outcome', string | undefined>>) => {
    const next: Record<string, unknown> = { ...criteria, ...change };
    for (const key of Object.keys(change)) if (next[key] === undefined) delete next[key];
    onCriteria(next as unknown as FilterCriteria);
  };
  return (
    <div class="rl-toolbar" role="toolbar" aria-label="Retryline">
      <button
        type="button"
        class={`rl-button rl-record${settings.record && live ? ' rl-record--on' : ''}`}
        data-testid="record"
        aria-pressed={settings.record && live}
        disabled={!live}
        title={live ? (settings.record ? 'Stop recording' : 'Record') : 'Recording needs an inspected page'}
        onClick={() => onSettings({ record: !settings.record })}
      >
        <span class="rl-record__dot" aria-hidden="true" />
        {settings.record && live ? 'Recording' : 'Record'}
      </button>
      <button type="button" class="rl-button" data-testid="clear" title="Clear" onClick={props.onClear}>
        Clear
      </button>
      <label class="rl-check" title="Keep requests across page reloads and navigations">
        <input
          type="checkbox"
          data-testid="preserve-log"
          checked={settings.preserveLog}
          disabled={!live}
          onChange={(event) => onSettings({ preserveLog: event.currentTarget.checked })}
        />
        Preserve log
      </label>
      <span class="rl-toolbar__sep" />
      <input
        type="search"
        class={`rl-filter${filterError ? ' rl-filter--invalid' : ''}`}
        data-testid="filter"
        placeholder="Filter (text, or re:pattern)"
        aria-label="Filter requests"
        aria-invalid={filterError !== undefined}
        title={filterError ?? FILTER_HELP}
        value={criteria.text}
        onInput={(event) => onCriteria({ ...criteria, text: event.currentTarget.value })}
      />
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
      {filterError ? (
        <span class="rl-toolbar__error" role="alert" data-testid="filter-error">
          {filterError}
        </span>
      ) : null}
      <span class="rl-toolbar__spacer" />
      <button type="button" class="rl-button" data-testid="export-json" onClick={props.onExportJson}>
        Export JSON
      </button>
      <button type="button" class="rl-button" data-testid="export-har" onClick={props.onExportHar}>
        Export HAR
      </button>
      <button type="button" class="rl-button" data-testid="import" onClick={props.onImport}>
        Import
      </button>
    </div>
  );
}
