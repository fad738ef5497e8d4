import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { type FaultServer, startFaultServer } from '../support/fault-server';

/**
 * The fault server on 127.0.0.1 serving the fixture page (fixture-page.ts bundled for the
 * browser) at `/` and at `/other` (a second page of the same origin, to navigate to).
 */
export async function startFixtureServer(): Promise<FaultServer> {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('fixture-page.ts', import.meta.url))],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    conditions: ['@retryline/source', 'browser'],
    logLevel: 'warning',
  });
  const server = await startFaultServer();
  const html = '<!doctype html><title>fixture</title><script src="/app.js"></script>';
  server.static('/app.js', bundle.outputFiles[0]?.text ?? '', 'text/javascript');
  server.static('/', html, 'text/html');
  server.static('/other', html, 'text/html');
  return server;
}
