// Identifiers and tokens. WebCrypto, so the same code runs in Node and Workers (hashing takes
// node:crypto's synchronous path where it is at hand).
import { nodeCrypto } from "./node-crypto.ts";

// Crockford base32: no I, L, O, U, so ids survive being read aloud or retyped.
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

let lastMs = -1;
let lastRandom = new Uint8Array(10);

/** 80 random bits; within one millisecond the previous value + 1, so ids from one process sort. */
function randomPart(ms: number): Uint8Array {
  if (ms === lastMs) {
    const next = new Uint8Array(lastRandom);
    for (let i = next.length - 1; i >= 0; i--) {
      if (next[i] === 255) next[i] = 0;
      else {
        next[i]++;
        break;
      }
    }
    lastRandom = next;
    return next;
  }
  lastMs = ms;
  lastRandom = crypto.getRandomValues(new Uint8Array(10));
  return lastRandom;
}

/** 26 chars: 48-bit ms timestamp (10 chars) + 80 random bits (16 chars), ULID layout. */
export function ulid(nowMs: number = Date.now()): string {
  const ms = Math.floor(nowMs);
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  const r = randomPart(ms);
  // 80 bits = 16 groups of 5 bits, read big-endian.
  let acc = 0;
  let bits = 0;
  for (const byte of r) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += CROCKFORD[(acc >> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return out;
}

/** `${prefix}_` + a time-sortable ULID, e.g. `job_01JD…`. */
export function newId(prefix: "job" | "trg" | "ten" | "key" | "req" | (string & {})): string {
  return `${prefix}_${ulid()}`;
}

/** `bytes` random bytes as unpadded base64url. */
export function randomToken(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

export function base64url(data: Uint8Array): string {
  return bytesToBase64(data).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function bytesToBase64(data: Uint8Array): string {
  let s = "";
  for (let i = 0; i < data.length; i += 0x8000) s += String.fromCharCode(...data.subarray(i, i + 0x8000));
  return btoa(s);
}

export function base64ToBytes(b64: string): Uint8Array<ArrayBuffer> {
  const s = atob(b64);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** Hex SHA-256 of the UTF-8 text (API keys are stored only as this hash; hashed on every request). */
export async function sha256Hex(text: string): Promise<string> {
  if (nodeCrypto) return nodeCrypto.createHash("sha256").update(text, "utf8").digest("hex");
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  let hex = "";
  for (const b of digest) hex += b.toString(16).padStart(2, "0");
  return hex;
}
