import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RETRY, type Recording, recordEvents, retry, seededRandom, virtualClock } from '@retryline/core';
import { toHar } from '@retryline/devtools/import';
import { foldTimeline } from '@retryline/devtools/timeline';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../run';
import { UsageError } from '../usage-error';
import { viewCommand } from './view';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { stdout: (t: string) => out.push(t), stderr: (t: string) => err.push(t), random: seededRandom(1) },
  };
}

/** A recording of one retry() that needed two attempts, made the way a Node test would. */
async function record(): Promise<Recording> {
  const clock = virtualClock(1_700_000_000_000);
  const recorder = recordEvents({ source: 'view test' });
  const done = retry(({ attempt }) => (attempt < 2 ? RETRY : 'ok'), { clock, random: seededRandom(1) });
  await clock.runAll();
  await done;
  return recorder.stop();
}

async function recordingFile(dir: string): Promise<string> {
  const path = join(dir, 'recording.json');
  writeFileSync(path, JSON.stringify(await record()));
  return path;
}

/** Starts `retryline view` on `path`; returns its URL's origin and how to stop it. */
async function serve(path: string, viewerDir: string) {
  const { out, io: commandIo } = io();
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const exit = viewCommand([path], commandIo, { viewerDir, stop: stopped });
  await expect.poll(() => out.join('')).toContain('Retryline viewer: http://127.0.0.1:');
  const url = /http:\/\/127\.0\.0\.1:\d+\/\?src=\/recording\.json/.exec(out.join(''))?.[0] ?? '';
  return { out, exit, origin: new URL(url).origin, port: Number(new URL(url).port) };
}

/** A GET with any Host header (fetch does not let a caller set it). */
function getWithHost(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path, headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

function viewerFolder(): { dir: string; viewerDir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'retryline-view-'));
  const viewerDir = join(dir, 'viewer');
  mkdirSync(viewerDir);
  writeFileSync(join(viewerDir, 'viewer.html'), '<!doctype html><div id="root"></div>');
  return { dir, viewerDir };
}

let stop: () => void = () => {};
afterEach(() => stop());

describe('retryline view', () => {
  it('serves the viewer and the recording on 127.0.0.1, and nothing outside the viewer folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retryline-view-'));
    const viewerDir = join(dir, 'viewer');
    mkdirSync(viewerDir);
    writeFileSync(join(viewerDir, 'viewer.html'), '<!doctype html><div id="root"></div>');
    writeFileSync(join(viewerDir, 'viewer.js'), 'console.log(1)');
    writeFileSync(join(dir, 'secret.txt'), 'secret');
    const path = await recordingFile(dir);
    const { out, exit, origin } = await serve(path, viewerDir);

    const page = await fetch(`${origin}/?src=/recording.json`);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('<div id="root">');
    const recording = await (await fetch(`${origin}/recording.json`)).json();
    expect(recording).toMatchObject({ format: 'retryline-recording', version: 1, source: 'view test' });
    expect(recording.entries.map((e: { event: { type: string } }) => e.event.type)).toEqual([
      'request-start',
      'attempt-start',
      'attempt-end',
      'retry-scheduled',
      'attempt-start',
      'attempt-end',
      'request-end',
    ]);
    expect((await fetch(`${origin}/viewer.js`)).status).toBe(200);
    expect((await fetch(`${origin}/../secret.txt`)).status).toBe(404);
    expect((await fetch(`${origin}/%2e%2e/secret.txt`)).status).toBe(404);
    expect((await fetch(`${origin}/viewer.js`, { method: 'POST' })).status).toBe(405);
    // A malformed escape is that request's mistake: a 400, and the viewer goes on serving.
    expect((await fetch(`${origin}/%`)).status).toBe(400);
    expect((await fetch(`${origin}/%E0%A4%A`)).status).toBe(400);
    expect((await fetch(`${origin}/viewer.js`)).status).toBe(200);
    expect(out.join('')).toContain('7 entries from view test');
    stop();
    expect(await exit).toBe(0);
    await expect(fetch(origin)).rejects.toThrow();
  });

  it('says how many entries a recording holds, and where it came from only when it says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retryline-view-'));
    const viewerDir = join(dir, 'viewer');
    mkdirSync(viewerDir);
    const path = join(dir, 'anonymous.json');
    writeFileSync(path, JSON.stringify({ format: 'retryline-recording', version: 1, entries: [] }));
    const { out, io: commandIo } = io();
    const exit = viewCommand([path], commandIo, { viewerDir, stop: Promise.resolve() });
    expect(await exit).toBe(0);
    expect(out.join('')).toContain('0 entries. Press Ctrl-C to stop.');
    expect(out.join('')).not.toContain('undefined');
  });

  it('refuses a port that is taken with exit code 2 and a clear message, not a stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retryline-view-'));
    mkdirSync(join(dir, 'viewer'));
    const path = await recordingFile(dir);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as AddressInfo).port);
      const { io: commandIo } = io();
      const exit = viewCommand([path, '--port', port], commandIo, { viewerDir: join(dir, 'viewer') });
      // A UsageError: run() prints its message alone and exits with 2.
      await expect(exit).rejects.toBeInstanceOf(UsageError);
      await expect(exit).rejects.toThrow(`Port ${port} is in use: pick another --port`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('refuses a file that is not a recording, or a missing one, with exit code 2 and a clear message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retryline-view-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"log":{}}');
    const notJson = join(dir, 'x.json');
    writeFileSync(notJson, 'nope');
    for (const [args, message] of [
      [['view', bad], 'is not a Retryline recording, a HAR exported by the panel, or an array of events'],
      [['view', notJson], 'is not JSON'],
      [['view', join(dir, 'missing.json')], 'Cannot read'],
      [['view'], 'needs a recording file'],
      [['view', bad, '--port', '70000'], 'Expected --port to be a whole number from 0 to 65535'],
    ] as const) {
      const { err, io: commandIo } = io();
      expect(await run(args, commandIo)).toBe(2);
      expect(err.join('')).toContain(message);
    }
  });

  it('opens what the viewer imports: a HAR exported by the panel, and a bare array of events', async () => {
    const { dir, viewerDir } = viewerFolder();
    const recording = await record();
    const events = recording.entries.flatMap((entry) => (entry.type === 'event' ? [entry.event] : []));
    const files = {
      'events.json': [JSON.stringify(events), '7 entries (from an event array)'],
      'run.har': [JSON.stringify(toHar(foldTimeline(recording.entries))), '7 entries (from a HAR)'],
    } as const;
    const kinds = (entries: Recording['entries']) =>
      entries
        .flatMap((entry) => (entry.type === 'event' ? [`${entry.event.requestId} ${entry.event.type}`] : []))
        .sort();
    for (const [name, [text, says]] of Object.entries(files)) {
      const path = join(dir, name);
      writeFileSync(path, text);
      const { out, exit, origin } = await serve(path, viewerDir);
      const served = (await (await fetch(`${origin}/recording.json`)).json()) as Recording;
      expect(served).toMatchObject({ format: 'retryline-recording', version: 1 });
      // The same events as the recording they came from (a HAR's rebuilt from its attempts).
      expect(kinds(served.entries)).toEqual(kinds(recording.entries));
      expect(out.join('')).toContain(says);
      stop();
      expect(await exit).toBe(0);
    }
  });

  it('answers only requests addressed to 127.0.0.1 or localhost at its port (no DNS rebinding)', async () => {
    const { dir, viewerDir } = viewerFolder();
    const { exit, port } = await serve(await recordingFile(dir), viewerDir);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
      expect((await getWithHost(port, '/recording.json', host)).status).toBe(200);
    }
    for (const host of [`attacker.example:${port}`, `127.0.0.1:${port + 1}`, 'localhost', `[::1]:${port}`]) {
      const response = await getWithHost(port, '/recording.json', host);
      expect(response.status).toBe(403);
      expect(response.body).not.toContain('retryline-recording');
    }
    expect((await getWithHost(port, '/', `attacker.example:${port}`)).status).toBe(403);
    stop();
    expect(await exit).toBe(0);
  });
});
