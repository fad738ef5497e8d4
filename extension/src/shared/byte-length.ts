/**
 * How many bytes a string takes as UTF-8: what a size limit on JSON means (Chrome's messaging and
 * `storage.session` count UTF-8), where `string.length` counts UTF-16 code units and lets up to
 * three times as many bytes through.
 */

/**
 * The UTF-8 length of `text`, or of its first part up to the first code unit past `limit` (the
 * count then exceeds `limit` and says no more than that). Lone surrogates count 3 bytes, as the
 * U+FFFD that `TextEncoder` writes for them.
 */
export function utf8Length(text: string, limit = Number.POSITIVE_INFINITY): number {
  let bytes = 0;
  for (let i = 0; i < text.length && bytes <= limit; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code < 0xdc00 && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      // A surrogate pair is one code point of 4 bytes; a high surrogate alone is U+FFFD.
      if (next >= 0xdc00 && next < 0xe000) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * Whether `text` is more than `max` bytes of UTF-8. Every code unit is 1 to 3 bytes, so the length
 * decides at once when it is at most a third of `max` or above `max`; only in between is it counted.
 */
export function exceedsUtf8(text: string, max: number): boolean {
  if (text.length > max) return true;
  if (text.length * 3 <= max) return false;
  return utf8Length(text, max) > max;
}
