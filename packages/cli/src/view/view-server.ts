/**
 * `retryline view`'s server: the standalone timeline viewer (the devtools panel built as a page)
 * and one recording, on 127.0.0.1 only. It serves files from the viewer folder and nothing else —
 * no directory listing, no path outside the folder — and the recording at `/recording.json`.
 * It answers only requests addressed to it by name (`Host: 127.0.0.1:<port>` or
 * `localhost:<port>`): a page on another site that rebinds its own name to 127.0.0.1 (DNS
 * rebinding) gets a 403, not the recording.
 *
 * It reads a file as the viewer's Import does, with the same code (the panel's model, bundled into
 * the CLI): a recording, a HAR exported by the panel, or a bare array of events or entries.
 */

import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import type { Recording } from '@retryline/core';
import { parseImport } from '@retryline/devtools/import';

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

/** A file read for the viewer: its entries as a recording, what it was, and what was skipped. */
export interface ViewerFile {
  readonly recording: Recording;
  readonly format: 'recording' | 'har' | 'events';
  /** Entries that were not valid, left out. */
  readonly skipped: number;
}

/**
 * Reads a file as the viewer's Import does (a recording, a panel's HAR, a bare array of events
 * or entries; each event checked against the extension's schema), as one recording; says what
 * is wrong if it cannot be opened.
 */
export function readViewerFile(text: string, name: string): ViewerFile {
  const result = parseImport(text);
  if ('error' in result) {
    throw new TypeError(
      result.reason === 'not-json'
        ? `${name} is not JSON: ${result.error.replace(/^The file is not JSON: /, '')}`
        : result.reason === 'too-large'
          ? `${name}: ${result.error}`
          : `${name} is not a Retryline recording, a HAR exported by the panel, or an array of events: ${result.error}`,
    );
  }
  return {
    recording: {
      format: 'retryline-recording',
      version: 1,
      recordedAt: result.recordedAt ?? new Date().toISOString(),
      source: result.source ?? '',
      entries: result.entries,
    },
    format: result.format,
    skipped: result.skipped,
  };
}

/** A file as a recording the viewer can open (see {@link readViewerFile}); says what is wrong if not. */
export function parseRecording(text: string, name: string): Recording {
  return readViewerFile(text, name).recording;
}

/**
 * The names this server answers to (RFC 9110 §7.2: Host is the authority the client meant). Only
 * 127.0.0.1 is listened on, so `[::1]` is not one; port 80 may be written without its port.
 */
function hostAllowed(request: IncomingMessage, port: number): boolean {
  const host = request.headers.host?.toLowerCase();
  if (host === undefined) return false;
  const names = ['127.0.0.1', 'localhost'];
  return names.some((name) => host === `${name}:${port}` || (port === 80 && host === name));
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
  let port = 0;
  const server: Server = createServer((request, response) => {
    const send = (status: number, type: string, content: string | Buffer) => {
      response.writeHead(status, { 'content-type': type, ...SECURITY_HEADERS });
      response.end(request.method === 'HEAD' ? undefined : content);
    };
    if (!hostAllowed(request, port)) {
      return send(403, 'text/plain', `Forbidden: open http://127.0.0.1:${port}/ (this Host is not served)`);
    }
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
  port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}/?src=/recording.json`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
