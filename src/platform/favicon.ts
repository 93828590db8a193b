// The site icon at /favicon.ico: the console's mark (a diamond in its accent colour) as a 32×32
// Windows icon built in code, so every page's default icon request answers from this Worker (no
// file to build, no other origin) and every browser reads it (an ICO, not an SVG, at that path).

const SIZE = 32;
/** The console's --accent (client/console.css), as B, G, R. */
const ACCENT = [0xd6, 0x3b, 0x3b] as const;

/** The icon's bytes: one 32-bit BMP image (bottom-up rows, BGRA) with its AND mask, in an ICO. */
function buildIcon(): Uint8Array {
  const pixels = SIZE * SIZE * 4;
  const mask = SIZE * (SIZE / 8); // one bit a pixel, rows padded to 4 bytes (32 bits: none)
  const image = 40 + pixels + mask;
  const bytes = new Uint8Array(6 + 16 + image);
  const view = new DataView(bytes.buffer);
  // ICONDIR: reserved, type 1 (icon), one image.
  view.setUint16(2, 1, true);
  view.setUint16(4, 1, true);
  // ICONDIRENTRY: 32×32, no palette, 1 plane, 32 bits, the image's size and offset.
  bytes[6] = SIZE;
  bytes[7] = SIZE;
  view.setUint16(10, 1, true);
  view.setUint16(12, 32, true);
  view.setUint32(14, image, true);
  view.setUint32(18, 22, true);
  // BITMAPINFOHEADER: its size, width, twice the height (image and mask), 1 plane, 32 bits.
  const header = 22;
  view.setUint32(header, 40, true);
  view.setInt32(header + 4, SIZE, true);
  view.setInt32(header + 8, SIZE * 2, true);
  view.setUint16(header + 12, 1, true);
  view.setUint16(header + 14, 32, true);
  view.setUint32(header + 20, pixels + mask, true);
  const centre = (SIZE - 1) / 2;
  for (let y = 0; y < SIZE; y++) {
    for (let x = 0; x < SIZE; x++) {
      // Distance from the diamond's edge, for one pixel of soft edge.
      const inside = 14.5 - (Math.abs(x - centre) + Math.abs(y - centre));
      const alpha = Math.round(Math.max(0, Math.min(1, inside)) * 255);
      const at = header + 40 + ((SIZE - 1 - y) * SIZE + x) * 4;
      bytes.set([...ACCENT, alpha], at);
    }
  }
  // The AND mask stays zero: the alpha channel decides transparency.
  return bytes;
}

/** The bytes served at /favicon.ico. */
export const FAVICON = buildIcon();

/** The answer to GET /favicon.ico: the icon, cached for a day. */
export function faviconResponse(): Response {
  return new Response(FAVICON, {
    headers: { "content-type": "image/x-icon", "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" },
  });
}
