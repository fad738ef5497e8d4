/**
 * The panel: toolbar, per-origin lanes, the request list with its waterfall, and the detail pane
 * of the selected request. It runs on any {@link PanelSource}: a tab's live timeline, or a fixed
 * one (the standalone viewer, an imported file), so the same UI serves DevTools and `retryline view`.
 */

import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { sessionAxis } from '../model/axis';
import {
  exportFileName,
  MAX_IMPORT_BYTES,
  parseImport,
  TOO_LARGE_ERROR,
  toHar,
  toRecording,
} from '../model/export';
import { type FilterCriteria, filterChoices } from '../model/filter';
import { toggleTerm } from '../model/filter-terms';
import { appendTimeline, emptyTimeline, foldTimeline, type Timeline } from '../model/timeline';
import type { FaultRuleSet } from '../shared/faults';
import { mswSnippet } from '../shared/msw-snippet';
import type { PageState, TabSettings, TimelineEntry } from '../shared/protocol';
import { copyText } from './clipboard';
import { ColumnMenu, hiddenClasses } from './column-menu';
import { DetailPane } from './detail-pane';
import { Empty, LiveBanners } from './empty-state';
import { FaultsBanner, FaultsTab } from './faults-tab';
import { Lanes } from './lanes';
import { useColumns, useGuardStates, useListView, useSelection, widthStyle } from './list-state';
import { type PanelTab, PanelTabs, tabPanelProps } from './panel-tabs';
import { RequestList } from './request-list';
import { useShortcuts } from './shortcuts';
import { DEFAULT_SETTINGS, fetchRecording, type PanelSource, staticSource } from './sources';
import { StatusChips } from './status-chips';
import { Toolbar } from './toolbar';
import { useFaults } from './use-faults';

/** What the entries expose as `window.__retrylinePanel`, for the end-to-end test and the benchmark. */
export interface PanelApi {
  /** How many requests the list shows (after filters). */
  rows(): number;
  exportJson(): string;
  exportHar(): string;
  /** Imports a Recording or HAR, as the Import button does (errors show in the panel). */
  importText(text: string): void;
  /** The tab's fault rules as the Faults tab shows them, and the msw test its Export saves for them. */
  faults(): { readonly set: FaultRuleSet; readonly mswTest: string } | undefined;
}

export interface AppProps {
  readonly source: PanelSource;
  /** A recording to open at start (`?src=`); only same-origin URLs load. */
  readonly src?: string;
  readonly fetch?: typeof fetch;
  /** Receives the panel's API once mounted. */
  readonly onApi?: (api: PanelApi) => void;
  /** Saves an export. @default a download through a temporary link */
  readonly save?: (name: string, text: string, type: string) => void;
  /** The clock running requests are drawn up to. @default Date.now */
  readonly now?: () => number;
  /** Shows a URL in DevTools' Network panel; without it the detail pane offers no such button. */
  readonly reveal?: (url: string) => void;
  /** Puts text on the clipboard. @default navigator.clipboard, else a copy command */
  readonly copy?: (text: string) => Promise<void>;
}

interface Notice {
  readonly kind: 'error' | 'info';
  readonly text: string;
}

export function App(props: AppProps) {
  const { source } = props;
  const now = props.now ?? Date.now;
  const [active, setActive] = useState<PanelSource>(source);
  const [imported, setImported] = useState<string | undefined>(undefined);
  const [timeline, setTimeline] = useState<Timeline>(emptyTimeline);
  const [settings, setSettings] = useState<TabSettings>(DEFAULT_SETTINGS);
  const [connected, setConnected] = useState(true);
  const [notice, setNotice] = useState<Notice | undefined>(undefined);
  const [criteria, setCriteria] = useState<FilterCriteria>({ text: '' });
  const columns = useColumns();
  const { sort } = columns;
  // A live tab's: what the worker knows of its page, and how many requests its ring dropped.
  const [page, setPage] = useState<PageState | undefined>(undefined);
  const [evicted, setEvicted] = useState(0);
  const [clock, setClock] = useState(now);
  // The raw entries, for Export JSON: append-only between resets, so kept out of render state.
  const entries = useRef<TimelineEntry[]>([]);
  const fileInput = useRef<HTMLInputElement>(null);
  // Fault rules belong to the tab: kept (and bannered) while an imported file is viewed.
  const faults = useFaults(source);
  const [tab, setTab] = useState<PanelTab>('requests');

  useEffect(() => {
    // A new source replaces the old one's state; its first updates restore everything.
    return active.subscribe((update) => {
      switch (update.kind) {
        case 'reset': {
          entries.current = update.entries.slice();
          setTimeline(foldTimeline(update.entries));
          return;
        }
        case 'append':
          for (const entry of update.entries) entries.current.push(entry);
          setTimeline((current) => appendTimeline(current, update.entries));
          setClock(now());
          return;
        case 'settings':
          setSettings(update.settings);
          return;
        case 'status':
          setConnected(update.connected);
          return;
        case 'page':
          setPage(update.page);
          return;
        case 'evicted':
          setEvicted(update.evicted);
          return;
      }
    });
  }, [active]);

  // Running requests grow with the clock; tick only while there are some.
  const running = useMemo(() => timeline.rows.some((row) => row.outcome === 'pending'), [timeline]);
  useEffect(() => {
    if (!running || !active.live) return;
    const timer = setInterval(() => setClock(now()), 500);
    return () => clearInterval(timer);
  }, [running, active]);

  const { filter, rows, items } = useListView(timeline, criteria, sort);
  const choices = useMemo(() => filterChoices(timeline), [timeline.rows]);
  const attempts = useMemo(
    () => timeline.rows.reduce((sum, row) => sum + row.attempts.length, 0),
    [timeline.rows],
  );
  const { selectedKey, setSelectedKey, selected, select, openRow, closeDetail, focusToken } =
    useSelection(rows);
  const appRef = useRef<HTMLDivElement>(null);
  useShortcuts(appRef);

  const importText = useCallback((text: string, name = 'import') => {
    const result = parseImport(text);
    if ('error' in result) {
      setNotice({ kind: 'error', text: `Import failed: ${result.error}` });
      return;
    }
    select(undefined);
    setActive(staticSource(result.entries, name));
    setImported(name);
    setNotice(
      result.skipped > 0
        ? { kind: 'info', text: `Imported ${name}; ${result.skipped} invalid entries were skipped.` }
        : undefined,
    );
  }, []);

  const exportJson = () => JSON.stringify(toRecording(entries.current, active.label));
  const exportHar = () => JSON.stringify(toHar(timeline));

  // The API reads the latest render's values through a ref, so it is created only once.
  const faultsApi = () => faults && { set: faults.set, mswTest: mswSnippet(faults.set) };
  const latest = useRef({ rows: 0, exportJson, exportHar, importText, faultsApi });
  latest.current = { rows: rows.length, exportJson, exportHar, importText, faultsApi };
  useEffect(() => {
    props.onApi?.({
      rows: () => latest.current.rows,
      exportJson: () => latest.current.exportJson(),
      exportHar: () => latest.current.exportHar(),
      importText: (text) => latest.current.importText(text),
      faults: () => latest.current.faultsApi(),
    });
  }, []);

  useEffect(() => {
    if (props.src === undefined) return;
    let cancelled = false;
    const base = globalThis.location?.href ?? 'about:blank';
    void fetchRecording(props.src, base, props.fetch).then((result) => {
      if (cancelled) return;
      if ('error' in result) setNotice({ kind: 'error', text: result.error });
      else latest.current.importText(result.text, result.name);
    });
    return () => {
      cancelled = true;
    };
  }, [props.src]);

  const save = props.save ?? download;
  const importFile = async (file: File) => {
    // Read nothing that cannot be imported: a file over the limit in bytes is over it in text too
    // (UTF-8 has at least one byte per character), and reading 600 MB first would stall the panel.
    if (file.size > MAX_IMPORT_BYTES) {
      setNotice({ kind: 'error', text: `Import failed: ${TOO_LARGE_ERROR}` });
      return;
    }
    try {
      importText(await file.text(), file.name);
    } catch (error) {
      setNotice({
        kind: 'error',
        text: `Import failed: cannot read ${file.name}: ${(error as Error).message}`,
      });
    }
  };
  const onFile = (event: Event) => {
    const input = event.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    input.value = '';
    if (file) void importFile(file);
  };
  // A file dropped anywhere on the panel imports as the Import button does.
  const onDrop = (event: DragEvent) => {
    const file = event.dataTransfer?.files?.[0];
    if (!file) return;
    event.preventDefault();
    void importFile(file);
  };
  const onDragOver = (event: DragEvent) => {
    if (event.dataTransfer?.types.includes('Files')) event.preventDefault();
  };

  const live = active.live;
  // The Faults tab, where a tab feeds the panel and no imported file is in view.
  const shownTab = faults && live ? tab : undefined;
  const empty = timeline.rows.length === 0;
  // A recording's running requests end where it ends; a live tab's grow with the clock.
  const drawnUntil = live ? Math.max(clock, timeline.end ?? 0) : (timeline.end ?? 0);
  // One axis for the session (not for the rows in view), shared by the lanes and every row.
  const axis = useMemo(
    () => sessionAxis(timeline, live && running ? drawnUntil : undefined),
    [timeline.start, timeline.end, live, running, drawnUntil],
  );
  const guardStates = useGuardStates(timeline, drawnUntil);
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a file dropped anywhere on the panel imports (the Import button does the same from the keyboard).
    <div class="rl-app" ref={appRef} onDrop={onDrop} onDragOver={onDragOver} data-tab={shownTab}>
      {faults && shownTab && <PanelTabs tab={shownTab} onTab={setTab} rules={faults.set.rules.length} />}
      <Toolbar
        live={live}
        attached={source.live}
        canExport={!empty}
        settings={settings}
        criteria={criteria}
        choices={choices}
        filterError={filter.error}
        onCriteria={setCriteria}
        onSettings={(change) => active.updateSettings(change)}
        onClear={() => {
          select(undefined);
          active.clear();
        }}
        onExportJson={() => save(exportFileName('json'), exportJson(), 'application/json')}
        onExportHar={() => save(exportFileName('har'), exportHar(), 'application/json')}
        onImport={() => fileInput.current?.click()}
      />
      <input
        ref={fileInput}
        type="file"
        accept=".json,.har,application/json"
        data-testid="import-file"
        hidden
        onChange={onFile}
      />
      {imported !== undefined && (
        <div class="rl-banner" data-testid="imported">
          Viewing {imported}
          {source.live ? (
            <button
              type="button"
              class="rl-link"
              onClick={() => {
                setImported(undefined);
                select(undefined);
                setActive(source);
              }}
            >
              Back to the live page
            </button>
          ) : null}
        </div>
      )}
      {live && <LiveBanners connected={connected} record={settings.record} evicted={evicted} />}
      {faults && (
        <FaultsBanner
          set={faults.set}
          {...(shownTab === 'requests' ? { onShow: () => setTab('faults') } : {})}
        />
      )}
      {notice && (
        <div class={`rl-banner rl-banner--${notice.kind}`} role="alert" data-testid="notice">
          {notice.text}
          <button type="button" class="rl-link" onClick={() => setNotice(undefined)}>
            Dismiss
          </button>
        </div>
      )}
      {!empty && (
        <StatusChips
          rows={timeline.rows}
          text={criteria.text}
          onToggle={(term) => setCriteria({ ...criteria, text: toggleTerm(criteria.text, term) })}
        />
      )}
      <div class="rl-main" {...(shownTab ? tabPanelProps('requests') : {})}>
        {/* The lanes sit above the list, in its width, so they share its waterfall column. */}
        <div
          class={`rl-view${hiddenClasses(columns.hidden)}`}
          style={widthStyle(columns.widths, columns.hidden)}
        >
          {axis && <Lanes lanes={timeline.lanes} axis={axis} states={guardStates} />}
          {empty ? (
            <Empty live={live} page={page} onImport={() => fileInput.current?.click()} />
          ) : (
            <RequestList
              items={items}
              selectedKey={selectedKey}
              onSelect={(key) => {
                setSelectedKey(key);
              }}
              onOpen={openRow}
              onClose={closeDetail}
              focusToken={focusToken}
              sort={sort}
              onSort={columns.onSort}
              onColumnMenu={columns.openMenu}
              onResize={columns.resize}
              widths={columns.widths}
              axis={axis}
              now={drawnUntil}
              follow={live}
            />
          )}
          {columns.menu && (
            <ColumnMenu
              hidden={columns.hidden}
              at={columns.menu}
              onToggle={columns.toggle}
              onClose={columns.closeMenu}
            />
          )}
        </div>
        {selected && (
          <DetailPane
            row={selected}
            onClose={closeDetail}
            copy={props.copy ?? copyText}
            {...(props.reveal === undefined ? {} : { reveal: props.reveal })}
          />
        )}
      </div>
      {faults && shownTab && (
        <FaultsTab
          faults={faults}
          rows={timeline.rows}
          save={save}
          copy={props.copy ?? copyText}
          hidden={shownTab !== 'faults'}
        />
      )}
      <footer class="rl-status" data-testid="status">
        {rows.length === timeline.rows.length
          ? `${timeline.rows.length} requests`
          : `${rows.length} of ${timeline.rows.length} requests`}
        {` · ${attempts} attempts`}
      </footer>
    </div>
  );
}

/** Saves `text` as a file through a temporary object URL. */
function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  // The download has started by the next task; the URL is not needed after it.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}
