/**
 * Redaction happens in core, before any event leaves. Header values are kept only for
 * names on an allowlist of names that never carry a secret; query values (a bare `?SECRET` too),
 * path parameters (`;jsessionid=…`) and URL credentials never reach a listener, the devtools panel,
 * a trace or a log. Text from a server or a page is scanned in linear time, only by regexes whose
 * backtracking is bounded (each says why): an error message of 100 KB costs ten times one of 10 KB,
 * not a hundred.
 */

import { invalid } from '../policy/normalize';

/**
 * Header names whose values events show: none of them ever carries a secret. Besides
 * these, the `RateLimit` and `X-RateLimit` families, the headers Retryline writes itself (the
 * request-id, attempt and deadline headers, a renamed idempotency key) and the caller's
 * `exposeHeaders` are shown; every other value becomes `[redacted]`.
 */
export const SHOWN_HEADERS: readonly string[] = [
  'content-type',
  'content-length',
  'date',
  'retry-after',
  'idempotency-key',
];

/**
 * Header names that carry credentials. Their values are redacted like any name off the allowlist,
 * and `exposeHeaders` cannot show them; the devtools extension redacts them again in what a page
 * sends it, as a page may bypass core.
 */
export const SENSITIVE_HEADERS: readonly string[] = [
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'www-authenticate',
  'proxy-authenticate',
  'x-api-key',
  'api-key',
  'x-auth-token',
  'private-token',
  'x-amz-security-token',
  'x-csrf-token',
  'x-xsrf-token',
];

/** What replaces a redacted header value. */
export const REDACTED = '[redacted]';

/** What replaces a query-string value or a path parameter. */
export const MASK = '***';

/** Headers given as entries (fetch `Headers`), or a plain object. */
export type HeaderSource = Iterable<readonly [string, string]> | Readonly<Record<string, unknown>>;

/** Whether the value of a header, named in lower case, is redacted from events. */
export type HeaderRedaction = (name: string) => boolean;

// `RateLimit` and `RateLimit-Policy` (draft-ietf-httpapi-ratelimit-headers), its earlier
// `RateLimit-Limit/-Remaining/-Reset`, and the `X-RateLimit-*` family servers send (GitHub's
// `x-ratelimit-used`, OpenAI's `x-ratelimit-reset-requests` …): counts and times, never secrets.
const isRateLimit = (name: string) =>
  name === 'ratelimit' || name.startsWith('ratelimit-') || name.startsWith('x-ratelimit-');

function headerNames(option: string, value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) {
    throw invalid(option, 'an array of header names', value);
  }
  return value.map((name: string) => name.toLowerCase());
}

/**
 * Which header values events redact: every name off the allowlist ({@link SHOWN_HEADERS}, the rate
 * limit families, `own`: the headers Retryline writes for this client, and `expose`), and every name
 * in `redact`, even one on it. Validates the two options; a credential header in `expose` is refused.
 */
export function headerRedaction(
  redact: unknown,
  expose: unknown,
  own: readonly (string | undefined)[] = [],
): HeaderRedaction {
  const hidden = new Set(headerNames('redactHeaders', redact));
  const exposed = headerNames('exposeHeaders', expose);
  if (exposed.some((name) => SENSITIVE_HEADERS.includes(name))) {
    throw invalid('exposeHeaders', 'an array of header names that carry no credentials', expose);
  }
  const shown = new Set([...SHOWN_HEADERS, ...exposed]);
  for (const name of own) if (name !== undefined) shown.add(name.toLowerCase());
  for (const name of SENSITIVE_HEADERS) shown.delete(name);
  return (name) => hidden.has(name) || !(shown.has(name) || isRateLimit(name));
}

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
 * Headers as an event may carry them: names lower-cased, repeated names joined, and the value of
 * every name `redacted` says so replaced with `[redacted]`.
 */
export function redactHeaders(
  headers: HeaderSource | undefined,
  redacted: HeaderRedaction,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [rawName, value] of entriesOf(headers)) {
    const name = rawName.toLowerCase();
    // Own keys only: `out.constructor` is inherited and must not be joined into a `constructor` header.
    const previous = Object.hasOwn(out, name) ? out[name] : undefined;
    out[name] = redacted(name) ? REDACTED : previous === undefined ? value : `${previous}, ${value}`;
  }
  return out;
}

/**
 * The credentials of a URL as the URL parser reads them: after leading spaces or control
 * characters, a scheme and any run of slashes or backslashes (`http:/u:p@h`, `http:\\u:p@h` and
 * `http:u:p@h` all carry credentials), or a protocol-relative `//`; up to the authority's last `@`
 * (WHATWG URL: a password holding a raw `@` is removed whole). Linear: anchored, and each starred
 * class is followed by a character it cannot match (`:` after the scheme, `@` after the
 * authority), so a failed try gives characters back one at a time, once.
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the URL parser skips leading C0 controls and spaces, so this must too.
const CREDENTIALS = /^([\x00-\x20]*(?:[a-z][a-z0-9+.-]*:[/\\]*|[/\\]{2,}))[^/\\?#]*@/i;

const TAB_OR_NEWLINE = /[\t\n\r]/;
const TAB_OR_NEWLINE_ALL = /[\t\n\r]/g;
// RFC 3986 §3.3: a segment's parameters, from its first `;` to the next slash. This regex and the
// next are one class each, starred: a match never fails once started, so nothing backtracks.
const PATH_PARAMETERS = /;([^/\\]*)/g;
// One `name=value` or bare `value` of a query or of a segment's parameters (`&` or `;` between them).
const PARAMETER = /[^&;]+/g;

// A name keeps its place, a value is masked; a bare `?SECRET` or `;SECRET` is all value.
const maskParameters = (list: string) =>
  list.replace(PARAMETER, (parameter) => {
    const equals = parameter.indexOf('=');
    return equals === -1 ? MASK : `${parameter.slice(0, equals)}=${MASK}`;
  });

/**
 * A URL as an event may carry it: user name and password removed, every query value masked
 * (`?token=***&***` for `?token=abc&SECRET`), path parameters masked (`/p;jsessionid=***`), the
 * fragment dropped. A string that is not an absolute URL is read as a path, the same way.
 */
export function redactUrl(input: string): string {
  // The URL parser drops every tab and newline first (`ht\ttps://u:p@h` carries credentials).
  const url = TAB_OR_NEWLINE.test(input) ? input.replace(TAB_OR_NEWLINE_ALL, '') : input;
  const hashAt = url.indexOf('#');
  const withoutHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const queryAt = withoutHash.indexOf('?');
  let base = queryAt === -1 ? withoutHash : withoutHash.slice(0, queryAt);
  if (base.includes('@')) base = base.replace(CREDENTIALS, '$1');
  base = base.replace(PATH_PARAMETERS, (_found, parameters: string) => `;${maskParameters(parameters)}`);
  return queryAt === -1 ? base : `${base}?${maskParameters(withoutHash.slice(queryAt + 1))}`;
}

/**
 * What free text is made of, left to right, in one pass:
 * 1. a URL with a scheme (`scheme:` and a slash, up to a space or quote), after the digits or
 *    `+.-` its word starts with (RFC 3986 §3.1: a scheme starts with a letter);
 * 2. any other word of scheme characters, taken whole so that no URL is looked for inside it;
 * 3. a path at the start of a word (after a space, quote, bracket, `=`, `,` or `:`), up to a space
 *    or quote;
 * 4. a `?name=value`, `&name=value` or `;name=value` pair, the value up to a space, quote, `&` or
 *    `#` (through `;`, so nothing after it is left bare); a name holds no `:/\@`, so no pair
 *    hides a URL's credentials in its name.
 * Linear, though V8's regex engine backtracks: a try that fails costs at most the run of one class
 * (1: the word, which 2 then consumes whole; 3 never fails once started; 4: the name, and names
 * cannot hold `?&;`, so no two tries share one), and a match consumes what it read.
 */
const TEXT =
  /([\d+.-]*)([a-z][a-z\d+.-]*:[/\\][^\s'"<>]*)|[a-z\d+.-]+|(^|[\s'"<>(=,:[{])([/\\][^\s'"<>]*)|([?&;][^\s'"<>=?&;#:/\\@]+=)[^\s'"<>&#]*/gi;

// What can make text need redacting: credentials (`@`), a query or a parameter (`=`, `?`, `;`), a fragment.
const REDACTABLE = /[@=?;#]/;

/**
 * Free text (an error's message) with the URLs in it redacted as {@link redactUrl} does, and any
 * other `?name=value` pair masked: fetch's own messages quote the URL they failed on
 * (`Failed to parse URL from http://x/?api_key=…`, `… includes credentials: http://user:pw@…`),
 * ky's the request's URL. One pass, linear in the text's length: it may be a server's whole error
 * page (`throw new Error(await res.text())`).
 */
export function redactText(text: string): string {
  if (!REDACTABLE.test(text)) return text;
  const redacted = text.replace(
    TEXT,
    (found, lead: string, url?: string, before?: string, path?: string, pair?: string) =>
      url !== undefined
        ? lead + redactUrl(url)
        : path !== undefined
          ? (before ?? '') + redactUrl(path)
          : pair !== undefined
            ? pair + MASK
            : found,
  );
  return redacted.includes('@') ? redacted.replace(WORD, maskUserinfo) : redacted;
}

// A run a URL can span in text. The URL parser drops tabs and newlines anywhere in a URL and keeps
// a no-break space inside a password (`http://u:\tpw@h`, `http:u:pw\u00a0@h`), so only a space, a
// quote or a bracket ends one here. One class, `+`: each match consumes its run, nothing backtracks.
const WORD = /[^ '"<>()]+/g;
// A scheme and the slashes after it, at the start of a run (anchored: tried once per run).
const SCHEME = /^[a-z][a-z\d+.-]*:[/\\]*|^[/\\]+/i;

/**
 * A run with whatever stands before an `@` in its authority masked: the credentials of a URL the
 * scanner above did not read as one (no slash after its scheme, a tab or a no-break space inside),
 * or the name of an address. Over-masking an address costs a reader little; a password in a log
 * costs its owner.
 */
function maskUserinfo(word: string): string {
  const at = word.indexOf('@');
  if (at === -1) return word;
  const start = SCHEME.exec(word)?.[0].length ?? 0;
  let end = word.length;
  for (let i = start; i < word.length; i++) {
    const c = word[i];
    if (c === '/' || c === '\\' || c === '?' || c === '#') {
      end = i;
      break;
    }
  }
  const last = word.lastIndexOf('@', end - 1);
  return last < start ? word : `${word.slice(0, start)}${MASK}${word.slice(last)}`;
}
