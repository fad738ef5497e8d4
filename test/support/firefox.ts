import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Marionette } from './marionette';
import { findProgram, requireProgram, TEST_PROGRAMS } from './test-programs';

/**
 * Debian's Firefox ESR (/usr/bin/firefox-esr), installed by `pnpm bootstrap`: the only Firefox the
 * tests use. `RETRYLINE_FIREFOX` names another; on macOS, Homebrew's `firefox@esr`.
 */
export const FIREFOX: string = findProgram(TEST_PROGRAMS['firefox-esr']).path ?? '/usr/bin/firefox-esr';

export type Prefs = Readonly<Record<string, string | number | boolean>>;

/**
 * Preferences that switch off what Firefox requests in the background, so the browser under test
 * reaches nothing beyond loopback by itself. After Mozilla's list of the connections Firefox makes
 * on its own (https://support.mozilla.org/kb/how-stop-firefox-making-automatic-connections) and
 * the preferences its remote agent recommends for automation
 * (https://firefox-source-docs.mozilla.org/remote/Prefs.html).
 */
export const FIREFOX_PREFS: Prefs = {
  // Updates: of Firefox, of add-ons and system add-ons, of search engines, of media plugins.
  'app.update.disabledForTesting': true,
  'app.update.auto': false,
  'extensions.update.enabled': false,
  'extensions.systemAddon.update.enabled': false,
  'extensions.getAddons.cache.enabled': false,
  'extensions.getAddons.discovery.api_url': '',
  'extensions.htmlaboutaddons.recommendations.enabled': false,
  'extensions.blocklist.enabled': false,
  'browser.search.update': false,
  'media.gmp-manager.updateEnabled': false,
  'media.gmp-gmpopenh264.enabled': false,
  'media.gmp-widevinecdm.enabled': false,
  // Telemetry, the health report, crash reports, studies (Normandy) and experiments (Nimbus).
  'toolkit.telemetry.enabled': false,
  'toolkit.telemetry.unified': false,
  'toolkit.telemetry.archive.enabled': false,
  'toolkit.telemetry.server': '',
  'datareporting.healthreport.uploadEnabled': false,
  'datareporting.policy.dataSubmissionEnabled': false,
  'datareporting.policy.firstRunURL': '',
  'datareporting.usage.uploadEnabled': false,
  'browser.crashReports.unsubmittedCheck.enabled': false,
  'browser.tabs.crashReporting.sendReport': false,
  'app.normandy.enabled': false,
  'app.normandy.api_url': '',
  'app.shield.optoutstudies.enabled': false,
  'nimbus.telemetry.targetingContextEnabled': false,
  // Remote settings (blocklists, certificate lists, experiments' data): this server name makes the
  // client skip its sync, where non-local connections are off (see `Firefox.launch`).
  'services.settings.server': 'data:,#remote-settings-dummy/v1',
  'security.remote_settings.intermediates.enabled': false,
  'security.remote_settings.crlite_filters.enabled': false,
  // Captive portal detection and the connectivity check.
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'captivedetect.canonicalURL': '',
  // Safe Browsing lists, and the tracking-protection lists they bring.
  'browser.safebrowsing.malware.enabled': false,
  'browser.safebrowsing.phishing.enabled': false,
  'browser.safebrowsing.downloads.enabled': false,
  'browser.safebrowsing.downloads.remote.enabled': false,
  'browser.safebrowsing.blockedURIs.enabled': false,
  'browser.safebrowsing.update.enabled': false,
  'browser.safebrowsing.provider.google4.updateURL': '',
  'browser.safebrowsing.provider.google.updateURL': '',
  'browser.safebrowsing.provider.mozilla.updateURL': '',
  'privacy.trackingprotection.enabled': false,
  // Web Push's connection.
  'dom.push.enabled': false,
  'dom.push.connection.enabled': false,
  'dom.push.serverURL': '',
  // DNS over HTTPS, DNS and link prefetching, speculative connections, certificate status (OCSP).
  'network.trr.mode': 5,
  'doh-rollout.disable-heuristics': true,
  'network.dns.disablePrefetch': true,
  'network.prefetch-next': false,
  'network.http.speculative-parallel-limit': 0,
  'browser.urlbar.speculativeConnect.enabled': false,
  'security.OCSP.enabled': 0,
  // Start page, new tab page, first run, region and location, suggestions, sponsored content.
  'browser.startup.page': 0,
  'browser.startup.homepage': 'about:blank',
  'browser.startup.homepage_override.mstone': 'ignore',
  'startup.homepage_welcome_url': 'about:blank',
  'startup.homepage_welcome_url.additional': '',
  'browser.aboutwelcome.enabled': false,
  'browser.newtabpage.enabled': false,
  'browser.newtabpage.activity-stream.feeds.system.topstories': false,
  'browser.newtabpage.activity-stream.feeds.section.topstories': false,
  'browser.newtabpage.activity-stream.showSponsored': false,
  'browser.newtabpage.activity-stream.showSponsoredTopSites': false,
  'browser.newtabpage.activity-stream.telemetry': false,
  'browser.topsites.contile.enabled': false,
  'browser.region.network.url': '',
  'browser.region.update.enabled': false,
  'geo.provider.network.url': '',
  'browser.search.suggest.enabled': false,
  'browser.urlbar.suggest.searches': false,
  'browser.urlbar.quicksuggest.enabled': false,
  'browser.discovery.enabled': false,
  'browser.shell.checkDefaultBrowser': false,
  'browser.translations.enable': false,
  'browser.ml.enable': false,
  // Accounts and Sync.
  'identity.fxaccounts.enabled': false,
};

/**
 * Preferences that send every request for a host beyond loopback to `port` on 127.0.0.1 as an
 * HTTP proxy, where a test can see what was asked for and answer no (loopback itself is never
 * proxied: `network.proxy.allow_hijacking_localhost` is off by default).
 * https://support.mozilla.org/kb/connection-settings-firefox
 */
export function proxyPrefs(port: number): Prefs {
  return {
    'network.proxy.type': 1,
    'network.proxy.http': '127.0.0.1',
    'network.proxy.http_port': port,
    'network.proxy.ssl': '127.0.0.1',
    'network.proxy.ssl_port': port,
    'network.proxy.no_proxies_on': '',
    // A refusing proxy must not make Firefox try the host directly instead.
    'network.proxy.failover_direct': false,
  };
}

/** Fails the suite at once, naming what is missing and how to get it, when Firefox ESR is not installed. */
export function requireFirefox(): void {
  requireProgram(TEST_PROGRAMS['firefox-esr']);
}

function userJs(prefs: Prefs): string {
  return Object.entries(prefs)
    .map(([name, value]) => `user_pref(${JSON.stringify(name)}, ${JSON.stringify(value)});\n`)
    .join('');
}

/** A page of the Firefox under test: its window's WebDriver handle. */
export type PageHandle = string;

/**
 * Firefox ESR, headless, with a fresh profile, driven over Marionette. Marionette works on one
 * current window at a time, so each call switches to its page's window first; calls run one at a
 * time, in order.
 */
export class Firefox {
  readonly #process: ChildProcess;
  readonly #marionette: Marionette;
  readonly #profile: string;
  /** The window Firefox opened with, kept open: WebDriver opens a new window only from an open one. */
  #home = '';
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(process: ChildProcess, marionette: Marionette, profile: string) {
    this.#process = process;
    this.#marionette = marionette;
    this.#profile = profile;
  }

  /**
   * Starts Firefox with {@link FIREFOX_PREFS} and `prefs` on a new profile. Marionette listens on a
   * free port, which Firefox writes to the profile's `MarionetteActivePort`.
   * `--remote-allow-system-access` lets Marionette open and script `moz-extension://` pages
   * (geckodriver's `--allow-system-access`, https://firefox-source-docs.mozilla.org/testing/geckodriver/Flags.html).
   * `MOZ_DISABLE_NONLOCAL_CONNECTIONS=1`, as Mozilla's own test harnesses set it, makes Firefox
   * refuse to open a connection to any address beyond loopback
   * (https://bugzilla.mozilla.org/show_bug.cgi?id=1549857), as `--host-resolver-rules` does for
   * Chromium (test/support/chromium.ts).
   */
  static async launch(prefs: Prefs = {}): Promise<Firefox> {
    requireFirefox();
    const profile = mkdtempSync(join(tmpdir(), 'retryline-firefox-'));
    writeFileSync(join(profile, 'user.js'), userJs({ ...FIREFOX_PREFS, ...prefs, 'marionette.port': 0 }));
    const child = spawn(
      FIREFOX,
      ['--headless', '--marionette', '--remote-allow-system-access', '--no-remote', '--profile', profile],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, MOZ_CRASHREPORTER_DISABLE: '1', MOZ_DISABLE_NONLOCAL_CONNECTIONS: '1' },
      },
    );
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const portFile = join(profile, 'MarionetteActivePort');
    let marionette: Marionette | undefined;
    try {
      let port = 0;
      for (let waited = 0; !port; waited += 50) {
        if (child.exitCode !== null) throw new Error(`Firefox exited (${child.exitCode}): ${stderr}`);
        if (waited > 30_000) throw new Error(`Firefox opened no Marionette port in 30 s: ${stderr}`);
        await sleep(50);
        // The file may exist a moment before its number is written.
        port = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8').trim()) || 0 : 0;
      }
      marionette = await Marionette.connect(port);
      const firefox = new Firefox(child, marionette, profile);
      await marionette.command('WebDriver:NewSession', { capabilities: { alwaysMatch: {} } });
      await marionette.command('WebDriver:SetTimeouts', { script: 30_000, pageLoad: 30_000 });
      firefox.#home = (await marionette.command<{ value: string }>('WebDriver:GetWindowHandle')).value;
      return firefox;
    } catch (error) {
      marionette?.close();
      child.kill('SIGKILL');
      rmSync(profile, { recursive: true, force: true });
      throw error;
    }
  }

  /** Runs `step` after every call made before it. */
  #serial<T>(step: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(step, step);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #on<T>(page: PageHandle, step: () => Promise<T>): Promise<T> {
    return this.#serial(async () => {
      await this.#marionette.command('WebDriver:SwitchToWindow', { handle: page, focus: false });
      return step();
    });
  }

  /** Installs an unpacked extension for this session (a temporary add-on); resolves with its id. */
  installAddon(path: string): Promise<string> {
    return this.#serial(async () => {
      const { value } = await this.#marionette.command<{ value: string }>('Addon:Install', {
        path,
        temporary: true,
      });
      return value;
    });
  }

  /** Opens `url` in a new window and resolves once it has loaded. */
  async newPage(url: string): Promise<PageHandle> {
    const page = await this.#on(this.#home, async () => {
      // A window each: a page in a background tab gets no animation frames and throttled timers.
      const { handle } = await this.#marionette.command<{ handle: string }>('WebDriver:NewWindow', {
        type: 'window',
        focus: false,
      });
      return handle;
    });
    await this.navigate(page, url);
    return page;
  }

  navigate(page: PageHandle, url: string): Promise<void> {
    return this.#on(page, async () => {
      await this.#marionette.command('WebDriver:Navigate', { url });
    });
  }

  reload(page: PageHandle): Promise<void> {
    return this.#on(page, async () => {
      await this.#marionette.command('WebDriver:Refresh');
    });
  }

  back(page: PageHandle): Promise<void> {
    return this.#on(page, async () => {
      await this.#marionette.command('WebDriver:Back');
    });
  }

  /**
   * Evaluates `expression` (a JavaScript expression, awaited when it is a promise) in the page,
   * with the page's own globals, and resolves with its value as JSON.
   */
  evaluate<T>(page: PageHandle, expression: string): Promise<T> {
    const script = `const done = arguments[arguments.length - 1];
      Promise.resolve().then(() => (${expression})).then(
        (value) => done({ value: value === undefined ? null : value }),
        (error) => done({ error: String((error && error.stack) || error) }),
      );`;
    return this.#on(page, async () => {
      const { value } = await this.#marionette.command<{ value: { value?: T; error?: string } }>(
        'WebDriver:ExecuteAsyncScript',
        { script, args: [] },
      );
      if (value.error !== undefined) throw new Error(`[Firefox] the page threw: ${value.error}`);
      return value.value as T;
    });
  }

  closePage(page: PageHandle): Promise<void> {
    return this.#on(page, async () => {
      await this.#marionette.command('WebDriver:CloseWindow');
    });
  }

  /** Quits Firefox (killing it if it does not exit within 10 s) and removes its profile. */
  async close(): Promise<void> {
    const exited = new Promise<void>((resolve) => {
      if (this.#process.exitCode !== null || this.#process.signalCode !== null) resolve();
      else this.#process.once('exit', () => resolve());
    });
    await this.#serial(() =>
      this.#marionette.command('Marionette:Quit', { flags: ['eForceQuit'] }).catch(() => undefined),
    );
    this.#marionette.close();
    const timer = setTimeout(() => this.#process.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
    rmSync(this.#profile, { recursive: true, force: true });
  }
}
