import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BrowserContext, type CDPSession, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flakySession } from '../../extension/src/model/fixtures';
import { foldTimeline } from '../../extension/src/model/timeline';
import { shortName } from '../../extension/src/panel/format';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../support/chromium';
import { type FaultServer, startFaultServer } from '../support/fault-server';

// The panel as a developer docks it: at the side of DevTools (550 and 400 px wide) and at the
// bottom (250 px tall), in Debian's Chromium with the built extension (extension/dist/chrome). A
// loopback page posts a flaky session's events to the extension's relay, as core's hook does; the
// panel shows that tab's rows, first as its own page at DevTools' sizes (where Playwright can
// click it), then inside Chromium's real DevTools, docked right and at the bottom. Each row's
// name, attempt count and bars must be on screen, the toolbar on one line, the lanes out of the
// rows' way, and the time axis must not move when the list scrolls.

const EXTENSION = fileURLToPath(new URL('../../extension/dist/chrome/', import.meta.url));
const OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));

declare const chrome: { storage: { session: { get(keys: null): Promise<Record<string, unknown>> } } };

const session = flakySession();
const expected = foldTimeline(session).rows;

let server: FaultServer;
let context: BrowserContext;
let extensionId: string;
let tabId: number;

beforeAll(async () => {
  requireChromium();
  if (!existsSync(join(EXTENSION, 'manifest.json'))) {
    throw new Error(`${EXTENSION} is not built: run \`pnpm build\` (pnpm test does)`);
  }
  server = await startFaultServer();
  server.static('/', '<!doctype html><title>flaky app</title>', 'text/html');
  context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'retryline-layout-')), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1000, height: 700 },
    args: [`--disable-extensions-except=${EXTENSION}`, `--load-extension=${EXTENSION}`, ...CHROMIUM_ARGS],
  });
  const worker =
    context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker', { timeout: 15_000 }));
  extensionId = new URL(worker.url()).host;
  const page = await context.newPage();
  await openSession(page);
  // The tab's id, as the worker knows it: the one key it mirrors to storage.session.
  for (let tries = 0; tries < 75 && !tabId; tries++) {
    await page.waitForTimeout(200);
    const sw = context.serviceWorkers().find((w) => w.url().includes(extensionId));
    const stored = (await sw?.evaluate(() => chrome.storage.session.get(null))) ?? {};
    tabId = Number(
      Object.keys(stored)
        .find((key) => /^tab:\d+$/.test(key))
        ?.slice(4) ?? 0,
    );
  }
  if (!tabId) throw new Error('the service worker recorded nothing from the page');
}, 60_000);

afterAll(async () => {
  await context?.close();
  await server?.close();
});

/** Opens the loopback page and posts the session's events to the relay, as core's hook does. */
async function openSession(page: Page): Promise<void> {
  await page.goto(`${server.url}/`);
  // In batches of the most one message may carry.
  await page.evaluate(
    (events) => {
      for (let at = 0; at < events.length; at += 200) {
        const batch = events.slice(at, at + 200);
        window.postMessage(
          { ns: 'retryline-devtools', v: 1, kind: 'events', events: batch },
          location.origin,
        );
      }
    },
    session.flatMap((entry) => (entry.type === 'event' ? [entry.event] : [])),
  );
}

async function openPanel(width: number, height: number, query = `?tabId=${tabId}`): Promise<Page> {
  const panel = await context.newPage();
  await panel.setViewportSize({ width, height });
  await panel.goto(`chrome-extension://${extensionId}/panel.html${query}`);
  await panel.waitForFunction(() => '__retrylinePanel' in window);
  return panel;
}

const rows = (panel: Page) => panel.locator('[data-testid="request-row"]');

interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

async function box(locator: Locator): Promise<Box> {
  const found = await locator.boundingBox();
  if (!found) throw new Error(`${locator} is not displayed`);
  return found;
}

/** Whether `inner` lies inside `outer` (to a pixel of rounding). */
const inside = (inner: Box, outer: Box): boolean =>
  inner.x >= outer.x - 1 &&
  inner.y >= outer.y - 1 &&
  inner.x + inner.width <= outer.x + outer.width + 1 &&
  inner.y + inner.height <= outer.y + outer.height + 1;

/** What a row in the list's view shows, measured in the page. */
interface RowView {
  readonly id: string;
  /** The Name cell's name (or, where the list is widest, the URL cell). */
  readonly name: { readonly text: string; readonly whole: boolean; readonly box: Box };
  readonly attempts: { readonly text: string; readonly box: Box };
  readonly bars: readonly Box[];
  readonly refusals: readonly Box[];
  /** For each wait's label: whether it is whole in its box or wrapped out of sight (not cut). */
  readonly labelsUncut: readonly boolean[];
}

/**
 * Runs `fn(arg)` in the panel's page and returns its result: through Playwright for the panel as
 * a page, through CDP for the panel inside DevTools. `fn` is sent as its source, so it uses
 * nothing from this file.
 */
type InPanel = <A, R>(fn: (arg: A) => R, arg: A) => Promise<R>;

const playwrightRunner =
  (panel: Page): InPanel =>
  (fn, arg) =>
    panel.evaluate(fn as never, arg);

/** In the page: the rows wholly inside the list's view, measured in one go. */
function measureRows(selector: string): RowView[] {
  const rect = (el: Element) => {
    const r = el.getBoundingClientRect();
    return { x: r.x, y: r.y, width: r.width, height: r.height };
  };
  const textWidth = (el: Element) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    return range.getBoundingClientRect().width;
  };
  const scroller = document.querySelector('.rl-list__scroller') as HTMLElement;
  const view = scroller.getBoundingClientRect();
  const inView = [...scroller.querySelectorAll('[data-testid="request-row"]')].filter((row) => {
    const r = row.getBoundingClientRect();
    return r.top >= view.top - 1 && r.bottom <= view.bottom + 1;
  });
  return inView.map((row) => {
    const name = row.querySelector(selector) as HTMLElement;
    const attempts = row.querySelector('.rl-c-attempts') as HTMLElement;
    const labels = [...row.querySelectorAll('.rl-wait .rl-fit__text')].map((label) => {
      const l = label.getBoundingClientRect();
      const b = (label.parentElement as HTMLElement).getBoundingClientRect();
      const whole = l.left >= b.left - 1 && l.right <= b.right + 1 && l.bottom <= b.bottom + 1;
      return whole || l.top >= b.bottom - 2;
    });
    return {
      id: row.getAttribute('data-request-id') ?? '',
      name: {
        text: name.textContent ?? '',
        // Its text, measured unclipped, fits its box (an ellipsis shows at a fraction of a pixel less).
        whole: textWidth(name) <= rect(name).width + 0.01,
        box: rect(name),
      },
      attempts: { text: attempts.textContent ?? '', box: rect(attempts) },
      bars: [...row.querySelectorAll('[data-testid="attempt-bar"]')].map(rect),
      refusals: [...row.querySelectorAll('[data-testid="refusal"]')].map(rect),
      labelsUncut: labels,
    };
  });
}

/** In the page: scrolls the list to `to` (`'top'`), or a page down; whether it moved. */
function scrollList(to: 'top' | 'page'): boolean {
  const scroller = document.querySelector('.rl-list__scroller') as HTMLElement;
  const before = scroller.scrollTop;
  scroller.scrollTop = to === 'top' ? 0 : before + scroller.clientHeight - 24;
  return scroller.scrollTop !== before;
}

/** In the page: the toolbar's height, and whether any control it shows reaches past the panel. */
function measureToolbar(): { height: number; overflows: boolean } {
  const toolbar = document.querySelector('.rl-toolbar') as HTMLElement;
  const bottom = toolbar.getBoundingClientRect().bottom;
  const overflows = [...toolbar.querySelectorAll('button, input, select')].some((control) => {
    const r = control.getBoundingClientRect();
    return r.width > 0 && (r.right > innerWidth + 0.5 || r.bottom > bottom + 0.5);
  });
  return { height: toolbar.getBoundingClientRect().height, overflows };
}

/**
 * Checks every row wholly in the list's view, scrolling a page at a time to the end: its name is
 * whole and on screen (the Name column's, or where the list is widest the URL), its attempt count
 * right and on screen, each attempt bar (or, for a request a guard refused before any attempt, its
 * refusal mark) drawn with a width on screen, and no wait label cut. Returns the ids checked.
 */
async function checkEveryRow(
  run: InPanel,
  viewport: { width: number; height: number },
): Promise<Set<string>> {
  const screen = { x: 0, y: 0, ...viewport };
  const wide = viewport.width >= 1100;
  const checked = new Set<string>();
  await run(scrollList, 'top');
  for (let page = 0; page < 100; page++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const row of await run(measureRows, wide ? '.rl-url__path' : '.rl-name__name')) {
      const want = expected.find((r) => r.requestId === row.id);
      if (!want) throw new Error(`an unexpected row ${row.id}`);
      // The Name cell names the method where it is not GET (shown where the Method column is gone).
      const method = want.method === 'GET' ? '' : `${want.method} `;
      expect(row.name.text, row.id).toBe(wide ? want.path : `${method}${shortName(want).name}`);
      expect(row.name.whole, `${row.id}'s name is cut`).toBe(true);
      expect(inside(row.name.box, screen), `${row.id}'s name is off screen`).toBe(true);
      expect(row.attempts.text, row.id).toBe(String(want.attempts.length));
      expect(inside(row.attempts.box, screen)).toBe(true);
      const marks = want.attempts.length > 0 ? row.bars : row.refusals;
      expect(marks.length, row.id).toBe(Math.max(1, want.attempts.length));
      for (const mark of marks) {
        expect(mark.width, `${row.id}: a bar of no width`).toBeGreaterThan(0);
        expect(inside(mark, screen), `${row.id}: a bar off screen`).toBe(true);
      }
      expect(row.labelsUncut.every(Boolean), `${row.id}: a wait label is cut`).toBe(true);
      checked.add(row.id);
    }
    if (!(await run(scrollList, 'page'))) break;
  }
  return checked;
}

/** The toolbar is one line, and every control in it is on screen. */
async function checkToolbar(run: InPanel): Promise<void> {
  const toolbar = await run(measureToolbar, undefined);
  expect(toolbar.height).toBeLessThan(36);
  expect(toolbar.overflows).toBe(false);
}

describe('the panel page at the sizes DevTools docks it', () => {
  it.each([
    [550, 600],
    [400, 600],
    [800, 250],
    [1400, 600],
  ] as const)(
    'at %i×%i px shows each row’s name, attempts and bars, the toolbar on one line',
    async (width, height) => {
      const panel = await openPanel(width, height);
      await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBeGreaterThan(0);
      mkdirSync(OUTPUT, { recursive: true });
      await panel.screenshot({ path: join(OUTPUT, `panel-layout-${width}x${height}.png`) });
      await checkToolbar(playwrightRunner(panel));
      // Everything the narrow toolbar leaves out is one click away, in the More menu.
      if (width < 1000) {
        await panel.getByRole('button', { name: /^More/ }).click();
        for (const id of ['preserve-log', 'origin-filter', 'export-json', 'export-har', 'import']) {
          const control = panel.getByTestId(id);
          expect(await control.isVisible(), id).toBe(true);
          expect(inside(await box(control), { x: 0, y: 0, width, height })).toBe(true);
        }
        await panel.screenshot({ path: join(OUTPUT, `panel-layout-${width}x${height}-menu.png`) });
        await panel.keyboard.press('Escape');
        expect(await panel.getByTestId('export-json').isVisible()).toBe(false);
      }
      if (height < 300) {
        // Docked at the bottom: the lanes fold to a line per origin, and leave the rows the room.
        const lanes = await box(panel.getByTestId('lanes'));
        expect(lanes.height).toBeLessThanOrEqual(24);
        const list = await box(panel.getByTestId('list-scroller'));
        expect(Math.floor(list.height / 24)).toBeGreaterThanOrEqual(6);
        await panel.getByRole('button', { name: /127\.0\.0\.1:46123/ }).click();
        expect(await panel.getByTestId('budget-track').isVisible()).toBe(true);
        await panel.screenshot({ path: join(OUTPUT, `panel-layout-${width}x${height}-lanes.png`) });
        await panel.getByTestId('lanes-collapse').click();
        expect(await panel.getByTestId('budget-track').isVisible()).toBe(false);
      }
      const checked = await checkEveryRow(playwrightRunner(panel), { width, height });
      expect([...checked].sort()).toEqual(expected.map((row) => row.requestId).sort());
      await panel.emulateMedia({ colorScheme: 'dark' });
      await panel.screenshot({ path: join(OUTPUT, `panel-layout-${width}x${height}-dark.png`) });
      if (width < 700) {
        // Too narrow for the list and the detail pane side by side: the pane covers the list.
        await rows(panel).last().click();
        const detail = await box(panel.getByTestId('detail'));
        expect(detail.width).toBeGreaterThanOrEqual(width - 1);
        expect(inside(detail, { x: 0, y: 0, width, height })).toBe(true);
        await panel.screenshot({ path: join(OUTPUT, `panel-layout-${width}x${height}-detail.png`) });
        await panel.keyboard.press('Escape');
        expect(await panel.getByTestId('detail').count()).toBe(0);
      }
      await panel.close();
    },
    60_000,
  );

  it('keeps the time axis, the bars and the lanes where they are while the list scrolls', async () => {
    const panel = await openPanel(400, 600);
    await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBeGreaterThan(0);
    const ticks = () =>
      panel
        .getByTestId('tick')
        .evaluateAll((els) => els.map((el) => [el.textContent, el.getBoundingClientRect().x]));
    const bars = (id: string) =>
      panel
        .locator(`[data-testid="request-row"][data-request-id="${id}"] [data-testid="attempt-bar"]`)
        .evaluateAll((els) =>
          els.map((el) => [el.getBoundingClientRect().x, el.getBoundingClientRect().width]),
        );
    const bands = () =>
      panel
        .locator('.rl-band')
        .evaluateAll((els) =>
          els.map((el) => [el.getBoundingClientRect().x, el.getBoundingClientRect().width]),
        );
    const before = { ticks: await ticks(), bars: await bars('s7'), bands: await bands() };
    expect(before.ticks.length).toBeGreaterThan(1);
    expect(before.ticks[0]?.[0]).toBe('0');
    // 1, 2 or 5 × 10^n apart: +2 s, +4 s … for this 12 s session at this width.
    for (const [label] of before.ticks.slice(1)) expect(label).toMatch(/^\+(\d+|\d+\.\d*[25]?) (ms|s|min)$/);

    await panel.getByTestId('list-scroller').evaluate((el) => {
      el.scrollTop = 5 * 24;
    });
    await panel.waitForTimeout(100);
    expect(await ticks()).toEqual(before.ticks);
    expect(await bars('s7')).toEqual(before.bars);
    expect(await bands()).toEqual(before.bands);

    // The lanes' tracks are the rows' waterfall column: one axis, one x for one time.
    const track = await box(panel.getByTestId('breaker-track'));
    const waterfall = await box(
      panel.locator('[data-testid="request-row"] [data-testid="waterfall"]').first(),
    );
    expect(Math.abs(track.x - waterfall.x)).toBeLessThanOrEqual(1);
    expect(Math.abs(track.width - waterfall.width)).toBeLessThanOrEqual(1);
    // The breaker opened at +2.5 s of the session: the band starts where a bar at that time would.
    const axis = await box(panel.getByTestId('axis'));
    const span = (expected.at(-1)?.last ?? 0) - (expected[0]?.start ?? 0);
    const open = await box(panel.locator('[data-testid="breaker-track"] .rl-band--open'));
    expect(open.x).toBeCloseTo(axis.x + (2_500 / Math.max(span, 12_000)) * axis.width, -1);
    await panel.close();
  }, 30_000);

  it('highlights the selected row, whichever row it is, as the arrow keys move it', async () => {
    // Wide enough for the detail pane beside the list.
    const panel = await openPanel(1000, 600);
    await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBeGreaterThan(4);
    await panel.getByTestId('list-scroller').evaluate((el) => {
      el.scrollTop = 0;
    });
    const row = (n: number) => panel.locator(`[data-testid="request-row"][data-request-id="s${n}"]`);
    const background = (n: number) => row(n).evaluate((el) => getComputedStyle(el).backgroundColor);
    const stripes = [await background(0), await background(1)];
    expect(stripes[0]).not.toBe(stripes[1]);
    await row(0).click();
    await panel.mouse.move(0, 0);
    const selected = await background(0);
    expect(stripes).not.toContain(selected);
    for (let n = 1; n < 4; n++) {
      await panel.keyboard.press('ArrowDown');
      // The second and fourth rows lost their highlight to the stripes' :nth-child(even).
      expect(await background(n), `row ${n + 1}`).toBe(selected);
      expect(await background(n - 1)).toBe(stripes[(n - 1) % 2]);
    }
    await panel.close();
  }, 30_000);

  it('draws the breaker’s states apart in both themes (at least 3:1), with their names', async () => {
    const panel = await openPanel(800, 600);
    await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await panel.getByTestId('legend').textContent()).toBe('closedopenhalf-open');
    expect(await panel.getByTestId('budget-track').textContent()).toMatch(/^\d+ retries left$/);
    for (const scheme of ['light', 'dark'] as const) {
      await panel.emulateMedia({ colorScheme: scheme });
      const colour = (selector: string) =>
        panel
          .locator(selector)
          .first()
          .evaluate((el) => getComputedStyle(el).backgroundColor);
      const [closed, open, halfOpen, page] = [
        await colour('.rl-track .rl-band--closed'),
        await colour('.rl-track .rl-band--open'),
        await colour('.rl-track .rl-band--half-open'),
        await panel.evaluate(() => getComputedStyle(document.body).backgroundColor),
      ];
      expect(contrast(open, closed), `${scheme}: open against closed`).toBeGreaterThanOrEqual(3);
      expect(contrast(halfOpen, closed), `${scheme}: half-open against closed`).toBeGreaterThanOrEqual(3);
      expect(contrast(open, page), `${scheme}: open against the panel`).toBeGreaterThanOrEqual(3);
      // The state's name on its band, shown whole.
      const name = panel.locator('.rl-track .rl-band--open .rl-fit__text').first();
      expect(await name.textContent()).toBe('open');
      expect(inside(await box(name), await box(panel.locator('.rl-track .rl-band--open').first()))).toBe(
        true,
      );
      await panel.getByTestId('lanes').screenshot({ path: join(OUTPUT, `panel-layout-lanes-${scheme}.png`) });
    }
    await panel.close();
  }, 30_000);

  it('shows no Record or Preserve log without a page, and exports nothing from an empty list', async () => {
    const panel = await openPanel(550, 400, '');
    expect(await panel.getByTestId('record').count()).toBe(0);
    expect(await panel.getByTestId('preserve-log').count()).toBe(0);
    await panel.getByRole('button', { name: /^More/ }).click();
    expect(await panel.getByTestId('export-json').isDisabled()).toBe(true);
    expect(await panel.getByTestId('export-har').isDisabled()).toBe(true);
    expect(await panel.getByTestId('import').isEnabled()).toBe(true);
    await panel.close();
  }, 30_000);
});

/**
 * Chromium's own DevTools, driven over CDP. With `--auto-open-devtools-for-tabs` Chromium opens
 * DevTools for each tab, even headless, with the extension's panel in it. Playwright hands out no
 * DevTools pages, so the test attaches to the DevTools front end and to the panel's frame through
 * a browser CDP session, and asks the front end (through its own modules, as its UI would) to show
 * the Retryline panel, to dock it and size the dock, and to switch its theme.
 */
describe('the panel in Chromium’s own DevTools', () => {
  let devtoolsContext: BrowserContext;
  let frontEnd: Target;
  let panel: Target;

  beforeAll(async () => {
    devtoolsContext = await chromium.launchPersistentContext(
      mkdtempSync(join(tmpdir(), 'retryline-devtools-')),
      {
        executablePath: CHROMIUM,
        headless: true,
        viewport: null,
        args: [
          `--disable-extensions-except=${EXTENSION}`,
          `--load-extension=${EXTENSION}`,
          ...CHROMIUM_ARGS,
          '--auto-open-devtools-for-tabs',
          '--window-size=1200,800',
        ],
      },
    );
    // The first tab's DevTools is the only one: no other tab is opened.
    const page = devtoolsContext.pages()[0] ?? (await devtoolsContext.newPage());
    await openSession(page);
    const browser = devtoolsContext.browser();
    if (!browser) throw new Error('no browser to open a CDP session on');
    const cdp = await browser.newBrowserCDPSession();
    frontEnd = await attach(cdp, (t) => t.type === 'page' && t.url.startsWith('devtools://'));
    // The panel's tab appears once the extension's DevTools page has added it.
    await until(() => frontEnd.evaluate<boolean>(SHOW_RETRYLINE), 'no Retryline tab in DevTools');
    panel = await attach(cdp, (t) => t.type === 'iframe' && t.url.includes('/panel.html?tabId='));
    await until(
      async () => (await panel.evaluate<number>('document.querySelectorAll(".rl-row").length')) > 0,
      'the panel in DevTools showed no rows',
    );
  }, 60_000);

  afterAll(async () => {
    await devtoolsContext?.close();
  });

  it.each([
    ['right', 550],
    ['right', 400],
    ['bottom', 250],
  ] as const)(
    'docked %s at %i px: each row’s name, attempts and bars on screen, the toolbar on one line',
    async (side, size) => {
      const dock = await frontEnd.evaluate<{ width: number; height: number }>(dockAt(side, size));
      const viewport = await panel.evaluate<{ width: number; height: number }>(
        '({ width: innerWidth, height: innerHeight })',
      );
      if (side === 'right') expect(Math.abs(viewport.width - size)).toBeLessThanOrEqual(2);
      // At the bottom, DevTools' tab strip takes its share of the dock's height.
      else expect(viewport.height).toBeGreaterThan(size - 40);
      if (side === 'bottom') expect(viewport.height).toBeLessThanOrEqual(size);
      const run = cdpRunner(panel);
      await checkToolbar(run);
      const checked = await checkEveryRow(run, viewport);
      expect([...checked].sort()).toEqual(expected.map((row) => row.requestId).sort());
      await run(scrollList, 'top');
      const clip =
        side === 'right'
          ? { x: dock.width - size, y: 0, width: size, height: dock.height, scale: 1 }
          : { x: 0, y: dock.height - size, width: dock.width, height: size, scale: 1 };
      const shot = await frontEnd.send<{ data: string }>('Page.captureScreenshot', { format: 'png', clip });
      mkdirSync(OUTPUT, { recursive: true });
      writeFileSync(join(OUTPUT, `devtools-docked-${side}-${size}.png`), Buffer.from(shot.data, 'base64'));
    },
    60_000,
  );

  it('follows a live switch of DevTools’ theme (Chrome’s setThemeChangeHandler)', async () => {
    const theme = () =>
      panel.evaluate<[string | undefined, string]>(
        '[document.documentElement.dataset.theme, getComputedStyle(document.body).backgroundColor]',
      );
    await frontEnd.evaluate(setTheme('default'));
    await expect.poll(async () => (await theme())[0]).toBe('light');
    const light = (await theme())[1];
    await frontEnd.evaluate(setTheme('dark'));
    await expect.poll(async () => (await theme())[0]).toBe('dark');
    expect((await theme())[1]).not.toBe(light);
    await frontEnd.evaluate(setTheme('default'));
    await expect.poll(async () => (await theme())[0]).toBe('light');
  }, 30_000);
});

/** Waits until `ready` says so (for setup, where `expect.poll` may not run). */
async function until(ready: () => Promise<boolean>, message: string): Promise<void> {
  for (let tries = 0; tries < 75; tries++) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(message);
}

/** A page or frame of the browser, attached to through the browser's CDP session. */
interface Target {
  send<T>(method: string, params?: object): Promise<T>;
  /** Evaluates `expression` (awaiting a promise) and returns its value. */
  evaluate<T>(expression: string): Promise<T>;
}

/**
 * Attaches to the first target `match` picks (waiting for it to appear), through the browser's
 * session: the target's own messages travel inside `Target.sendMessageToTarget`, as Playwright's
 * session sends no flattened child-session messages.
 */
async function attach(
  cdp: CDPSession,
  match: (target: { type: string; url: string }) => boolean,
): Promise<Target> {
  for (let tries = 0; tries < 75; tries++) {
    const { targetInfos } = await cdp.send('Target.getTargets');
    const found = targetInfos.find(match);
    if (found) {
      const { sessionId } = await cdp.send('Target.attachToTarget', {
        targetId: found.targetId,
        flatten: false,
      });
      let id = 0;
      const pending = new Map<number, (reply: { result?: unknown; error?: { message: string } }) => void>();
      cdp.on('Target.receivedMessageFromTarget', (event) => {
        if (event.sessionId !== sessionId) return;
        const reply = JSON.parse(event.message);
        pending.get(reply.id)?.(reply);
        pending.delete(reply.id);
      });
      const send = <T>(method: string, params: object = {}) =>
        new Promise<T>((resolve, reject) => {
          id += 1;
          pending.set(id, (reply) =>
            reply.error ? reject(new Error(`${method}: ${reply.error.message}`)) : resolve(reply.result as T),
          );
          void cdp.send('Target.sendMessageToTarget', {
            sessionId,
            message: JSON.stringify({ id, method, params }),
          });
        });
      return {
        send,
        async evaluate<T>(expression: string) {
          const { result, exceptionDetails } = await send<{
            result: { value: T };
            exceptionDetails?: { exception?: { description?: string }; text: string };
          }>('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
          if (exceptionDetails) {
            throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
          }
          return result.value;
        },
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the DevTools target did not appear');
}

const cdpRunner =
  (target: Target): InPanel =>
  (fn, arg) =>
    target.evaluate(`(${fn.toString()})(${JSON.stringify(arg) ?? 'undefined'})`);

// What the DevTools front end's own UI does, from its modules (paths of Chromium's bundled front
// end; if a Chromium update moves them, these throw with the module that is missing).

/** Shows the Retryline panel's tab; false while the extension has not added it yet. */
const SHOW_RETRYLINE = `(async () => {
  const UI = await import('./ui/legacy/legacy.js');
  const view = UI.InspectorView.InspectorView.instance();
  const id = view.tabbedPane.tabIds().find((tab) => tab.endsWith('Retryline'));
  if (!id) return false;
  await view.showPanel(id);
  return true;
})()`;

/** Docks DevTools on `side` and sizes the dock to `size` px; the front end's size after. */
const dockAt = (side: 'right' | 'bottom', size: number) => `(async () => {
  const UI = await import('./ui/legacy/legacy.js');
  const Emulation = await import('./panels/emulation/emulation.js');
  UI.DockController.DockController.instance().setDockSide('${side}');
  await new Promise((resolve) => setTimeout(resolve, 300));
  // The split between the inspected page and DevTools (a private field, there at run time).
  Emulation.AdvancedApp.AdvancedApp.instance().rootSplitWidget.setSidebarSize(${size});
  await new Promise((resolve) => setTimeout(resolve, 500));
  return { width: innerWidth, height: innerHeight };
})()`;

/** Switches DevTools' theme, as its Settings › Appearance › Theme does. */
const setTheme = (theme: 'default' | 'dark') => `(async () => {
  const Common = await import('./core/common/common.js');
  Common.Settings.Settings.instance().moduleSetting('ui-theme').set('${theme}');
})()`;

/** WCAG 2.2's contrast ratio of two computed `rgb(…)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (colour: string) => {
    const [r, g, b] = (colour.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((part) => {
      const c = Number(part) / 255;
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (high + 0.05) / (low + 0.05);
}
