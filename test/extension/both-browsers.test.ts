import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toHar, toRecording } from '../../extension/src/model/export';
import { API, EU, gateScenario, hedgeScenario, US } from '../../extension/src/model/fixtures';
import { foldTimeline } from '../../extension/src/model/timeline';
import {
  type BrowserTab,
  EXTENSION_DIST,
  type ExtensionBrowser,
  launchChromiumWith,
  launchFirefoxWith,
} from '../support/extension-browser';
import type { FaultServer } from '../support/fault-server';
import { proxyPrefs } from '../support/firefox';
import { type OutboundSink, startOutboundSink } from '../support/outbound-sink';
import { startFixtureServer } from './fixture-server';

// The built extension in both browsers it ships for: Debian's Chromium (extension/dist/chrome,
// its background a service worker) and Firefox ESR (extension/dist/firefox, an event page). The
// fixture page on loopback sends requests through Retryline's adapters against the fault server;
// the hook, relay and background record them; the panel page, opened at the extension's own URL
// as DevTools opens it (`panel.html?tabId=N`), shows them. Every case only reads what the page and
// the panel show, so it is written once for both browsers.
//
// Neither browser reaches beyond loopback: Chromium's resolver knows no other name (its flags,
// checked in test/support/chromium.test.ts), Firefox refuses non-local connections. Firefox's only
// way out is moreover a proxy that forwards nothing (test/support/outbound-sink.ts), so its last
// case can check that, with its background requests switched off, it asked for nothing at all.

const browsers = [
  {
    name: 'Chromium',
    dir: EXTENSION_DIST.chrome,
    launch: (dir: string) => launchChromiumWith(dir),
    proxied: false,
  },
  {
    name: 'Firefox',
    dir: EXTENSION_DIST.firefox,
    launch: (dir: string, sink: OutboundSink) => launchFirefoxWith(dir, proxyPrefs(sink.port)),
    proxied: true,
  },
];

// What the page and the panel expose, as the functions below see them inside the browser.
interface Fixture {
  run(base: string): Promise<Record<string, string>>;
  forge(kind: string): void;
  ordinary(from: number, count: number): void;
}
interface PanelApi {
  rows(): number;
  exportJson(): string;
  exportHar(): string;
  importText(text: string): void;
}
type PageWindow = Window & { fixture: Fixture; __retrylinePanel?: PanelApi; retrylineMark?: string };
interface StorageArea {
  get(keys: null): Promise<Record<string, unknown>>;
}
type ExtensionGlobal = { browser?: { storage: { session: StorageArea } } };

// Functions run inside a page or a panel: they travel as source text, so they use only their
// arguments and the page's globals.
const hasFixture = () => 'fixture' in window;
const runFixture = (base: string) => (window as unknown as PageWindow).fixture.run(base);
const forge = (kind: string) => (window as unknown as PageWindow).fixture.forge(kind);
const sendOrdinary = (from: number, count: number) =>
  (window as unknown as PageWindow).fixture.ordinary(from, count);
const panelReady = () => (window as unknown as PageWindow).__retrylinePanel !== undefined;
const panelRows = () => (window as unknown as PageWindow).__retrylinePanel?.rows() ?? -1;
const exportJson = () => (window as unknown as PageWindow).__retrylinePanel?.exportJson() ?? '';
const exportHar = () => (window as unknown as PageWindow).__retrylinePanel?.exportHar() ?? '';
const importText = (text: string) => (window as unknown as PageWindow).__retrylinePanel?.importText(text);
const setFilter = (text: string) => {
  const input = document.querySelector('[data-testid="filter"]') as HTMLInputElement;
  input.value = text;
  input.dispatchEvent(new Event('input', { bubbles: true }));
};
const click = (testId: string) =>
  (document.querySelector(`[data-testid="${testId}"]`) as HTMLElement).click();
/** The rows the panel shows: each one's id, frame, text, attempt bars and wait kinds. */
const shownRows = () =>
  [...document.querySelectorAll('[data-testid="request-row"]')].map((row) => ({
    id: row.getAttribute('data-request-id'),
    source: row.getAttribute('data-source'),
    text: row.textContent ?? '',
    attempts: row.querySelectorAll('[data-testid="attempt-bar"]').length,
    waits: [...row.querySelectorAll('[data-testid="wait"]')].map((wait) => wait.getAttribute('data-kind')),
  }));
/** Each row's attempt bars and hedge bars, placed within the row (px from its top). */
const barsByRow = () =>
  [...document.querySelectorAll('[data-testid="request-row"]')].map((row) => {
    const box = row.getBoundingClientRect();
    const place = (bar: Element) => {
      const at = bar.getBoundingClientRect();
      return { top: at.top - box.top, bottom: at.bottom - box.top, title: bar.getAttribute('title') ?? '' };
    };
    return {
      id: row.getAttribute('data-request-id'),
      height: box.height,
      attempts: [...row.querySelectorAll('[data-testid="attempt-bar"]')].map(place),
      hedges: [...row.querySelectorAll('[data-hedge="true"]')].map(place),
    };
  });
const openRow = (id: string) =>
  (document.querySelector(`[data-testid="request-row"][data-request-id="${id}"]`) as HTMLElement).click();
const detailEndpoints = () =>
  [...document.querySelectorAll('[data-testid="detail-endpoint"]')].map((element) => element.textContent);
const separators = () =>
  [...document.querySelectorAll('[data-testid="navigation"]')].map((element) => element.textContent ?? '');
const probeLabels = (key: string) =>
  [...document.querySelectorAll(`[data-testid="lane"][data-key="${key}"] [data-testid="probe"]`)].map(
    (element) => element.getAttribute('aria-label'),
  );
/** Everything `storage.session` holds, read from an extension page (`browser` in Firefox, `chrome` in Chromium). */
const storedSession = () => {
  const extension = globalThis as unknown as ExtensionGlobal & { chrome?: ExtensionGlobal['browser'] };
  const api = extension.browser ?? extension.chrome;
  return api ? api.storage.session.get(null) : Promise.resolve({});
};
const setMark = (mark: string) => {
  (window as unknown as PageWindow).retrylineMark = mark;
};
const readMark = () => (window as unknown as PageWindow).retrylineMark ?? null;

describe.each(browsers)('the Retryline extension in $name', ({ dir, launch, proxied }) => {
  let server: FaultServer;
  let sink: OutboundSink;
  let browser: ExtensionBrowser;
  /** An extension page kept open to read `storage.session` from. */
  let probe: BrowserTab;

  beforeAll(async () => {
    if (!existsSync(join(dir, 'manifest.json'))) {
      throw new Error(`${dir} is not built: run \`pnpm build:extension\` (pnpm test builds it)`);
    }
    server = await startFixtureServer();
    sink = await startOutboundSink();
    browser = await launch(dir, sink);
    probe = await browser.open(browser.extensionUrl('panel.html'));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await sink?.close();
    await server?.close();
  });

  async function storedTabs(): Promise<Set<number>> {
    const stored = await probe.evaluate(storedSession);
    return new Set(
      Object.keys(stored)
        .filter((key) => /^tab:\d+$/.test(key))
        .map((key) => Number(key.slice(4))),
    );
  }

  /** A new tab on the fixture page that runs `send`, and its id once the background stored it. */
  async function fixtureTab(
    send: (tab: BrowserTab) => Promise<unknown>,
  ): Promise<{ tab: BrowserTab; id: number }> {
    const before = await storedTabs();
    const tab = await browser.open(`${server.url}/`);
    await expect.poll(() => tab.evaluate(hasFixture)).toBe(true);
    await send(tab);
    let id = 0;
    await expect
      .poll(
        async () => {
          id = [...(await storedTabs())].find((tab) => !before.has(tab)) ?? 0;
          return id;
        },
        { timeout: 15_000, message: 'storage.session never got the new tab' },
      )
      .toBeGreaterThan(0);
    return { tab, id };
  }

  async function openPanel(query = ''): Promise<BrowserTab> {
    const panel = await browser.open(browser.extensionUrl(`panel.html${query}`));
    // The panel hands out its API from an effect, after its first render: not by 'load'.
    await expect.poll(() => panel.evaluate(panelReady)).toBe(true);
    return panel;
  }

  it('shows each request of a loopback page with its attempts and waits; its JSON and HAR exports import into a panel with no page', async () => {
    server.script('/fetch-flaky', [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
    server.script('/axios-flaky', [{ status: 503 }, { status: 200, body: 'ok' }]);
    server.script('/ky-flaky', [
      { status: 429, headers: { 'Retry-After': '1' } },
      { status: 200, body: 'ok' },
    ]);
    let results: Record<string, string> = {};
    const { tab, id } = await fixtureTab(async (page) => {
      results = await page.evaluate(runFixture, server.url);
    });
    expect(results).toEqual({ fetch: '200', axios: 'ok', ky: '200' });

    const panel = await openPanel(`?tabId=${id}`);
    await panel.evaluate(setFilter, 'flaky');
    await expect.poll(async () => (await panel.evaluate(shownRows)).length, { timeout: 10_000 }).toBe(3);
    const byPath = async (view: BrowserTab) => {
      const rows = await view.evaluate(shownRows);
      const find = (path: string) => rows.find((row) => row.text.includes(path));
      return { fetch: find('/fetch-flaky'), axios: find('/axios-flaky'), ky: find('/ky-flaky') };
    };
    const shown = await byPath(panel);
    expect(shown.fetch).toMatchObject({ attempts: 3, waits: ['backoff', 'backoff'] });
    expect(shown.axios).toMatchObject({ attempts: 2, waits: ['backoff'] });
    expect(shown.ky).toMatchObject({ attempts: 2, waits: ['retry-after'] });
    expect(shown.fetch?.source).toBe(server.url);

    const json = await panel.evaluate(exportJson);
    expect(json).not.toContain('page-secret'); // the fetch request's Authorization value
    const har = await panel.evaluate(exportHar);
    for (const exported of [json, har]) {
      const viewer = await openPanel();
      await viewer.evaluate(importText, exported);
      await viewer.evaluate(setFilter, 'flaky');
      await expect.poll(async () => (await viewer.evaluate(shownRows)).length, { timeout: 10_000 }).toBe(3);
      const imported = await byPath(viewer);
      expect([imported.fetch?.attempts, imported.axios?.attempts, imported.ky?.attempts]).toEqual([3, 2, 2]);
      await viewer.close();
    }
    await panel.close();
    await tab.close();
  }, 60_000);

  it('opens an imported recording in a panel with no page: the recovery gate’s probes in the origin’s lane', async () => {
    const panel = await openPanel();
    await panel.evaluate(importText, JSON.stringify(toRecording(gateScenario(), 'gate test')));
    await expect.poll(() => panel.evaluate(panelRows), { timeout: 10_000 }).toBe(4);
    expect(await panel.evaluate(probeLabels, API)).toEqual([
      'probe 503: still failing',
      'probe 200: recovered',
    ]);
    await panel.close();
  }, 30_000);

  it('draws an imported HAR’s hedges beside the attempts they hedged, and names every attempt’s endpoint', async () => {
    const panel = await openPanel();
    await panel.evaluate(importText, JSON.stringify(toHar(foldTimeline(hedgeScenario()))));
    await expect.poll(() => panel.evaluate(panelRows), { timeout: 10_000 }).toBe(3);
    const [h1, h2, h3] = await panel.evaluate(barsByRow);
    expect([h1?.attempts.length, h2?.attempts.length, h3?.attempts.length]).toEqual([2, 1, 1]);
    expect([h1?.hedges.length, h2?.hedges.length, h3?.hedges.length]).toEqual([1, 1, 0]);
    // Both bars of a hedged attempt lie within the row, the hedge's below its attempt's.
    for (const row of [h1, h2]) {
      const attempt = row?.attempts.at(-1);
      const hedge = row?.hedges[0];
      if (!row || !attempt || !hedge) throw new Error('no bars');
      expect(hedge.top).toBeGreaterThanOrEqual(attempt.bottom);
      expect(attempt.top).toBeGreaterThanOrEqual(0);
      expect(hedge.bottom).toBeLessThanOrEqual(row.height);
      expect(hedge.title).toMatch(/^hedge of attempt \d: .* · to https:\/\/eu\.api\.example$/);
    }
    expect(h1?.attempts[1]?.title).toMatch(
      /^attempt 2: cancelled: hedge answered · .* · to https:\/\/us\.api\.example$/,
    );
    await panel.evaluate(openRow, 'h1');
    await expect
      .poll(() => panel.evaluate(detailEndpoints))
      .toEqual([`Endpoint: ${EU}`, `Endpoint: ${US}`, `Endpoint: ${EU}`]);
    await panel.evaluate(setFilter, 'endpoint:us.api -is:retried');
    await expect.poll(async () => (await panel.evaluate(shownRows)).map((row) => row.id)).toEqual(['h2']);
    await panel.close();
  }, 30_000);

  it('drops what a page forges (wrong namespace, version, kind, schema, size) and stores no credential', async () => {
    const { tab, id } = await fixtureTab(async (page) => {
      for (const kind of ['wrong-namespace', 'wrong-version', 'unknown-kind', 'invalid-schema', 'oversize']) {
        await page.evaluate(forge, kind);
      }
      // Sent last, it proves the channel was open while the others were dropped.
      await page.evaluate(forge, 'valid');
    });
    const panel = await openPanel(`?tabId=${id}`);
    await expect.poll(() => panel.evaluate(panelRows), { timeout: 10_000 }).toBe(1);
    expect((await panel.evaluate(shownRows)).map((row) => row.id)).toEqual(['forged-valid']);
    const stored = JSON.stringify(await probe.evaluate(storedSession));
    expect(stored).toContain('forged-valid');
    expect(stored).not.toMatch(/forged-(wrong|unknown|invalid|oversize)/);
    expect(stored).not.toContain('page-secret');
    await panel.close();
    await tab.close();
  }, 30_000);

  it('starts a new page at each new document of the tab, its URL masked; Preserve log keeps the rows across it', async () => {
    const { tab, id } = await fixtureTab((page) => page.evaluate(sendOrdinary, 0, 1));
    const panel = await openPanel(`?tabId=${id}`);
    await expect.poll(() => panel.evaluate(panelRows), { timeout: 10_000 }).toBe(1);

    // Without Preserve log the old page's rows go; a separator names the new document.
    await tab.goto(`${server.url}/other?token=s3cret&lang=en#access_token=t0ken`);
    await expect.poll(() => panel.evaluate(panelRows), { timeout: 10_000 }).toBe(0);
    await expect.poll(() => tab.evaluate(hasFixture)).toBe(true);
    await tab.evaluate(sendOrdinary, 1, 1);
    await expect.poll(() => panel.evaluate(panelRows), { timeout: 10_000 }).toBe(1);
    const other = `Navigated to ${server.url}/other?token=***&lang=***`;
    expect(await panel.evaluate(separators)).toEqual([other]);
    expect(JSON.stringify(await probe.evaluate(storedSession))).not.toMatch(/s3cret|t0ken/);

    // With it, a reload adds a separator and the rows stay.
    await panel.evaluate(click, 'preserve-log');
    await tab.reload();
    await expect.poll(() => tab.evaluate(hasFixture)).toBe(true);
    await tab.evaluate(sendOrdinary, 2, 1);
    await expect.poll(() => panel.evaluate(panelRows), { timeout: 10_000 }).toBe(2);
    expect(await panel.evaluate(separators)).toEqual([other, other]);
    await panel.close();
    await tab.close();
  }, 30_000);

  it('starts a new page when the tab goes back to a document kept in the back/forward cache', async () => {
    const { tab, id } = await fixtureTab((page) => page.evaluate(sendOrdinary, 0, 1));
    const panel = await openPanel(`?tabId=${id}`);
    await tab.goto(`${server.url}/other`);
    await expect.poll(() => tab.evaluate(hasFixture)).toBe(true);
    await tab.evaluate(setMark, 'kept');
    await tab.evaluate(sendOrdinary, 1, 1);
    await expect
      .poll(() => panel.evaluate(separators), { timeout: 10_000 })
      .toEqual([`Navigated to ${server.url}/other`]);
    await tab.goto(`${server.url}/`);
    await expect.poll(() => panel.evaluate(panelRows), { timeout: 10_000 }).toBe(0);

    await tab.back();
    // The page came back as it was left: its scripts, the relay among them, did not run again ...
    await expect.poll(() => tab.evaluate(readMark), { timeout: 10_000 }).toBe('kept');
    // ... yet the relay reported it, so its requests start a page of their own.
    await tab.evaluate(sendOrdinary, 2, 1);
    await expect.poll(() => panel.evaluate(panelRows), { timeout: 10_000 }).toBe(1);
    expect(await panel.evaluate(separators)).toEqual([`Navigated to ${server.url}/other`]);
    await panel.close();
    await tab.close();
  }, 30_000);

  // Only a browser whose traffic goes through the sink can say what it asked for (Chromium's is cut
  // off by its resolver rule, test/support/chromium.test.ts).
  if (proxied) {
    it('asked for nothing beyond loopback', () => {
      expect(sink.requests).toEqual([]);
    });
  }
});
