import { existsSync } from 'node:fs';

/** Debian's Chromium, installed by `pnpm bootstrap`: the only browser the tests use. */
export const CHROMIUM = '/usr/bin/chromium';

/** Headless flags for a quiet, offline browser on a CI machine. */
export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Fails the suite at once, with the fix, when Chromium is missing. */
export function requireChromium(): void {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `The browser tests need Debian's Chromium at ${CHROMIUM}: run \`pnpm bootstrap\` (apt-get install chromium)`,
    );
  }
}
