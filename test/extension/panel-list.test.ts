import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toRecording } from '../../extension/src/model/export';
import { manyRequests } from '../../extension/src/model/fixtures';
import {
  type BrowserTab,
  EXTENSION_DIST,
  type ExtensionBrowser,
  launchChromiumWith,
  launchFirefoxWith,
} from '../support/extension-browser';

// The request list as a keyboard and screen reader user meets it, in the built panel page of both
// browsers (extension/dist/chrome in Chromium, extension/dist/firefox in Firefox ESR): an ARIA grid
// whose rows know their place in the whole (virtualised) list, walked with the arrows, Home, End
// and Page Down; Enter opens the details, Escape closes them, and the focus stays on the row
// throughout. A recording is imported into a panel with no page, so nothing leaves the browser.
// Keys are dispatched to the focused element from inside the page (what the list listens for);
// each step is then polled for, never timed.

const browsers = [
  { name: 'Chromium', dir: EXTENSION_DIST.chrome, launch: (dir: string) => launchChromiumWith(dir) },
  { name: 'Firefox', dir: EXTENSION_DIST.firefox, launch: (dir: string) => launchFirefoxWith(dir) },
];

const COUNT = 300;
const recording = JSON.stringify(toRecording(manyRequests(COUNT), 'keyboard test'));

interface PanelApi {
  rows(): number;
  importText(text: string): void;
}
type PanelWindow = Window & { __retrylinePanel?: PanelApi };

// Run inside the panel: they travel as source text, so they use only their arguments and globals.
const panelReady = () => (window as unknown as PanelWindow).__retrylinePanel !== undefined;
const panelRows = () => (window as unknown as PanelWindow).__retrylinePanel?.rows() ?? -1;
const importText = (text: string) => (window as unknown as PanelWindow).__retrylinePanel?.importText(text);
const gridShape = () => {
  const grid = document.querySelector('[role="grid"]');
  const rows = [...document.querySelectorAll('[data-testid="request-row"]')];
  return {
    label: grid?.getAttribute('aria-label') ?? null,
    rowcount: grid?.getAttribute('aria-rowcount') ?? null,
    headers: [...document.querySelectorAll('[role="columnheader"]')].map((h) => h.textContent ?? ''),
    roles: [...new Set(rows.map((row) => row.getAttribute('role')))],
    rowindex: rows[0]?.getAttribute('aria-rowindex') ?? null,
    cells: rows[0]?.querySelectorAll('[role="gridcell"]').length ?? 0,
    rendered: rows.length,
    tabStops: rows.filter((row) => (row as HTMLElement).tabIndex === 0).length,
  };
};
const focusFirstRow = () => (document.querySelector('[data-testid="request-row"]') as HTMLElement).focus();
const press = (key: string) => {
  const target = document.activeElement ?? document.body;
  target.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
};
/** Where the focus is, which rows are selected, and whether the details are open. */
const state = () => {
  const focused = document.activeElement as HTMLElement | null;
  return {
    focused: focused?.dataset.requestId ?? focused?.tagName ?? null,
    focusedIndex: focused?.getAttribute('aria-rowindex') ?? null,
    selected: [...document.querySelectorAll('[role="row"][aria-selected="true"]')].map(
      (row) => (row as HTMLElement).dataset.requestId,
    ),
    detail: document.querySelector('[data-testid="detail"]')?.textContent ?? null,
  };
};

/** Waits for `ready` (expect.poll is for tests, not hooks). */
async function until(ready: () => Promise<boolean>, message: string): Promise<void> {
  for (let tries = 0; tries < 150; tries++) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(message);
}

const setFilter = (text: string) => {
  const input = document.querySelector('[data-testid="filter"]') as HTMLInputElement;
  input.value = text;
  input.dispatchEvent(new Event('input', { bubbles: true }));
};
const click = (testId: string) =>
  (document.querySelector(`[data-testid="${testId}"]`) as HTMLElement).click();
/** The request at each drawn place of the list: [its place (0 = first), its number]. */
const drawnOrder = () =>
  [...document.querySelectorAll('[data-testid="request-row"]')].map((row) => [
    Number(row.getAttribute('aria-rowindex')) - 2,
    Number(row.getAttribute('data-request-id')?.slice(4)),
  ]);
const ariaSort = (testId: string) =>
  document
    .querySelector(`[data-testid="${testId}"]`)
    ?.closest('[role="columnheader"]')
    ?.getAttribute('aria-sort');
/** The drawn width of the first row's cell of a column (0 when hidden). */
const cellWidth = (column: string) =>
  (
    document.querySelector(`[data-testid="request-row"] .rl-c-${column}`) as HTMLElement | null
  )?.getBoundingClientRect().width ?? 0;
const keyOn = (testId: string, key: string) =>
  document
    .querySelector(`[data-testid="${testId}"]`)
    ?.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true }));
/** Drags a column's separator `dx` px with pointer events, as a mouse would. */
const dragSeparator = (testId: string, dx: number) => {
  const handle = document.querySelector(`[data-testid="${testId}"]`) as HTMLElement;
  const box = handle.getBoundingClientRect();
  const at = (type: string, x: number) =>
    handle.dispatchEvent(
      new PointerEvent(type, {
        bubbles: true,
        cancelable: true,
        pointerId: 1,
        clientX: x,
        clientY: box.top + 2,
      }),
    );
  at('pointerdown', box.left);
  at('pointermove', box.left + dx);
  at('pointerup', box.left + dx);
};
const openColumnMenu = () => {
  const header = document.querySelector('.rl-list__header') as HTMLElement;
  header.dispatchEvent(
    new MouseEvent('contextmenu', { bubbles: true, cancelable: true, clientX: 20, clientY: 20 }),
  );
};

describe.each(browsers)('the request list in $name', ({ dir, launch }) => {
  let browser: ExtensionBrowser;
  let panel: BrowserTab;

  beforeAll(async () => {
    if (!existsSync(join(dir, 'manifest.json'))) {
      throw new Error(`${dir} is not built: run \`pnpm build:extension\``);
    }
    browser = await launch(dir);
    panel = await browser.open(browser.extensionUrl('panel.html'));
    // The panel hands out its API from an effect, after its first render: not by 'load'.
    await until(() => panel.evaluate(panelReady), 'the panel never exposed its API');
    await panel.evaluate(importText, recording);
    await until(async () => (await panel.evaluate(panelRows)) === COUNT, 'the recording never showed');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('exposes a grid: column headers, rows with their place in the whole list, one tab stop', async () => {
    const shape = await panel.evaluate(gridShape);
    expect(shape.label).toBe('Requests');
    expect(shape.rowcount).toBe(String(COUNT + 1));
    expect(shape.headers).toEqual(expect.arrayContaining(['Status', 'Method', 'Outcome', 'Time']));
    expect(shape.roles).toEqual(['row']);
    expect(shape.rowindex).toBe('2');
    expect(shape.cells).toBeGreaterThanOrEqual(8);
    // Virtualised: far fewer rows in the DOM than in the list.
    expect(shape.rendered).toBeLessThan(COUNT / 2);
    expect(shape.tabStops).toBe(1);
  });

  it('walks the list with the arrows, Home, End and Page Down, opens and closes the details, the focus staying put', async () => {
    await panel.evaluate(focusFirstRow);
    const step = async (key: string, expected: Partial<Awaited<ReturnType<typeof state>>>) => {
      await panel.evaluate(press, key);
      await expect.poll(() => panel.evaluate(state), { message: `after ${key}` }).toMatchObject(expected);
    };
    await step('ArrowDown', { focused: 'req-0', selected: ['req-0'], detail: null });
    await step('ArrowDown', { focused: 'req-1', selected: ['req-1'] });
    await step('ArrowDown', { focused: 'req-2', selected: ['req-2'] });
    await step('ArrowUp', { focused: 'req-1', selected: ['req-1'] });
    // End: the last row is drawn, focused, and knows its place in the whole list.
    await step('End', { focused: `req-${COUNT - 1}`, focusedIndex: String(COUNT + 1) });
    await step('Home', { focused: 'req-0', focusedIndex: '2' });
    await panel.evaluate(press, 'PageDown');
    await expect.poll(async () => Number((await panel.evaluate(state)).focused?.slice(4))).toBeGreaterThan(3);
    await step('PageUp', { focused: 'req-0' });
    await step('ArrowDown', { focused: 'req-1' });
    // Enter opens the details; the focus stays on the row.
    await step('Enter', { focused: 'req-1', detail: expect.stringContaining('/items/1') });
    // Open, they follow the selection.
    await step('ArrowDown', { focused: 'req-2', detail: expect.stringContaining('/items/2') });
    // Escape closes them, and the focus is still on the row.
    await step('Escape', { focused: 'req-2', selected: ['req-2'], detail: null });
    await step('ArrowDown', { focused: 'req-3', selected: ['req-3'], detail: null });
  }, 60_000);

  it('filters by retry terms, sorts by a header (aria-sort) and hides a column from the header’s menu', async () => {
    await panel.evaluate(setFilter, 'items/1 -items/10');
    // items/1, items/11…19, items/100…199 less items/10 and items/100…109.
    await expect.poll(() => panel.evaluate(panelRows)).toBe(1 + 9 + 90);
    await panel.evaluate(setFilter, 'is:retried status:503');
    await expect.poll(() => panel.evaluate(panelRows)).toBe(COUNT);
    await panel.evaluate(setFilter, '-retried');
    await expect.poll(() => panel.evaluate(panelRows)).toBe(0);
    await panel.evaluate(setFilter, '');
    await expect.poll(() => panel.evaluate(panelRows)).toBe(COUNT);
    await panel.evaluate(click, 'sort-start');
    await panel.evaluate(click, 'sort-start');
    await expect.poll(() => panel.evaluate(ariaSort, 'sort-start')).toBe('descending');
    // Newest first, wherever the list is scrolled (it keeps the selected row in view).
    await expect
      .poll(async () =>
        (await panel.evaluate(drawnOrder)).every(([place, n]) => n === COUNT - 1 - (place ?? 0)),
      )
      .toBe(true);
    await panel.evaluate(click, 'sort-start');
    await expect
      .poll(async () => (await panel.evaluate(drawnOrder)).every(([place, n]) => n === place))
      .toBe(true);
    expect(await panel.evaluate(cellWidth, 'client')).toBeGreaterThan(0);
    await panel.evaluate(openColumnMenu);
    await expect
      .poll(() => panel.evaluate(() => document.querySelector('[data-testid="column-menu"]') !== null))
      .toBe(true);
    await panel.evaluate(click, 'column-client');
    await expect.poll(() => panel.evaluate(cellWidth, 'client')).toBe(0);
    await panel.evaluate(click, 'column-client');
    await expect.poll(() => panel.evaluate(cellWidth, 'client')).toBeGreaterThan(0);
  }, 60_000);

  it('resizes a fixed column from its header’s separator, by keyboard and by dragging', async () => {
    const before = await panel.evaluate(cellWidth, 'outcome');
    expect(before).toBeGreaterThan(0);
    await panel.evaluate(keyOn, 'resize-outcome', 'ArrowRight');
    await expect.poll(() => panel.evaluate(cellWidth, 'outcome')).toBe(before + 8);
    await panel.evaluate(dragSeparator, 'resize-outcome', 40);
    await expect.poll(() => panel.evaluate(cellWidth, 'outcome')).toBe(before + 48);
  });
});
