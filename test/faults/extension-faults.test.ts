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
import type { CallResult } from './fault-page';

// Fault injection through the built extension, in both browsers it ships for, driven as the
// panel's Faults tab will drive it: an extension page opens a panel port, subscribes to the tab and
// sends rules. The page's Retryline requests then take the injected attempts; a new document of the
// tab gets the rules again; a page that opted out is untouched; closing the panel removes them. The
// rules reach the page's own origin only: the top frame and its same-origin frames, never a frame
// of another origin (an ad, a widget), whose scripts could read them and whose requests they
// would fault.

const browsers = EXTENSION_BROWSERS;

const RULES = [
  {
    id: 'api',
    method: 'GET',
    url: '/api/',
    steps: [{ step: 'status', status: 503 }, { step: 'status', status: 503 }, { step: 'passthrough' }],
  },
];

type FaultWindow = Window & {
  faultPage: {
    call(path: string): Promise<CallResult>;
    faults(): unknown[];
    loaded(): boolean;
    frameCall(index: number, path: string): Promise<CallResult>;
    frameFaults(index: number): Promise<unknown[]>;
    reloadFrame(index: number): Promise<void>;
  };
  faultPort?: { postMessage(message: unknown): void; disconnect(): void };
  faultUpdates?: unknown[];
};
type ExtensionApi = {
  runtime: {
    connect(info: { name: string }): {
      postMessage(message: unknown): void;
      disconnect(): void;
      onMessage: { addListener(listener: (message: unknown) => void): void };
    };
  };
  storage: { session: { get(keys: null): Promise<Record<string, unknown>> } };
};

// Run inside the browser: they travel as source text, so they use only their arguments and globals.
const hasPage = () => 'faultPage' in window;
const call = (path: string) => (window as unknown as FaultWindow).faultPage.call(path);
const loaded = () => 'faultPage' in window && (window as unknown as FaultWindow).faultPage.loaded();
const pageFaults = () => (window as unknown as FaultWindow).faultPage.faults();
const frameCall = (index: number, path: string) =>
  (window as unknown as FaultWindow).faultPage.frameCall(index, path);
const frameFaults = (index: number) => (window as unknown as FaultWindow).faultPage.frameFaults(index);
const reloadFrame = (index: number) => (window as unknown as FaultWindow).faultPage.reloadFrame(index);
/** Opens a panel's port from an extension page, subscribes to the tab and sends its rules. */
const openPanelPort = (tabId: number, rules: unknown[]) => {
  const scope = globalThis as unknown as { browser?: ExtensionApi; chrome?: ExtensionApi };
  const api = (scope.browser ?? scope.chrome) as ExtensionApi;
  const view = window as unknown as FaultWindow;
  const port = api.runtime.connect({ name: 'retryline-panel' });
  view.faultUpdates = [];
  port.onMessage.addListener((message) => view.faultUpdates?.push(message));
  port.postMessage({ kind: 'subscribe', tabId });
  port.postMessage({ kind: 'faults', tabId, rules });
  view.faultPort = port;
};
const faultUpdates = () =>
  ((window as unknown as FaultWindow).faultUpdates ?? []).filter(
    (update) => (update as { kind?: string }).kind === 'faults',
  );
const storedSession = () => {
  const scope = globalThis as unknown as { browser?: ExtensionApi; chrome?: ExtensionApi };
  return ((scope.browser ?? scope.chrome) as ExtensionApi).storage.session.get(null);
};

/**
 * Records every message of kind `faults` its window gets, from the document's start: inline, so it
 * listens before the relay can post anything to the page (what any script of the page could read).
 */
const RECORD_FAULTS = `<script>
  window.faultMessages = [];
  addEventListener('message', (event) => {
    if (event.data && event.data.kind === 'faults') window.faultMessages.push(event.data);
  });
</script>`;

/** A page of `frames`' documents, in this order. */
const framing = (frames: readonly string[]) => frames.map((src) => `<iframe src="${src}"></iframe>`).join('');

describe.each(browsers)('fault injection in $name', ({ dir, launch }) => {
  let server: FaultServer;
  /** Another origin (another loopback port): a third party's, to the app on `server`. */
  let other: FaultServer;
  let sink: OutboundSink;
  let browser: ExtensionBrowser;
  let probe: BrowserTab;

  beforeAll(async () => {
    requireBuiltExtension(dir);
    const pageScript = await developmentPageScript(new URL('fault-page.ts', import.meta.url));
    server = await startFaultServer();
    other = await startFaultServer();
    const script = '<script src="/page.js"></script>';
    const frame = `<!doctype html><title>frame</title>${RECORD_FAULTS}${script}`;
    for (const origin of [server, other]) {
      origin.static('/page.js', pageScript, 'text/javascript');
      origin.static('/frame', frame, 'text/html');
    }
    // The app with a frame of its own origin (0) and a third party's (1).
    server.static(
      '/framed',
      `<!doctype html><title>app</title>${RECORD_FAULTS}${script}${framing([`${server.url}/frame`, `${other.url}/frame`])}`,
      'text/html',
    );
    // Another site, embedding the app's origin.
    other.static(
      '/framed',
      `<!doctype html><title>other</title>${RECORD_FAULTS}${script}${framing([`${server.url}/frame`])}`,
      'text/html',
    );
    server.static('/', `<!doctype html><title>app</title>${script}`, 'text/html');
    server.static(
      '/opted-out',
      `<!doctype html><meta name="retryline-faults" content="off"><title>opted out</title>${script}`,
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
    await other?.close();
  });

  /** The tabs storage.session holds a timeline for. */
  async function storedTabs(): Promise<Set<number>> {
    const stored = await probe.evaluate(storedSession);
    return new Set(
      Object.keys(stored)
        .filter((key) => /^tab:\d+$/.test(key))
        .map((key) => Number(key.slice(4))),
    );
  }

  /** The app in a new tab, and the tab's id, once a request of its has reached the worker. */
  async function appTab(path = '/'): Promise<{ tab: BrowserTab; id: number }> {
    const before = await storedTabs();
    const tab = await browser.open(`${server.url}${path}`);
    await expect.poll(() => tab.evaluate(loaded)).toBe(true);
    await tab.evaluate(call, '/api/first');
    let id = 0;
    await expect
      .poll(
        async () => {
          id = [...(await storedTabs())].find((tab) => !before.has(tab)) ?? 0;
          return id;
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    return { tab, id };
  }

  it('a rule sent as the panel sends it makes the page’s Retryline request take 3 attempts, until the panel closes', async () => {
    server.script('/api/items', [{ status: 200, body: 'real' }]);
    server.script('/api/first', [{ status: 200 }]);
    const { tab, id } = await appTab();
    const panel = await browser.open(browser.extensionUrl('panel.html'));
    await panel.evaluate(openPanelPort, id, RULES);
    // The worker tells the panel what it keeps and has sent to the tab, and the top origin it is for.
    await expect
      .poll(() => panel.evaluate(faultUpdates))
      .toEqual([{ kind: 'faults', tabId: id, rules: RULES, origin: server.url, applied: true }]);

    const attempted = { status: 200, attempts: 3, injected: [1, 2] };
    await expect.poll(() => tab.evaluate(call, '/api/items'), { timeout: 10_000 }).toEqual(attempted);
    // The injected attempts never reached the server; the third did.
    const before = server.requests('/api/items').length;
    expect(await tab.evaluate(call, '/api/items')).toEqual(attempted);
    expect(server.requests('/api/items')).toHaveLength(before + 1);
    // A path the rule does not name is untouched.
    expect(await tab.evaluate(call, '/api-free/x')).toEqual({ status: 404, attempts: 1, injected: [] });
    // The worker kept the marks (its schema takes `injected`); its chunks are stored as JSON text.
    await expect
      .poll(async () => JSON.stringify(await probe.evaluate(storedSession)), { timeout: 10_000 })
      .toMatch(/\\"injected\\":true/);

    // A new document of the tab gets the rules again.
    await tab.reload();
    await expect.poll(() => tab.evaluate(hasPage)).toBe(true);
    await expect.poll(() => tab.evaluate(call, '/api/items'), { timeout: 10_000 }).toEqual(attempted);

    // A page that opted out is untouched, in the same tab, with the same rules.
    await tab.goto(`${server.url}/opted-out`);
    await expect.poll(() => tab.evaluate(hasPage)).toBe(true);
    expect(await tab.evaluate(call, '/api/items')).toEqual({ status: 200, attempts: 1, injected: [] });

    // Back on the app, the rules apply; closing the panel takes them away.
    await tab.goto(`${server.url}/`);
    await expect.poll(() => tab.evaluate(hasPage)).toBe(true);
    await expect.poll(() => tab.evaluate(call, '/api/items'), { timeout: 10_000 }).toEqual(attempted);
    await panel.close();
    await expect
      .poll(() => tab.evaluate(call, '/api/items'), { timeout: 10_000 })
      .toEqual({ status: 200, attempts: 1, injected: [] });
    await tab.close();
  }, 90_000);

  it('sends the rules to the page’s own origin only: a frame of another origin is not faulted and never sees them', async () => {
    const attempted = { status: 200, attempts: 3, injected: [1, 2] };
    const untouched = { status: 200, attempts: 1, injected: [] };
    for (const origin of [server, other]) origin.script('/api/items', [{ status: 200, body: 'real' }]);
    server.script('/api/first', [{ status: 200 }]);
    const { tab, id } = await appTab('/framed');
    const panel = await browser.open(browser.extensionUrl('panel.html'));
    await panel.evaluate(openPanelPort, id, RULES);
    await expect
      .poll(() => panel.evaluate(faultUpdates))
      .toEqual([{ kind: 'faults', tabId: id, rules: RULES, origin: server.url, applied: true }]);

    // The top page and its frame of the same origin are the app: both are faulted.
    await expect.poll(() => tab.evaluate(call, '/api/items'), { timeout: 10_000 }).toEqual(attempted);
    await expect.poll(() => tab.evaluate(frameCall, 0, '/api/items'), { timeout: 10_000 }).toEqual(attempted);
    // The third party's frame is not, and nothing in it saw a rule; the app's windows did.
    const otherItems = other.requests('/api/items').length;
    expect(await tab.evaluate(frameCall, 1, '/api/items')).toEqual(untouched);
    expect(other.requests('/api/items')).toHaveLength(otherItems + 1);
    expect(await tab.evaluate(frameFaults, 1)).toEqual([]);
    expect(await tab.evaluate(pageFaults)).toContainEqual(expect.objectContaining({ rules: RULES }));
    expect(await tab.evaluate(frameFaults, 0)).toContainEqual(expect.objectContaining({ rules: RULES }));

    // A new document in each frame: the app's is given the rules, the third party's is not.
    await tab.evaluate(reloadFrame, 0);
    await tab.evaluate(reloadFrame, 1);
    await expect.poll(() => tab.evaluate(frameCall, 0, '/api/items'), { timeout: 10_000 }).toEqual(attempted);
    expect(await tab.evaluate(frameCall, 1, '/api/items')).toEqual(untouched);
    expect(await tab.evaluate(frameFaults, 1)).toEqual([]);

    // The rules are bound to the origin the top document had when they were set: on another site
    // (a link followed, or a frame that navigated the tab) nothing is faulted, and no window sees
    // them, the frame of the app's origin it embeds included. The panel is told they are paused.
    await tab.goto(`${other.url}/framed`);
    await expect.poll(() => tab.evaluate(loaded)).toBe(true);
    await expect
      .poll(() => panel.evaluate(faultUpdates))
      .toContainEqual({ kind: 'faults', tabId: id, rules: RULES, origin: server.url, applied: false });
    expect(await tab.evaluate(call, '/api/items')).toEqual(untouched);
    expect(await tab.evaluate(frameCall, 0, '/api/items')).toEqual(untouched);
    expect(await tab.evaluate(pageFaults)).toEqual([]);
    expect(await tab.evaluate(frameFaults, 0)).toEqual([]);

    // Back on the app, they apply again; closing the panel takes them away from every frame that had them.
    await tab.goto(`${server.url}/framed`);
    await expect.poll(() => tab.evaluate(loaded)).toBe(true);
    await expect.poll(() => tab.evaluate(call, '/api/items'), { timeout: 10_000 }).toEqual(attempted);
    await expect.poll(() => tab.evaluate(frameCall, 0, '/api/items'), { timeout: 10_000 }).toEqual(attempted);
    await panel.close();
    await expect.poll(() => tab.evaluate(call, '/api/items'), { timeout: 10_000 }).toEqual(untouched);
    await expect.poll(() => tab.evaluate(frameCall, 0, '/api/items'), { timeout: 10_000 }).toEqual(untouched);
    expect(await tab.evaluate(frameFaults, 1)).toEqual([]);
    await tab.close();
  }, 90_000);
});
