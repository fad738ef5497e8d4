/**
 * Builds the extension for Chrome and Firefox, and the standalone viewer, from one source:
 *
 *   dist/chrome/    MV3, background as a module service worker
 *   dist/firefox/   MV3, background as an event page script (Firefox has no extension service workers)
 *   dist/viewer/    the panel as a plain page that opens a recording (`retryline view events.json`)
 *
 * Usage: `pnpm --filter @retryline/devtools build` (release: minified). `--dev` keeps names and
 * whitespace for debugging (and esbuild's `// path` comment before each bundled module, which tells
 * a linter's finding in our code from one in a dependency's). `--out DIR` writes the three builds
 * under DIR instead of dist/. Offline: esbuild only, and `@retryline/core` is read from its source.
 */

import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ICON_SIZES, iconPng } from './icons.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const src = join(root, 'src');
const dev = process.argv.includes('--dev');
const out = process.argv.indexOf('--out');
if (out !== -1 && !process.argv[out + 1]) {
  console.error('[retryline devtools] --out needs a directory');
  process.exit(1);
}
const dist = out === -1 ? join(root, 'dist') : resolve(process.argv[out + 1] ?? '');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));

/** esbuild options every bundle shares. */
const common = {
  bundle: true,
  write: false,
  target: 'es2022',
  minify: !dev,
  sourcemap: false,
  legalComments: 'none',
  // Read workspace packages from their TypeScript source: no prior build of @retryline/core.
  conditions: ['@retryline/source'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  define: { 'process.env.NODE_ENV': dev ? '"development"' : '"production"' },
  logLevel: 'warning',
};

/** Bundles one entry to a string of JavaScript. */
async function bundle(entry, format) {
  const result = await build({ ...common, entryPoints: [join(src, entry)], format });
  const [file] = result.outputFiles;
  if (!file) throw new Error(`esbuild wrote nothing for ${entry}`);
  return file.text;
}

/** Bundles a stylesheet (its `@import`s inlined). */
async function bundleCss(entry) {
  const result = await build({ ...common, entryPoints: [join(src, entry)], loader: { '.css': 'css' } });
  const [file] = result.outputFiles;
  if (!file) throw new Error(`esbuild wrote nothing for ${entry}`);
  return file.text;
}

// The panel and the viewer are required: an extension without its panel is not a build.
const required = ['panel/main.tsx', 'panel/theme.css', 'panel.html', 'viewer/main.tsx', 'viewer.html'];
const missing = required.filter((file) => !existsSync(join(src, file)));
if (missing.length > 0) {
  console.error(`[retryline devtools] cannot build: missing ${missing.map((f) => `src/${f}`).join(', ')}`);
  process.exit(1);
}

/**
 * The manifest both browsers share; `forBrowser` adds what differs. Permissions, each needed:
 * - `storage`: `storage.session` keeps each tab's timeline while the worker is suspended.
 * No `webNavigation` (Chrome warns on install that it can "Read your browsing history"): the relay in a
 * tab's top frame tells the worker of each new document itself, which marks page boundaries
 * (Preserve log). No `tabs`: `sender.tab.id`, `sender.frameId` and `sender.url` of a content
 * script's message need no permission, and `tabs.onRemoved` gives the id of a closed tab without
 * it. No host permissions beyond the content scripts' matches, and no `externally_connectable`: no
 * web page or other extension can message the worker.
 */
const manifest = {
  manifest_version: 3,
  name: 'Retryline',
  version: pkg.version,
  description: 'Every request’s retries, waits and guards as a timeline in DevTools.',
  icons: Object.fromEntries(ICON_SIZES.map((size) => [String(size), `icons/icon-${size}.png`])),
  devtools_page: 'devtools.html',
  permissions: ['storage'],
  content_scripts: [
    {
      // Defines the hook before any page script runs, in the page's own world, so core sees it.
      matches: ['<all_urls>'],
      js: ['hook.js'],
      run_at: 'document_start',
      all_frames: true,
      world: 'MAIN',
    },
    {
      // Relays the hook's messages to the worker (an isolated world may use the runtime API).
      matches: ['<all_urls>'],
      js: ['relay.js'],
      run_at: 'document_start',
      all_frames: true,
    },
  ],
  content_security_policy: { extension_pages: "script-src 'self'; object-src 'self'" },
};

/** Puts `extra` right after `devtools_page`, so both manifests read in the same order. */
function withAfterDevtools(extra) {
  const entries = Object.entries(manifest);
  const at = entries.findIndex(([key]) => key === 'devtools_page') + 1;
  return Object.fromEntries([...entries.slice(0, at), ...Object.entries(extra), ...entries.slice(at)]);
}

function forBrowser(browser) {
  if (browser === 'chrome') {
    return {
      ...withAfterDevtools({ background: { service_worker: 'background.js', type: 'module' } }),
      // 111: `world: 'MAIN'` in the manifest's content scripts.
      minimum_chrome_version: '111',
    };
  }
  return {
    ...withAfterDevtools({ background: { scripts: ['background.js'] } }),
    browser_specific_settings: {
      gecko: {
        id: 'devtools@retryline.dev',
        // 140 (ESR): the first to read `data_collection_permissions`; `world: 'MAIN'` content
        // scripts need 128, storage.session 115.
        strict_min_version: '140.0',
        // Nothing leaves the browser: events go from the page to this extension's own pages only.
        // https://extensionworkshop.com/documentation/develop/firefox-builtin-data-consent/
        data_collection_permissions: { required: ['none'] },
      },
      // Firefox for Android reads `data_collection_permissions` from 142 (it has no DevTools panel,
      // but an Android version is checked against the same key).
      gecko_android: { strict_min_version: '142.0' },
    },
  };
}

/** Writes a build: each file's text, bytes, or `{ copy: source }`; names may hold a folder. */
async function emit(dir, files) {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  await Promise.all(
    Object.entries(files).map(async ([name, content]) => {
      const target = join(dir, name);
      await mkdir(dirname(target), { recursive: true });
      if (typeof content === 'string' || content instanceof Uint8Array) await writeFile(target, content);
      else await copyFile(content.copy, target);
    }),
  );
}

const [hook, relay, devtools, panel, panelCss, viewer, workerEsm, workerIife] = await Promise.all([
  bundle('page/hook.ts', 'iife'),
  bundle('relay/relay.ts', 'iife'),
  bundle('devtools/devtools.ts', 'iife'),
  bundle('panel/main.tsx', 'iife'),
  bundleCss('panel/theme.css'),
  bundle('viewer/main.tsx', 'iife'),
  bundle('worker/background.ts', 'esm'),
  bundle('worker/background.ts', 'iife'),
]);

const pages = {
  'hook.js': hook,
  'relay.js': relay,
  'devtools.js': devtools,
  'panel.js': panel,
  'panel.css': panelCss,
  'devtools.html': { copy: join(src, 'devtools.html') },
  'panel.html': { copy: join(src, 'panel.html') },
  ...Object.fromEntries(ICON_SIZES.map((size) => [`icons/icon-${size}.png`, iconPng(size)])),
};

await Promise.all([
  emit(join(dist, 'chrome'), {
    ...pages,
    'background.js': workerEsm,
    'manifest.json': `${JSON.stringify(forBrowser('chrome'), null, 2)}\n`,
  }),
  emit(join(dist, 'firefox'), {
    ...pages,
    'background.js': workerIife,
    'manifest.json': `${JSON.stringify(forBrowser('firefox'), null, 2)}\n`,
  }),
  emit(join(dist, 'viewer'), {
    'viewer.html': { copy: join(src, 'viewer.html') },
    'viewer.js': viewer,
    'panel.css': panelCss,
  }),
]);

const kb = (text) => `${(Buffer.byteLength(text) / 1024).toFixed(1)} KB`;
console.log(
  `[retryline devtools] ${dev ? 'dev' : 'release'} build ${pkg.version} → ${out === -1 ? 'dist' : dist}/{chrome,firefox,viewer}` +
    ` (hook ${kb(hook)}, relay ${kb(relay)}, worker ${kb(workerEsm)}, panel ${kb(panel)}, viewer ${kb(viewer)})`,
);
