/**
 * A request as a command to send it again: cURL (POSIX shell quoting) or `fetch(...)`. Built from
 * what the events carry: the method, the URL and the request headers of its last attempt that has
 * them. Redacted values stay `[redacted]` (the panel never had them), masked query values stay
 * `*`, and there is no body (events do not carry one): the copy says so where it matters.
 */

import type { HeaderMap, RequestRow } from './timeline';

/** The value the page's redaction put in place of a sensitive header. */
export const REDACTED = '[redacted]';

/** The request headers of the last attempt that recorded any. */
export function requestHeadersOf(row: RequestRow): HeaderMap {
  for (let i = row.attempts.length - 1; i >= 0; i--) {
    const headers = row.attempts[i]?.requestHeaders;
    if (headers && Object.keys(headers).length > 0) return headers;
  }
  return {};
}

/** Whether any header value was redacted (the copy then cannot replay it as sent). */
export function hasRedacted(row: RequestRow): boolean {
  return Object.values(requestHeadersOf(row)).some((value) => value.includes(REDACTED));
}

/** POSIX shell single quotes: everything literal, a quote as '\''. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** The request as a `curl` command line. */
export function toCurl(row: RequestRow): string {
  const method = row.method === '' ? 'GET' : row.method;
  const parts = ['curl', shellQuote(row.url === '' ? row.path : row.url)];
  if (method !== 'GET') parts.push('-X', shellQuote(method));
  for (const [name, value] of Object.entries(requestHeadersOf(row))) {
    parts.push('-H', shellQuote(`${name}: ${value}`));
  }
  return parts.join(' ');
}

/** The request as a `fetch(...)` call (JSON-quoted, so any text stays a string literal). */
export function toFetch(row: RequestRow): string {
  const method = row.method === '' ? 'GET' : row.method;
  const init: Record<string, unknown> = { method };
  const headers = requestHeadersOf(row);
  if (Object.keys(headers).length > 0) init.headers = headers;
  return `fetch(${JSON.stringify(row.url === '' ? row.path : row.url)}, ${JSON.stringify(init, null, 2)});`;
}
