// Serves a built site from a folder on 127.0.0.1, as a plain static host does: a path is a file, a
// path ending in `/` is its folder's index.html, anything else is a 404 with the site's 404.html.
// No extension is guessed, so a link the site gets wrong is a 404 here too. Used by the docs test
// and the screenshot script.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

const isFile = (path) => {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/**
 * Starts the server on a free port of 127.0.0.1.
 * @param {string} dir the built site
 * @returns {Promise<{ url: string, close(): Promise<void> }>}
 */
export function serveStatic(dir) {
  const root = normalize(dir);
  const server = createServer((request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    let path;
    try {
      path = decodeURIComponent(new URL(request.url ?? '/', 'http://127.0.0.1').pathname);
    } catch {
      response.writeHead(400).end();
      return;
    }
    const file = normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
    const found = (file === root || file.startsWith(root + sep)) && isFile(file);
    const served = found ? file : join(root, '404.html');
    response.writeHead(found ? 200 : 404, {
      'content-type': TYPES[extname(served)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
    });
    if (request.method === 'HEAD' || !isFile(served)) response.end();
    else createReadStream(served).pipe(response);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
