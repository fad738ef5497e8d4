import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { chromium, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, requireChromium } from './chromium';
import { Firefox, type Prefs, proxyPrefs } from './firefox';
import type { OutboundSink } from './outbound-sink';

/** The built extension's folder for each browser it ships for (`pnpm build:extension` makes them). */
export const EXTENSION_DIST = {
  chrome: fileURLToPath(new URL('../../extension/dist/chrome/', import.meta.url)),
  firefox: fileURLToPath(new URL('../../extension/dist/firefox/', import.meta.url)),
} as const;

/**
 * Both browsers the extension ships for, each with its built folder and how to launch it: an
 * end-to-end suite runs `describe.each(EXTENSION_BROWSERS)`. Firefox's background requests go to
 * the suite's outbound sink (its proxy), so a test can prove nothing left loopback.
 */
export const EXTENSION_BROWSERS = [
  { name: 'Chromium', dir: EXTENSION_DIST.chrome, launch: (dir: string) => launchChromiumWith(dir) },
  {
    name: 'Firefox',
    dir: EXTENSION_DIST.firefox,
    launch: (dir: string, sink: OutboundSink) => launchFirefoxWith(dir, proxyPrefs(sink.port)),
  },
];

/** Throws, naming the command, when the extension's build for `dir` is missing. */
export function requireBuiltExtension(dir: string): void {
  if (!existsSync(join(dir, 'manifest.json'))) {
    throw new Error(`${dir} is not built: run \`pnpm build:extension\` (pnpm test builds it)`);
  }
}

/**
 * A test page's script as an app's development build makes it: `entry` bundled for the browser
 * from Retryline's sources, with `process.env.NODE_ENV` defined as `"development"` (a production
 * build leaves the devtools-only code out: fault injection, replay).
 */
export async function developmentPageScript(entry: URL): Promise<string> {
  const bundle = await build({
    entryPoints: [fileURLToPath(entry)],
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    conditions: ['@retryline/source', 'browser'],
    define: { 'process.env.NODE_ENV': '"development"' },
    logLevel: 'warning',
  });
  return bundle.outputFiles[0]?.text ?? '';
}

/**
 * One browser with the built extension installed, driven the same way whichever it is, so an
 * end-to-end case is written once and runs in Chromium and in Firefox: tabs are opened at a URL
 * (a loopback page or one of the extension's pages) and scripts run in them.
 */
export interface ExtensionBrowser {
  readonly name: 'Chromium' | 'Firefox';
  /** The URL of one of the extension's pages: `path` may carry a query. */
  extensionUrl(path: string): string;
  /** A new tab, once `url` has loaded. */
  open(url: string): Promise<BrowserTab>;
  /** Closes the browser and removes its profile. */
  close(): Promise<void>;
}

export interface BrowserTab {
  /**
   * Calls `fn` with `args` in the tab's page, with the page's own globals (a page's `window.x`, an
   * extension page's `browser`/`chrome`), and resolves with its (awaited) result. `fn` travels as
   * source text and `args` and the result as JSON: `fn` may use nothing from the test's scope.
   */
  evaluate<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): Promise<Awaited<R>>;
  goto(url: string): Promise<void>;
  reload(): Promise<void>;
  back(): Promise<void>;
  close(): Promise<void>;
}

/** `fn` called with `args`, as the source text of one expression. */
function call(fn: { toString(): string }, args: readonly unknown[]): string {
  return `(${fn.toString()})(...${JSON.stringify(args)})`;
}

/**
 * Debian's Chromium with the unpacked extension at `dir` (a Chrome build), headless, on a fresh
 * profile, with {@link CHROMIUM_ARGS} and `args`.
 */
export async function launchChromiumWith(
  dir: string,
  args: readonly string[] = [],
): Promise<ExtensionBrowser> {
  requireChromium();
  const profile = mkdtempSync(join(tmpdir(), 'retryline-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 800 },
    // Playwright turns the back/forward cache off by default; users have it on.
    ignoreDefaultArgs: ['--disable-back-forward-cache'],
    args: [`--disable-extensions-except=${dir}`, `--load-extension=${dir}`, ...CHROMIUM_ARGS, ...args],
  });
  const close = async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  };
  try {
    const worker =
      context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker', { timeout: 15_000 }));
    const id = new URL(worker.url()).host;
    const tab = (page: Page): BrowserTab => ({
      evaluate: <R>(fn: { toString(): string }, ...args: unknown[]) =>
        page.evaluate(call(fn, args)) as Promise<R>,
      goto: async (url) => {
        await page.goto(url);
      },
      reload: async () => {
        await page.reload();
      },
      back: async () => {
        // A page restored from the back/forward cache fires no new 'load'.
        await page.goBack({ waitUntil: 'commit' });
      },
      close: () => page.close(),
    });
    return {
      name: 'Chromium',
      extensionUrl: (path) => `chrome-extension://${id}/${path}`,
      open: async (url) => {
        const page = await context.newPage();
        await page.goto(url);
        return tab(page);
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The `moz-extension://` host the tests give the extension. Firefox picks a random one per
 * profile unless the `extensions.webextensions.uuids` preference (add-on id → UUID, as JSON)
 * already names one (https://github.com/mozilla/web-ext/issues/1043).
 */
const FIREFOX_EXTENSION_UUID = 'a4a7d0c5-7e2b-4f0e-9c1d-5e3f2b1a0c9d';

/**
 * Debian's Firefox ESR with the unpacked extension at `dir` (a Firefox build) installed as a
 * temporary add-on, headless, on a fresh profile with the background-traffic preferences off
 * (`FIREFOX_PREFS`) and `prefs`.
 */
export async function launchFirefoxWith(dir: string, prefs: Prefs = {}): Promise<ExtensionBrowser> {
  const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
    browser_specific_settings: { gecko: { id: string } };
  };
  const id = manifest.browser_specific_settings.gecko.id;
  const firefox = await Firefox.launch({
    ...prefs,
    'extensions.webextensions.uuids': JSON.stringify({ [id]: FIREFOX_EXTENSION_UUID }),
  });
  try {
    await firefox.installAddon(dir);
  } catch (error) {
    await firefox.close();
    throw error;
  }
  return {
    name: 'Firefox',
    extensionUrl: (path) => `moz-extension://${FIREFOX_EXTENSION_UUID}/${path}`,
    open: async (url) => {
      const page = await firefox.newPage(url);
      return {
        evaluate: (fn, ...args) => firefox.evaluate(page, call(fn, args)),
        goto: (to) => firefox.navigate(page, to),
        reload: () => firefox.reload(page),
        back: () => firefox.back(page),
        close: () => firefox.closePage(page),
      };
    },
    close: () => firefox.close(),
  };
}
