import { randomUuid } from '../events/request-id';
import { invalid, own } from '../policy/normalize';

/** How the idempotency key is written: as it is, or as an RFC 8941 sf-string (the IETF draft). */
export type IdempotencyKeyFormat = 'raw' | 'sf-string';

/** What a key generator is told about the request. */
export interface KeyedRequest {
  readonly method: string;
  readonly url: string;
}

/**
 * `idempotencyKey`: `true` adds `Idempotency-Key` (a UUID v4) to POST and PATCH and other
 * non-idempotent requests; a function generates the key; an object also names the header or the
 * format. One key per logical request, the same on every attempt; a key the caller set is kept.
 */
export type IdempotencyKeyOption =
  | boolean
  | ((request: KeyedRequest) => string)
  | {
      /** @default 'Idempotency-Key' */
      header?: string;
      /** @default 'raw' */
      format?: IdempotencyKeyFormat;
      /** @default crypto.randomUUID */
      generate?: (request: KeyedRequest) => string;
    };

/** An idempotency key setting after normalisation. */
export interface ResolvedIdempotencyKey {
  readonly header: string;
  readonly format: IdempotencyKeyFormat;
  readonly generate: (request: KeyedRequest) => string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Checks a header name (RFC 9110 §5.1 token), for the options that name one. */
export function headerName(option: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !TOKEN.test(value)) throw invalid(option, 'a header name', value);
  return value;
}

export function resolveIdempotencyKey(value: unknown): ResolvedIdempotencyKey | undefined {
  const defaults = { header: 'Idempotency-Key', format: 'raw', generate: () => randomUuid() } as const;
  if (value === undefined || value === false) return undefined;
  if (value === true) return defaults;
  if (typeof value === 'function')
    return { ...defaults, generate: value as ResolvedIdempotencyKey['generate'] };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('idempotencyKey', 'true, a function or an object', value);
  }
  const options = value as Record<string, unknown>;
  const format = own(options, 'format') ?? 'raw';
  if (format !== 'raw' && format !== 'sf-string') {
    throw invalid('idempotencyKey.format', "one of 'raw', 'sf-string'", format, 'idempotencyKey.format');
  }
  const generate = own(options, 'generate');
  if (generate !== undefined && typeof generate !== 'function') {
    throw invalid('idempotencyKey.generate', 'a function', generate);
  }
  return {
    header: headerName('idempotencyKey.header', own(options, 'header')) ?? defaults.header,
    format,
    generate: (generate as ResolvedIdempotencyKey['generate'] | undefined) ?? defaults.generate,
  };
}

/**
 * The header value of a new key for `request`: generated, checked, then formatted. A key that is no
 * key (not a string, empty, a line break in it) would make every such request one to a
 * deduplicating server, or no header at all: it throws InvalidOptionsError before anything is sent.
 */
export function newIdempotencyKey(key: ResolvedIdempotencyKey, request: KeyedRequest): string {
  const generated: unknown = key.generate(request);
  if (typeof generated !== 'string' || generated.trim() === '' || /[\r\n\0]/.test(generated)) {
    throw invalid(
      "idempotencyKey's generator result",
      'a non-empty string on one line',
      generated,
      'idempotencyKey',
    );
  }
  return formatIdempotencyKey(generated, key.format);
}

/** The header value for `key`: as it is, or quoted as an RFC 8941 §3.3.3 sf-string. */
export function formatIdempotencyKey(key: string, format: IdempotencyKeyFormat): string {
  if (format === 'raw') return key;
  return `"${key.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}

// What a blank key may be made of: whitespace, the commas that join repeated fields, and the
// quotes of an empty sf-string.
const BLANK = /^[\s,"]*$/;

/**
 * Whether a caller's idempotency key header holds a key. An empty or blank value, an empty
 * sf-string (`""`), or repeated fields that are all empty (`, `, `"", ""`) is no key: a
 * server cannot deduplicate on it, so it must not make a POST retryable.
 */
export function isKey(value: string | undefined): value is string {
  return value !== undefined && !BLANK.test(value);
}

/** The caller's key when it is one ({@link isKey}), `undefined` when it is absent or blank. */
export const keyOf = (value: string | undefined): string | undefined => (isKey(value) ? value : undefined);
