import { expect, it } from "vitest";
import { isStorableText, storableText } from "../src/text.ts";

it("replaces what Postgres cannot store, and keeps everything else", () => {
  expect(storableText("a\u0000b\u0000")).toBe("a\uFFFDb\uFFFD");
  expect(storableText("x\ud800y\udc00z")).toBe("x\uFFFDy\uFFFDz"); // unpaired high, then unpaired low
  expect(storableText("pair 😀 kept, é, \u202e")).toBe("pair 😀 kept, é, \u202e");
  expect(isStorableText(storableText("\ud83d\u0000\ude00"))).toBe(true);
  const plain = "plain text";
  expect(storableText(plain)).toBe(plain);
});
