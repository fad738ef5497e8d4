/**
 * Reading one response header from whatever the HTTP client hands over: a fetch `Headers`, an
 * axios `AxiosHeaders` or plain object, or node's `IncomingHttpHeaders`. Nothing here interprets values.
 */

/** Headers as fetch (`Headers`), axios (`AxiosHeaders` / plain object) and node give them. */
export type HeadersLike =
  | { get(name: string): string | null | undefined }
  | Readonly<Record<string, string | readonly string[] | number | undefined | null>>;

/**
 * The value of header `name` (case-insensitive), repeated values joined with `', '`, or
 * `undefined` when the header is absent.
 *
 * Objects with a `get` method (fetch `Headers`, `AxiosHeaders`) are asked through it; plain
 * objects are searched by own property, so nothing inherited (`__proto__`, `constructor`) is
 * ever read as a header.
 *
 * @example
 * ```ts
 * headerValue({ 'Retry-After': '120' }, 'retry-after'); // '120'
 * headerValue(new Headers({ 'x-a': '1' }), 'X-A'); // '1'
 * headerValue({ 'set-cookie': ['a=1', 'b=2'] }, 'Set-Cookie'); // 'a=1, b=2'
 * ```
 */
export function headerValue(headers: HeadersLike | undefined, name: string): string | undefined {
  if (headers === null || typeof headers !== 'object') return undefined;
  const get: unknown = (headers as { get?: unknown }).get;
  // A record may hold a header literally named "get"; only a function makes it an accessor.
  if (typeof get === 'function') return joinValues(get.call(headers, name));

  const wanted = name.toLowerCase();
  // `__proto__` is never a header here, not even as an own key (JSON.parse can make one).
  if (wanted === '__proto__') return undefined;
  const found: string[] = [];
  // Own keys only: a plain object inherits `constructor`, `toString` … which are not headers.
  for (const key of Object.keys(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    const value = joinValues((headers as Readonly<Record<string, unknown>>)[key]);
    if (value !== undefined) found.push(value);
  }
  return found.length > 0 ? found.join(', ') : undefined;
}

// RFC 9110 §5.3: a field repeated in a message is the same as one field with its values
// joined by commas, in order. Accessors are typed loosely in practice (axios may return an
// array or a number), so anything that is not text is treated as absent.
function joinValues(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) {
    const parts = value.flatMap((part: unknown) =>
      typeof part === 'string' ? [part] : typeof part === 'number' ? [String(part)] : [],
    );
    return parts.length > 0 ? parts.join(', ') : undefined;
  }
  return undefined;
}

/**
 * `text` without leading and trailing spaces and tabs. RFC 9110 §5.5: whitespace around a field
 * value is not part of it, and SP and HTAB are the only whitespace HTTP knows (so no `trim()`,
 * which also strips NBSP, line breaks …). A scan, not `/[ \t]+$/`, keeps long runs linear.
 */
export function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

function isOws(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
