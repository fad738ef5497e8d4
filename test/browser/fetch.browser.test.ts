import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../support/chromium';
import { type FaultServer, startFaultServer } from '../support/fault-server';

// @retryline/fetch in Debian's Chromium (installed by .ci/run), against the loopback fault server.
let server: FaultServer;
let browser: Browser;
let page: Page;

interface PageResult {
  status?: number;
  text?: string;
  info?: { attempts: number; delays: Array<{ reason: string }> };
  error?: { name: string; message: string; cause?: { name?: string; message?: string } };
  events: Array<{ type: string; phase?: string }>;
}

beforeAll(async () => {
  requireChromium();
  server = await startFaultServer();
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('fetch-page.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'chrome120',
    conditions: ['@retryline/source'],
  });
  server.static('/app.js', bundle.outputFiles[0]?.text ?? '', 'text/javascript');
  server.static('/', '<!doctype html><title>retryline</title><script src="/app.js"></script>', 'text/html');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...CHROMIUM_ARGS],
  });
  page = await browser.newPage();
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => 'retryline' in window);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const runInPage = (url: string) =>
  page.evaluate(
    (target) =>
      (window as never as { retryline: { run(u: string): Promise<unknown> } }).retryline.run(target),
    url,
  ) as Promise<PageResult>;

describe('@retryline/fetch in Chromium', () => {
  it('retries a 503 and returns the 200', async () => {
    server.script('/flaky', [{ status: 503 }, { status: 200, body: 'from the browser' }]);
    const result = await runInPage(`${server.url}/flaky`);
    expect(result.error).toBeUndefined();
    expect(result.status).toBe(200);
    expect(result.text).toBe('from the browser');
    expect(result.info?.attempts).toBe(2);
    expect(server.requests('/flaky')).toHaveLength(2);
    expect(result.events.map((event) => event.type)).toEqual([
      'request-start',
      'attempt-start',
      'attempt-end',
      'budget',
      'retry-scheduled',
      'attempt-start',
      'attempt-end',
      'request-end',
    ]);
  });

  it('sends exactly the headers a bare fetch sends: nothing extra, no preflight', async () => {
    server.script('/bare', [{ status: 200 }]);
    await page.evaluate((url) => fetch(url).then((r) => r.text()), `${server.url}/bare`);
    const bare = Object.keys(server.requests('/bare')[0]?.headers ?? {}).sort();
    server.script('/wrapped', [{ status: 503 }, { status: 200 }]);
    await runInPage(`${server.url}/wrapped`);
    const attempts = server.requests('/wrapped');
    expect(attempts).toHaveLength(2);
    for (const attempt of attempts) {
      expect(Object.keys(attempt.headers).sort()).toEqual(bare);
      expect(attempt.method).toBe('GET');
    }
    expect(server.log.some((record) => record.method === 'OPTIONS')).toBe(false);
  });

  it("classifies the browser's opaque network TypeError as a maybe-sent failure and retries a GET", async () => {
    const refused = await server.refusedUrl();
    const result = await runInPage(`${refused}/nowhere`);
    expect(result.error?.name).toBe('RetriesExhaustedError');
    expect(result.error?.cause).toEqual({ name: 'TypeError', message: 'Failed to fetch' });
    const phases = result.events.filter((event) => event.type === 'attempt-end').map((event) => event.phase);
    expect(phases).toEqual(['unknown', 'unknown', 'unknown']);
  });
});
