// What an app pays in bytes to use Retryline, and what it would pay for the peer libraries instead.
// `bundleSize` bundles a small ESM snippet the way an app bundler would (esbuild: bundle, minify,
// ESM, browser, ES2022, tree-shaken) and reports the minified and min+gzip sizes plus which input
// files the bytes came from. `ENTRY_POINTS` lists what is measured. Retryline is imported from the
// built workspace packages (packages/*/dist through the node_modules workspace links), so run
// `pnpm build` first. Used by bench/size.mjs and test/size-budget.test.ts. `PAGE_HOOK` is the
// devtools extension's page script, measured as the extension build writes it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** The repository root: snippets resolve their imports from here, and module paths are relative to it. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Everything measured. Retryline's entries import exactly the one function an app would start with,
 * so the figure is what that import costs after tree-shaking; the HTTP clients the adapters wrap
 * (axios, ky) are left external because the app already ships them. Peers are imported the way
 * their READMEs show.
 */
export const ENTRY_POINTS = [
  {
    name: '@retryline/fetch (retryFetch)',
    kind: 'retryline',
    contents: "export { retryFetch } from '@retryline/fetch';",
    external: [],
  },
  {
    name: '@retryline/core (retry)',
    kind: 'retryline',
    contents: "export { retry } from '@retryline/core';",
    external: [],
  },
  {
    name: '@retryline/core (computeDelay only)',
    kind: 'retryline',
    contents: "export { computeDelay } from '@retryline/core';",
    external: [],
  },
  // Each guard factory on top of a default retryFetch: what importing it costs.
  ...['circuitBreaker', 'rateLimiter', 'bulkhead', 'pacing'].map((factory) => ({
    name: `@retryline/fetch (retryFetch + ${factory})`,
    kind: 'retryline',
    contents: `export { retryFetch, ${factory} } from '@retryline/fetch';`,
    external: [],
  })),
  {
    name: '@retryline/axios (attachRetry)',
    kind: 'retryline',
    contents: "export { attachRetry } from '@retryline/axios';",
    external: ['axios'],
  },
  {
    name: '@retryline/ky (retryline)',
    kind: 'retryline',
    contents: "export { retryline } from '@retryline/ky';",
    external: ['ky'],
  },
  {
    name: 'axios-retry',
    kind: 'peer',
    contents: "export { default } from 'axios-retry';",
    external: ['axios'],
  },
  {
    // ky has no separate retry module: its retry is part of the client, so the whole client is counted.
    name: 'ky (client incl. retry)',
    kind: 'peer',
    contents: "export { default } from 'ky';",
    external: [],
  },
  {
    name: 'cockatiel (retry, handleAll, ExponentialBackoff)',
    kind: 'peer',
    contents: "export { retry, handleAll, ExponentialBackoff } from 'cockatiel';",
    external: [],
  },
  {
    name: 'p-retry',
    kind: 'peer',
    contents: "export { default } from 'p-retry';",
    external: [],
  },
  {
    name: 'fetch-retry',
    kind: 'peer',
    contents: "export { default } from 'fetch-retry';",
    external: [],
  },
];

/**
 * Bundles `contents` from TypeScript source, `@retryline/core` and its subpaths read from source too
 * (the `@retryline/source` export condition), to tell which source modules an import carries (the
 * dist files are bundled chunks). Same options as {@link bundleSize}, so totals match the dist rows
 * to within a few bytes.
 */
export async function sourceBundle(contents) {
  return measure(
    await build({
      stdin: { contents, resolveDir: REPO_ROOT, loader: 'js' },
      absWorkingDir: REPO_ROOT,
      // Every workspace package, and each of core's subpaths, read from its TypeScript source.
      conditions: ['@retryline/source'],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      write: false,
      metafile: true,
      logLevel: 'silent',
    }),
  );
}

/** The guard modules a default `retryFetch` must not carry (guards are imported values). */
export const OPT_IN_GUARD_MODULES = [
  'packages/core/src/guard/breaker.ts',
  'packages/core/src/guard/rate-limiter.ts',
  'packages/core/src/guard/token-bucket.ts',
  'packages/core/src/guard/bulkhead.ts',
  'packages/core/src/guard/pacing.ts',
  'packages/core/src/guard/local-store.ts',
  'packages/core/src/http/quota.ts',
];

/**
 * The devtools extension's page hook: the MAIN-world content script the browser injects at
 * document_start into every page (and frame) the user opens, Retryline or not, so every page
 * downloads, parses and compiles it. Measured as `pnpm build:extension` writes it (`file`; the
 * Firefox build's is the same file); `source` is its entry, for {@link pageHookBundle}.
 */
export const PAGE_HOOK = {
  name: '@retryline/devtools (page hook.js)',
  kind: 'extension',
  file: 'extension/dist/chrome/hook.js',
  source: 'extension/src/page/hook.ts',
};

/** Sizes of a built file (relative to the repository root): its bytes, and gzipped as {@link measure} does. */
export function fileSize(path) {
  const bytes = readFileSync(join(REPO_ROOT, path));
  return { minBytes: bytes.byteLength, gzipBytes: gzipSync(bytes, { level: 9 }).byteLength };
}

/**
 * The page hook bundled from source with the options extension/scripts/build.mjs gives a release
 * build (IIFE, minified, `@retryline/core` read from source), to tell which modules it carries.
 */
export async function pageHookBundle() {
  return measure(
    await build({
      entryPoints: [PAGE_HOOK.source],
      absWorkingDir: REPO_ROOT,
      conditions: ['@retryline/source'],
      bundle: true,
      minify: true,
      format: 'iife',
      target: 'es2022',
      legalComments: 'none',
      define: { 'process.env.NODE_ENV': '"production"' },
      write: false,
      metafile: true,
      logLevel: 'silent',
    }),
  );
}

/**
 * Bundles `contents` (ESM source) as an app would ship it and measures the result.
 * Returns `{ minBytes, gzipBytes, modules }`, where `modules` lists each input file's share of the
 * minified output (`bytesInOutput`), largest first, with paths relative to the repository root.
 */
export async function bundleSize(contents, { external = [], platform = 'browser' } = {}) {
  const result = await build({
    stdin: { contents, resolveDir: REPO_ROOT, loader: 'js' },
    absWorkingDir: REPO_ROOT,
    bundle: true,
    minify: true,
    format: 'esm',
    platform,
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
    external,
  });
  return measure(result);
}

/** Sizes of an esbuild result built with `write: false, metafile: true` and a single output file. */
export function measure(result) {
  const [output] = result.outputFiles;
  if (!output || result.outputFiles.length !== 1) {
    throw new Error(`expected one output file, got ${result.outputFiles.length}`);
  }
  const outputs = Object.values(result.metafile.outputs);
  const inputs = outputs.flatMap((out) => Object.entries(out.inputs));
  const modules = inputs
    .map(([path, { bytesInOutput }]) => ({ path, bytes: bytesInOutput }))
    .filter(({ bytes }) => bytes > 0)
    .sort((a, b) => b.bytes - a.bytes || a.path.localeCompare(b.path));
  return {
    text: output.text,
    minBytes: output.contents.byteLength,
    gzipBytes: gzipSync(output.contents, { level: 9 }).byteLength,
    modules,
  };
}
