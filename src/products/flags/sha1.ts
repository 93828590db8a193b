// SHA-1 of a string's UTF-8 bytes as lowercase hex, synchronous and pure: the bucketing formula of
// the flags contract needs sha1, and the evaluator must run synchronously everywhere it runs (the
// Worker, the OpenFeature provider in Node and in browsers), where WebCrypto's digest is async only.
// SHA-1 is used here as a uniform hash for bucketing, never for security. Checked against Node's
// crypto sha1 by test/products/flags/vectors.json (scripts in test/products/flags/make-vectors.mjs).

const encoder = new TextEncoder();
/** The message schedule, reused by every call (the function never yields). */
const w = new Int32Array(80);

/** The UTF-8 bytes of `text`, without TextEncoder for ASCII (the common bucketing input). */
function utf8(text: string): Uint8Array {
  const n = text.length;
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return encoder.encode(text);
    bytes[i] = code;
  }
  return bytes;
}

/** Blocks of the message, reused while they fit (inputs are short: one or two blocks). */
let blocksBuffer = new Int32Array(64);
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** sha1(text) as 40 lowercase hex digits. */
export function sha1Hex(text: string): string {
  const bytes = utf8(text);
  const length = bytes.length;
  // Message + 0x80 + zero padding + 64-bit big-endian bit length, in 64-byte blocks.
  const blocks = ((length + 8) >> 6) + 1;
  const size = blocks * 16;
  if (blocksBuffer.length < size) blocksBuffer = new Int32Array(size);
  const words = blocksBuffer;
  words.fill(0, 0, size);
  for (let i = 0; i < length; i++) words[i >> 2] |= bytes[i] << (24 - (i & 3) * 8);
  words[length >> 2] |= 0x80 << (24 - (length & 3) * 8);
  const bits = length * 8;
  words[size - 1] = bits | 0;
  words[size - 2] = Math.floor(bits / 0x100000000);
  let h0 = 0x67452301;
  let h1 = 0xefcdab89 | 0;
  let h2 = 0x98badcfe | 0;
  let h3 = 0x10325476;
  let h4 = 0xc3d2e1f0 | 0;
  for (let offset = 0; offset < size; offset += 16) {
    for (let t = 0; t < 16; t++) w[t] = words[offset + t];
    for (let t = 16; t < 80; t++) {
      const x = w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16];
      w[t] = (x << 1) | (x >>> 31);
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let t = 0;
    for (; t < 20; t++) {
      const temp = (((a << 5) | (a >>> 27)) + ((b & c) | (~b & d)) + e + 0x5a827999 + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    for (; t < 40; t++) {
      const temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0x6ed9eba1 + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    for (; t < 60; t++) {
      const temp = (((a << 5) | (a >>> 27)) + ((b & c) | (b & d) | (c & d)) + e + 0x8f1bbcdc + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    for (; t < 80; t++) {
      const temp = (((a << 5) | (a >>> 27)) + (b ^ c ^ d) + e + 0xca62c1d6 + w[t]) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = temp;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
  }
  return hex8(h0) + hex8(h1) + hex8(h2) + hex8(h3) + hex8(h4);
}

function hex8(h: number): string {
  return HEX[(h >>> 24) & 255] + HEX[(h >>> 16) & 255] + HEX[(h >>> 8) & 255] + HEX[h & 255];
}
