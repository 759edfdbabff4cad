// Text that Postgres can store. JSON and JavaScript strings allow two things no Postgres text or jsonb
// string can hold: a NUL character, and a UTF-16 surrogate without its pair. The API refuses such
// input (a 400, api/src/validate.ts); what the executor must store anyway, a target's response body or
// an error's text, has them replaced (store/src/sql/settle.ts).

// NUL, or a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what this must find
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const UNSTORABLE_ALL = new RegExp(UNSTORABLE.source, "g");

/** True when `s` can be stored as Postgres text/jsonb unchanged. */
export function isStorableText(s: string): boolean {
  return !UNSTORABLE.test(s);
}

/** `s` with every character Postgres cannot store replaced by U+FFFD, the replacement character. */
export function storableText(s: string): string {
  return isStorableText(s) ? s : s.replace(UNSTORABLE_ALL, "\uFFFD");
}
