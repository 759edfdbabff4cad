// `${secrets.NAME}` placeholders in a webhook target: found when a job is saved (every name must exist
// then), replaced at delivery. What is stored and shown keeps the placeholder; only the bytes on the
// wire carry the value.

/** A secret's name: an upper-case letter, then up to 63 upper-case letters, digits or `_`. */
export const SECRET_NAME = /^[A-Z][A-Z0-9_]{0,63}$/;
const REF = /\$\{secrets\.([A-Z][A-Z0-9_]{0,63})\}/g;

/** Every secret name the text refers to. */
export function secretRefs(text: string, into: Set<string> = new Set()): Set<string> {
  if (!text.includes("${secrets.")) return into;
  for (const m of text.matchAll(REF)) into.add(m[1]);
  return into;
}

/** The names a target refers to, in its URL, header values and the string parts of its body. */
export function targetSecretRefs(target: {
  url: string;
  headers?: Record<string, string>;
  body?: unknown;
}): Set<string> {
  const names = secretRefs(target.url);
  for (const v of Object.values(target.headers ?? {})) secretRefs(v, names);
  walkStrings(target.body, (s) => secretRefs(s, names));
  return names;
}

/** The text with each placeholder replaced by its value (values are looked up, never parsed). */
export function substituteSecrets(text: string, values: ReadonlyMap<string, string>): string {
  if (!text.includes("${secrets.")) return text;
  return text.replace(REF, (whole, name: string) => values.get(name) ?? whole);
}

/** A JSON value with every string in it (not object keys) substituted. */
export function substituteInJson(value: unknown, values: ReadonlyMap<string, string>): unknown {
  if (typeof value === "string") return substituteSecrets(value, values);
  if (Array.isArray(value)) return value.map((v) => substituteInJson(v, values));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = substituteInJson(v, values);
    return out;
  }
  return value;
}

/** Any secret value in `text` put back as its placeholder: for what a target answers (it may echo a
 *  header) and for error text, before either is stored or logged. Longest values first, so a value
 *  that contains another is replaced whole. */
export function redactSecrets(text: string, values: ReadonlyMap<string, string>): string {
  if (values.size === 0 || text === "") return text;
  const byLength = [...values].filter(([, v]) => v.length > 0).sort((a, b) => b[1].length - a[1].length);
  let out = text;
  for (const [name, v] of byLength) if (out.includes(v)) out = out.split(v).join(`\${secrets.${name}}`);
  return out;
}

function walkStrings(value: unknown, visit: (s: string) => void): void {
  if (typeof value === "string") visit(value);
  else if (Array.isArray(value)) for (const v of value) walkStrings(v, visit);
  else if (value !== null && typeof value === "object") for (const v of Object.values(value)) walkStrings(v, visit);
}
