/**
 * The panel: toolbar, per-origin lanes, the request list with its waterfall, and the detail pane
 * of the selected request. It runs on any {@link PanelSource}: a tab's live timeline, or a fixed
 * one (the standalone viewer, an imported file), so the same UI serves DevTools and `retryline view`.
 */

import { useMemo, useRef, useState } from 'preact/hooks';
import { type FilterCriteria, filterChoices } from '../model/filter';
import { toggleTerm } from '../model/filter-terms';
import { Banners, type Notice } from './banners';
import { copyText } from './clipboard';
import { download } from './download';
import { FaultsTab } from './faults-tab';
import { useColumns, useListView, useSelection } from './list-state';
import { type PanelApi, usePanelApi } from './panel-api';
import { type PanelTab, PanelTabs } from './panel-tabs';
import { RequestsView, StatusLine } from './requests-view';
import { useShortcuts } from './shortcuts';
import type { PanelSource } from './sources';
import { StatusChips } from './status-chips';
import { Toolbar } from './toolbar';
import { useFaults } from './use-faults';
import { type Save, useImportExport, useRecordingAtStart, useViewedSource } from './use-import-export';
import { useSourceState } from './use-source-state';

export type { PanelApi } from './panel-api';

export interface AppProps {
  readonly source: PanelSource;
  /** A recording to open at start (`?src=`); only same-origin URLs load. */
  readonly src?: string;
  readonly fetch?: typeof fetch;
  /** Receives the panel's API once mounted. */
  readonly onApi?: (api: PanelApi) => void;
  /** Saves an export. @default a download through a temporary link */
  readonly save?: Save;
  /** The clock running requests are drawn up to. @default Date.now */
  readonly now?: () => number;
  /** Shows a URL in DevTools' Network panel; without it the detail pane offers no such button. */
  readonly reveal?: (url: string) => void;
  /** Puts text on the clipboard. @default navigator.clipboard, else a copy command */
  readonly copy?: (text: string) => Promise<void>;
}

export function App(props: AppProps) {
  const { source } = props;
  const save = props.save ?? download;
  const copy = props.copy ?? copyText;
  const columns = useColumns();
  // Fault rules belong to the tab: kept (and bannered) while an imported file is viewed.
  const faults = useFaults(source);
  const viewed = useViewedSource(source);
  const { active } = viewed;
  const live = active.live;
  const state = useSourceState(active, props.now ?? Date.now);
  const { timeline } = state;
  const [notice, setNotice] = useState<Notice | undefined>(undefined);
  const [criteria, setCriteria] = useState<FilterCriteria>({ text: '' });
  const [tab, setTab] = useState<PanelTab>('requests');
  // The Faults tab, where a tab feeds the panel and no imported file is in view.
  const shownTab = faults && live ? tab : undefined;
  const { filter, rows, items } = useListView(timeline, criteria, columns.sort);
  const choices = useMemo(() => filterChoices(timeline), [timeline.rows]);
  const selection = useSelection(rows);
  const appRef = useRef<HTMLDivElement>(null);
  useShortcuts(appRef, { hidden: shownTab === 'faults', show: () => setTab('requests') });
  const transfer = useImportExport({ viewed, state, select: selection.select, notify: setNotice, save });
  usePanelApi(props.onApi, { ...transfer, rows: rows.length, faults });
  useRecordingAtStart(props.src, props.fetch, transfer.importText, setNotice);

  const empty = timeline.rows.length === 0;
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: a file dropped anywhere on the panel imports (the Import button does the same from the keyboard).
    <div
      class="rl-app"
      ref={appRef}
      onDrop={transfer.onDrop}
      onDragOver={transfer.onDragOver}
      data-tab={shownTab}
    >
      {faults && shownTab && <PanelTabs tab={shownTab} onTab={setTab} rules={faults.set.rules.length} />}
      <Toolbar
        live={live}
        attached={source.live}
        canExport={!empty}
        settings={state.settings}
        criteria={criteria}
        choices={choices}
        filterError={filter.error}
        onCriteria={setCriteria}
        onSettings={(change) => active.updateSettings(change)}
        onClear={() => {
          selection.select(undefined);
          active.clear();
        }}
        onExportJson={transfer.saveJson}
        onExportHar={transfer.saveHar}
        onImport={transfer.chooseFile}
      />
      <input
        ref={transfer.fileInput}
        type="file"
        accept=".json,.har,application/json"
        data-testid="import-file"
        hidden
        onChange={transfer.onFile}
      />
      <Banners
        imported={viewed.imported}
        onBack={source.live ? transfer.back : undefined}
        live={
          live
            ? { connected: state.connected, record: state.settings.record, evicted: state.evicted }
            : undefined
        }
        faults={faults?.set}
        onShowFaults={shownTab === 'requests' ? () => setTab('faults') : undefined}
        notice={notice}
        onDismiss={() => setNotice(undefined)}
      />
      {!empty && (
        <StatusChips
          rows={timeline.rows}
          text={criteria.text}
          onToggle={(term) => setCriteria({ ...criteria, text: toggleTerm(criteria.text, term) })}
        />
      )}
      <RequestsView
        state={state}
        live={live}
        items={items}
        columns={columns}
        selection={selection}
        tabbed={shownTab !== undefined}
        onImport={transfer.chooseFile}
        copy={copy}
        reveal={props.reveal}
        replay={active.replay && ((row) => active.replay?.(row))}
      />
      {faults && shownTab && (
        <FaultsTab
          faults={faults}
          rows={timeline.rows}
          save={save}
          copy={copy}
          hidden={shownTab !== 'faults'}
        />
      )}
      <StatusLine shown={rows.length} rows={timeline.rows} />
    </div>
  );
}
