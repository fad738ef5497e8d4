import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type BrowserTab,
  EXTENSION_BROWSERS,
  type ExtensionBrowser,
  requireBuiltExtension,
} from '../support/extension-browser';
import { type FaultServer, startFaultServer } from '../support/fault-server';
import { type OutboundSink, startOutboundSink } from '../support/outbound-sink';

// What the real panel says of a live tab with no rows, in both browsers the extension ships for:
// a loopback page without Retryline is "not detected"; a page that creates a Retryline client and
// sends nothing is "no requests yet" (core said hello to the hook, the relay and the background
// passed it on); a tab no relay ever reported asks for a reload. Each state is read from the panel
// page as DevTools opens it (`panel.html?tabId=N`). Of a tab that sent no Retryline event the
// background stores its page state alone, never where it went.

const browsers = EXTENSION_BROWSERS;

/** A page script that creates a `retryFetch` client at load, and sends nothing. */
async function clientScript(): Promise<string> {
  const bundle = await build({
    stdin: {
      contents:
        "import { retryFetch } from '@retryline/fetch';\n" +
        '(window as unknown as { api: unknown }).api = retryFetch();\n',
      loader: 'ts',
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
    },
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    conditions: ['@retryline/source', 'browser'],
    logLevel: 'warning',
  });
  return bundle.outputFiles[0]?.text ?? '';
}

// Functions run inside a page or a panel: they travel as source text, so they use only their
// arguments and the page's globals.
type PanelWindow = Window & { __retrylinePanel?: unknown };
const panelReady = () => (window as PanelWindow).__retrylinePanel !== undefined;
const hasClient = () => 'api' in window;
/** The panel's empty state: which one, and its headline. */
const emptyState = () => {
  const empty = document.querySelector('[data-testid="empty"]') as HTMLElement | null;
  return {
    state: empty?.dataset.state ?? null,
    said: document.querySelector('[data-testid="no-events"]')?.textContent ?? null,
  };
};
/** What `storage.session` holds, read from an extension page (`browser` in Firefox, `chrome` in Chromium). */
const storedSession = async () => {
  type Area = { get(keys: null): Promise<Record<string, unknown>> };
  const extension = globalThis as unknown as {
    browser?: { storage: { session: Area } };
    chrome?: { storage: { session: Area } };
  };
  const api = extension.browser ?? extension.chrome;
  return api ? await api.storage.session.get(null) : {};
};
/** The tab ids `storage.session` holds, read from an extension page (`browser` in Firefox, `chrome` in Chromium). */
const storedTabs = async () => {
  type Area = { get(keys: null): Promise<Record<string, unknown>> };
  const extension = globalThis as unknown as {
    browser?: { storage: { session: Area } };
    chrome?: { storage: { session: Area } };
  };
  const api = extension.browser ?? extension.chrome;
  const stored = api ? await api.storage.session.get(null) : {};
  return Object.keys(stored)
    .filter((key) => /^tab:\d+$/.test(key))
    .map((key) => Number(key.slice(4)));
};

describe.each(browsers)('the panel of a live tab with no requests, in $name', ({ dir, launch }) => {
  let server: FaultServer;
  let sink: OutboundSink;
  let browser: ExtensionBrowser;
  /** An extension page kept open to read `storage.session` from. */
  let probe: BrowserTab;

  beforeAll(async () => {
    requireBuiltExtension(dir);
    server = await startFaultServer();
    server.static('/client.js', await clientScript(), 'text/javascript');
    server.static('/plain', '<!doctype html><title>plain</title><p>No Retryline here.</p>', 'text/html');
    server.static(
      '/client',
      '<!doctype html><title>client</title><script src="/client.js"></script>',
      'text/html',
    );
    sink = await startOutboundSink();
    browser = await launch(dir, sink);
    probe = await browser.open(browser.extensionUrl('panel.html'));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sink?.close();
    await server?.close();
  });

  /** A new tab at `path`, and its id once the background knows its page (every tab with a relay gets a log). */
  async function openTab(path: string): Promise<{ tab: BrowserTab; id: number }> {
    const before = new Set(await probe.evaluate(storedTabs));
    const tab = await browser.open(`${server.url}${path}`);
    let id = 0;
    await expect
      .poll(
        async () => {
          id = (await probe.evaluate(storedTabs)).find((tab) => !before.has(tab)) ?? 0;
          return id;
        },
        { timeout: 15_000, message: 'the background never stored the new tab' },
      )
      .toBeGreaterThan(0);
    return { tab, id };
  }

  async function openPanel(tabId: number): Promise<BrowserTab> {
    const panel = await browser.open(browser.extensionUrl(`panel.html?tabId=${tabId}`));
    // The panel hands out its API from an effect, after its first render: not by 'load'.
    await expect.poll(() => panel.evaluate(panelReady)).toBe(true);
    return panel;
  }

  it('says Retryline was not detected on a page without it, and no requests yet once a page creates a client', async () => {
    const { tab, id } = await openTab('/plain');
    const panel = await openPanel(id);
    await expect
      .poll(() => panel.evaluate(emptyState), { timeout: 10_000 })
      .toEqual({ state: 'not-detected', said: 'Retryline not detected on this page.' });

    // The same tab goes to a page that creates a client: the open panel follows it.
    await tab.goto(`${server.url}/client`);
    await expect.poll(() => tab.evaluate(hasClient)).toBe(true);
    await expect
      .poll(() => panel.evaluate(emptyState), { timeout: 10_000 })
      .toEqual({ state: 'no-requests', said: 'Retryline is on this page: no requests yet.' });

    // Two documents and no Retryline event: the tab's index holds its page state, nothing of where it
    // went (its write of the second page's state carries whatever the navigation stored).
    const ofTab = async () =>
      Object.entries(await probe.evaluate(storedSession)).filter(
        ([key]) => key === `tab:${id}` || key.startsWith(`tab:${id}/`),
      );
    await expect
      .poll(ofTab, { timeout: 10_000 })
      .toEqual([[`tab:${id}`, expect.objectContaining({ page: { hooked: true, detected: true } })]]);
    const stored = JSON.stringify(await ofTab());
    expect(stored).not.toContain(new URL(server.url).host);
    expect(stored).not.toMatch(/\/plain|\/client/);
    await panel.close();
    await tab.close();
  }, 60_000);

  it('says no requests yet on a page that has created a client, for a panel opened after it', async () => {
    const { tab, id } = await openTab('/client');
    await expect.poll(() => tab.evaluate(hasClient)).toBe(true);
    const panel = await openPanel(id);
    await expect
      .poll(() => panel.evaluate(emptyState), { timeout: 10_000 })
      .toEqual({ state: 'no-requests', said: 'Retryline is on this page: no requests yet.' });
    await panel.close();
    await tab.close();
  }, 60_000);

  it('asks for a reload where no relay of the extension ever reported the tab’s page', async () => {
    const panel = await openPanel(2_000_000_000);
    await expect
      .poll(() => panel.evaluate(emptyState), { timeout: 10_000 })
      .toEqual({ state: 'not-hooked', said: 'The extension is not running in this page.' });
    await panel.close();
  }, 30_000);
});
