import { describe, expect, it } from 'vitest';
import { encodeFormData } from './form-data';

function tricky(): FormData {
  const form = new FormData();
  form.append('plain', 'välue ✓');
  form.append('a"b\nc\rd', 'x\ny\rz\r\nw');
  form.append(
    'file',
    new File([new Uint8Array([0, 1, 13, 10, 255])], 'f"1\n.bin', { type: 'application/x-thing' }),
  );
  form.append('blob', new Blob(['untyped']));
  form.append('plain', 'a second value, not coalesced');
  return form;
}

const boundaryOf = (type: string | null) => /boundary=(.+)$/.exec(type ?? '')?.[1] ?? '';

describe('encodeFormData', () => {
  it('encodes as fetch encodes a FormData, byte for byte, its boundary aside', async () => {
    const body = encodeFormData(tricky());
    const native = new Request('http://localhost/', { method: 'POST', body: tricky() });
    const ours = Buffer.from(await body.arrayBuffer());
    const theirs = Buffer.from(await native.arrayBuffer());
    const normalised = theirs
      .toString('latin1')
      .replaceAll(boundaryOf(native.headers.get('content-type')), boundaryOf(body.type));
    expect(ours.toString('latin1')).toBe(normalised);
  });

  it('escapes names and filenames as the HTML spec says: line breaks and quotes, nothing else', async () => {
    const text = await encodeFormData(tricky()).text();
    expect(text).toContain('name="a%22b%0D%0Ac%0D%0Ad"\r\n\r\nx\r\ny\r\nz\r\nw\r\n');
    expect(text).toContain('name="file"; filename="f%221%0A.bin"\r\nContent-Type: application/x-thing\r\n');
    expect(text).toContain('name="blob"; filename="blob"\r\nContent-Type: application/octet-stream\r\n');
  });

  it('is read back into the same fields, files and contents', async () => {
    const body = encodeFormData(tricky());
    const form = await new Response(body, { headers: { 'content-type': body.type } }).formData();
    const entries = await Promise.all(
      [...form].map(async ([name, value]) =>
        typeof value === 'string'
          ? [name, value]
          : [name, value.name, value.type, [...new Uint8Array(await value.arrayBuffer())]],
      ),
    );
    expect(entries).toEqual([
      ['plain', 'välue ✓'],
      ['a"b\r\nc\r\nd', 'x\r\ny\r\nz\r\nw'],
      ['file', 'f"1\n.bin', 'application/x-thing', [0, 1, 13, 10, 255]],
      ['blob', 'blob', 'application/octet-stream', [...new TextEncoder().encode('untyped')]],
      ['plain', 'a second value, not coalesced'],
    ]);
  });

  it('gives the same bytes each time it is read, under the boundary its type names', async () => {
    const body = encodeFormData(tricky());
    const boundary = boundaryOf(body.type);
    expect(body.type).toBe(`multipart/form-data; boundary=${boundary}`);
    expect(boundary).toMatch(/^[a-z0-9-]{1,70}$/);
    const first = await body.text();
    expect(await body.text()).toBe(first);
    expect(first.startsWith(`--${boundary}\r\n`)).toBe(true);
    expect(first.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
    expect(encodeFormData(new FormData()).size).toBeGreaterThan(0);
  });
});
