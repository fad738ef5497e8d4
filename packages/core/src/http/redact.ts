/**
 * Redaction happens in core, before any event leaves (DESIGN §9): credentials in header values,
 * query-string values and URL passwords never reach a listener, the devtools panel or a log.
 */

/** Header names whose values are always dropped from events. */
export const SENSITIVE_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
];

/** What replaces a redacted header value. */
export const REDACTED = '[redacted]';

/** What replaces a query-string value. */
export const MASK = '***';

/** Headers given as entries (fetch `Headers`), or a plain object. */
export type HeaderSource = Iterable<readonly [string, string]> | Readonly<Record<string, unknown>>;

function entriesOf(headers: HeaderSource | undefined): Array<[string, string]> {
  if (headers === undefined || headers === null) return [];
  if (typeof (headers as Iterable<unknown>)[Symbol.iterator] === 'function') {
    return [...(headers as Iterable<readonly [string, string]>)].map(([name, value]) => [
      name,
      String(value),
    ]);
  }
  return Object.keys(headers)
    .filter((name) => name !== '__proto__')
    .flatMap((name) => {
      const value = (headers as Record<string, unknown>)[name];
      if (value === undefined || value === null || typeof value === 'function' || typeof value === 'object') {
        return Array.isArray(value) ? [[name, value.join(', ')] as [string, string]] : [];
      }
      return [[name, String(value)] as [string, string]];
    });
}

/**
 * Headers as an event may carry them: names lower-cased, values of sensitive names (and of
 * `extra` names) replaced with `[redacted]`.
 */
export function redactHeaders(
  headers: HeaderSource | undefined,
  extra: ReadonlySet<string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawName, value] of entriesOf(headers)) {
    const name = rawName.toLowerCase();
    const redacted = SENSITIVE_HEADERS.includes(name) || extra.has(name);
    // Own keys only: `out.constructor` is inherited and must not be joined into a `constructor` header.
    const previous = Object.hasOwn(out, name) ? out[name] : undefined;
    out[name] = redacted ? REDACTED : previous === undefined ? value : `${previous}, ${value}`;
  }
  return out;
}

/**
 * The credentials of a URL as the URL parser reads them: after leading spaces or control
 * characters, a scheme and any run of slashes or backslashes (`http:/u:p@h`, `http:\\u:p@h` and
 * `http:u:p@h` all carry credentials), or a protocol-relative `//`; up to the authority's last `@`.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the URL parser skips leading C0 controls and spaces, so this must too.
const CREDENTIALS = /^([\x00-\x20]*(?:[a-z][a-z0-9+.-]*:[/\\]*|[/\\]{2,}))[^/\\?#]*@/i;

const TAB_OR_NEWLINE = /[\t\n\r]/;
const TAB_OR_NEWLINE_ALL = /[\t\n\r]/g;

/**
 * A URL as an event may carry it: query values masked (`?token=***`), user name and password
 * removed. A string that is not an absolute URL keeps its path and loses its query values too.
 */
export function redactUrl(input: string): string {
  // The URL parser drops every tab and newline first (`ht\ttps://u:p@h` carries credentials).
  const url = TAB_OR_NEWLINE.test(input) ? input.replace(TAB_OR_NEWLINE_ALL, '') : input;
  const hashAt = url.indexOf('#');
  const withoutHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const queryAt = withoutHash.indexOf('?');
  let base = queryAt === -1 ? withoutHash : withoutHash.slice(0, queryAt);
  // scheme://user:password@host → scheme://host. WHATWG URL: the authority's last `@` ends the
  // credentials, so a password holding a raw `@` is removed whole.
  if (base.includes('@')) base = base.replace(CREDENTIALS, '$1');
  if (queryAt === -1) return base;
  const query = withoutHash
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      return equals === -1 ? pair : `${pair.slice(0, equals)}=${MASK}`;
    })
    .join('&');
  return `${base}?${query}`;
}

// A URL up to whitespace or a quote: with a scheme and any run of slashes or backslashes, or
// protocol-relative at the start of a word (after `^`, a space, a quote or a bracket, which is
// kept); then any query-string pair left in the text (a URL broken by a space, a query quoted alone).
const URL_IN_TEXT = /([a-z][a-z0-9+.-]*:[/\\]+[^\s'"<>]*)|(^|[\s'"<>(])([/\\]{2}[^\s'"<>]*)/gi;
const QUERY_PAIR_IN_TEXT = /([?&][^=\s&#'"<>]+=)[^&\s#'"<>]*/g;

/**
 * Free text (an error's message) with the URLs in it redacted as {@link redactUrl} does, and any
 * other query-string value masked: fetch's own messages quote the URL they failed on
 * (`Failed to parse URL from http://x/?api_key=…`, `… includes credentials: http://user:pw@…`).
 */
export function redactText(text: string): string {
  // Only credentials (before an @) and query values (after an =) are redacted.
  if (!text.includes('@') && !text.includes('=')) return text;
  return text
    .replace(URL_IN_TEXT, (_found, url?: string, lead?: string, relative?: string) =>
      url !== undefined ? redactUrl(url) : `${lead ?? ''}${redactUrl(relative ?? '')}`,
    )
    .replace(QUERY_PAIR_IN_TEXT, `$1${MASK}`);
}
