// Standard base64 (RFC 4648, with padding) for blobs and HTTP bodies.

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** Encodes data as standard padded base64. */
export function base64Encode(data: Uint8Array): string {
  const n = data.length;
  const parts = new Uint16Array(((n + 2) / 3) * 4);
  let j = 0;
  for (let i = 0; i < n; i += 3) {
    const b0 = <u32>data[i];
    const b1 = i + 1 < n ? <u32>data[i + 1] : 0;
    const b2 = i + 2 < n ? <u32>data[i + 2] : 0;
    const t = (b0 << 16) | (b1 << 8) | b2;
    parts[j++] = <u16>ALPHABET.charCodeAt((t >> 18) & 63);
    parts[j++] = <u16>ALPHABET.charCodeAt((t >> 12) & 63);
    parts[j++] = i + 1 < n ? <u16>ALPHABET.charCodeAt((t >> 6) & 63) : 0x3d;
    parts[j++] = i + 2 < n ? <u16>ALPHABET.charCodeAt(t & 63) : 0x3d;
  }
  return String.UTF16.decodeUnsafe(parts.dataStart, <usize>parts.length << 1);
}

function sextet(c: i32): i32 {
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61 + 26;
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
  if (c == 0x2b) return 62;
  if (c == 0x2f) return 63;
  return -1;
}

/** Decodes standard padded base64, or returns null when s is not. */
export function base64Decode(s: string): Uint8Array | null {
  const n = s.length;
  if (n % 4 != 0) return null;
  let pad = 0;
  if (n > 0 && s.charCodeAt(n - 1) == 0x3d) pad++;
  if (n > 1 && s.charCodeAt(n - 2) == 0x3d) pad++;
  const out = new Uint8Array((n / 4) * 3 - pad);
  let j = 0;
  for (let i = 0; i < n; i += 4) {
    let t: u32 = 0;
    for (let k = 0; k < 4; k++) {
      const c = s.charCodeAt(i + k);
      let d: i32;
      if (c == 0x3d && i + k >= n - pad) d = 0;
      else {
        d = sextet(c);
        if (d < 0) return null;
      }
      t = (t << 6) | <u32>d;
    }
    if (j < out.length) out[j++] = <u8>(t >> 16);
    if (j < out.length) out[j++] = <u8>(t >> 8);
    if (j < out.length) out[j++] = <u8>t;
  }
  return out;
}
