// Renders 10,000 requests × 3 attempts in the standalone viewer (the devtools panel built as a page)
// in Debian's Chromium, and reports the time to first render and the latency of each filter
// keystroke (target: under 100 ms). Run after `pnpm build`: `node bench/viewer-render.mjs`; prints JSON
// and writes bench/results/viewer-render.json.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startViewer } from '../packages/cli/dist/index.js';
import { writeResult } from './lib/results.mjs';

const REQUESTS = Number(process.env.REQUESTS ?? 10_000);
const viewerDir = fileURLToPath(new URL('../extension/dist/viewer/', import.meta.url));
if (!existsSync(viewerDir)) throw new Error(`${viewerDir} is missing: run 'pnpm build' first`);

/** A recording of REQUESTS requests, each 503, 503, 200 with two backoff waits, over several origins. */
function recording() {
  const entries = [];
  const origins = [
    'https://api.example',
    'https://auth.example',
    'https://cdn.example',
    'https://search.example',
  ];
  const clients = ['fetch', 'axios', 'ky'];
  let t = 1_700_000_000_000;
  for (let i = 0; i < REQUESTS; i++) {
    const requestId = `req-${i}`;
    const origin = origins[i % origins.length];
    const client = clients[i % clients.length];
    const push = (event) =>
      entries.push({ type: 'event', origin: 'http://127.0.0.1', event: { v: 1, requestId, ...event } });
    t += 7;
    push({
      type: 'request-start',
      t,
      client,
      method: i % 5 === 0 ? 'POST' : 'GET',
      url: `${origin}/items/${i}?page=***`,
    });
    let at = t;
    for (let attempt = 1; attempt <= 3; attempt++) {
      push({ type: 'attempt-start', t: at, attempt, headers: { accept: 'application/json' } });
      const status = attempt < 3 ? 503 : 200;
      at += 40;
      push({
        type: 'attempt-end',
        t: at,
        attempt,
        outcome: attempt < 3 ? 'retry' : 'success',
        duration: 40,
        phase: 'response',
        status,
        headers: {},
      });
      if (attempt < 3) {
        const delay = 100 * 2 ** attempt;
        push({
          type: 'retry-scheduled',
          t: at,
          attempt: attempt + 1,
          retry: attempt,
          delay,
          reason: 'backoff',
          strategy: 'exponential',
          jitter: 'none',
          raw: delay,
          capped: delay,
        });
        at += delay;
      }
    }
    push({
      type: 'request-end',
      t: at,
      outcome: 'success',
      attempts: 3,
      totalDelay: 600,
      duration: at - t,
      status: 200,
    });
  }
  return {
    format: 'retryline-recording',
    version: 1,
    recordedAt: new Date(t).toISOString(),
    source: 'bench',
    entries,
  };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

const viewer = await startViewer({ viewerDir, recording: recording() });
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  // The same quiet, loopback-only browser as the tests' (test/support/chromium.ts): no background
  // traffic competes with the render being timed, and no host beyond this machine is reached.
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost',
  ],
});
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const started = Date.now();
  await page.goto(viewer.url);
  await page.waitForFunction((n) => window.__retrylinePanel?.rows() === n, REQUESTS, { timeout: 120_000 });
  await page.waitForSelector('[data-testid="request-row"]');
  const firstRender = Date.now() - started;
  const rendered = await page.locator('[data-testid="request-row"]').count();

  // Each keystroke: from the input event to the next frame after the list has been re-rendered.
  const query = 'items/12';
  const latencies = [];
  for (let i = 1; i <= query.length; i++) {
    const ms = await page.evaluate(
      (text) =>
        new Promise((resolve) => {
          const input = document.querySelector('[data-testid="filter"]');
          const start = performance.now();
          input.value = text;
          input.dispatchEvent(new Event('input', { bubbles: true }));
          requestAnimationFrame(() => setTimeout(() => resolve(performance.now() - start), 0));
        }),
      query.slice(0, i),
    );
    latencies.push(ms);
  }
  const matching = await page.evaluate(() => window.__retrylinePanel.rows());
  const result = {
    requests: REQUESTS,
    attemptsPerRequest: 3,
    firstRenderMs: firstRender,
    rowElementsInDom: rendered,
    filterKeystrokeMs: {
      median: Math.round(median(latencies) * 10) / 10,
      max: Math.round(Math.max(...latencies) * 10) / 10,
    },
    rowsAfterFilter: matching,
    chromium: browser.version(),
  };
  console.log(JSON.stringify(result, null, 2));
  console.log(
    `written to ${writeResult('viewer-render', { command: 'node bench/viewer-render.mjs', ...result })}`,
  );
} finally {
  await browser.close();
  await viewer.close();
}
