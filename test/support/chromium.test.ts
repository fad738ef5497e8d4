import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from './chromium';
import { type FaultServer, startFaultServer } from './fault-server';

let server: FaultServer;
let browser: Browser;

beforeAll(async () => {
  requireChromium();
  server = await startFaultServer();
  server.static('/', '<!doctype html><title>resolver</title>', 'text/html');
  server.static('/probe', 'ok', 'text/plain');
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
}, 30_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('the Chromium the tests launch (CHROMIUM_ARGS)', () => {
  it('resolves no host name but 127.0.0.1 and localhost', async () => {
    const page = await browser.newPage();
    await page.goto(`${server.url}/`);
    // Chromium answers every name under .localhost with loopback itself, without asking DNS
    // (RFC 6761 §6.3), so only the resolver rules can make this one fail: offline, the same
    // way for any name beyond loopback.
    const reach = (host: string) =>
      page.evaluate(
        (url) =>
          fetch(url, { mode: 'no-cors' }).then(
            (response) => response.type,
            (error: Error) => error.name,
          ),
        `http://${host}:${server.port}/probe`,
      );
    expect(await reach('retryline.localhost')).toBe('TypeError');
    expect(await reach('localhost')).toBe('opaque');
    expect(server.requests('/probe').map((request) => request.headers.host)).toEqual([
      `localhost:${server.port}`,
    ]);
    await page.close();
  });
});
