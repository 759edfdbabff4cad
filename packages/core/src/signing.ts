// Standard Webhooks signing (https://www.standardwebhooks.com): `v1,` + base64 HMAC-SHA256 of
// "{webhook-id}.{webhook-timestamp}.{body}", keyed by the base64 part of a `whsec_` secret.
import { base64ToBytes, bytesToBase64 } from "./ids.ts";
import { nodeCrypto } from "./node-crypto.ts";
import { BoundedMap } from "./bounded-map.ts";

const SECRET_PREFIX = "whsec_";
const encoder = new TextEncoder();

/** A new tenant signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));
}

// importKey costs more than the HMAC itself for small bodies, and every delivery signs; cache keys.
const KEY_CACHE_MAX = 1000;
const keyCache = new BoundedMap<string, Promise<CryptoKey>>(KEY_CACHE_MAX);

function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keyCache.get(secret);
  if (!key) {
    const raw = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
    key = crypto.subtle.importKey("raw", base64ToBytes(raw), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    key.catch(() => keyCache.delete(secret));
    keyCache.set(secret, key);
  }
  return key;
}

async function sign(secret: string, content: string): Promise<Uint8Array> {
  if (nodeCrypto) return nodeCrypto.createHmac("sha256", keyBytes(secret)).update(content).digest();
  return new Uint8Array(await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(content)));
}

// Synchronous node:crypto HMAC where available (node-crypto.ts); WebCrypto, with its keys cached above,
// elsewhere.
const keyBytesCache = new BoundedMap<string, Uint8Array>(KEY_CACHE_MAX);
function keyBytes(secret: string): Uint8Array {
  return keyBytesCache.getOrSet(secret, () =>
    base64ToBytes(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret),
  );
}

/** The `webhook-signature` header value: one `v1,<sig>` per secret (two during rotation). */
export async function signWebhook(opts: {
  secrets: string[];
  id: string;
  timestampSec: number;
  body: string;
}): Promise<string> {
  const now = signWebhookSync(opts);
  if (now !== undefined) return now;
  const content = `${opts.id}.${opts.timestampSec}.${opts.body}`;
  const sigs = await Promise.all(opts.secrets.map(async (s) => `v1,${bytesToBase64(await sign(s, content))}`));
  return sigs.join(" ");
}

/** signWebhook without a promise, where node:crypto is at hand; undefined elsewhere (use signWebhook).
 *  Every delivery signs, so it uses node:crypto's own base64 and no promise per secret. */
export function signWebhookSync(opts: {
  secrets: string[];
  id: string;
  timestampSec: number;
  body: string;
}): string | undefined {
  if (!nodeCrypto) return undefined;
  const content = `${opts.id}.${opts.timestampSec}.${opts.body}`;
  let out = "";
  for (const s of opts.secrets) {
    out += `${out ? " " : ""}v1,${nodeCrypto.createHmac("sha256", keyBytes(s)).update(content).digest("base64")}`;
  }
  return out;
}

export type WebhookVerificationCode = "missing_headers" | "timestamp_out_of_tolerance" | "invalid_signature";

export class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationCode;
  constructor(code: WebhookVerificationCode, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.code = code;
  }
}

type HeaderInput = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderInput, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(" ") : v;
  }
  return undefined;
}

/** Compares without an early exit, so timing does not reveal how much of a signature matched. */
function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

function decodeSignature(b64: string): Uint8Array | null {
  try {
    return base64ToBytes(b64);
  } catch {
    return null;
  }
}

/** Verifies a delivery; resolves with its id and timestamp or throws WebhookVerificationError. */
export async function verifyWebhook(opts: {
  secret: string | string[];
  headers: HeaderInput;
  body: string;
  /** Allowed clock skew either way, default 300 s (replay protection). */
  toleranceSec?: number;
  nowSec?: number;
}): Promise<{ id: string; timestampSec: number }> {
  const id = header(opts.headers, "webhook-id");
  const ts = header(opts.headers, "webhook-timestamp");
  const sigHeader = header(opts.headers, "webhook-signature");
  if (!id || !ts || !sigHeader)
    throw new WebhookVerificationError(
      "missing_headers",
      "missing webhook-id, webhook-timestamp or webhook-signature header",
    );

  const timestampSec = /^\d+$/.test(ts.trim()) ? Number(ts.trim()) : Number.NaN;
  const now = opts.nowSec ?? Math.floor(Date.now() / 1000);
  const tolerance = opts.toleranceSec ?? 300;
  if (!Number.isFinite(timestampSec) || Math.abs(now - timestampSec) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      "webhook-timestamp is missing, malformed or too far from now",
    );
  }

  const candidates = sigHeader
    .split(" ")
    .map((s) => s.split(","))
    .filter((p) => p.length === 2 && p[0] === "v1")
    .map((p) => decodeSignature(p[1]))
    .filter((b): b is Uint8Array => b !== null);
  const content = `${id}.${ts.trim()}.${opts.body}`;
  const secrets = Array.isArray(opts.secret) ? opts.secret : [opts.secret];
  for (const secret of secrets) {
    let expected: Uint8Array;
    try {
      expected = await sign(secret, content);
    } catch {
      continue; // a malformed secret cannot match anything
    }
    // Check every candidate (no early exit per candidate) — any match accepts.
    let ok = false;
    for (const c of candidates) ok = timingSafeEqual(expected, c) || ok;
    if (ok) return { id, timestampSec };
  }
  throw new WebhookVerificationError("invalid_signature", "no webhook-signature matches the signing secret");
}
