/**
 * The origin a request's guards key it by: guards keep their state per origin by default.
 */

import { redactUrl } from './redact';

/**
 * A URL's origin, credentials removed. A relative URL (a browser page's `/api/x`) is same-origin:
 * the page's origin where there is one, else its path — never its query, which may hold secrets
 * and would show in `budget` and `breaker-state` events.
 */
export function originOf(url: string): string {
  const match = /^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]+/i.exec(url);
  if (match) {
    // The authority's last `@` ends the credentials (a password may hold a raw `@`).
    const origin = match[0];
    const at = origin.lastIndexOf('@');
    return at === -1 ? origin : `${origin.slice(0, origin.indexOf('//') + 2)}${origin.slice(at + 1)}`;
  }
  // Not written plainly (leading spaces, backslashes, one slash): as the URL parser reads it.
  try {
    const { origin } = new URL(url);
    if (origin !== 'null') return origin;
  } catch {
    // relative: below
  }
  const page = (globalThis as { location?: { origin?: unknown } }).location?.origin;
  return typeof page === 'string' && page !== 'null' ? page : redactUrl(url).replace(/[?#].*$/, '');
}
