// The extension's icons (16, 32, 48 and 128 px PNGs), drawn here rather than kept as binary
// files: a blue rounded square with a white ring around a white dot (a host and what it
// reaches). Each pixel is sampled 4×4 times, so the edges are smooth at every size; the same
// code always writes the same bytes.
import { crc32, deflateSync } from 'node:zlib';

export const ICON_SIZES = [16, 32, 48, 128];

const BLUE = [26, 95, 180];
const WHITE = [255, 255, 255];

/** How much of the point (x, y) in the unit square each shape covers: 0 or 1. */
function colourAt(x, y) {
  const r = 0.2; // the square's corner radius
  const cx = Math.min(Math.max(x, r), 1 - r);
  const cy = Math.min(Math.max(y, r), 1 - r);
  const inSquare = (x - cx) ** 2 + (y - cy) ** 2 <= r * r;
  if (!inSquare) return null;
  const d = Math.hypot(x - 0.5, y - 0.5);
  if (d <= 0.12 || (d >= 0.24 && d <= 0.34)) return WHITE;
  return BLUE;
}

/** The PNG of the icon at `size` px. */
export function iconPng(size) {
  const N = 4;
  const rows = [];
  for (let py = 0; py < size; py += 1) {
    const row = Buffer.alloc(1 + size * 4); // filter byte 0, then RGBA
    for (let px = 0; px < size; px += 1) {
      let [r, g, b, a] = [0, 0, 0, 0];
      for (let sy = 0; sy < N; sy += 1) {
        for (let sx = 0; sx < N; sx += 1) {
          const c = colourAt((px + (sx + 0.5) / N) / size, (py + (sy + 0.5) / N) / size);
          if (!c) continue;
          r += c[0];
          g += c[1];
          b += c[2];
          a += 1;
        }
      }
      const at = 1 + px * 4;
      if (a > 0) {
        row[at] = Math.round(r / a);
        row[at + 1] = Math.round(g / a);
        row[at + 2] = Math.round(b / a);
      }
      row[at + 3] = Math.round((255 * a) / (N * N));
    }
    rows.push(row);
  }
  const chunk = (type, data) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'ascii');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bits per channel
  ihdr[9] = 6; // RGBA
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}
