/**
 * `retryline view`'s server: the standalone timeline viewer (the devtools panel built as a page)
 * and one recording, on 127.0.0.1 only. It serves files from the viewer folder and nothing else —
 * no directory listing, no path outside the folder — and the recording at `/recording.json`.
 */

import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import type { Recording } from '@retryline/core';

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

// The viewer is our own code and runs the recording's text as data only; the policy says so too.
const SECURITY_HEADERS = {
  'content-security-policy': "default-src 'self'; script-src 'self'; style-src 'self'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
} as const;

/** What {@link startViewer} needs. */
export interface ViewerOptions {
  /** The built viewer: `viewer.html`, `viewer.js`, `panel.css`. */
  readonly viewerDir: string;
  readonly recording: Recording;
  /** @default 0: a free port */
  readonly port?: number;
}

/** A running viewer: its URL (which opens the recording) and how to stop it. */
export interface RunningViewer {
  readonly url: string;
  close(): Promise<void>;
}

/** Checks that parsed JSON is a recording the viewer can open; says what is wrong if not. */
export function parseRecording(text: string, name: string): Recording {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TypeError(`${name} is not JSON: ${(error as Error).message}`);
  }
  const recording = value as Partial<Recording> | null;
  if (
    typeof recording !== 'object' ||
    recording === null ||
    recording.format !== 'retryline-recording' ||
    recording.version !== 1 ||
    !Array.isArray(recording.entries)
  ) {
    throw new TypeError(
      `${name} is not a Retryline recording (expected { "format": "retryline-recording", "version": 1, "entries": [...] })`,
    );
  }
  return recording as Recording;
}

/** A request's path with its escapes decoded, `undefined` when one is malformed. */
function decodedPath(url: string | undefined): string | undefined {
  try {
    return decodeURIComponent(new URL(url ?? '/', 'http://viewer').pathname);
  } catch {
    return undefined;
  }
}

/** Serves the viewer and the recording on 127.0.0.1. */
export async function startViewer(options: ViewerOptions): Promise<RunningViewer> {
  const root = normalize(options.viewerDir + sep);
  const body = JSON.stringify(options.recording);
  const server: Server = createServer((request, response) => {
    const send = (status: number, type: string, content: string | Buffer) => {
      response.writeHead(status, { 'content-type': type, ...SECURITY_HEADERS });
      response.end(request.method === 'HEAD' ? undefined : content);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, 'text/plain', 'GET only');
    const path = decodedPath(request.url);
    // A malformed escape (`/%`) is this request's mistake: it gets a 400, the viewer keeps serving.
    if (path === undefined) return send(400, 'text/plain', 'malformed URL');
    if (path === '/recording.json') return send(200, TYPES['.json'] ?? '', body);
    const file = normalize(join(root, path === '/' ? 'viewer.html' : path));
    const type = TYPES[extname(file)];
    if (!file.startsWith(root) || type === undefined) return send(404, 'text/plain', 'not found');
    readFile(file).then(
      (content) => send(200, type, content),
      () => send(404, 'text/plain', 'not found'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/?src=/recording.json`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
