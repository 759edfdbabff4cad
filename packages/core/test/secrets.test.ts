import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  redactSecrets,
  secretRefs,
  substituteInJson,
  substituteSecrets,
  targetSecretRefs,
} from "../src/secret-refs.ts";
import {
  decryptSecret,
  encryptSecret,
  generateSecretsKey,
  importSecretsKey,
  loadSecretsKeyring,
  SecretsKeyError,
  sealedKeyId,
} from "../src/secrets-crypto.ts";

describe("placeholders", () => {
  const values = new Map([
    ["API_KEY", "s3cr3t"],
    ["B", "b$&'value"],
  ]);
  test("found in url, header values and the string parts of a body (not its keys)", () => {
    const names = targetSecretRefs({
      url: "https://x.test/${secrets.A}?k=${secrets.B}",
      headers: { authorization: "Bearer ${secrets.C}" },
      body: { "${secrets.KEY_NOT_COUNTED}": ["${secrets.D}", 1, { e: "x${secrets.E_1}y" }] },
    });
    expect([...names].sort()).toEqual(["A", "B", "C", "D", "E_1"]);
    expect([...secretRefs("${secrets.lower} ${secrets.} $secrets.X ${secrets.OK}")]).toEqual(["OK"]);
  });
  test("substituted literally (no $& expansion), unknown names left as written", () => {
    expect(substituteSecrets("a ${secrets.B} ${secrets.API_KEY} ${secrets.NOPE}", values)).toBe(
      "a b$&'value s3cr3t ${secrets.NOPE}",
    );
    expect(substituteInJson({ t: ["${secrets.API_KEY}", 2], n: null }, values)).toEqual({ t: ["s3cr3t", 2], n: null });
  });
  test("redaction puts the placeholder back wherever a value appears", () => {
    expect(redactSecrets("echo s3cr3t and s3cr3ts3cr3t", values)).toBe(
      "echo ${secrets.API_KEY} and ${secrets.API_KEY}${secrets.API_KEY}",
    );
  });
  test("property: redact(substitute(text)) never contains a value", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string(), fc.constant("${secrets.API_KEY}"), fc.constant("${secrets.B}"))),
        (parts) => {
          const out = redactSecrets(substituteSecrets(parts.join(""), values), values);
          for (const v of values.values()) expect(out).not.toContain(v);
        },
      ),
    );
  });
});

describe("sealing", () => {
  test("round trip, a fresh IV each time, bound to tenant and name", async () => {
    const ring = await loadSecretsKeyring(generateSecretsKey());
    const a = await encryptSecret(ring, "t1", "API_KEY", "value ✓");
    const b = await encryptSecret(ring, "t1", "API_KEY", "value ✓");
    expect(a).not.toBe(b);
    expect(a).not.toContain("value");
    expect(sealedKeyId(a)).toBe(ring.current.id);
    expect(await decryptSecret(ring, "t1", "API_KEY", a)).toBe("value ✓");
    await expect(decryptSecret(ring, "t2", "API_KEY", a)).rejects.toThrow(SecretsKeyError);
    await expect(decryptSecret(ring, "t1", "OTHER", a)).rejects.toThrow(SecretsKeyError);
  });
  test("rotation: the previous key opens old values; without it they cannot be opened", async () => {
    const oldKey = generateSecretsKey();
    const newKey = generateSecretsKey();
    const sealed = await encryptSecret(await loadSecretsKeyring(oldKey), "t", "N", "v");
    expect(await decryptSecret(await loadSecretsKeyring(newKey, oldKey), "t", "N", sealed)).toBe("v");
    const err = await decryptSecret(await loadSecretsKeyring(newKey), "t", "N", sealed).catch((e: Error) => e);
    expect(err).toBeInstanceOf(SecretsKeyError);
    expect((err as Error).message).toMatch(/neither FAIRWAY_SECRETS_KEY nor FAIRWAY_SECRETS_KEY_PREVIOUS/);
  });
  test("a key must be 32 bytes of base64", async () => {
    await expect(importSecretsKey(btoa("x".repeat(16)))).rejects.toThrow(/must be 32 bytes/);
    await expect(importSecretsKey("not base64!")).rejects.toThrow(/not base64/);
  });
});
