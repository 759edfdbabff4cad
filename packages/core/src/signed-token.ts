// Signed, expiring tokens (HMAC-SHA256 through Web Crypto, so the same code runs on Node and Workers):
// `<base64url(JSON claims)>.<base64url(mac)>`. The key is derived from the admin token with a purpose
// label, so a dashboard token never verifies as anything else, and rotating the admin token ends every
// session and portal link at once.
import { base64url } from "./ids.ts";

export type Verified<T> = { ok: true; claims: T } | { ok: false; reason: "malformed" | "bad_signature" | "expired" };

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function keyFor(secret: string, purpose: string): Promise<CryptoKey> {
  const id = `${purpose}\u0000${secret}`;
  let k = keys.get(id);
  if (!k) {
    k = (async () => {
      const root = await crypto.subtle.importKey(
        "raw",
        encoder.encode(secret),
        { name: "HMAC", hash: "SHA-256" },
        false,
        ["sign"],
      );
      const derived = await crypto.subtle.sign("HMAC", root, encoder.encode(`fairway-dashboard:${purpose}`));
      return crypto.subtle.importKey("raw", derived, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
    })();
    if (keys.size > 16) keys.clear();
    keys.set(id, k);
  }
  return k;
}

export async function mac(secret: string, purpose: string, text: string): Promise<string> {
  const sig = await crypto.subtle.sign("HMAC", await keyFor(secret, purpose), encoder.encode(text));
  return base64url(new Uint8Array(sig));
}

/** Claims must carry `exp` (epoch ms). */
export async function signToken(
  secret: string,
  purpose: string,
  claims: { exp: number } & Record<string, unknown>,
): Promise<string> {
  const body = base64url(encoder.encode(JSON.stringify(claims)));
  return `${body}.${await mac(secret, purpose, body)}`;
}

export async function verifyToken<T extends { exp: number }>(
  secret: string,
  purpose: string,
  token: string,
  nowMs: number,
): Promise<Verified<T>> {
  const m = /^([A-Za-z0-9_-]{1,2000})\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m) return { ok: false, reason: "malformed" };
  const expected = await mac(secret, purpose, m[1]);
  if (!constantTimeEqual(expected, m[2])) return { ok: false, reason: "bad_signature" };
  let claims: T;
  try {
    claims = JSON.parse(new TextDecoder().decode(fromBase64url(m[1]))) as T;
  } catch {
    return { ok: false, reason: "malformed" };
  }
  if (typeof claims?.exp !== "number" || claims.exp <= nowMs) return { ok: false, reason: "expired" };
  return { ok: true, claims };
}

export function constantTimeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

function fromBase64url(s: string): Uint8Array {
  const b64 = s.replace(/-/g, "+").replace(/_/g, "/");
  const bin = atob(b64 + "=".repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
}
