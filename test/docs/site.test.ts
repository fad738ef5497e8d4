import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateStorm, stormPolicies } from '../../docs/.vitepress/theme/playground/simulations';
import { type StaticServer, serveStatic } from '../../docs/scripts/static-server.mjs';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from '../support/chromium';

// The docs site as a visitor gets it: the built files (`pnpm docs:build`, which `pnpm test` runs before
// vitest) served from 127.0.0.1 by a plain static server, in Debian's Chromium.
const DIST = fileURLToPath(new URL('../../docs/.vitepress/dist', import.meta.url));

let server: StaticServer;
let browser: Browser;
/** Requests any page made to another host, and errors any page threw or logged. */
const offHost: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  requireChromium();
  if (!existsSync(join(DIST, 'index.html'))) {
    throw new Error(
      `The docs site is not built (${relative(process.cwd(), DIST)} is missing): run \`pnpm docs:build\` first (\`pnpm test\` does)`,
    );
  }
  server = await serveStatic(DIST);
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage(): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(`${server.url}/`) && !/^(data|blob):/.test(url)) offHost.push(url);
  });
  page.on('pageerror', (error) => pageErrors.push(`${page.url()}: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(`${page.url()}: ${message.text()}`);
  });
  return page;
}

/** Loads a path and waits until VitePress has hydrated it. Returns the HTTP status. */
async function visit(page: Page, path: string): Promise<number | undefined> {
  const response = await page.goto(`${server.url}${path}`);
  // Vue's mount (hydration included) leaves the app on its container.
  await page.waitForFunction(() => '__vue_app__' in (document.querySelector('#app') ?? {}));
  return response?.status();
}

/** Every page the build wrote, as the path a link reaches it by (`/`, `/api/`, `/guide/fetch.html`). */
function builtPages(dir = DIST): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'assets' ? [] : builtPages(path);
    if (!entry.name.endsWith('.html') || path === join(DIST, '404.html')) return [];
    return [`/${relative(DIST, path).split('\\').join('/')}`.replace(/(^|\/)index\.html$/, '$1')];
  });
}

describe('the docs site, from its built files', () => {
  it('reaches every page from the home page, with no broken link, anchor or image, and loads nothing off-host', async () => {
    const pages = new Map<string, { status: number | undefined; notFound: boolean; ids: Set<string> }>();
    const links: Array<{ from: string; path: string; hash: string }> = [];
    const images: string[] = [];
    // Breadth first, a few tabs at a time: each page once, every link it has recorded.
    const tabs = await Promise.all(Array.from({ length: 2 }, () => openPage()));
    let frontier = ['/'];
    while (frontier.length > 0) {
      const next = new Set<string>();
      for (let i = 0; i < frontier.length; i += tabs.length) {
        const batch = frontier.slice(i, i + tabs.length);
        await Promise.all(
          batch.map(async (path, tab) => {
            const page = tabs[tab] as Page;
            const status = await visit(page, path);
            await page.waitForFunction(() => [...document.images].every((image) => image.complete));
            const found = await page.evaluate(() => ({
              brokenImages: [...document.images]
                .filter((image) => image.naturalWidth === 0)
                .map((image) => image.getAttribute('src')),
              notFound: document.querySelector('.NotFound') !== null,
              ids: [...document.querySelectorAll('[id]')].map((element) => element.id),
              hrefs: [...document.querySelectorAll('a[href]')].map(
                (anchor) => (anchor as HTMLAnchorElement).href,
              ),
            }));
            pages.set(path, { status, notFound: found.notFound, ids: new Set(found.ids) });
            for (const src of found.brokenImages) images.push(`${path}: ${src}`);
            for (const href of found.hrefs) {
              const url = new URL(href);
              if (url.origin !== server.url) continue;
              links.push({ from: path, path: url.pathname, hash: decodeURIComponent(url.hash.slice(1)) });
              next.add(url.pathname);
            }
          }),
        );
      }
      frontier = [...next].filter((path) => !pages.has(path));
    }
    await Promise.all(tabs.map((tab) => tab.close()));

    const broken = links.flatMap(({ from, path, hash }) => {
      const target = pages.get(path);
      if (target?.status !== 200 || target.notFound) return [`${from} → ${path}: page not found`];
      if (hash && !target.ids.has(hash)) return [`${from} → ${path}#${hash}: no such heading or anchor`];
      return [];
    });
    expect([...new Set(broken)]).toEqual([]);
    expect(images).toEqual([]);
    // Every page the build wrote is linked from somewhere, and the crawl saw them all.
    expect([...pages.keys()].sort()).toEqual(expect.arrayContaining(builtPages().sort()));
    expect(pages.size).toBeGreaterThan(30);
    expect(links.some((link) => link.path === '/api/core.html')).toBe(true);
    expect(offHost).toEqual([]);
    expect(pageErrors).toEqual([]);
  }, 180_000);

  it('names no other host in any tag that loads something', () => {
    const loaders =
      /<(?:script|link|img|source|iframe|video|audio|embed|object)\b[^>]*\b(?:src|href|data)="([^"]*)"/g;
    const files = builtPages().map((path) =>
      join(DIST, path.endsWith('/') ? `${path}index.html` : path.slice(1)),
    );
    const offHostTags = files.flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(loaders)]
        .map((match) => match[1] ?? '')
        .filter((url) => /^(https?:)?\/\//.test(url))
        .map((url) => `${relative(DIST, file)}: ${url}`),
    );
    expect(files.length).toBeGreaterThan(30);
    expect(offHostTags).toEqual([]);
  });
});

/** What the playground shows: the schedule chart's geometry, the options text and the summary. */
function playgroundState(page: Page) {
  return page.evaluate(() => {
    const chart = (id: string) => document.querySelector(`[data-chart="${id}"]`);
    return {
      line: chart('schedule')?.querySelector('.lines path')?.getAttribute('d') ?? '',
      band: chart('schedule')?.querySelector('.bands path')?.getAttribute('d') ?? '',
      points: [...(chart('schedule')?.querySelectorAll('circle.point') ?? [])].map((point) =>
        Number(point.getAttribute('cy')),
      ),
      cumulative: chart('cumulative')?.querySelector('.lines path')?.getAttribute('d') ?? '',
      options: document.querySelector('[data-testid="options"]')?.textContent ?? '',
      summary: document.querySelector('[data-testid="summary"]')?.textContent ?? '',
    };
  });
}

describe('the playground', () => {
  it('redraws the schedule chart and rewrites the options when the strategy and the jitter change', async () => {
    const page = await openPage();
    expect(await visit(page, '/playground.html')).toBe(200);
    const opened = await playgroundState(page);
    expect(opened.points).toHaveLength(8);
    expect(opened.options).toContain('const api = retryFetch(fetch, {\n  retries: 8,\n});');

    await page.selectOption('[data-testid="strategy"]', 'linear');
    await page.waitForFunction((line) => {
      return document.querySelector('[data-chart="schedule"] .lines path')?.getAttribute('d') !== line;
    }, opened.line);
    const linear = await playgroundState(page);
    expect(linear.line).not.toBe(opened.line);
    expect(linear.band).not.toBe(opened.band);
    expect(linear.cumulative).not.toBe(opened.cumulative);
    expect(linear.options).toContain(
      "const api = retryFetch(fetch, {\n  retries: 8,\n  backoff: { strategy: 'linear', base: 100 },\n});",
    );

    await page.selectOption('[data-testid="jitter"]', 'none');
    await page.waitForFunction((options) => {
      return document.querySelector('[data-testid="options"]')?.textContent !== options;
    }, linear.options);
    const exact = await playgroundState(page);
    expect(exact.options).toContain(
      "const api = retryFetch(fetch, {\n  retries: 8,\n  backoff: { strategy: 'linear', base: 100 },\n  jitter: 'none',\n});",
    );
    expect(exact.line).not.toBe(linear.line);
    // Linear from 100 ms, no jitter: 200, 300 … 900 ms, 4.4 s in all; each range is one value.
    expect(exact.summary).toContain('8 retries (9 attempts), 4.4 s of waiting');
    expect(exact.points.every((y, i) => i === 0 || y < (exact.points[i - 1] as number))).toBe(true);
    const boxes = [...exact.band.matchAll(/M[\d.]+ ([\d.]+) H[\d.]+ V([\d.]+)/g)];
    expect(boxes, exact.band).toHaveLength(8);
    expect(boxes.every(([, high, low]) => high === low)).toBe(true);

    // The code tabs show the same options for the other clients.
    await page.click('button[role="tab"]:has-text("ky")');
    await page.waitForFunction(() =>
      document.querySelector('[data-testid="options"]')?.textContent?.includes('ky.create'),
    );
    expect((await playgroundState(page)).options).toContain(
      'const api = ky.create({ ...retryline({\n  retries: 8,',
    );
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it("runs the storm simulation in the browser and draws its chart, with the figures the CLI's simulation gives", async () => {
    const page = await openPage();
    await visit(page, '/playground.html');
    await page.click('[data-testid="run-storm"]');
    await page.waitForSelector('[data-testid="sim-time"]', { timeout: 120_000 });

    const chart = await page.evaluate(() =>
      [...document.querySelectorAll('[data-chart="storm"] .lines [data-series]')].map((series) => ({
        name: series.getAttribute('data-series'),
        segments: (series.querySelector('path')?.getAttribute('d') ?? '').split('L').length,
      })),
    );
    expect(chart).toEqual([
      { name: 'your policy (default guards)', segments: 150 },
      { name: 'your policy, guards off', segments: 150 },
      { name: 'immediate retries ×3', segments: 150 },
      { name: 'no retries', segments: 150 },
    ]);
    expect(await page.locator('[data-chart="storm"] .shades rect').count()).toBe(1);

    // The same policies through the same function in Node: the browser ran the real simulation.
    const rows = await page.$$eval('[data-testid="storm-table"] tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())),
    );
    const expected = [];
    for (const policy of stormPolicies({ retries: 8 })) {
      const report = await simulateStorm({ policy });
      expected.push([
        report.policy,
        `${report.incidentAmplification.toFixed(2)}×`,
        `${(report.successRate * 100).toFixed(1)} %`,
      ]);
    }
    expect(rows.map(([policy, amplification, , success]) => [policy, amplification, success])).toEqual(
      expected,
    );
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 180_000);

  it('runs the herd simulation and draws one line per jitter', async () => {
    const page = await openPage();
    await visit(page, '/playground.html');
    await page.click('[data-testid="run-herd"]');
    await page.waitForSelector('[data-chart="herd"]', { timeout: 60_000 });
    const series = await page.evaluate(() =>
      [...document.querySelectorAll('[data-chart="herd"] .lines [data-series]')].map((line) => [
        line.getAttribute('data-series'),
        line.querySelectorAll('circle.point').length,
      ]),
    );
    expect(series).toEqual([
      ['none', 10],
      ['full (your jitter)', 10],
      ['equal', 10],
      ['decorrelated', 10],
      ['no-backoff', 10],
    ]);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 120_000);
});
