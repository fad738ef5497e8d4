// Takes the playground's screenshots the README shows, from the built site (`pnpm docs:build` first):
// docs/playground-schedule.png (the form and the schedule it draws) and docs/playground-storm.png
// (the storm simulation, run in the page). Debian's Chromium, light mode, loopback only.
//
//   node docs/scripts/screenshots.mjs
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ROOT } from './entry-points.mjs';
import { serveStatic } from './static-server.mjs';

const DIST = join(ROOT, 'docs/.vitepress/dist');
const CHROMIUM = '/usr/bin/chromium';
if (!existsSync(join(DIST, 'playground.html'))) throw new Error('Build the site first: pnpm docs:build');
if (!existsSync(CHROMIUM)) throw new Error(`Needs Debian's Chromium at ${CHROMIUM}: pnpm bootstrap`);

const server = await serveStatic(DIST);
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  ],
});
try {
  const page = await browser.newPage({
    viewport: { width: 1280, height: 1000 },
    deviceScaleFactor: 1,
    colorScheme: 'light',
  });
  await page.goto(`${server.url}/playground.html`);
  await page.waitForFunction(() => '__vue_app__' in (document.querySelector('#app') ?? {}));
  // The search box and the nav stay out of the pictures.
  await page.addStyleTag({ content: '.VPNav, .VPLocalNav { display: none !important; }' });

  const shoot = async (name, selector) => {
    const path = join(ROOT, 'docs', name);
    await page.locator(selector).screenshot({ path, animations: 'disabled' });
    console.log(`wrote ${path}`);
  };
  await shoot('playground-schedule.png', '[data-shot="schedule"]');
  await page.click('[data-testid="run-storm"]');
  await page.waitForSelector('[data-testid="sim-time"]', { timeout: 120_000 });
  await shoot('playground-storm.png', '[data-shot="storm"]');
} finally {
  await browser.close();
  await server.close();
}
