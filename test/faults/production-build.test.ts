import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

// Fault injection is a development tool: an app's production bundle carries none of it. Core and
// the adapters keep it behind `process.env.NODE_ENV !== 'production'`, which bundlers replace, so
// the code folds away. Checked by bundling each adapter from source as an app would, for
// production and for development.
const repo = fileURLToPath(new URL('../../', import.meta.url));

async function bundle(entry: string, nodeEnv: 'production' | 'development'): Promise<string> {
  const result = await build({
    stdin: { contents: entry, resolveDir: repo, loader: 'js' },
    absWorkingDir: repo,
    conditions: ['@retryline/source'],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
    external: ['axios', 'ky'],
    define: { 'process.env.NODE_ENV': JSON.stringify(nodeEnv) },
  });
  return result.outputFiles[0]?.text ?? '';
}

// Words only the fault code holds: the cause of an injected network error, the steps it reads.
const MARKS = ['injected from the Retryline DevTools panel', 'networkError', 'process.env'];
// What only the replay code holds: the call of the hook's `replayable`, the methods it offers.
const REPLAY_MARKS = [/\.replayable\?\.\(/, /"GET","HEAD","OPTIONS"\]/];

describe.each([
  ['retryFetch', "export { retryFetch } from '@retryline/fetch';"],
  ['attachRetry', "export { attachRetry } from '@retryline/axios';"],
  ['retryline (ky)', "export { retryline } from '@retryline/ky';"],
])('%s', (_name, entry) => {
  it('carries no fault injection in a production bundle', async () => {
    const text = await bundle(entry, 'production');
    for (const mark of MARKS) expect(text, mark).not.toContain(mark);
  });

  it('carries it in a development bundle', async () => {
    const text = await bundle(entry, 'development');
    expect(text).toContain('injected from the Retryline DevTools panel');
    expect(text).toContain('networkError');
  });

  // The DevTools panel's Replay is a development tool too: core offers the hook a replay of each
  // request only behind the same guard.
  it('carries no replay in a production bundle, and carries it in a development one', async () => {
    const production = await bundle(entry, 'production');
    const development = await bundle(entry, 'development');
    for (const mark of REPLAY_MARKS) {
      expect(production, String(mark)).not.toMatch(mark);
      expect(development, String(mark)).toMatch(mark);
    }
  });
});
