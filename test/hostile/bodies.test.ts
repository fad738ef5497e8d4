import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { closeSync, mkdtempSync, openSync, rmSync, truncateSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { attachRetry } from '@retryline/axios';
import { retryFetch } from '@retryline/fetch';
import axios from 'axios';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Hostile bodies against real loopback servers: huge responses Retryline retries past, and a huge
// file in a FormData. Memory is measured in a child process running the adapters' source, so the
// test runner's own heap is not in the figures.

const root = fileURLToPath(new URL('../../', import.meta.url));
const MB = 1024 * 1024;
const BIG = 100 * MB;
const FILE = 200 * MB;
const CHUNK = Buffer.alloc(64 * 1024, 'x');
// Streaming a 200 MB file costs a Node client some 35–55 MB of RSS whatever its size; one copy of
// the file would pass this bound.
const FORM_BOUND = FILE / 2;

// One request of the child: sends through one adapter, then prints how far its RSS rose over the
// level it had after a warm-up request, and what the last response said.
const CHILD = `
import { openAsBlob } from 'node:fs';
import { attachRetry } from '@retryline/axios';
import { retryFetch } from '@retryline/fetch';
import { retryline } from '@retryline/ky';
import axios from 'axios';
import ky from 'ky';

const { adapter, url, file, once } = JSON.parse(process.argv.at(-1));
const policy = { retries: 3, backoff: { strategy: 'constant', base: 1 }, jitter: 'none' };
const fetchWithRetry = retryFetch(fetch, policy);
const api = axios.create();
attachRetry(api, policy);
const kyApi = ky.create(retryline(policy));

// fetch and axios each keep a copy of a body they may have to send again on a redirect (fetch
// clones the request, as the Fetch standard's HTTP-network-or-cache fetch says; axios's
// follow-redirects buffers what it writes): an upload follows no redirect here, so the figures
// are Retryline's own.
async function send(target, body) {
  const method = body ? 'PUT' : 'GET';
  if (adapter === 'fetch') {
    const init = { method, body, redirect: body ? 'error' : 'follow', ...(once ? { retry: false } : {}) };
    return (await fetchWithRetry(target, init)).text();
  }
  if (adapter === 'axios') {
    const config = { url: target, method, data: body, maxRedirects: body ? 0 : 5, ...(once ? { retry: false } : {}) };
    return String((await api.request(config)).data);
  }
  return kyApi(target, { method, body, ...(once ? { retryline: false } : {}) }).text();
}

const form = async () => {
  if (!file) return undefined;
  const body = new FormData();
  body.append('note', 'a field before the file');
  body.append('upload', await openAsBlob(file, { type: 'application/octet-stream' }), 'big.bin');
  return body;
};
// Warmed up (code loaded, a connection open) on a small request of the same kind.
const small = new FormData();
small.append('warm', new Blob(['up']), 'warm.txt');
await send(url.replace(/\\/[^/]*$/, '/warm'), file ? small : undefined);
globalThis.gc();
const baseline = process.memoryUsage.rss();
let peak = baseline;
const sample = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 1);
const text = await send(url, await form());
clearInterval(sample);
peak = Math.max(peak, process.memoryUsage.rss());
console.log(JSON.stringify({ growth: peak - baseline, text }));
`;

let script = '';

interface ChildRun {
  /** Peak RSS over the level after the warm-up, in bytes. */
  readonly growth: number;
  readonly text: string;
}

async function child(options: {
  adapter: string;
  url: string;
  file?: string;
  once?: boolean;
}): Promise<ChildRun> {
  // The script goes in on stdin (it is too long for an argument); bare imports resolve from `root`.
  const run = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-', JSON.stringify(options)], {
    cwd: root,
  });
  let stdout = '';
  let stderr = '';
  run.stdout.on('data', (chunk) => (stdout += chunk));
  run.stderr.on('data', (chunk) => (stderr += chunk));
  run.stdin.end(script);
  const [code] = (await once(run, 'close')) as [number];
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as ChildRun;
}

/** What the server saw of one request to a path. */
interface Received {
  /** Body bytes written before the exchange ended (large responses). */
  sent: number;
  /** The request body: its length, sha256 and content type. */
  length: number;
  digest: string;
  contentType: string | undefined;
  /** The body itself, kept for small requests (paths under /small). */
  body?: Buffer;
}

const seen = new Map<string, Received[]>();
const failFirst = new Map<string, number>();

function streamBody(res: ServerResponse, status: number, record: Received): void {
  res.writeHead(status, { 'content-type': 'text/plain', 'content-length': String(BIG) });
  res.on('error', () => {});
  let left = BIG;
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      const chunk = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left);
      left -= chunk.length;
      record.sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (left === 0) res.end();
  };
  pump();
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = req.url ?? '/';
  const hash = createHash('sha256');
  let length = 0;
  const kept: Buffer[] = [];
  for await (const chunk of req) {
    hash.update(chunk as Buffer);
    length += (chunk as Buffer).length;
    if (path.startsWith('/small')) kept.push(chunk as Buffer);
  }
  if (path.endsWith('/warm')) return void res.end('warm');
  const record: Received = {
    sent: 0,
    length,
    digest: hash.digest('hex'),
    contentType: req.headers['content-type'],
    ...(kept.length > 0 ? { body: Buffer.concat(kept) } : {}),
  };
  const records = seen.get(path) ?? [];
  seen.set(path, [...records, record]);
  const failures = failFirst.get(path) ?? 0;
  if (records.length >= failures) return void res.end('ok');
  if (path.startsWith('/big')) return streamBody(res, 503, record);
  res.writeHead(503).end('busy');
}

const server = createServer((req, res) => void handle(req, res));
let base = '';
let dir = '';
let file = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The adapters' source, bundled for a plain Node child; the clients stay the installed ones.
  const bundle = await build({
    stdin: { contents: CHILD, resolveDir: root, loader: 'ts' },
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    conditions: ['@retryline/source'],
    external: ['axios', 'ky'],
  });
  script = bundle.outputFiles[0]?.text ?? '';
  // A sparse file: 200 MB of zeros made without writing, or allocating, 200 MB.
  dir = mkdtempSync(join(tmpdir(), 'retryline-bodies-'));
  file = join(dir, 'big.bin');
  closeSync(openSync(file, 'w'));
  truncateSync(file, FILE);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe.each(['fetch', 'axios', 'ky'])('%s: hostile bodies, measured in a child process', (adapter) => {
  it('three retried 503s of 100 MB each, then a 200: the 503s are not downloaded', async () => {
    const path = `/big/${adapter}`;
    failFirst.set(path, 3);
    const { growth, text } = await child({ adapter, url: `${base}${path}` });
    console.info(`[bodies] ${adapter}: 3 × 100 MB 503s, peak RSS +${(growth / MB).toFixed(1)} MB`);
    expect(text).toBe('ok');
    const attempts = seen.get(path) ?? [];
    expect(attempts).toHaveLength(4);
    // Each retried response was dropped after a little of its body: the server could not push it all.
    for (const attempt of attempts.slice(0, 3)) expect(attempt.sent).toBeLessThan(BIG / 2);
    expect(growth).toBeLessThan(60 * MB);
  });
});

describe.each(['fetch', 'axios'])('%s: a 200 MB file in a FormData', (adapter) => {
  it('is sent byte-identical on each attempt, under one content type, without buffering the file', async () => {
    const path = `/form/${adapter}`;
    failFirst.set(path, 1);
    const { growth, text } = await child({ adapter, url: `${base}${path}`, file });
    console.info(
      `[bodies] ${adapter}: FormData of 200 MB, 2 attempts, peak RSS +${(growth / MB).toFixed(1)} MB`,
    );
    expect(text).toBe('ok');
    const [first, second] = seen.get(path) ?? [];
    expect(first?.length).toBeGreaterThan(FILE);
    expect(first?.length).toBeLessThan(FILE + 1024);
    expect(second).toEqual(first);
    expect(first?.contentType).toMatch(/^multipart\/form-data; boundary=/);
    expect(growth).toBeLessThan(FORM_BOUND);
  });

  it('with retry: false, is streamed as it is, not buffered', async () => {
    const path = `/form-once/${adapter}`;
    const { growth, text } = await child({ adapter, url: `${base}${path}`, file, once: true });
    console.info(
      `[bodies] ${adapter}: FormData of 200 MB, retry: false, peak RSS +${(growth / MB).toFixed(1)} MB`,
    );
    expect(text).toBe('ok');
    expect(seen.get(path)?.[0]?.length).toBeGreaterThan(FILE);
    expect(growth).toBeLessThan(FORM_BOUND);
  });
});

describe('a FormData through fetch and axios, read back by the server', () => {
  const bytes = new Uint8Array(256 * 1024).map((_, i) => (i * 7919) % 256);
  function form(): FormData {
    const body = new FormData();
    body.append('plain', 'välue ✓');
    body.append('quote"d\nname', 'line\nbreaks\rhere');
    body.append('upload', new File([bytes], 'a "tricky"\r\nname.bin', { type: 'application/x-thing' }));
    body.append('plain', 'a second value');
    return body;
  }
  const send: Record<string, (url: string) => Promise<unknown>> = {
    fetch: (url) => retryFetch(fetch, { retries: 1 })(url, { method: 'PUT', body: form() }),
    axios: (url) => {
      const api = axios.create();
      attachRetry(api, { retries: 1 });
      return api.put(url, form());
    },
  };
  const boundaryOf = (type: string | undefined) => /boundary=(.+)$/.exec(type ?? '')?.[1] ?? '';
  /** The body with its boundary replaced by a fixed one. */
  const normalised = ({ body, contentType }: Received) =>
    body?.toString('latin1').replaceAll(boundaryOf(contentType), 'BOUNDARY');

  it('both send the same bytes on both attempts, which parse back into the same fields and file', async () => {
    const sent: Received[] = [];
    for (const adapter of ['fetch', 'axios']) {
      const path = `/small/${adapter}`;
      failFirst.set(path, 1);
      await send[adapter]?.(`${base}${path}`);
      const [first, second] = seen.get(path) ?? [];
      expect(second?.digest).toBe(first?.digest);
      expect(second?.contentType).toBe(first?.contentType);
      if (first) sent.push(first);
    }
    const [fromFetch, fromAxios] = sent as [Received, Received];
    expect(normalised(fromAxios)).toBe(normalised(fromFetch));
    const parsed = await new Request(base, {
      method: 'POST',
      body: new Uint8Array(fromAxios.body ?? []),
      headers: { 'content-type': fromAxios.contentType ?? '' },
    }).formData();
    const entries = [...parsed].map(([name, value]) => [
      name,
      typeof value === 'string' ? value : value.name,
    ]);
    expect(entries).toEqual([
      ['plain', 'välue ✓'],
      ['quote"d\r\nname', 'line\r\nbreaks\r\nhere'],
      ['upload', 'a "tricky"\r\nname.bin'],
      ['plain', 'a second value'],
    ]);
    const upload = parsed.get('upload') as File;
    expect(upload.type).toBe('application/x-thing');
    expect(new Uint8Array(await upload.arrayBuffer())).toEqual(bytes);
  });
});
