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
