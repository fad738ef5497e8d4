/**
 * A FormData encoded once, so that every attempt of a request sends the same bytes: a client draws
 * a new multipart boundary each time it sends a FormData itself.
 */

import { randomUuid } from '../events/request-id';

// The HTML spec's multipart/form-data encoding algorithm
// (https://html.spec.whatwg.org/multipage/form-control-infrastructure.html#multipart-form-data):
// a lone CR or LF in a name or a string value becomes CRLF; names and filenames then escape LF, CR
// and `"` as %0A, %0D and %22, and nothing else.
const crlf = (text: string) => text.replace(/\r\n|\r|\n/g, '\r\n');
const ESCAPES: Record<string, string> = { '\n': '%0A', '\r': '%0D', '"': '%22' };
const escapeName = (text: string) => text.replace(/[\n\r"]/g, (c) => ESCAPES[c] as string);

/**
 * `form` as a multipart/form-data body (RFC 7578) under one boundary, its type the content type to
 * send. A Blob of the parts' headers and the form's own Files, which it refers to rather than
 * copies: a file of a gigabyte is read as the body is sent, never held in memory.
 *
 * @example
 * ```ts
 * const body = encodeFormData(form);
 * await fetch(url, { method: 'POST', body, headers: { 'content-type': body.type } });
 * ```
 */
export function encodeFormData(form: FormData): Blob {
  // Lower-case, as a Blob's type is: the content type names the boundary the body uses.
  const boundary = `retryline-${randomUuid()}`;
  const parts: BlobPart[] = [];
  form.forEach((value, name) => {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${escapeName(crlf(name))}"`;
    if (typeof value === 'string') parts.push(`${head}\r\n\r\n${crlf(value)}\r\n`);
    else {
      head += `; filename="${escapeName(value.name)}"\r\nContent-Type: ${value.type || 'application/octet-stream'}`;
      parts.push(`${head}\r\n\r\n`, value, '\r\n');
    }
  });
  parts.push(`--${boundary}--\r\n`);
  return new Blob(parts, { type: `multipart/form-data; boundary=${boundary}` });
}
