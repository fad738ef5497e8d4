// Times the panel with 10,000 requests in both browsers it ships for: a filter keystroke (the
// input event to the next frame after the list re-rendered) and a sort by a column (the header's
// click to the same point), in the built extension's panel page (extension/dist/{chrome,firefox}),
// opened as DevTools opens it and fed an imported recording. Target: under 100 ms each. Not a test
// (timings depend on the machine): run after `pnpm build:extension` with
// `node bench/panel-filter.mjs`; prints JSON and writes bench/results/panel-filter.json.
//
// The browsers are driven by the tests' helpers (test/support/extension-browser.ts), bundled here
// with esbuild, so the bench opens them exactly as the end-to-end suite does (loopback only).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { writeResult } from './lib/results.mjs';

const REQUESTS = Number(process.env.REQUESTS ?? 10_000);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const dist = (name) => join(ROOT, 'extension/dist', name);

/** The helpers and fixtures, bundled from TypeScript into a module this script can import. */
async function loadHelpers() {
  // Inside the repository, so the bundle's imports (playwright-core …) resolve from its node_modules.
  mkdirSync(join(ROOT, 'node_modules/.cache'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'node_modules/.cache/retryline-bench-'));
  const entry = join(dir, 'entry.ts');
  const out = join(dir, 'helpers.mjs');
  await build({
    stdin: {
      contents: [
        `export { launchChromiumWith, launchFirefoxWith } from ${JSON.stringify(join(ROOT, 'test/support/extension-browser.ts'))};`,
        `export { manyRequests } from ${JSON.stringify(join(ROOT, 'extension/src/model/fixtures.ts'))};`,
        `export { toRecording } from ${JSON.stringify(join(ROOT, 'extension/src/model/export.ts'))};`,
      ].join('\n'),
      resolveDir: ROOT,
      sourcefile: entry,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: out,
    logLevel: 'error',
  });
  const helpers = await import(pathToFileURL(out).href);
  rmSync(dir, { recursive: true, force: true });
  return helpers;
}

// Run inside the panel (they travel as source text).
const panelReady = () => window.__retrylinePanel !== undefined;
const panelRows = () => window.__retrylinePanel?.rows() ?? -1;
const importText = (text) => window.__retrylinePanel?.importText(text);
/** Types `text` into the filter; resolves with the ms until the frame after the re-render. */
const typeFilter = (text) =>
  new Promise((resolve) => {
    const input = document.querySelector('[data-testid="filter"]');
    const start = performance.now();
    input.value = text;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - start), 0));
  });
/** Clicks a column's sort button; resolves with the ms until the frame after the re-render. */
const clickSort = (column) =>
  new Promise((resolve) => {
    const button = document.querySelector(`[data-testid="sort-${column}"]`);
    const start = performance.now();
    button.click();
    requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - start), 0));
  });
const firstRowId = () =>
  document.querySelector('[data-testid="request-row"]')?.getAttribute('data-request-id');

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round = (ms) => Math.round(ms * 10) / 10;
const summary = (values) => ({ median: round(median(values)), max: round(Math.max(...values)) });

async function until(ready, message) {
  for (let tries = 0; tries < 600; tries++) {
    if (await ready()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(message);
}

async function measure(browser, recording) {
  const panel = await browser.open(browser.extensionUrl('panel.html'));
  await until(() => panel.evaluate(panelReady), 'the panel never exposed its API');
  await panel.evaluate(importText, recording);
  await until(async () => (await panel.evaluate(panelRows)) === REQUESTS, 'the recording never showed');
  // The filter, typed a key at a time, then cleared a key at a time.
  const query = 'items/12';
  const keystrokes = [];
  for (let i = 1; i <= query.length; i++)
    keystrokes.push(await panel.evaluate(typeFilter, query.slice(0, i)));
  const filtered = await panel.evaluate(panelRows);
  for (let i = query.length - 1; i >= 0; i--)
    keystrokes.push(await panel.evaluate(typeFilter, query.slice(0, i)));
  // Sorts of the whole list: each column ascending, descending, then back to none.
  const sorts = [];
  for (const column of ['time', 'status', 'name', 'attempts']) {
    for (let click = 0; click < 3; click++) sorts.push(await panel.evaluate(clickSort, column));
  }
  await panel.evaluate(clickSort, 'name');
  await panel.evaluate(clickSort, 'name');
  const lastByName = await panel.evaluate(firstRowId);
  await panel.close();
  return {
    filterKeystrokeMs: summary(keystrokes),
    rowsAfterFilter: filtered,
    sortMs: summary(sorts),
    firstRowSortedByNameDescending: lastByName,
  };
}

const helpers = await loadHelpers();
const recording = JSON.stringify(helpers.toRecording(helpers.manyRequests(REQUESTS), 'bench'));
const browsers = [
  { name: 'Chromium', launch: () => helpers.launchChromiumWith(dist('chrome')) },
  { name: 'Firefox', launch: () => helpers.launchFirefoxWith(dist('firefox')) },
];
const results = {};
for (const { name, launch } of browsers) {
  if (!existsSync(join(dist(name === 'Chromium' ? 'chrome' : 'firefox'), 'manifest.json'))) {
    throw new Error(`the ${name} build is missing: run 'pnpm build:extension' first`);
  }
  const browser = await launch();
  try {
    results[name] = await measure(browser, recording);
  } finally {
    await browser.close();
  }
}
const result = { requests: REQUESTS, targetMs: 100, ...results };
console.log(JSON.stringify(result, null, 2));
console.log(
  `written to ${writeResult('panel-filter', { command: 'node bench/panel-filter.mjs', ...result })}`,
);
