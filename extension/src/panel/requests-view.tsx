/**
 * The Requests tab's body: the per-origin lanes over the request list (or the empty state), the
 * column menu, and the selected request's details; and the status line under it. Everything in
 * it is drawn on one time axis for the whole session.
 */

import { useMemo } from 'preact/hooks';
import { sessionAxis } from '../model/axis';
import type { RequestRow } from '../model/timeline';
import { ColumnMenu, hiddenClasses } from './column-menu';
import { DetailPane } from './detail-pane';
import { Empty } from './empty-state';
import { Lanes } from './lanes';
import { type Columns, type Selection, useGuardStates, widthStyle } from './list-state';
import { tabPanelProps } from './panel-tabs';
import { type ListItem, RequestList } from './request-list';
import type { SourceState } from './use-source-state';

export interface RequestsViewProps {
  readonly state: SourceState;
  /** Whether a tab feeds the panel now (running requests grow with the clock, the list follows new ones). */
  readonly live: boolean;
  /** What the list draws: the rows the filter keeps, in the sort's order. */
  readonly items: readonly ListItem[];
  readonly columns: Columns;
  readonly selection: Selection;
  /** Whether the panel has tabs, this view being the Requests tab's panel. */
  readonly tabbed: boolean;
  readonly onImport: () => void;
  readonly copy: (text: string) => Promise<void>;
  readonly reveal: ((url: string) => void) | undefined;
  /** Has the tab's page send a request again; absent where no page feeds the panel. */
  readonly replay: ((row: RequestRow) => void) | undefined;
}

export function RequestsView(props: RequestsViewProps) {
  const { state, live, columns, selection } = props;
  const { timeline, running } = state;
  // A recording's running requests end where it ends; a live tab's grow with the clock.
  const drawnUntil = live ? Math.max(state.clock, timeline.end ?? 0) : (timeline.end ?? 0);
  // One axis for the session (not for the rows in view), shared by the lanes and every row.
  const axis = useMemo(
    () => sessionAxis(timeline, live && running ? drawnUntil : undefined),
    [timeline.start, timeline.end, live, running, drawnUntil],
  );
  const guardStates = useGuardStates(timeline, drawnUntil);
  return (
    <div class="rl-main" {...(props.tabbed ? tabPanelProps('requests') : {})}>
      {/* The lanes sit above the list, in its width, so they share its waterfall column. */}
      <div
        class={`rl-view${hiddenClasses(columns.hidden)}`}
        style={widthStyle(columns.widths, columns.hidden)}
      >
        {axis && <Lanes lanes={timeline.lanes} axis={axis} states={guardStates} />}
        {timeline.rows.length === 0 ? (
          <Empty live={live} page={state.page} onImport={props.onImport} />
        ) : (
          <RequestList
            items={props.items}
            selectedKey={selection.selectedKey}
            onSelect={selection.setSelectedKey}
            onOpen={selection.openRow}
            onClose={selection.closeDetail}
            focusToken={selection.focusToken}
            sort={columns.sort}
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
      {selection.selected && (
        <DetailPane
          row={selection.selected}
          onClose={selection.closeDetail}
          copy={props.copy}
          {...(props.reveal === undefined ? {} : { reveal: props.reveal })}
          {...(props.replay === undefined ? {} : { replay: props.replay })}
          navigations={timeline.navigations}
          page={state.page}
        />
      )}
    </div>
  );
}

/** The status line: how many requests the list shows of how many, and their attempts. */
export function StatusLine(props: { readonly shown: number; readonly rows: readonly RequestRow[] }) {
  const { shown, rows } = props;
  const attempts = useMemo(() => rows.reduce((sum, row) => sum + row.attempts.length, 0), [rows]);
  return (
    <footer class="rl-status" data-testid="status">
      {shown === rows.length ? `${rows.length} requests` : `${shown} of ${rows.length} requests`}
      {` · ${attempts} attempts`}
    </footer>
  );
}
