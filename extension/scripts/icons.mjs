/**
 * The extension's icon, drawn here rather than kept as binary files: a rounded square in the
 * panel's accent colour with three attempt bars stepping right, as the panel's waterfall draws a
 * request that took three attempts. Encoded as PNG (what both browsers accept for manifest icons)
 * with zlib alone, so the build stays offline and needs no image tool.
 *
 * PNG: https://www.w3.org/TR/png-3/ (IHDR, IDAT, IEND chunks; colour type 6 is 8-bit RGBA).
 */

import { deflateSync } from 'node:zlib';

/** The sizes the manifests list (Chrome's and Firefox's documented icon sizes). */
export const ICON_SIZES = [16, 32, 48, 128];

/** The panel's light-theme accent (`--rl-accent`), and white for the bars. */
const ACCENT = [0x1a, 0x73, 0xe8];
const BAR = [0xff, 0xff, 0xff];

/** The drawing on a 128-unit square: the tile's corner radius and the three bars (x0, y0, x1, y1). */
const RADIUS = 28;
const BARS = [
  [18, 30, 58, 48],
  [42, 55, 86, 73],
  [70, 80, 110, 98],
];

/** Whether a point of the 128-unit square lies inside a rectangle with rounded corners. */
function inRoundedRect(x, y, [x0, y0, x1, y1], r) {
  if (x < x0 || x > x1 || y < y0 || y > y1) return false;
  const cx = Math.min(Math.max(x, x0 + r), x1 - r);
  const cy = Math.min(Math.max(y, y0 + r), y1 - r);
  return (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
}

/** The colour (RGBA) at a point of the 128-unit square. */
function sample(x, y) {
  if (!inRoundedRect(x, y, [0, 0, 128, 128], RADIUS)) return [0, 0, 0, 0];
  const bar = BARS.some((rect) => inRoundedRect(x, y, rect, 4));
  return [...(bar ? BAR : ACCENT), 255];
}

/** RGBA pixels of the icon at `size` px, each pixel the average of 4×4 samples (anti-aliased edges). */
function render(size) {
  const n = 4;
  const pixels = Buffer.alloc(size * size * 4);
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const sum = [0, 0, 0, 0];
      for (let sy = 0; sy < n; sy++) {
        for (let sx = 0; sx < n; sx++) {
          const [r, g, b, a] = sample(
            ((px + (sx + 0.5) / n) * 128) / size,
            ((py + (sy + 0.5) / n) * 128) / size,
          );
          // Premultiplied, so a half-covered edge pixel keeps its colour rather than darkening.
          sum[0] += r * a;
          sum[1] += g * a;
          sum[2] += b * a;
          sum[3] += a;
        }
      }
      const at = (py * size + px) * 4;
      const alpha = sum[3] / (n * n);
      for (let c = 0; c < 3; c++) pixels[at + c] = sum[3] === 0 ? 0 : Math.round(sum[c] / sum[3]);
      pixels[at + 3] = Math.round(alpha);
    }
  }
  return pixels;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** PNG's CRC-32 (ISO 3309) over a chunk's type and data. */
function crc32(bytes) {
  let c = 0xffffffff;
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** The icon at `size` px as a PNG file. */
export function iconPng(size) {
  const pixels = render(size);
  // Each scanline starts with its filter type: 0, none.
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) pixels.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits per channel, RGBA, deflate, adaptive filtering, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw, { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
