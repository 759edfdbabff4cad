import { createHash } from "node:crypto";
import { expect, test } from "vitest";
import { newId, randomToken, sha256Hex, ulid } from "../src/ids.ts";

test("newId: prefix + 26 Crockford chars", () => {
  for (const p of ["job", "trg", "ten", "key", "req", "custom"]) {
    expect(newId(p)).toMatch(new RegExp(`^${p}_[0-9A-HJKMNP-TV-Z]{26}$`));
  }
});

test("ids are unique and sort by creation, also within one millisecond", () => {
  const ids = Array.from({ length: 5000 }, () => newId("job"));
  expect(new Set(ids).size).toBe(ids.length);
  expect([...ids].sort()).toEqual(ids);
});

test("timestamp part encodes ms (ULID layout)", () => {
  expect(ulid(0).slice(0, 10)).toBe("0000000000");
  expect(ulid(1_700_000_000_000).slice(0, 10)).toBe("01HF7YAT00"); // 1700000000000 in base32
  expect(ulid(1_700_000_000_001) > ulid(1_700_000_000_000)).toBe(true);
});

test("randomToken: base64url of n bytes", () => {
  const t = randomToken(32);
  expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(randomToken(32)).not.toBe(t);
  expect(randomToken(3)).toHaveLength(4);
});

test("sha256Hex matches node:crypto", async () => {
  for (const s of ["", "fw_abc", "héllo ✓"]) {
    expect(await sha256Hex(s)).toBe(createHash("sha256").update(s, "utf8").digest("hex"));
  }
});
