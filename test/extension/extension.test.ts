import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startViewer } from '@retryline/cli';
import { RETRY, recordEvents, retry } from '@retryline/core';
import { build } from 'esbuild';
import { type BrowserContext, chromium, type Page, type Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toRecording } from '../../extension/src/model/export';
import { API, gateScenario } from '../../extension/src/model/fixtures';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../support/chromium';
import { type FaultServer, startFaultServer } from '../support/fault-server';

// The built extension (extension/dist/chrome, made by `pnpm build`) in Debian's Chromium: a fixture
// page on loopback sends requests through fetch, axios and ky against the fault server; the
// extension's hook, relay and service worker record their events; the real panel page shows them.

// The extension API inside the service worker, where `worker.evaluate` runs its callbacks.
declare const chrome: {
  storage: {
    session: {
      get(keys: null): Promise<Record<string, unknown>>;
      getBytesInUse(keys: string[] | null): Promise<number>;
      readonly QUOTA_BYTES: number;
    };
  };
};

const EXTENSION = fileURLToPath(new URL('../../extension/dist/chrome/', import.meta.url));
const OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));

let server: FaultServer;
/** The fixture page's script, bundled once: a frame of another origin loads it too. */
let fixtureScript: string;
let context: BrowserContext;
let page: Page;
let extensionId: string;
let tabId: number;

interface PanelApi {
  rows(): number;
  exportJson(): string;
  exportHar(): string;
  importText(text: string): void;
}
type PanelWindow = Window & { __retrylinePanel: PanelApi };

const worker = (): Worker | undefined =>
  context.serviceWorkers().find((w) => w.url().startsWith(`chrome-extension://${extensionId}/`));

beforeAll(async () => {
  requireChromium();
  if (!existsSync(join(EXTENSION, 'manifest.json'))) {
    throw new Error(`${EXTENSION} is not built: run \`pnpm build\` (pnpm test does)`);
  }
  server = await startFaultServer();
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('fixture-page.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    conditions: ['@retryline/source', 'browser'],
  });
  fixtureScript = bundle.outputFiles[0]?.text ?? '';
  server.static('/app.js', fixtureScript, 'text/javascript');
  server.static('/', '<!doctype html><title>fixture</title><script src="/app.js"></script>', 'text/html');
  context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'retryline-ext-')), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 800 },
    args: [`--disable-extensions-except=${EXTENSION}`, `--load-extension=${EXTENSION}`, ...CHROMIUM_ARGS],
  });
  const sw =
    context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker', { timeout: 15_000 }));
  extensionId = new URL(sw.url()).host;
  page = await context.newPage();
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => 'fixture' in window);
  // The tab's id, as the worker knows it: the one key it mirrors to storage.session.
  for (let tries = 0; tries < 50 && !tabId; tries++) {
    await page.evaluate(() =>
      (window as never as { fixture: { forge(k: string): void } }).fixture.forge('valid'),
    );
    await page.waitForTimeout(200);
    const stored = (await worker()?.evaluate(() => chrome.storage.session.get(null))) ?? {};
    tabId = Number(
      Object.keys(stored)
        .find((key) => /^tab:\d+$/.test(key))
        ?.slice(4) ?? 0,
    );
  }
  if (!tabId) throw new Error('the service worker recorded nothing from the fixture page');
}, 60_000);

afterAll(async () => {
  await context?.close();
  await server?.close();
});

const rows = (panel: Page) => panel.locator('[data-testid="request-row"]');
const rowOf = (panel: Page, path: string) => rows(panel).filter({ hasText: path });

async function openPanel(query = `?tabId=${tabId}`): Promise<Page> {
  const panel = await context.newPage();
  await panel.goto(`chrome-extension://${extensionId}/panel.html${query}`);
  // The panel hands out its API from an effect, after its first render: not by 'load'.
  await panel.waitForFunction(() => (window as never as PanelWindow).__retrylinePanel !== undefined);
  return panel;
}

async function sendThroughEveryClient(): Promise<Record<string, string>> {
  server.script('/fetch-flaky', [{ status: 503 }, { status: 503 }, { status: 200, body: 'ok' }]);
  server.script('/axios-flaky', [{ status: 503 }, { status: 200, body: 'ok' }]);
  server.script('/ky-flaky', [
    { status: 429, headers: { 'Retry-After': '1' } },
    { status: 200, body: 'ok' },
  ]);
  return page.evaluate(
    (base) =>
      (window as never as { fixture: { run(b: string): Promise<Record<string, string>> } }).fixture.run(base),
    server.url,
  );
}

describe('the Retryline extension in Chromium', () => {
  it('shows each request of the page with its attempts and labelled waits; filters; export and import give the same rows', async () => {
    expect(await sendThroughEveryClient()).toEqual({ fetch: '200', axios: 'ok', ky: '200' });
    const panel = await openPanel();
    await panel.locator('[data-testid="filter"]').fill('flaky');
    await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBe(3);

    const bars = (path: string) => rowOf(panel, path).locator('[data-testid="attempt-bar"]');
    expect(await bars('/fetch-flaky').count()).toBe(3);
    expect(await bars('/axios-flaky').count()).toBe(2);
    expect(await bars('/ky-flaky').count()).toBe(2);
    const waits = (path: string) => rowOf(panel, path).locator('[data-testid="wait"]').allTextContents();
    expect(await waits('/fetch-flaky')).toHaveLength(2);
    for (const label of await waits('/fetch-flaky')) expect(label).toMatch(/backoff/i);
    const [hinted] = await waits('/ky-flaky');
    expect(hinted).toMatch(/retry-after/i);

    await panel.locator('[data-testid="filter"]').fill('axios-flaky');
    await expect.poll(() => rows(panel).count()).toBe(1);
    await panel.locator('[data-testid="filter"]').fill('re:(fetch|ky)-flaky');
    await expect.poll(() => rows(panel).count()).toBe(2);
    await panel.locator('[data-testid="filter"]').fill('flaky');
    await expect.poll(() => rows(panel).count()).toBe(3);
    mkdirSync(OUTPUT, { recursive: true });
    await panel.screenshot({ path: join(OUTPUT, 'extension-panel.png') });

    // Export, then import into a panel with no page attached: the same rows.
    const exported = await panel.evaluate(() =>
      (window as never as PanelWindow).__retrylinePanel.exportJson(),
    );
    expect(exported).not.toContain('page-secret'); // the fetch request's Authorization value
    const viewer = await openPanel('');
    await viewer.evaluate(
      (text) => (window as never as PanelWindow).__retrylinePanel.importText(text),
      exported,
    );
    await viewer.locator('[data-testid="filter"]').fill('flaky');
    await expect.poll(() => rows(viewer).count()).toBe(3);
    for (const [path, count] of [
      ['/fetch-flaky', 3],
      ['/axios-flaky', 2],
      ['/ky-flaky', 2],
    ] as const) {
      expect(await rowOf(viewer, path).locator('[data-testid="attempt-bar"]').count()).toBe(count);
    }
    const har = await panel.evaluate(() => (window as never as PanelWindow).__retrylinePanel.exportHar());
    const harViewer = await openPanel('');
    await harViewer.evaluate(
      (text) => (window as never as PanelWindow).__retrylinePanel.importText(text),
      har,
    );
    await harViewer.locator('[data-testid="filter"]').fill('flaky');
    await expect.poll(() => rows(harViewer).count()).toBe(3);
    expect(await rowOf(harViewer, '/fetch-flaky').locator('[data-testid="attempt-bar"]').count()).toBe(3);
    await Promise.all([panel.close(), viewer.close(), harViewer.close()]);
  }, 60_000);

  it('shows the recovery gate in the origin’s lane of an imported recording: parked spans and each probe', async () => {
    const panel = await openPanel('');
    await panel.evaluate(
      (text) => (window as never as PanelWindow).__retrylinePanel.importText(text),
      JSON.stringify(toRecording(gateScenario(), 'gate test')),
    );
    await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBe(4);
    const lane = panel.locator(`[data-testid="lane"][data-key="${API}"]`);
    const gate = lane.locator('[data-testid="gate-track"]');
    expect(await gate.locator('[data-testid="parked-span"]').allTextContents()).toEqual([
      '4 parked',
      '1 parked',
    ]);
    // Each probe reads without colour: a sign, and an accessible name that says how it ended.
    const probes = gate.getByRole('img');
    expect(await probes.count()).toBe(2);
    expect(await probes.allTextContents()).toEqual(['✗', '✓']);
    expect(await probes.evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')))).toEqual([
      'probe 503: still failing',
      'probe 200: recovered',
    ]);
    const recovered = gate.getByRole('img', { name: 'probe 200: recovered' });
    expect(await recovered.getAttribute('title')).toMatch(/attempt 2 of g2/);
    // Drawn in the lane, in the panel's stylesheet: a visible marker coloured apart from a failure.
    const box = await recovered.boundingBox();
    const laneBox = await gate.boundingBox();
    expect(box?.width).toBeGreaterThan(0);
    expect(box && laneBox && box.y >= laneBox.y && box.y + box.height <= laneBox.y + laneBox.height + 1).toBe(
      true,
    );
    const colour = (role: string) =>
      gate.getByRole('img', { name: role }).evaluate((el) => getComputedStyle(el).color);
    const light = await colour('probe 200: recovered');
    expect(light).not.toBe(await colour('probe 503: still failing'));
    mkdirSync(OUTPUT, { recursive: true });
    await lane.screenshot({ path: join(OUTPUT, 'extension-gate-lane.png') });
    // The dark theme's colours, from its own variables.
    await panel.emulateMedia({ colorScheme: 'dark' });
    expect(await colour('probe 200: recovered')).not.toBe(light);
    await lane.screenshot({ path: join(OUTPUT, 'extension-gate-lane-dark.png') });
    await panel.close();
  }, 30_000);

  it('drops what a page forges — wrong source, version, kind, schema, size — and redacts credentials', async () => {
    for (const kind of ['wrong-namespace', 'wrong-version', 'unknown-kind', 'invalid-schema', 'oversize']) {
      await page.evaluate(
        (k) => (window as never as { fixture: { forge(k: string): void } }).fixture.forge(k),
        kind,
      );
    }
    // A valid message sent last proves the channel was open while the others were dropped.
    await page.evaluate(() =>
      (window as never as { fixture: { forge(k: string): void } }).fixture.forge('valid'),
    );
    const panel = await openPanel();
    await panel.locator('[data-testid="filter"]').fill('evil.example');
    await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    const ids = await rows(panel).evaluateAll((elements) =>
      elements.map((e) => e.getAttribute('data-request-id')),
    );
    expect(new Set(ids)).toEqual(new Set(['forged-valid']));
    const stored = JSON.stringify(await worker()?.evaluate(() => chrome.storage.session.get(null)));
    expect(stored).not.toContain('page-secret');
    expect(stored).not.toContain('forged-oversize');
    await panel.close();
  }, 30_000);

  it("keeps a cross-origin frame's events under the page's request id out of the page's row", async () => {
    // Another loopback port is another origin: the frame is an ad or a widget that learnt the id.
    const other = await startFaultServer();
    try {
      other.static('/app.js', fixtureScript, 'text/javascript');
      other.static(
        '/frame.html',
        '<!doctype html><title>frame</title><script src="/app.js"></script>',
        'text/html',
      );
      server.script('/shared-id', [{ status: 503 }, { status: 503 }]);
      const id = 'checkout-42';
      expect(
        await page.evaluate(
          ([base, requestId]) =>
            (
              window as never as { fixture: { failWithId(b: string, r: string): Promise<string> } }
            ).fixture.failWithId(base, requestId),
          [server.url, id] as const,
        ),
      ).toBe('503');

      await page.evaluate(
        (src) =>
          new Promise<void>((resolve) => {
            const iframe = document.createElement('iframe');
            iframe.src = src;
            iframe.onload = () => resolve();
            document.body.append(iframe);
          }),
        `${other.url}/frame.html`,
      );
      const frame = page.frames().find((f) => f.url().startsWith(other.url));
      if (!frame) throw new Error('the cross-origin frame did not load');
      await frame.waitForFunction(() => 'fixture' in window);
      await frame.evaluate(
        (requestId) => (window as never as { fixture: { claim(r: string): void } }).fixture.claim(requestId),
        id,
      );

      const panel = await openPanel();
      const shared = panel.locator(`[data-testid="request-row"][data-request-id="${id}"]`);
      await expect.poll(() => shared.count(), { timeout: 10_000 }).toBe(2);
      const seen = await shared.evaluateAll((elements) =>
        elements.map((e) => [e.getAttribute('data-source'), /rl-row--(\S+)/.exec(e.className)?.[1]]),
      );
      expect(seen).toEqual([
        [server.url, 'exhausted'],
        [other.url, 'success'],
      ]);
      // The page's row is still the page's request: its two 503s, its URL.
      const pageRow = shared.first();
      expect(await pageRow.locator('[data-testid="attempt-bar"]').count()).toBe(2);
      expect(await pageRow.textContent()).toContain('/shared-id');
      await pageRow.click();
      expect(await panel.locator('[data-testid="detail-outcome"]').textContent()).toMatch(/exhausted/i);
      expect(await panel.locator('[data-testid="detail-source"]').textContent()).toBe(server.url);
      await panel.close();
    } finally {
      await page.evaluate(() => {
        for (const iframe of document.querySelectorAll('iframe')) iframe.remove();
      });
      await other.close();
    }
  }, 30_000);

  it('loses no request when the service worker is killed; Preserve log keeps rows across a reload; Clear empties them', async () => {
    const panel = await openPanel();
    await panel.locator('[data-testid="filter"]').fill('flaky');
    await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBe(3);
    await page.waitForTimeout(300); // the worker mirrors to storage.session within 100 ms

    const cdp = await context.newCDPSession(page);
    const { targetInfos } = await cdp.send('Target.getTargets');
    const target = targetInfos.find((t) => t.type === 'service_worker' && t.url.includes(extensionId));
    expect(target).toBeDefined();
    await cdp.send('Target.closeTarget', { targetId: target?.targetId ?? '' });
    // The panel reconnects (waking a fresh worker) and shows the same rows from storage.
    const reopened = await openPanel();
    await reopened.locator('[data-testid="filter"]').fill('flaky');
    await expect.poll(() => rows(reopened).count(), { timeout: 15_000 }).toBe(3);

    await reopened.locator('[data-testid="preserve-log"]').click();
    await page.reload();
    await page.waitForFunction(() => 'fixture' in window);
    await sendThroughEveryClient();
    await expect.poll(() => rows(reopened).count(), { timeout: 10_000 }).toBe(6);

    await reopened.locator('[data-testid="clear"]').click();
    await expect
      .poll(() => reopened.evaluate(() => (window as never as PanelWindow).__retrylinePanel.rows()))
      .toBe(0);
    await Promise.all([panel.close(), reopened.close()]);
  }, 60_000);
});

describe('the standalone viewer', () => {
  it('opens a recording made in Node with recordEvents(), as `retryline view` serves it', async () => {
    const recorder = recordEvents({ source: 'node test' });
    await retry(({ attempt }) => (attempt < 3 ? RETRY : 'done'), {
      operation: 'sync-ledger',
      backoff: { strategy: 'constant', base: 5 },
      jitter: 'none',
    });
    const viewer = await startViewer({
      viewerDir: fileURLToPath(new URL('../../packages/cli/viewer/', import.meta.url)),
      recording: recorder.stop(),
    });
    try {
      const tab = await context.newPage();
      await tab.goto(viewer.url);
      await expect.poll(() => rows(tab).count(), { timeout: 10_000 }).toBe(1);
      expect(await rows(tab).locator('[data-testid="attempt-bar"]').count()).toBe(3);
      expect(await rows(tab).locator('[data-testid="wait"]').count()).toBe(2);
      // Nothing to record or keep across reloads here: those controls are left out; Export works.
      expect(await tab.locator('[data-testid="record"], [data-testid="preserve-log"]').count()).toBe(0);
      expect(await tab.locator('[data-testid="export-json"]').isDisabled()).toBe(false);
      await tab.close();
    } finally {
      await viewer.close();
    }
  }, 30_000);

  it('disables Export on an empty recording', async () => {
    const viewer = await startViewer({
      viewerDir: fileURLToPath(new URL('../../packages/cli/viewer/', import.meta.url)),
      recording: recordEvents({ source: 'nothing yet' }).stop(),
    });
    try {
      const tab = await context.newPage();
      await tab.goto(viewer.url);
      await expect
        .poll(() => tab.locator('[data-testid="export-json"]').count(), { timeout: 10_000 })
        .toBe(1);
      expect(await tab.locator('[data-testid="export-json"]').isDisabled()).toBe(true);
      expect(await tab.locator('[data-testid="export-har"]').isDisabled()).toBe(true);
      expect(await tab.locator('[data-testid="record"], [data-testid="preserve-log"]').count()).toBe(0);
      await tab.close();
    } finally {
      await viewer.close();
    }
  }, 30_000);

  it('shows the recovery gate’s probes in the origin’s lane, as the extension’s panel does', async () => {
    const viewer = await startViewer({
      viewerDir: fileURLToPath(new URL('../../packages/cli/viewer/', import.meta.url)),
      recording: toRecording(gateScenario(), 'gate test'),
    });
    try {
      const tab = await context.newPage();
      await tab.goto(viewer.url);
      await expect.poll(() => rows(tab).count(), { timeout: 10_000 }).toBe(4);
      const probes = tab.locator(`[data-testid="lane"][data-key="${API}"] [data-testid="probe"]`);
      expect(await probes.evaluateAll((els) => els.map((el) => el.getAttribute('aria-label')))).toEqual([
        'probe 503: still failing',
        'probe 200: recovered',
      ]);
      await tab.close();
    } finally {
      await viewer.close();
    }
  }, 30_000);
});

type Fixture = {
  fixture: { ordinary(from: number, count: number): void; flood(id: string, n: number): void };
};

/** What `storage.session` holds for a tab, as a new worker would read it, and what Chrome counts for it. */
async function storedTab(tab: number) {
  const sw = worker() ?? (await context.waitForEvent('serviceworker', { timeout: 15_000 }));
  return sw.evaluate(async (id) => {
    const all = await chrome.storage.session.get(null);
    const index = all[`tab:${id}`] as { chunks?: number[] } | undefined;
    const keys = (index?.chunks ?? []).map((chunk) => `tab:${id}/${chunk}`);
    const requests = new Map<string, number>();
    for (const key of keys) {
      // Chunks are JSON strings (objects in the first stored format).
      const value = all[key];
      const chunk = (typeof value === 'string' ? JSON.parse(value) : value) as {
        entries: { type: string; event?: { requestId: string } }[];
      };
      for (const entry of chunk?.entries ?? []) {
        if (entry.event) requests.set(entry.event.requestId, (requests.get(entry.event.requestId) ?? 0) + 1);
      }
    }
    return {
      requests: requests.size,
      events: Object.fromEntries(requests),
      bytes: await chrome.storage.session.getBytesInUse([`tab:${id}`, ...keys]),
      total: await chrome.storage.session.getBytesInUse(null),
      quota: chrome.storage.session.QUOTA_BYTES,
    };
  }, tab);
}

/** The ids of the tabs `storage.session` holds. */
async function storedTabs(): Promise<Set<number>> {
  const stored = (await worker()?.evaluate(() => chrome.storage.session.get(null))) ?? {};
  return new Set(
    Object.keys(stored)
      .filter((key) => /^tab:\d+$/.test(key))
      .map((key) => Number(key.slice(4))),
  );
}

/** A new tab on the fixture page that sends `send`; resolves with the page and its tab id once the worker stored it. */
async function fixtureTab(send: (fixture: Fixture['fixture']) => void): Promise<{ tab: Page; id: number }> {
  const before = await storedTabs();
  const tab = await context.newPage();
  await tab.goto(`${server.url}/`);
  await tab.waitForFunction(() => 'fixture' in window);
  await tab.evaluate(`(${send.toString()})(window.fixture)`);
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

async function killWorker(): Promise<void> {
  const cdp = await context.newCDPSession(page);
  const { targetInfos } = await cdp.send('Target.getTargets');
  const target = targetInfos.find((t) => t.type === 'service_worker' && t.url.includes(extensionId));
  await cdp.send('Target.closeTarget', { targetId: target?.targetId ?? '' });
  await cdp.detach();
}

describe('what the extension keeps in storage.session', () => {
  it('keeps two tabs of 2,000 ordinary requests each within the quota, and every row survives a worker restart', async () => {
    // Stored as objects, Chrome counted one such tab at nearly the whole 10 MiB quota (about
    // 3 times its JSON), so the second tab's writes failed, and those rows were gone after a
    // restart: a failed write was only logged.
    const tabs = [
      await fixtureTab((fixture) => fixture.ordinary(0, 2000)),
      await fixtureTab((fixture) => fixture.ordinary(2000, 2000)),
    ];
    for (const { id } of tabs) {
      await expect.poll(async () => (await storedTab(id)).requests, { timeout: 20_000 }).toBe(2000);
      const stored = await storedTab(id);
      expect(stored.bytes).toBeLessThan(stored.quota / 2);
      expect(stored.total).toBeLessThanOrEqual(stored.quota);
    }

    await killWorker();
    for (const { tab, id } of tabs) {
      const panel = await openPanel(`?tabId=${id}`);
      await expect
        .poll(() => panel.evaluate(() => (window as never as PanelWindow).__retrylinePanel.rows()), {
          timeout: 15_000,
        })
        .toBe(2000);
      await Promise.all([panel.close(), tab.close()]);
    }
  }, 90_000);

  it("keeps 100,000 events of one request id as one bounded row, which says so, and blocks no other tab's writes", async () => {
    const { tab, id } = await fixtureTab((fixture) => {
      fixture.flood('flood', 100_000);
      // Sent after the flood: once it is stored, the flood has been handled.
      fixture.ordinary(0, 1);
    });
    await expect.poll(async () => (await storedTab(id)).requests, { timeout: 30_000 }).toBe(2);
    const stored = await storedTab(id);
    expect(stored.events.flood).toBe(500);
    expect(stored.bytes).toBeLessThan(300 * 1024);

    // The panel gets its snapshot (not "Reconnecting…" forever), and the row says it was cut.
    const panel = await openPanel(`?tabId=${id}`);
    await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBe(2);
    const flooded = rows(panel).filter({ hasText: 'flood.example' });
    expect(await flooded.locator('[data-testid="truncated"]').textContent()).toBe('499+');
    expect(await panel.getByText('Reconnecting').count()).toBe(0);

    // Another tab's new request is still written.
    const before = (await storedTab(tabId)).requests;
    await page.evaluate(() => (window as never as Fixture).fixture.ordinary(90_000, 1));
    await expect.poll(async () => (await storedTab(tabId)).requests, { timeout: 10_000 }).toBe(before + 1);
    await Promise.all([panel.close(), tab.close()]);
  }, 60_000);

  it('masks the query values of a navigation URL before storing or sending it', async () => {
    const { tab, id } = await fixtureTab((fixture) => fixture.ordinary(0, 1));
    const panel = await openPanel(`?tabId=${id}`);
    await expect.poll(() => rows(panel).count(), { timeout: 10_000 }).toBe(1);
    await tab.goto(`${server.url}/?token=s3cret&lang=en#access_token=t0ken`);
    await expect
      .poll(async () => JSON.stringify(await worker()?.evaluate(() => chrome.storage.session.get(null))), {
        timeout: 10_000,
      })
      .toContain(`${server.url}/?token=***&lang=***`);
    const stored = JSON.stringify(await worker()?.evaluate(() => chrome.storage.session.get(null)));
    expect(stored).not.toMatch(/s3cret|t0ken/);
    const exported = await panel.evaluate(() =>
      (window as never as PanelWindow).__retrylinePanel.exportHar(),
    );
    expect(exported).toContain('token=***');
    expect(exported).not.toMatch(/s3cret|t0ken/);
    await Promise.all([panel.close(), tab.close()]);
  }, 30_000);
});
