import { findProgram, requireProgram, TEST_PROGRAMS } from './test-programs';

/**
 * Debian's Chromium (/usr/bin/chromium), installed by `pnpm bootstrap`: the only Chromium the tests
 * use, never one a test tool downloads. `RETRYLINE_CHROMIUM` names another; on macOS, Homebrew's.
 */
export const CHROMIUM: string = findProgram(TEST_PROGRAMS.chromium).path ?? '/usr/bin/chromium';

/**
 * Every host name but loopback's resolves to nothing, so the browser under test reaches no host
 * beyond this machine, whatever it tries in the background (update, account, component hosts):
 * https://www.chromium.org/developers/design-documents/network-stack/socks-proxy/ describes
 * `MAP * ~NOTFOUND` with `EXCLUDE` for the hosts that must still resolve.
 */
export const LOOPBACK_ONLY_RULES = 'MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost';

/** Headless flags for a quiet, offline browser on a CI machine. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  `--host-resolver-rules=${LOOPBACK_ONLY_RULES}`,
];

/** Fails the suite at once, naming what is missing and how to get it, when Chromium is not installed. */
export function requireChromium(): void {
  requireProgram(TEST_PROGRAMS.chromium);
}
