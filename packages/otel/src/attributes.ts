/**
 * Attributes Retryline's telemetry shares between spans and metrics, named per the OpenTelemetry
 * HTTP semantic conventions (stable since semconv 1.23) where one exists, `retryline.*` otherwise.
 * The names are string literals: @opentelemetry/api has no constants for them, and the
 * semantic-conventions package is not worth a runtime dependency for a dozen strings.
 */

import type { Attributes } from '@opentelemetry/api';
import type { AttemptEndEvent, ErrorSummary, RequestEndEvent } from '@retryline/core/instrument';

// HTTP semantic conventions: the methods an instrumentation knows; any other is reported as
// `_OTHER`, with the original in `http.request.method_original`, so attribute cardinality stays bounded.
const KNOWN_METHODS = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
  'QUERY',
]);

/** What a request's spans and metrics say about its method. */
export interface MethodAttributes {
  /** `GET`, …, or `HTTP` for a method the conventions do not know (their span-name rule). */
  readonly spanName: string;
  readonly attributes: Attributes;
}

/** The `http.request.method` attributes for a method (already upper-case in Retryline events). */
export function methodAttributes(method: string): MethodAttributes {
  if (KNOWN_METHODS.has(method)) return { spanName: method, attributes: { 'http.request.method': method } };
  return {
    spanName: 'HTTP',
    attributes: { 'http.request.method': '_OTHER', 'http.request.method_original': method },
  };
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443 };

/**
 * `server.address`, `server.port` and `url.scheme` of a request's URL: what metrics are grouped by
 * (one series per origin, never per path or query). A relative URL (a browser fetch of `/api`) is
 * read against the page's location; a URL that cannot be parsed gives none.
 */
export function originAttributes(url: string): Attributes {
  const origin = ABSOLUTE_ORIGIN.exec(url)?.[0];
  if (origin === undefined) return parseOrigin(url);
  // Parsing a URL per request showed in profiles; an app talks to a handful of origins.
  let attributes = originCache.get(origin);
  if (attributes === undefined) {
    if (originCache.size >= MAX_CACHED_ORIGINS) originCache.clear();
    attributes = Object.freeze(parseOrigin(origin));
    originCache.set(origin, attributes);
  }
  return attributes;
}

// `scheme://authority` at the start of an absolute URL (Retryline's event URLs carry no credentials).
const ABSOLUTE_ORIGIN = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i;
const MAX_CACHED_ORIGINS = 256;
const originCache = new Map<string, Attributes>();

function parseOrigin(url: string): Attributes {
  let parsed: URL;
  try {
    const base = (globalThis as { location?: { href?: unknown } }).location?.href;
    parsed = new URL(url, typeof base === 'string' ? base : undefined);
  } catch {
    return {};
  }
  const scheme = parsed.protocol.replace(/:$/, '');
  // WHATWG URL keeps IPv6 hosts in brackets; semconv's server.address is the bare address.
  const address = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = parsed.port === '' ? DEFAULT_PORTS[parsed.protocol] : Number(parsed.port);
  return {
    ...(address === '' ? {} : { 'server.address': address }),
    ...(port === undefined ? {} : { 'server.port': port }),
    'url.scheme': scheme,
  };
}

/**
 * `error.type` of a failed attempt, per the HTTP conventions: the status code as a string for a
 * response of 400 or more; `timeout` for an attempt Retryline's per-attempt timeout ended; else the
 * error's `code` (`ECONNRESET`) or name; `_OTHER` when the attempt failed with nothing to name.
 * `undefined` for an attempt that did not fail.
 */
export function attemptErrorType(event: AttemptEndEvent): string | undefined {
  if (event.status !== undefined && event.status >= 400) return String(event.status);
  if (event.outcome === 'timeout') return 'timeout';
  if (event.error) return errorName(event.error);
  return event.outcome === 'success' ? undefined : '_OTHER';
}

/** The low-cardinality name of an error: its code when it has one, else its class name. */
export function errorName(error: ErrorSummary): string {
  return error.code ?? error.name;
}

/**
 * `error.type` of a logical request that ended without success: as for an attempt, the final status
 * when it was 400 or more (a fetch that resolved its last 503), else the error's code or name
 * (`CircuitOpenError`), else the outcome (`exhausted`).
 */
export function requestErrorType(event: RequestEndEvent): string {
  if (event.status !== undefined && event.status >= 400) return String(event.status);
  return event.error ? errorName(event.error) : event.outcome;
}
