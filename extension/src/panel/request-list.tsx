/**
 * The request list, virtualised: rows have one fixed height, so the rows in view follow from the
 * scroll position alone, and only those (plus an overscan above and below) are in the DOM. Ten
 * thousand requests cost the same to render as forty.
 */

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { Axis } from '../model/axis';
import type { NavigationMark, RequestRow } from '../model/timeline';
import {
  formatMs,
  outcomeLabel,
  outcomeShort,
  rowStatusShort,
  rowStatusTitle,
  shortName,
  truncationText,
} from './format';
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
  readonly onSelect: (key: string | undefined) => void;
  /** The session's axis, which every row (and lane) is drawn on. */
  readonly axis: Axis | undefined;
  /** The time running requests are drawn up to. */
  readonly now: number;
  /** Keep the newest rows in view while the list is scrolled to its end (a live tab). @default false */
  readonly follow?: boolean;
}

export function RequestList({ items, selectedKey, onSelect, axis, now, follow = false }: RequestListProps) {
  const scroller = useRef<HTMLElement>(null);
  const [axisRef, width] = useWidth<HTMLDivElement>();
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
  const visible = items.slice(first, last);

  // Keep the selection in view when it moves by keyboard.
  const selectedAt = useMemo(
    () => items.findIndex((item) => item.kind === 'row' && item.row.key === selectedKey),
    [items, selectedKey],
  );
  useEffect(() => {
    const element = scroller.current;
    if (!element || selectedAt < 0) return;
    const top = selectedAt * ROW_HEIGHT;
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + ROW_HEIGHT > element.scrollTop + element.clientHeight && element.clientHeight > 0) {
      element.scrollTop = top + ROW_HEIGHT - element.clientHeight;
    }
  }, [selectedAt]);

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape') {
      onSelect(undefined);
      return;
    }
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return;
    event.preventDefault();
    const step = event.key === 'ArrowDown' ? 1 : -1;
    for (let i = selectedAt + step; i >= 0 && i < items.length; i += step) {
      const item = items[i];
      if (item?.kind === 'row') {
        onSelect(item.row.key);
        return;
      }
    }
  };

  return (
    <div class="rl-list">
      <div class="rl-list__header rl-cols">
        <span class="rl-c-status">Status</span>
        <span class="rl-c-method">Method</span>
        <span class="rl-c-url">URL</span>
        <span class="rl-c-name">Name</span>
        <span class="rl-c-client">Client</span>
        <span class="rl-c-attempts" title="Attempts">
          #
        </span>
        <span class="rl-c-outcome">Outcome</span>
        <span class="rl-c-time">Time</span>
        <span class="rl-c-waterfall rl-list__axis">
          <WaterfallAxis axis={axis} width={width} innerRef={axisRef} />
        </span>
      </div>
      {/* A scrollable region is focusable (WCAG 2.1.1), and then the arrow keys move the selection. */}
      <section
        class="rl-list__scroller"
        ref={scroller}
        aria-label="Requests"
        // biome-ignore lint/a11y/noNoninteractiveTabindex: see above.
        tabIndex={0}
        onKeyDown={onKeyDown}
        onScroll={(event) => {
          const element = event.currentTarget;
          atBottom.current = element.scrollTop + element.clientHeight >= element.scrollHeight - ROW_HEIGHT;
          setScrollTop(element.scrollTop);
        }}
      >
        <div class="rl-list__spacer" style={{ height: `${items.length * ROW_HEIGHT}px` }}>
          <div class="rl-list__window" style={{ transform: `translateY(${first * ROW_HEIGHT}px)` }}>
            {visible.map((item, at) =>
              item.kind === 'navigation' ? (
                <div
                  key={`nav-${item.navigation.t}-${item.navigation.beforeRow}`}
                  class="rl-separator"
                  data-testid="navigation"
                >
                  <span>Navigated to {item.navigation.url}</span>
                </div>
              ) : axis ? (
                <Row
                  key={item.row.key}
                  row={item.row}
                  axis={axis}
                  now={now}
                  width={width}
                  // Striped by place in the whole list, so the stripes stay with their rows as it scrolls.
                  alt={(first + at) % 2 === 1}
                  selected={item.row.key === selectedKey}
                  onSelect={onSelect}
                />
              ) : null,
            )}
          </div>
        </div>
      </section>
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
  readonly onSelect: (key: string) => void;
}

/**
 * A request's cells. Every column is rendered and the stylesheet shows the ones the list's width
 * has room for: URL, Client, Outcome and Time when wide; a short Name in their place when narrow.
 */
function Row({ row, axis, now, width, alt, selected, onSelect }: RowProps) {
  const time = row.end === undefined ? undefined : row.end - row.start;
  const retried = row.attempts.length > 1;
  const url = row.url === '' ? row.path : row.url;
  const short = shortName(row);
  return (
    // biome-ignore lint/a11y/useKeyWithClickEvents: the list handles the keyboard (arrow keys move the selection).
    // biome-ignore lint/a11y/noStaticElementInteractions: as above.
    <div
      class={`rl-row rl-cols rl-row--${row.outcome}${alt ? ' rl-row--alt' : ''}${selected ? ' rl-row--selected' : ''}${row.complete ? '' : ' rl-row--partial'}`}
      aria-current={selected ? 'true' : undefined}
      data-testid="request-row"
      data-request-id={row.requestId}
      data-source={row.source}
      onClick={() => onSelect(row.key)}
    >
      <span class="rl-cell rl-c-status" title={rowStatusTitle(row)}>
        {rowStatusShort(row)}
      </span>
      <span class="rl-cell rl-c-method">{row.method}</span>
      <span class="rl-cell rl-c-url" title={url}>
        {row.origin === '' ? null : <span class="rl-cell__origin">{row.origin}</span>}
        <span class="rl-url__path">{row.path}</span>
      </span>
      <span
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
      <span class="rl-cell rl-c-client">{row.client}</span>
      <span
        class={`rl-cell rl-cell--num rl-c-attempts${retried ? ' rl-cell--retried' : ''}`}
        data-testid={row.truncated ? 'truncated' : undefined}
        title={row.truncated ? truncationText(row.truncated) : `${row.attempts.length} attempts`}
      >
        {row.truncated ? `${row.attempts.length}+` : row.attempts.length}
      </span>
      <span class="rl-cell rl-c-outcome" title={outcomeLabel(row.outcome)}>
        {outcomeShort(row.outcome)}
      </span>
      <span class="rl-cell rl-cell--num rl-c-time">{time === undefined ? '' : formatMs(time)}</span>
      <span class="rl-cell rl-c-waterfall">
        <Waterfall row={row} axis={axis} now={now} width={width} />
      </span>
    </div>
  );
}
