import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../support/chromium';
import { type FaultServer, startFaultServer } from '../support/fault-server';

// @retryline/msw with msw/browser: scripts and the recorder on a real Service Worker in Debian's
// Chromium, the page served from loopback (a secure context, as Service Workers need).
let server: FaultServer;
let browser: Browser;

beforeAll(async () => {
  requireChromium();
  server = await startFaultServer();
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('browser-page.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    conditions: ['@retryline/source', 'browser'],
  });
  const require = createRequire(import.meta.url);
  const workerScript = readFileSync(require.resolve('msw/mockServiceWorker.js'), 'utf8');
  server.static('/mockServiceWorker.js', workerScript, 'text/javascript');
  server.static('/app.js', bundle.outputFiles[0]?.text ?? '', 'text/javascript');
  server.static(
    '/',
    '<!doctype html><title>msw</title><script type="module" src="/app.js"></script>',
    'text/html',
  );
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

it('scripts failures and records attempts through msw/browser, and a seeded flaky repeats itself', async () => {
  const runOnce = async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => 'mswPage' in window);
    const result = await page.evaluate(() =>
      (window as never as { mswPage: { run(): Promise<unknown> } }).mswPage.run(),
    );
    await page.close();
    return result as { status: number; body: unknown; attempts: number; flakyStatuses: number[] };
  };
  const first = await runOnce();
  expect(first).toMatchObject({ status: 200, body: { orders: 3 }, attempts: 3 });
  // Nothing reached the real server: the Service Worker answered.
  expect(server.requests('/api/orders')).toHaveLength(0);
  expect(first.flakyStatuses).toHaveLength(4);
  expect(new Set(first.flakyStatuses).size).toBeGreaterThan(1);
  const second = await runOnce();
  expect(second.flakyStatuses).toEqual(first.flakyStatuses);
});
