import { existsSync } from 'node:fs';

/** Debian's Chromium, installed by `pnpm bootstrap`: the only Chromium the tests use. */
export const CHROMIUM = '/usr/bin/chromium';

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

/** Fails the suite at once, with the fix, when Chromium is missing. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Debian's Chromium at ${CHROMIUM}: run \`pnpm bootstrap\` (apt-get install chromium)`,
    );
  }
}
