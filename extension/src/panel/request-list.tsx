// biome-ignore-all lint/a11y/useSemanticElements: a virtualised list of fixed-height rows laid out by CSS grid cannot be a <table> (its rows are positioned inside a scroller, the header outside it); the ARIA grid roles say what a table would.
// biome-ignore-all lint/a11y/useFocusableInteractive: the grid has one tab stop, the selected row (a roving tabindex); its cells and headers are read, not focused, as the ARIA grid pattern allows for a row-based grid.
/**
 * The request list, virtualised: rows have one fixed height, so the rows in view follow from the
 * scroll position alone, and only those (plus an overscan above and below) are in the DOM. Ten
 * thousand requests cost the same to render as forty.
 */

import type { Ref } from 'preact';
import { useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Axis } from '../model/axis';
import type { SortColumn, SortState } from '../model/sort';
import type { NavigationMark, RequestRow } from '../model/timeline';
import { type ColumnWidths, type HideableColumn, MAX_COLUMN, MIN_COLUMN } from './column-menu';
import {
  attemptsCount,
  formatMs,
  INJECTED_SIGN,
  outcomeLabel,
  outcomeShort,
  rowStatusShort,
  rowStatusTitle,
  shortName,
  truncationText,
} from './format';
import { useGridKeys } from './grid-keys';
import { useWidth } from './use-width';
import { Waterfall, WaterfallAxis } from './waterfall';

export const ROW_HEIGHT = 24;
/** Rows rendered beyond each edge of the viewport, so a fast scroll shows no blank. */
export const OVERSCAN = 8;
/** The viewport height assumed before the list is measured (or where layout gives none, as in tests). */
const FALLBACK_HEIGHT = 600;

/** A line of the list: a request, or a navigation separator. */
export type ListItem =
  | { readonly kind: 'row'; readonly row: RequestRow }
  | { readonly kind: 'navigation'; readonly navigation: NavigationMark };

/** The rows with each navigation before the first row that came after it. */
export function listItems(rows: readonly RequestRow[], navigations: readonly NavigationMark[]): ListItem[] {
  const items: ListItem[] = [];
  let nav = 0;
  for (const row of rows) {
    while (nav < navigations.length && (navigations[nav] as NavigationMark).beforeRow <= row.index) {
      items.push({ kind: 'navigation', navigation: navigations[nav++] as NavigationMark });
    }
    items.push({ kind: 'row', row });
  }
  while (nav < navigations.length)
    items.push({ kind: 'navigation', navigation: navigations[nav++] as NavigationMark });
  return items;
}

export interface RequestListProps {
  readonly items: readonly ListItem[];
  /** The selected row's {@link RequestRow.key}. */
  readonly selectedKey: string | undefined;
  /** Moves the selection (arrow keys, Home/End, Page Up/Down). */
  readonly onSelect: (key: string | undefined) => void;
  /** Opens a row's details (a click, Enter). */
  readonly onOpen: (key: string) => void;
  /** Closes the details (Escape); the focus stays on the row. */
  readonly onClose: () => void;
  /** Bumped to move the focus to the selected row (when the detail pane closes). */
  readonly focusToken?: number;
  /** The session's axis, which every row (and lane) is drawn on. */
  readonly axis: Axis | undefined;
  /** The time running requests are drawn up to. */
  readonly now: number;
  /** Keep the newest rows in view while the list is scrolled to its end (a live tab). @default false */
  readonly follow?: boolean;
  readonly sort?: SortState | undefined;
  /** A header was clicked (or Enter pressed on it). Without it the headers do not sort. */
  readonly onSort?: (column: SortColumn) => void;
  /** Opens the column menu at a point (px from the view's top left): right-click or Shift+F10 on the header. */
  readonly onColumnMenu?: (at: { readonly x: number; readonly y: number }) => void;
  /** A column's edge was dragged: its new width in px. Without it the columns do not resize. */
  readonly onResize?: (column: HideableColumn, px: number) => void;
  /** The widths the user set. */
  readonly widths?: ColumnWidths;
}

/**
 * The list as an ARIA grid: a header row and one row per request (and navigation), each with its
 * `aria-rowindex` in the whole list, since only the rows in view are in the DOM. The selected row
 * is the one focusable row (a roving tab stop), so Tab enters the list at it.
 */
export function RequestList(props: RequestListProps) {
  const { items, selectedKey, onSelect, axis, now, follow = false } = props;
  const [axisRef, width] = useWidth<HTMLDivElement>();
  const { scroller, viewport, first, last, selectedAt, onScroll } = useListWindow(items, selectedKey, follow);
  const visible = items.slice(first, last);

  const onKeyDown = useGridKeys({
    items,
    selectedKey,
    selectedAt,
    page: Math.max(1, Math.floor(viewport / ROW_HEIGHT) - 1),
    focusToken: props.focusToken,
    scroller,
    onSelect,
    onOpen: props.onOpen,
    onClose: props.onClose,
  });

  // The row Tab lands on: the selected one, else the first drawn.
  const firstRow = visible.find((item) => item.kind === 'row');
  const tabStop =
    selectedAt >= first && selectedAt < last
      ? selectedKey
      : firstRow?.kind === 'row'
        ? firstRow.row.key
        : undefined;

  return (
    <div
      class="rl-list"
      role="grid"
      aria-label="Requests"
      aria-rowcount={items.length + 1}
      aria-multiselectable="false"
      aria-keyshortcuts="ArrowUp ArrowDown Home End PageUp PageDown Enter Escape"
      onKeyDown={onKeyDown}
    >
      <ListHeader
        axis={axis}
        width={width}
        axisRef={axisRef}
        sort={props.sort}
        onSort={props.onSort}
        onColumnMenu={props.onColumnMenu}
        onResize={props.onResize}
        widths={props.widths}
      />
      <div
        class="rl-list__scroller"
        ref={scroller}
        data-testid="list-scroller"
        // Scrolling is the only thing done to it directly; focus goes to the rows.
        tabIndex={-1}
        onScroll={onScroll}
      >
        <div class="rl-list__spacer" role="presentation" style={{ height: `${items.length * ROW_HEIGHT}px` }}>
          <div
            class="rl-list__window"
            role="rowgroup"
            style={{ transform: `translateY(${first * ROW_HEIGHT}px)` }}
          >
            <ListRows
              items={visible}
              offset={first}
              axis={axis}
              now={now}
              width={width}
              selectedKey={selectedKey}
              tabStop={tabStop}
              onOpen={props.onOpen}
            />
          </div>
        </div>
      </div>
    </div>
  );
}

/**
 * Which items are drawn: those in the scroller's height at its position, and `OVERSCAN` more on
 * each side. New rows are followed while the list is at its end (a live tab), and a selection
 * moved by keyboard is scrolled into view and drawn there at once.
 */
function useListWindow(items: readonly ListItem[], selectedKey: string | undefined, follow: boolean) {
  const scroller = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(0);
  // Follow new requests while the user is at the bottom, as the Network panel does.
  const atBottom = useRef(follow);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element) return;
    const measure = () => setHeight(element.clientHeight);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element || !follow || !atBottom.current) return;
    const bottom = Math.max(0, items.length * ROW_HEIGHT - element.clientHeight);
    if (element.scrollTop !== bottom && element.clientHeight > 0) {
      element.scrollTop = bottom;
      setScrollTop(bottom);
    }
  }, [items.length]);

  const viewport = height > 0 ? height : FALLBACK_HEIGHT;
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(items.length, Math.ceil((scrollTop + viewport) / ROW_HEIGHT) + OVERSCAN);

  const selectedAt = useMemo(
    () => items.findIndex((item) => item.kind === 'row' && item.row.key === selectedKey),
    [items, selectedKey],
  );
  // Keep the selection in view when it moves by keyboard, and draw the rows there at once.
  useLayoutEffect(() => {
    const element = scroller.current;
    if (!element || selectedAt < 0) return;
    const top = selectedAt * ROW_HEIGHT;
    const shown = element.clientHeight > 0 ? element.clientHeight : FALLBACK_HEIGHT;
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + ROW_HEIGHT > element.scrollTop + shown) element.scrollTop = top + ROW_HEIGHT - shown;
    if (element.scrollTop !== scrollTop) setScrollTop(element.scrollTop);
  }, [selectedAt]);

  const onScroll = (event: Event) => {
    const element = event.currentTarget as HTMLDivElement;
    atBottom.current = element.scrollTop + element.clientHeight >= element.scrollHeight - ROW_HEIGHT;
    setScrollTop(element.scrollTop);
  };
  return { scroller, viewport, first, last, selectedAt, onScroll };
}

interface ListRowsProps {
  /** The items drawn, from the list's item `offset`. */
  readonly items: readonly ListItem[];
  readonly offset: number;
  readonly axis: Axis | undefined;
  readonly now: number;
  readonly width: number | undefined;
  readonly selectedKey: string | undefined;
  readonly tabStop: string | undefined;
  readonly onOpen: (key: string) => void;
}

/** The rows in view (and the overscan), each with its place in the whole grid (the header is 1). */
function ListRows({ items, offset, axis, now, width, selectedKey, tabStop, onOpen }: ListRowsProps) {
  return (
    <>
      {items.map((item, at) =>
        item.kind === 'navigation' ? (
          <div
            key={`nav-${item.navigation.t}-${item.navigation.beforeRow}`}
            class="rl-separator"
            role="row"
            aria-rowindex={offset + at + 2}
            data-testid="navigation"
          >
            <span role="gridcell">Navigated to {item.navigation.url}</span>
          </div>
        ) : axis ? (
          <Row
            key={item.row.key}
            row={item.row}
            axis={axis}
            now={now}
            width={width}
            rowIndex={offset + at + 2}
            // Striped by place in the whole list, so the stripes stay with their rows as it scrolls.
            alt={(offset + at) % 2 === 1}
            selected={item.row.key === selectedKey}
            tabStop={item.row.key === tabStop}
            onOpen={onOpen}
          />
        ) : null,
      )}
    </>
  );
}

/** The columns' headers, in the grid's first row; each sorts the list when it can. */
const COLUMNS: readonly {
  readonly className: string;
  readonly label: string;
  readonly sort: SortColumn;
  readonly title?: string;
  /** A fixed-width column the user can resize (and hide); the URL, Name and waterfall share the rest. */
  readonly fixed?: HideableColumn;
}[] = [
  { className: 'rl-c-status', label: 'Status', sort: 'status', fixed: 'status' },
  { className: 'rl-c-method', label: 'Method', sort: 'method', fixed: 'method' },
  { className: 'rl-c-url', label: 'URL', sort: 'name' },
  { className: 'rl-c-name', label: 'Name', sort: 'name' },
  { className: 'rl-c-client', label: 'Client', sort: 'client', fixed: 'client' },
  { className: 'rl-c-attempts', label: '#', sort: 'attempts', title: 'Attempts', fixed: 'attempts' },
  { className: 'rl-c-outcome', label: 'Outcome', sort: 'outcome', fixed: 'outcome' },
  { className: 'rl-c-time', label: 'Time', sort: 'time', fixed: 'time' },
];

/** A column's right edge, dragged (or moved with the arrow keys, 8 px a press) to resize it. */
function ResizeHandle(props: {
  readonly column: HideableColumn;
  readonly label: string;
  /** Its width in px, as the user set it or as the stylesheet has it at its widest. */
  readonly width: number;
  readonly onResize: (column: HideableColumn, px: number) => void;
}) {
  // Drawn widths can differ from the set one (narrower layouts have their own): a drag starts from what is drawn.
  const widthOf = (handle: HTMLElement) => handle.parentElement?.getBoundingClientRect().width || props.width;
  return (
    <span
      class="rl-resize"
      role="separator"
      aria-orientation="vertical"
      aria-label={`Resize ${props.label}`}
      title="Drag (or ← →) to resize"
      data-testid={`resize-${props.column}`}
      aria-valuenow={props.width}
      aria-valuemin={MIN_COLUMN}
      aria-valuemax={MAX_COLUMN}
      tabIndex={0}
      onPointerDown={(event) => {
        const handle = event.currentTarget;
        const start = { x: event.clientX, width: widthOf(handle) };
        event.preventDefault();
        try {
          // Keeps the moves coming while the pointer leaves the thin handle.
          handle.setPointerCapture(event.pointerId);
        } catch {
          // Not an active pointer (Firefox throws for one it does not know): the drag still works over the handle.
        }
        const move = (moved: PointerEvent) =>
          props.onResize(props.column, start.width + moved.clientX - start.x);
        const up = () => {
          handle.removeEventListener('pointermove', move);
          handle.removeEventListener('pointerup', up);
        };
        handle.addEventListener('pointermove', move);
        handle.addEventListener('pointerup', up);
      }}
      onKeyDown={(event) => {
        if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
        event.preventDefault();
        const step = event.key === 'ArrowRight' ? 8 : -8;
        props.onResize(props.column, props.width + step);
      }}
    />
  );
}

interface ListHeaderProps {
  readonly axis: Axis | undefined;
  readonly width: number | undefined;
  readonly axisRef: Ref<HTMLDivElement>;
  readonly sort: SortState | undefined;
  readonly onSort: ((column: SortColumn) => void) | undefined;
  readonly onColumnMenu: ((at: { readonly x: number; readonly y: number }) => void) | undefined;
  readonly onResize: ((column: HideableColumn, px: number) => void) | undefined;
  readonly widths: ColumnWidths | undefined;
}

/** The fixed columns' widths in theme.css at the widest layout (what a separator reports before a drag). */
const DEFAULT_WIDTHS: Readonly<Record<HideableColumn, number>> = {
  status: 56,
  method: 56,
  client: 60,
  attempts: 30,
  outcome: 100,
  time: 64,
};

/** A point in px from the top left of the view that holds `element` (where the menu is placed). */
function inView(element: Element, x: number, y: number): { x: number; y: number } {
  const view = element.closest('.rl-view')?.getBoundingClientRect();
  return view ? { x: x - view.left, y: y - view.top } : { x, y };
}

function ListHeader(props: ListHeaderProps) {
  const { axis, width, axisRef, sort, onSort, onColumnMenu, onResize, widths } = props;
  const ariaSort = (column: SortColumn) =>
    sort?.column === column ? sort.direction : onSort ? ('none' as const) : undefined;
  return (
    <div
      class="rl-list__header rl-cols"
      role="row"
      aria-rowindex={1}
      title={onColumnMenu ? 'Click to sort; right-click (or Shift+F10) to choose the columns' : undefined}
      onContextMenu={(event) => {
        if (!onColumnMenu) return;
        event.preventDefault();
        onColumnMenu(inView(event.currentTarget, event.clientX, event.clientY));
      }}
      onKeyDown={(event) => {
        if (!onColumnMenu || !((event.shiftKey && event.key === 'F10') || event.key === 'ContextMenu'))
          return;
        event.preventDefault();
        const box = (event.target as HTMLElement).getBoundingClientRect();
        onColumnMenu(inView(event.currentTarget, box.left, box.bottom));
      }}
    >
      {COLUMNS.map((column) => (
        <span
          key={column.className}
          class={column.className}
          role="columnheader"
          aria-sort={ariaSort(column.sort)}
          title={column.title}
        >
          {onSort ? (
            <button
              type="button"
              class="rl-sort"
              data-testid={`sort-${column.sort}`}
              aria-label={column.title ?? column.label}
              onClick={() => onSort(column.sort)}
            >
              {column.label}
              {sort?.column === column.sort ? (sort.direction === 'ascending' ? ' ▲' : ' ▼') : ''}
            </button>
          ) : (
            column.label
          )}
          {onResize && column.fixed ? (
            <ResizeHandle
              column={column.fixed}
              label={column.title ?? column.label}
              width={widths?.[column.fixed] ?? DEFAULT_WIDTHS[column.fixed]}
              onResize={onResize}
            />
          ) : null}
        </span>
      ))}
      <span class="rl-c-waterfall rl-list__axis" role="columnheader" aria-sort={ariaSort('start')}>
        {onSort ? (
          <button
            type="button"
            class="rl-sort rl-sort--axis"
            data-testid="sort-start"
            aria-label="Waterfall (sort by start)"
            title="Sort by start"
            onClick={() => onSort('start')}
          />
        ) : null}
        <WaterfallAxis axis={axis} width={width} innerRef={axisRef} />
      </span>
    </div>
  );
}

interface RowProps {
  readonly row: RequestRow;
  readonly axis: Axis;
  readonly now: number;
  /** The waterfall's width in px, once laid out. */
  readonly width: number | undefined;
  /** Whether it is an even row of the list (the second, fourth …), drawn on the alternate background. */
  readonly alt: boolean;
  readonly selected: boolean;
  /** Its 1-based place in the grid (the header is 1). */
  readonly rowIndex: number;
  /** Whether Tab stops at it (the selected row, else the first drawn). */
  readonly tabStop: boolean;
  readonly onOpen: (key: string) => void;
}

/**
 * A request's cells. Every column is rendered and the stylesheet shows the ones the list's width
 * has room for: URL, Client, Outcome and Time when wide; a short Name in their place when narrow.
 */
function Row({ row, axis, now, width, alt, selected, rowIndex, tabStop, onOpen }: RowProps) {
  const time = row.end === undefined ? undefined : row.end - row.start;
  const retried = row.attempts.length > 1;
  const url = row.url === '' ? row.path : row.url;
  const short = shortName(row);
  const count = attemptsCount(row);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the grid handles the keyboard (arrows, Enter, Escape).
    <div
      class={`rl-row rl-cols rl-row--${row.outcome}${alt ? ' rl-row--alt' : ''}${selected ? ' rl-row--selected' : ''}${row.complete ? '' : ' rl-row--partial'}`}
      role="row"
      aria-rowindex={rowIndex}
      aria-selected={selected}
      tabIndex={tabStop ? 0 : -1}
      data-testid="request-row"
      data-key={row.key}
      data-request-id={row.requestId}
      data-source={row.source}
      onClick={() => onOpen(row.key)}
    >
      <span role="gridcell" class="rl-cell rl-c-status" title={rowStatusTitle(row)}>
        {rowStatusShort(row)}
      </span>
      <span role="gridcell" class="rl-cell rl-c-method">
        {row.method}
      </span>
      <span role="gridcell" class="rl-cell rl-c-url" title={url}>
        {row.origin === '' ? null : <span class="rl-cell__origin">{row.origin}</span>}
        <span class="rl-url__path">{row.path}</span>
      </span>
      <span
        role="gridcell"
        class="rl-cell rl-c-name"
        data-testid="row-name"
        title={row.method === '' ? url : `${row.method} ${url}`}
      >
        <span class="rl-name__name">
          {row.method === '' || row.method === 'GET' ? null : (
            <span class="rl-cell__method">{row.method} </span>
          )}
          {short.name}
        </span>
        {short.query === '' ? null : <span class="rl-name__query">{short.query}</span>}
      </span>
      <span role="gridcell" class="rl-cell rl-c-client">
        {row.client}
      </span>
      <span
        role="gridcell"
        class={`rl-cell rl-cell--num rl-c-attempts${retried ? ' rl-cell--retried' : ''}${row.injected > 0 ? ' rl-cell--injected' : ''}`}
        data-testid={row.truncated ? 'truncated' : undefined}
        title={row.truncated ? truncationText(row.truncated) : count.label}
        aria-label={row.injected > 0 || row.hedges.length > 0 ? count.label : undefined}
      >
        {count.text}
        {row.injected > 0 ? (
          <span class="rl-injected-sign" aria-hidden="true">
            {INJECTED_SIGN}
          </span>
        ) : null}
      </span>
      <span role="gridcell" class="rl-cell rl-c-outcome" title={outcomeLabel(row.outcome)}>
        {outcomeShort(row.outcome)}
      </span>
      <span role="gridcell" class="rl-cell rl-cell--num rl-c-time">
        {time === undefined ? '' : formatMs(time)}
      </span>
      <span role="gridcell" class="rl-cell rl-c-waterfall">
        <Waterfall row={row} axis={axis} now={now} width={width} />
      </span>
    </div>
  );
}
