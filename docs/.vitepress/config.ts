import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DefaultTheme, defineConfig, type Plugin } from 'vitepress';
import { entryPoints } from '../scripts/entry-points.mjs';
import { readmeIncludes, slugify } from './readme-sections';

const srcDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(srcDir, '..');

/** `https://github.com/owner/repo` from the core package's `repository`, when it names one. */
function repositoryUrl(): string | undefined {
  const manifest = JSON.parse(readFileSync(join(root, 'packages/core/package.json'), 'utf8'));
  const url: unknown =
    typeof manifest.repository === 'string' ? manifest.repository : manifest.repository?.url;
  if (typeof url !== 'string') return undefined;
  const github = /github\.com[/:]([^/]+\/[^/]+?)(?:\.git)?$/.exec(url) ?? /^github:(.+)$/.exec(url);
  return github?.[1] ? `https://github.com/${github[1]}` : undefined;
}

const repository = repositoryUrl();
const GITHUB_ICON =
  '<svg role="img" viewBox="0 0 24 24" xmlns="http://www.w3.org/2000/svg"><title>GitHub</title><path d="M12 .3a12 12 0 0 0-3.8 23.4c.6.1.8-.3.8-.6v-2c-3.3.7-4-1.6-4-1.6-.6-1.4-1.4-1.8-1.4-1.8-1-.7.1-.7.1-.7 1.2.1 1.8 1.2 1.8 1.2 1 1.8 2.8 1.3 3.5 1 0-.8.4-1.3.7-1.6-2.7-.3-5.5-1.3-5.5-6 0-1.2.5-2.3 1.3-3.1-.2-.4-.6-1.6 0-3.2 0 0 1-.3 3.4 1.2a11.5 11.5 0 0 1 6 0c2.3-1.5 3.3-1.2 3.3-1.2.6 1.6.2 2.8 0 3.2.9.8 1.3 1.9 1.3 3.2 0 4.6-2.8 5.6-5.5 5.9.5.4.9 1.1.9 2.2v3.3c0 .3.1.7.8.6A12 12 0 0 0 12 .3"/></svg>';
const entries = entryPoints();
// `packages/<dir>` in the README goes to the package's API page.
const apiPages = new Map(
  entries.filter(({ name }) => !name.includes('/')).map(({ name, page }) => [name, `/api/${page}.md`]),
);
const expandReadme = readmeIncludes({ root, srcDir, repositoryUrl: repository, apiPages });

if (!existsSync(join(srcDir, 'api/index.md'))) {
  throw new Error(
    'The API reference is missing: run `pnpm docs:build` or `pnpm docs:dev` (or `node docs/scripts/api.mjs`) first',
  );
}

/**
 * In `docs:dev` only: the README's images that live outside docs/ (bench/charts/*.svg). Vue's dev
 * transform turns a page's `../../bench/charts/x.svg` into the URL `/bench/charts/x.svg`, which the
 * dev server, rooted at docs/, does not have; the build bundles them and needs none of this.
 */
function repositoryImages(): Plugin {
  const types: Record<string, string> = { '.svg': 'image/svg+xml', '.png': 'image/png' };
  return {
    name: 'retryline-docs:repository-images',
    apply: 'serve',
    configureServer(server) {
      server.middlewares.use((request, response, next) => {
        const path = decodeURIComponent((request.url ?? '').split('?')[0] ?? '');
        const file = normalize(join(root, path));
        const type = types[extname(file)];
        const outside = file.startsWith(root + sep) && !file.startsWith(srcDir + sep);
        if (!type || !outside || !existsSync(file) || !statSync(file).isFile()) return next();
        response.setHeader('content-type', type);
        createReadStream(file).pipe(response);
      });
    },
  };
}

const guide: DefaultTheme.SidebarItem[] = [
  {
    text: 'Start',
    items: [
      { text: 'Getting started', link: '/guide/getting-started' },
      { text: 'Playground', link: '/playground' },
    ],
  },
  {
    text: 'Drop-in plugins',
    items: [
      { text: 'fetch', link: '/guide/fetch' },
      { text: 'axios', link: '/guide/axios' },
      { text: 'ky', link: '/guide/ky' },
      { text: 'Any async operation', link: '/guide/retry' },
      { text: 'Migrating from axios-retry', link: '/guide/migrating-from-axios-retry' },
    ],
  },
  {
    text: 'In production',
    items: [
      { text: 'Guards', link: '/guide/guards' },
      { text: 'Running a fleet (Redis)', link: '/guide/fleet' },
      { text: 'Failover and hedging', link: '/guide/failover' },
      { text: 'Presets', link: '/guide/presets' },
      { text: 'Observability', link: '/guide/observability' },
    ],
  },
  {
    text: 'Debugging and testing',
    items: [
      { text: 'DevTools panel', link: '/guide/devtools' },
      { text: 'Testing with msw', link: '/guide/testing' },
      { text: 'Preview a policy', link: '/guide/preview' },
    ],
  },
  {
    text: 'Reference',
    items: [
      { text: 'Strategies and jitter', link: '/guide/strategies' },
      { text: 'Defaults', link: '/guide/defaults' },
      { text: 'Errors and events', link: '/guide/errors-and-events' },
      { text: 'Safety guarantees', link: '/guide/safety' },
      { text: 'Gotchas', link: '/guide/gotchas' },
      { text: 'Benchmarks', link: '/guide/benchmarks' },
      { text: 'API reference', link: '/api/' },
    ],
  },
];

const api: DefaultTheme.SidebarItem[] = [
  {
    text: 'API reference',
    link: '/api/',
    items: entries.map(({ specifier, page }) => ({ text: specifier, link: `/api/${page}` })),
  },
];

export default defineConfig({
  title: 'Retryline',
  description: 'HTTP retries that are correct, safe and visible: one small core for fetch, axios and ky.',
  lang: 'en-US',
  cleanUrls: false,
  lastUpdated: false,
  // Everything the site loads comes from its own files: no web fonts, analytics or CDN.
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }]],
  srcExclude: ['scripts/**'],
  markdown: {
    anchor: { slugify },
    headers: { slugify },
    config(md) {
      const parse = md.parse.bind(md);
      md.parse = (src, env) => parse(expandReadme(src, env?.path ?? join(srcDir, 'index.md')), env);
    },
  },
  themeConfig: {
    nav: [
      { text: 'Guide', link: '/guide/getting-started', activeMatch: '/guide/' },
      { text: 'Playground', link: '/playground' },
      { text: 'API', link: '/api/', activeMatch: '/api/' },
    ],
    sidebar: { '/guide/': guide, '/playground': guide, '/api/': api },
    outline: { level: [2, 3] },
    search: { provider: 'local' },
    // The icon inline: VitePress's dev server would otherwise fetch it from a CDN.
    ...(repository
      ? { socialLinks: [{ icon: { svg: GITHUB_ICON }, link: repository, ariaLabel: 'GitHub' }] }
      : {}),
  },
  vite: {
    plugins: [repositoryImages()],
    // The playground runs the packages' TypeScript source, bundled by Vite: no package build needed.
    resolve: { conditions: ['@retryline/source'] },
    ssr: { resolve: { conditions: ['@retryline/source'] } },
    worker: { format: 'es' },
    // The API pages are long tables: their chunks are large by nature, and each loads alone.
    build: { chunkSizeWarningLimit: 1_000 },
  },
});
