/**
 * `retryline demo`: the same workload through fetch, axios and ky, each with Retryline's defaults
 * and without retries, against the flaky API's story. Live progress, a timeline of a few requests,
 * a summary table, and a recording of the Retryline runs for `retryline view`.
 */

import { writeFile } from 'node:fs/promises';
import { type AxiosRetryOptions, attachRetry } from '@retryline/axios';
import { type Recording, type RetrylineEvent, recordEvents } from '@retryline/core';
import { retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';
import { formatTable } from '../format-table';
import { FULL_STORY, QUICK_STORY, type Story, startFlakyApi, type WaveKind } from './flaky-api';

/** The clients the demo drives. */
export const DEMO_CLIENTS = ['fetch', 'axios', 'ky'] as const;
export type DemoClient = (typeof DEMO_CLIENTS)[number];
/** `retryline`: Retryline's defaults (plus a 1 s per-attempt timeout); `none`: the bare client. */
export type DemoPolicy = 'retryline' | 'none';

/** The per-attempt timeout of every client, with or without retries. */
export const DEMO_TIMEOUT = 1000;

/** Options of {@link runDemo}. */
export interface DemoOptions {
  readonly seed: number;
  /** Where the recording is written. */
  readonly out: string;
  /** The shorter story (for tests). */
  readonly quick?: boolean;
  /** Redraw one progress line per run with `\r` (a terminal); otherwise print each run's line when it ends. */
  readonly live?: boolean;
  readonly write: (text: string) => void;
}

/** How one request of a run ended. */
export interface RequestResult {
  readonly n: number;
  readonly ok: boolean;
  /** Milliseconds from sending to the client's answer. */
  readonly latency: number;
}

/** One run: a client, a policy, its requests and the attempts the server saw. */
export interface RunResult {
  readonly client: DemoClient;
  readonly policy: DemoPolicy;
  readonly requests: readonly RequestResult[];
  readonly attempts: number;
}

/** What {@link runDemo} did. */
export interface DemoResult {
  readonly runs: readonly RunResult[];
  readonly recording: Recording;
}

type Send = (url: string) => Promise<boolean>;

function makeSender(client: DemoClient, policy: DemoPolicy): Send {
  // The flaky API scripts each request's own faults, sent concurrently; the recovery gate reacts to
  // an origin's failures across requests, so with it on the outcome would hang on which request's
  // fault the server answers first. The demo shows retries request by request, reproducibly for a
  // seed; `retryline simulate storm` shows the gate.
  const options = { timeout: DEMO_TIMEOUT, gate: false as const };
  switch (client) {
    case 'fetch': {
      if (policy === 'none')
        return async (url) => (await fetch(url, { signal: AbortSignal.timeout(DEMO_TIMEOUT) })).ok;
      const retrying = retryFetch(options);
      return async (url) => {
        const response = await retrying(url);
        await response.arrayBuffer();
        return response.ok;
      };
    }
    case 'axios': {
      const instance = axios.create({ timeout: DEMO_TIMEOUT });
      if (policy === 'retryline') attachRetry(instance, options satisfies AxiosRetryOptions);
      return async (url) => (await instance.get(url)).status === 200;
    }
    case 'ky': {
      const instance =
        policy === 'none' ? ky.create({ retry: 0, timeout: DEMO_TIMEOUT }) : ky.create(retryline(options));
      return async (url) => {
        await instance.get(url).arrayBuffer();
        return true;
      };
    }
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The nearest-rank percentile of `values` (ms), or 0 for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

const ms = (value: number) => `${Math.round(value)}ms`;

function progressLine(client: string, policy: string, done: readonly RequestResult[], total: number) {
  const width = 20;
  const filled = Math.round((done.length / total) * width);
  const ok = done.filter((r) => r.ok).length;
  const bar = `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
  return `  ${client.padEnd(5)}  ${policy.padEnd(9)}  ${bar}  ${String(done.length).padStart(2)}/${total}  ✓ ${String(ok).padStart(2)}  ✗ ${String(done.length - ok).padStart(2)}`;
}

/** Runs one client and policy against its own flaky API, its story starting now. */
async function runOnce(
  story: Story,
  seed: number,
  client: DemoClient,
  policy: DemoPolicy,
  progress: (results: readonly RequestResult[], attempts?: number) => void,
): Promise<RunResult> {
  const send = makeSender(client, policy);
  const api = await startFlakyApi(story, seed);
  const results: RequestResult[] = [];
  try {
    api.restart();
    const start = performance.now();
    const pending: Promise<void>[] = [];
    for (const [w, wave] of story.waves.entries()) {
      await sleep(start + wave.at - performance.now());
      for (let i = 0; i < story.perWave; i++) {
        const n = w * story.perWave + i;
        const sent = performance.now();
        pending.push(
          send(`${api.origin}/${client}/${policy}/orders/${n}`)
            .catch(() => false)
            .then((ok) => {
              results.push({ n, ok, latency: performance.now() - sent });
              progress(results);
            }),
        );
      }
    }
    await Promise.all(pending);
  } finally {
    await api.stop();
  }
  const attempts = api.arrivals();
  progress(results, attempts);
  results.sort((a, b) => a.n - b.n);
  return { client, policy, requests: results, attempts };
}

const WAVE_TITLES: Readonly<Record<WaveKind, string>> = {
  healthy: 'healthy',
  'rate-limit': '429 Retry-After',
  'burst-503': 'burst of 503s',
  resets: 'connection reset',
  outage: 'outage',
};

/** Which requests get a timeline: the first of a wave of each kind, and the first after the 429. */
function shownRequests(story: Story): { readonly n: number; readonly title: string }[] {
  const shown: { n: number; title: string }[] = [];
  for (const kind of ['burst-503', 'resets', 'outage', 'rate-limit'] as const) {
    const w = story.waves.findIndex((wave) => wave.kind === kind);
    if (w >= 0) shown.push({ n: w * story.perWave, title: WAVE_TITLES[kind] });
    if (kind === 'rate-limit' && story.waves[w + 1]?.kind === 'healthy')
      shown.push({ n: (w + 1) * story.perWave, title: 'after the 429' });
  }
  return shown;
}

/** One request's attempts as a line: `✗503 ─backoff 180ms─ ✗reset ─backoff 390ms─ ✓200`. */
export function timelineOf(events: readonly RetrylineEvent[]): string {
  const parts: string[] = [];
  for (const event of events) {
    if (event.type === 'attempt-end') {
      const what =
        event.status !== undefined ? String(event.status) : event.outcome === 'timeout' ? 'timeout' : 'reset';
      parts.push(event.outcome === 'success' ? `✓${what}` : `✗${what}`);
    } else if (event.type === 'retry-scheduled') {
      const hint = event.hint ? `Retry-After ${event.hint.delay / 1000}s, ` : '';
      parts.push(`─${hint}${event.reason === 'backoff' ? 'backoff ' : 'wait '}${ms(event.delay)}─`);
    } else if (event.type === 'guard-wait') {
      parts.push(
        `─held ${ms(event.waited)} (${event.guard === 'pacing' ? "the server's Retry-After" : event.guard})─`,
      );
    } else if (event.type === 'request-end' && event.outcome !== 'success') {
      parts.push(`gave up (${event.outcome}, ${event.attempts} attempts)`);
    }
  }
  return parts.join(' ');
}

/** Events of the recording grouped by request, for requests of `client`'s Retryline run, by order. */
function requestsOf(recording: Recording, client: DemoClient): Map<number, RetrylineEvent[]> {
  const ids = new Map<string, number>();
  const byN = new Map<number, RetrylineEvent[]>();
  for (const entry of recording.entries) {
    if (entry.type !== 'event') continue;
    const event = entry.event;
    if (event.type === 'request-start') {
      const match = new RegExp(`/${client}/retryline/orders/(\\d+)$`).exec(event.url ?? '');
      if (match) ids.set(event.requestId, Number(match[1]));
    }
    const n = ids.get(event.requestId);
    if (n === undefined) continue;
    byN.set(n, [...(byN.get(n) ?? []), event]);
  }
  return byN;
}

/** Runs the demo and prints it. */
export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const story = options.quick ? QUICK_STORY : FULL_STORY;
  const { write } = options;
  const total = story.waves.length * story.perWave;
  const recorder = recordEvents({ source: 'retryline demo' });
  const outage = story.outage;
  write(`A flaky API on 127.0.0.1 (seed ${options.seed}) plays a story in ${story.waves.length} waves of ${story.perWave} GETs:
  healthy → a burst of 503s → connection resets → a ${(outage.to - outage.from) / 1000} s outage (${ms(outage.from)}–${ms(outage.to)}:
  503s and resets) → a 429 with Retry-After: 1 as it recovers → healthy again.
Each client sends the same ${total} requests with Retryline's defaults (2 retries, exponential
backoff from 200 ms, full jitter; timeout ${DEMO_TIMEOUT} ms) and without retries: six runs at
once, each against its own copy of the API.

`);
  const plan = DEMO_CLIENTS.flatMap((client) =>
    (['retryline', 'none'] as const).map((policy) => ({ client, policy })),
  );
  // One progress line per run: redrawn in place on a terminal, printed once at the end otherwise.
  const lines = plan.map(({ client, policy }) => progressLine(client, policy, [], total));
  let drawn = false;
  const draw = () => {
    if (!options.live) return;
    write(`${drawn ? `\x1b[${lines.length}A` : ''}${lines.map((line) => `\r${line}\x1b[K\n`).join('')}`);
    drawn = true;
  };
  draw();
  let runs: RunResult[];
  let recording: Recording;
  try {
    runs = await Promise.all(
      plan.map(({ client, policy }, i) =>
        runOnce(story, options.seed, client, policy, (results, attempts) => {
          const line = progressLine(client, policy, results, total);
          lines[i] = attempts === undefined ? line : `${line}  attempts ${attempts}`;
          draw();
        }),
      ),
    );
  } finally {
    recording = recorder.stop();
    if (!options.live) write(`${lines.join('\n')}\n`);
  }

  // A timeline for one request per kind of failure, from fetch's Retryline run.
  const byN = requestsOf(recording, 'fetch');
  write('\nTimelines (fetch with Retryline; without retries each ends at its first ✗):\n');
  for (const { n, title } of shownRequests(story)) {
    const events = byN.get(n);
    if (events !== undefined) write(`  #${String(n).padEnd(3)} ${title.padEnd(17)} ${timelineOf(events)}\n`);
  }

  const rows = runs.map((r) => {
    const ok = r.requests.filter((q) => q.ok).length;
    const latencies = r.requests.map((q) => q.latency);
    return [
      r.client,
      r.policy,
      `${ok}/${r.requests.length} (${Math.round((ok / r.requests.length) * 100)}%)`,
      String(r.attempts),
      `${(r.attempts / r.requests.length).toFixed(2)}×`,
      ms(percentile(latencies, 50)),
      ms(percentile(latencies, 99)),
    ];
  });
  write(`\n${formatTable(['Client', 'Policy', 'Success', 'Attempts', 'Load', 'p50', 'p99'], rows)}\n`);
  write(
    '\nLoad: attempts the server carried per request. Retries win back the 429, the 503 burst and the\n' +
      `resets; they can't outlast a ${(story.outage.to - story.outage.from) / 1000} s outage with 2 retries, and there they triple the load instead.\n`,
  );

  await writeFile(options.out, `${JSON.stringify(recording)}\n`);
  const events = recording.entries.length;
  write(`\nSaved ${events} events of the Retryline runs to ${options.out}\n`);
  return { runs, recording };
}
