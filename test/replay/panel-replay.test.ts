import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BrowserTab,
  developmentPageScript,
  EXTENSION_BROWSERS,
  type ExtensionBrowser,
  requireBuiltExtension,
} from '../support/extension-browser';
import { type FaultServer, startFaultServer } from '../support/fault-server';
import { type OutboundSink, startOutboundSink } from '../support/outbound-sink';

// The panel's Replay as a developer uses it, in the built extension of both browsers it ships for:
// the real panel page (panel.html?tabId=N, as DevTools shows it for tab N) is opened in an
// extension tab, then the page sends its requests, a row is selected and Replay clicked. The page
// sends the request again through the Retryline client that sent it (its caller's signal long
// aborted): the server counts its attempts, its retries included, and a new row with the same URL
// appears. A POST's Replay is disabled, and says why. A page keeps what Replay needs only while a
// panel is open: a request sent before it opened is not sent again. Clicks are dispatched inside
// the panel page, and each step is polled for, never timed.

const browsers = EXTENSION_BROWSERS;

type ReplayWindow = Window & {
  replayPage: { call(path: string, method?: string): Promise<number>; panel(): boolean | undefined };
};
type ExtensionApi = { storage: { session: { get(keys: null): Promise<Record<string, unknown>> } } };

// Run inside the browser: they travel as source text, so they use only their arguments and globals.
const hasPage = () => 'replayPage' in window;
const call = (path: string, method?: string) =>
  (window as unknown as ReplayWindow).replayPage.call(path, method);
/** What the relay last told the page's hook of the tab's panels (`undefined`: nothing yet). */
const panelOpen = () => (window as unknown as ReplayWindow).replayPage.panel() ?? null;
const storedSession = () => {
  const scope = globalThis as unknown as { browser?: ExtensionApi; chrome?: ExtensionApi };
  return ((scope.browser ?? scope.chrome) as ExtensionApi).storage.session.get(null);
};
/** Each row of the list: its method, path, and how many attempt bars it draws. */
const rows = () =>
  [...document.querySelectorAll('[data-testid="request-row"]')].map((row) => ({
    path: row.querySelector('.rl-url__path')?.textContent ?? '',
    attempts: row.querySelectorAll('[data-testid="attempt-bar"]').length,
  }));
/** Opens the details of the `n`-th row (from 0) whose path is `path`. */
const openRow = (path: string, n: number) => {
  const row = [...document.querySelectorAll<HTMLElement>('[data-testid="request-row"]')].filter(
    (each) => each.querySelector('.rl-url__path')?.textContent === path,
  )[n];
  if (!row) throw new Error(`no row ${n} for ${path}`);
  row.click();
};
/** The detail pane's Replay button, as shown: whether it takes a click, and what it says of itself. */
const replayButton = () => {
  const button = document.querySelector<HTMLButtonElement>('[data-testid="detail"] [data-testid="replay"]');
  return button ? { disabled: button.disabled, title: button.title } : null;
};
const clickReplay = () => {
  document.querySelector<HTMLButtonElement>('[data-testid="detail"] [data-testid="replay"]')?.click();
};

describe.each(browsers)('Replay in $name', ({ dir, launch }) => {
  let server: FaultServer;
  let sink: OutboundSink;
  let browser: ExtensionBrowser;
  let probe: BrowserTab;

  beforeAll(async () => {
    requireBuiltExtension(dir);
    const pageScript = await developmentPageScript(new URL('replay-page.ts', import.meta.url));
    server = await startFaultServer();
    server.static('/page.js', pageScript, 'text/javascript');
    server.static('/', '<!doctype html><title>app</title><script src="/page.js"></script>', 'text/html');
    sink = await startOutboundSink();
    browser = await launch(dir, sink);
    // An extension page to read the worker's storage from.
    probe = await browser.open(browser.extensionUrl('panel.html'));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sink?.close();
    await server?.close();
  });

  /** A new tab at the app, and its id once the background stored its page (every tab with a relay). */
  async function openApp(): Promise<{ tab: BrowserTab; id: number }> {
    const known = new Set(Object.keys(await probe.evaluate(storedSession)));
    const tab = await browser.open(`${server.url}/`);
    await expect.poll(() => tab.evaluate(hasPage)).toBe(true);
    let id = 0;
    await expect
      .poll(
        async () => {
          const stored = Object.keys(await probe.evaluate(storedSession));
          id = Number(stored.find((key) => /^tab:\d+$/.test(key) && !known.has(key))?.slice(4) ?? 0);
          return id;
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    return { tab, id };
  }

  it('sends a row’s GET again through the page’s client: the server counts it, retries included, and a new row shows it', async () => {
    // Each request is answered 503 then 200: one retry, the same for the replay.
    server.script('/api/items', [{ status: 503 }, { status: 200 }, { status: 503 }, { status: 200 }]);
    server.script('/api/orders', [{ status: 201 }]);
    const { tab, id } = await openApp();
    // No panel yet: the relay told the page so.
    await expect.poll(() => tab.evaluate(panelOpen)).toBe(false);

    // As a developer does: the panel first, then the page's requests.
    const panel = await browser.open(browser.extensionUrl(`panel.html?tabId=${id}`));
    await expect.poll(() => tab.evaluate(panelOpen), { timeout: 10_000 }).toBe(true);
    expect(await tab.evaluate(call, '/api/items')).toBe(200);
    expect(await tab.evaluate(call, '/api/orders', 'POST')).toBe(201);
    expect(server.requests('/api/items')).toHaveLength(2);
    await expect
      .poll(() => panel.evaluate(rows), { timeout: 10_000 })
      .toEqual([
        { path: '/api/items', attempts: 2 },
        { path: '/api/orders', attempts: 1 },
      ]);

    // A POST is not sent again: its Replay says why.
    await panel.evaluate(openRow, '/api/orders', 0);
    await expect
      .poll(() => panel.evaluate(replayButton))
      .toEqual({
        disabled: true,
        title: expect.stringMatching(/GET, HEAD and OPTIONS/),
      });

    await panel.evaluate(openRow, '/api/items', 0);
    await expect.poll(() => panel.evaluate(replayButton)).toMatchObject({ disabled: false });
    await panel.evaluate(clickReplay);

    // The server sees the request again, twice (its retry), and the panel a new row for it.
    await expect.poll(() => server.requests('/api/items').length, { timeout: 10_000 }).toBe(4);
    await expect
      .poll(() => panel.evaluate(rows), { timeout: 10_000 })
      .toEqual([
        { path: '/api/items', attempts: 2 },
        { path: '/api/orders', attempts: 1 },
        { path: '/api/items', attempts: 2 },
      ]);
    expect(server.requests('/api/orders')).toHaveLength(1);

    // Closed, the panel takes what the page kept for Replay with it.
    await panel.close();
    await expect.poll(() => tab.evaluate(panelOpen), { timeout: 10_000 }).toBe(false);
    await tab.close();
  }, 120_000);

  it('sends nothing again of a request the page sent while no panel was open: it kept nothing of it', async () => {
    server.script('/api/early', [{ status: 200 }, { status: 200 }]);
    server.script('/api/late', [{ status: 200 }, { status: 200 }]);
    const { tab, id } = await openApp();
    await expect.poll(() => tab.evaluate(panelOpen)).toBe(false);
    expect(await tab.evaluate(call, '/api/early')).toBe(200);

    const panel = await browser.open(browser.extensionUrl(`panel.html?tabId=${id}`));
    await expect.poll(() => tab.evaluate(panelOpen), { timeout: 10_000 }).toBe(true);
    expect(await tab.evaluate(call, '/api/late')).toBe(200);
    await expect
      .poll(() => panel.evaluate(rows), { timeout: 10_000 })
      .toEqual([
        { path: '/api/early', attempts: 1 },
        { path: '/api/late', attempts: 1 },
      ]);

    // Replay the early row, then the late one: the two go the same way, in order, so once the late
    // one has reached the server the early one has been handled too.
    await panel.evaluate(openRow, '/api/early', 0);
    await expect.poll(() => panel.evaluate(replayButton)).toMatchObject({ disabled: false });
    await panel.evaluate(clickReplay);
    await panel.evaluate(openRow, '/api/late', 0);
    await panel.evaluate(clickReplay);
    await expect.poll(() => server.requests('/api/late').length, { timeout: 10_000 }).toBe(2);
    expect(server.requests('/api/early')).toHaveLength(1);
    await expect
      .poll(() => panel.evaluate(rows), { timeout: 10_000 })
      .toEqual([
        { path: '/api/early', attempts: 1 },
        { path: '/api/late', attempts: 1 },
        { path: '/api/late', attempts: 1 },
      ]);

    await panel.close();
    await tab.close();
  }, 120_000);
});
