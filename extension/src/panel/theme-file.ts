/**
 * The stylesheet's text, for the tests that check what it draws (the cascade of a row's states,
 * the contrast of the lanes' colours). Not part of any bundle: nothing but tests imports it.
 */

import { vi } from 'vitest';

/**
 * Reads theme.css from disk. Not a `?raw` import: in a DOM environment the test runner hands CSS
 * over empty (and may cache that for other files), and serves modules from the project's root,
 * where `import.meta.url` is a path under it rather than a file URL.
 */
export async function readTheme(): Promise<string> {
  const fs = await vi.importActual<{ readFileSync(path: string, encoding: 'utf8'): string }>('node:fs');
  const { cwd } = await vi.importActual<{ cwd(): string }>('node:process');
  const url = new URL('./theme.css', import.meta.url);
  const path = decodeURIComponent(url.pathname);
  return fs.readFileSync(url.protocol === 'file:' ? path : `${cwd()}${path}`, 'utf8');
}
