// Tenant secrets at rest: AES-256-GCM through WebCrypto, so the Node server and the Worker read the same
// rows. A stored value is `v1.<keyId>.<iv>.<ciphertext>` (base64): the key id (a hash prefix of the key)
// says which key sealed it, so after a rotation the previous key still opens old rows until they are
// re-encrypted. The additional data binds a value to its tenant and name: a row copied onto another
// secret does not decrypt.
import { base64ToBytes, bytesToBase64 } from "./ids.ts";

export interface SecretsKey {
  id: string;
  key: CryptoKey;
}

/** The key that seals new values, and the previous one, which only opens (during a rotation). */
export interface SecretsKeyring {
  current: SecretsKey;
  previous: SecretsKey | null;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class SecretsKeyError extends Error {}

/** A key from its base64 text (32 random bytes: `openssl rand -base64 32`). */
export async function importSecretsKey(base64: string, name = "FAIRWAY_SECRETS_KEY"): Promise<SecretsKey> {
  let raw: Uint8Array<ArrayBuffer>;
  try {
    raw = base64ToBytes(base64.trim());
  } catch {
    throw new SecretsKeyError(`${name} is not base64; make one with: openssl rand -base64 32`);
  }
  if (raw.byteLength !== 32)
    throw new SecretsKeyError(
      `${name} must be 32 bytes, base64 (got ${raw.byteLength}); make one with: openssl rand -base64 32`,
    );
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", raw));
  const id = [...digest.slice(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const key = await crypto.subtle.importKey("raw", raw, { name: "AES-GCM" }, false, ["encrypt", "decrypt"]);
  return { id, key };
}

export async function loadSecretsKeyring(current: string, previous?: string | null): Promise<SecretsKeyring> {
  return {
    current: await importSecretsKey(current),
    previous: previous ? await importSecretsKey(previous, "FAIRWAY_SECRETS_KEY_PREVIOUS") : null,
  };
}

/** A fresh key, base64 (the embedded server's default). */
export function generateSecretsKey(): string {
  return bytesToBase64(crypto.getRandomValues(new Uint8Array(32)));
}

const aad = (tenantId: string, name: string) => encoder.encode(`${tenantId}/${name}`);

export async function encryptSecret(
  ring: SecretsKeyring,
  tenantId: string,
  name: string,
  value: string,
): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: aad(tenantId, name) },
    ring.current.key,
    encoder.encode(value),
  );
  return `v1.${ring.current.id}.${bytesToBase64(iv)}.${bytesToBase64(new Uint8Array(sealed))}`;
}

/** The key id a stored value was sealed with. */
export function sealedKeyId(stored: string): string {
  return stored.split(".")[1] ?? "";
}

/** Opens a stored value; throws SecretsKeyError (naming no value) when no key in the ring opens it. */
export async function decryptSecret(
  ring: SecretsKeyring,
  tenantId: string,
  name: string,
  stored: string,
): Promise<string> {
  const [version, keyId, iv, data] = stored.split(".");
  const key = ring.current.id === keyId ? ring.current : ring.previous?.id === keyId ? ring.previous : null;
  if (version !== "v1" || !key || !iv || !data) {
    throw new SecretsKeyError(
      `secret ${name} was sealed with key ${keyId}, which is neither FAIRWAY_SECRETS_KEY nor FAIRWAY_SECRETS_KEY_PREVIOUS`,
    );
  }
  try {
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: base64ToBytes(iv), additionalData: aad(tenantId, name) },
      key.key,
      base64ToBytes(data),
    );
    return decoder.decode(plain);
  } catch {
    throw new SecretsKeyError(`secret ${name} does not decrypt with key ${keyId}`);
  }
}
