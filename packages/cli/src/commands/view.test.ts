import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RETRY, recordEvents, retry, seededRandom, virtualClock } from '@retryline/core';
import { afterEach, describe, expect, it } from 'vitest';
import { run } from '../run';
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
async function recordingFile(dir: string): Promise<string> {
  const clock = virtualClock(1_700_000_000_000);
  const recorder = recordEvents({ source: 'view test' });
  const done = retry(({ attempt }) => (attempt < 2 ? RETRY : 'ok'), { clock, random: seededRandom(1) });
  await clock.runAll();
  await done;
  const path = join(dir, 'recording.json');
  writeFileSync(path, JSON.stringify(recorder.stop()));
  return path;
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
    const { out, io: commandIo } = io();
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const exit = viewCommand([path], commandIo, { viewerDir, stop: stopped });
    await expect.poll(() => out.join('')).toContain('Retryline viewer: http://127.0.0.1:');
    const url = /http:\/\/127\.0\.0\.1:\d+\/\?src=\/recording\.json/.exec(out.join(''))?.[0] ?? '';
    const origin = new URL(url).origin;

    const page = await fetch(url);
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
    expect(out.join('')).toContain('7 entries from view test');
    stop();
    expect(await exit).toBe(0);
    await expect(fetch(url)).rejects.toThrow();
  });

  it('refuses a file that is not a recording, or a missing one, with exit code 2 and a clear message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'retryline-view-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"log":{}}');
    const notJson = join(dir, 'x.json');
    writeFileSync(notJson, 'nope');
    for (const [args, message] of [
      [['view', bad], 'is not a Retryline recording'],
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
});
