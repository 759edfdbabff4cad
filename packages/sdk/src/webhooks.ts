// verifyWebhook for receivers: Standard Webhooks (https://www.standardwebhooks.com) over WebCrypto only,
// so it runs unchanged in Node ≥ 18, Bun, Deno and Workers. A signature is `v1,` + base64
// HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}", keyed by the base64 part of a `whsec_` secret.

export type WebhookVerificationCode = "missing_headers" | "timestamp_out_of_tolerance" | "invalid_signature";

export class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationCode;
  constructor(code: WebhookVerificationCode, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.code = code;
  }
}

/** A Fetch `Headers`, or a plain object such as Node's `req.headers`. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** The tenant's signing secret (`whsec_…`); two during a rotation. */
  secret: string | string[];
  headers: WebhookHeaders;
  /** The raw request body, exactly as received. */
  body: string;
  /** Allowed clock skew either way, in seconds. Default 300 (replay protection). */
  toleranceSec?: number;
  /** The current time in seconds. Default now. */
  nowSec?: number;
}

const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  for (const [k, v] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(" ") : v;
  }
  return undefined;
}

function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Compares without an early exit, so timing does not reveal how much of a signature matched. */
function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

async function hmac(secret: string, content: string): Promise<Uint8Array> {
  const raw = base64ToBytes(secret.startsWith("whsec_") ? secret.slice(6) : secret);
  const key = await crypto.subtle.importKey("raw", raw as BufferSource, { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(content)));
}

/** Verifies a delivery; resolves with its id and timestamp, or throws WebhookVerificationError. */
export async function verifyWebhook(opts: VerifyWebhookOptions): Promise<{ id: string; timestampSec: number }> {
  const id = header(opts.headers, "webhook-id");
  const ts = header(opts.headers, "webhook-timestamp")?.trim();
  const sigHeader = header(opts.headers, "webhook-signature");
  if (!id || !ts || !sigHeader) {
    throw new WebhookVerificationError(
      "missing_headers",
      "missing webhook-id, webhook-timestamp or webhook-signature header",
    );
  }
  const timestampSec = /^\d+$/.test(ts) ? Number(ts) : Number.NaN;
  const now = opts.nowSec ?? Math.floor(Date.now() / 1000);
  if (!Number.isFinite(timestampSec) || Math.abs(now - timestampSec) > (opts.toleranceSec ?? 300)) {
    throw new WebhookVerificationError(
      "timestamp_out_of_tolerance",
      "webhook-timestamp is missing, malformed or too far from now",
    );
  }
  const candidates: Uint8Array[] = [];
  for (const part of sigHeader.split(" ")) {
    const [version, sig] = part.split(",");
    if (version !== "v1" || !sig) continue;
    try {
      candidates.push(base64ToBytes(sig));
    } catch {
      // not base64: cannot match
    }
  }
  const content = `${id}.${ts}.${opts.body}`;
  for (const secret of Array.isArray(opts.secret) ? opts.secret : [opts.secret]) {
    let expected: Uint8Array;
    try {
      expected = await hmac(secret, content);
    } catch {
      continue; // a malformed secret cannot match anything
    }
    let ok = false;
    for (const c of candidates) ok = timingSafeEqual(expected, c) || ok; // every candidate, no early exit
    if (ok) return { id, timestampSec };
  }
  throw new WebhookVerificationError("invalid_signature", "no webhook-signature matches the signing secret");
}
