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

/** A run of this many characters of a secret value (case-insensitive) in error text is redacted. */
const FRAGMENT = 8;

/** Error text with no part of a secret in it: whole values become their placeholders (redactSecrets),
 *  then any run of FRAGMENT or more characters of a value, or of a URL part derived from one, becomes
 *  `[secret]`. An error names what it failed on in its own spelling (a DNS error the host, lowercased
 *  and without the scheme; an address check the IP), so whole-value matching alone is not enough.
 *  `resolvedUrl`: the URL as sent, when a secret went into it; its host, user and password count as
 *  secret parts, and so does any IP address the error names (it may be what the host resolved to). */
export function redactSecretFragments(text: string, values: ReadonlyMap<string, string>, resolvedUrl?: string): string {
  if (values.size === 0 || text === "") return text;
  let out = redactSecrets(text, values);
  const pieces: string[] = [];
  for (const v of values.values()) {
    pieces.push(v);
    pieces.push(...urlParts(v));
    // As a URL, a query string or a header may carry it: percent-encoded.
    for (const encoded of [encodeURIComponent(v), encodeURI(v)]) if (encoded !== v) pieces.push(encoded);
  }
  if (resolvedUrl) {
    pieces.push(...urlParts(resolvedUrl));
    // IPv4, and IPv6 however it starts (`::1`, `[fe80::1]`, `2001:db8::1`), port and all.
    out = out.replace(
      /\b\d{1,3}(?:\.\d{1,3}){3}\b|(?<![0-9a-z])\[?(?:[0-9a-f]{1,4})?(?::[0-9a-f]{0,4}){2,7}\]?/gi,
      "[secret]",
    );
  }
  const grams = new Set<string>();
  const short: string[] = [];
  for (const piece of pieces) {
    const p = piece.toLowerCase();
    if (p.length < FRAGMENT) {
      if (p.length >= 4) short.push(p);
      continue;
    }
    for (let i = 0; i + FRAGMENT <= p.length; i++) grams.add(p.slice(i, i + FRAGMENT));
  }
  const lower = out.toLowerCase();
  const hidden = new Uint8Array(out.length);
  for (let i = 0; i + FRAGMENT <= lower.length; i++) {
    if (grams.has(lower.slice(i, i + FRAGMENT))) hidden.fill(1, i, i + FRAGMENT);
  }
  for (const p of short) {
    for (let i = lower.indexOf(p); i !== -1; i = lower.indexOf(p, i + 1)) hidden.fill(1, i, i + p.length);
  }
  let result = "";
  for (let i = 0; i < out.length; i++) {
    if (!hidden[i]) result += out[i];
    else if (i === 0 || !hidden[i - 1]) result += "[secret]";
  }
  return result;
}

/** The parts of a URL an error may spell on their own: host (with and without port), user, password. */
function urlParts(text: string): string[] {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    return [];
  }
  const parts = [u.hostname, u.host, u.username, u.password, decodeSafe(u.username), decodeSafe(u.password)];
  return parts.filter((p) => p.length > 0);
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function walkStrings(value: unknown, visit: (s: string) => void): void {
  if (typeof value === "string") visit(value);
  else if (Array.isArray(value)) for (const v of value) walkStrings(v, visit);
  else if (value !== null && typeof value === "object") for (const v of Object.values(value)) walkStrings(v, visit);
}
