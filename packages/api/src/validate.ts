// Request parsing: JSON bodies and query strings through zod, failures as the error envelope.
// Before zod sees a body, it is checked for what JSON allows but Postgres refuses (a NUL character,
// an unpaired UTF-16 surrogate) and for absurd nesting: such input is a 400, never a 500 from the
// database or a stack overflow further down.
import type { Context } from "hono";
import type { z } from "zod";
import { isStorableText } from "@fairway/core";
import type { TenantRow } from "@fairway/store";
import { ApiError, fromZod } from "./errors.ts";

/** Deeper than this is refused. Real payloads nest a handful of levels; the limit only stops abuse. */
const MAX_JSON_DEPTH = 64;

/** Walks a parsed JSON value; the first problem found, or null. */
function findBadJson(v: unknown, depth: number, path: string): ApiError | null {
  if (typeof v === "string") return isStorableText(v) ? null : badText(path);
  if (v === null || typeof v !== "object") return null;
  if (depth >= MAX_JSON_DEPTH) {
    return new ApiError(400, "too_deep", `the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const bad = findBadJson(v[i], depth + 1, path ? `${path}.${i}` : String(i));
      if (bad) return bad;
    }
    return null;
  }
  for (const [k, child] of Object.entries(v)) {
    const at = path ? `${path}.${k}` : k;
    if (!isStorableText(k)) return badText(at);
    const bad = findBadJson(child, depth + 1, at);
    if (bad) return bad;
  }
  return null;
}

function badText(path: string) {
  return new ApiError(
    400,
    "invalid_text",
    `${path || "body"}: text must not contain NUL characters or unpaired surrogates`,
  );
}

/** More object keys than this in one body are refused before JSON.parse builds them: parsing and then
 *  checking hundreds of thousands of keys holds the event loop for seconds. A real body (a payload
 *  included) has far fewer. */
const MAX_JSON_KEYS = 10_000;
/** More values than this (array elements and object members together) are refused the same way: an
 *  array costs what an object does to parse, walk and store. 100,000 parse and walk in a few ms. */
const MAX_JSON_VALUES = 100_000;
/** A tenant's body holds its payload and a target body, each within the tenant's limit, and a little
 *  more; a body over this is refused while it arrives, before it is decoded or parsed. */
const BODY_SLACK_BYTES = 64 * 1024;

/** Request bodies larger than this are refused before parsing (per-tenant payload limits are lower). */
export const MAX_BODY_BYTES = 11 * 1024 * 1024;

/** The bounds one body is read under. */
interface BodyBounds {
  maxBytes: number;
  /** How the size limit reads in the 413 ("this tenant's payload limit is …"). */
  sizeHint: string;
}

/** A streaming check over the raw bytes as they arrive, outside strings: size, object keys (colons),
 *  values (commas and openings, so array elements count too) and nesting. JSON's structural characters
 *  are ASCII and no byte of a multi-byte UTF-8 character is, so the bytes need no decoding. A linear
 *  pass with no allocation: a body over a bound is refused while it is still arriving, before any
 *  string or parse tree is built from it. */
class JsonShape {
  private bytes = 0;
  private keys = 0;
  private values = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  constructor(private readonly bounds: BodyBounds) {}

  /** The first bound the chunk crosses, or null. */
  feed(chunk: Uint8Array): ApiError | null {
    this.bytes += chunk.length;
    if (this.bytes > this.bounds.maxBytes) {
      return new ApiError(
        413,
        "payload_too_large",
        `the request body is over ${this.bounds.maxBytes} bytes; ${this.bounds.sizeHint}`,
      );
    }
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (b === 0x5c /* \\ */) this.escaped = true;
        else if (b === 0x22 /* " */) this.inString = false;
      } else if (b === 0x22) this.inString = true;
      else if (b === 0x3a /* : */) {
        if (++this.keys > MAX_JSON_KEYS) {
          return new ApiError(
            400,
            "too_many_fields",
            `the request body has more than ${MAX_JSON_KEYS} object keys; send fewer fields`,
          );
        }
      } else if (b === 0x2c /* , */) {
        if (++this.values > MAX_JSON_VALUES) return tooManyValues();
      } else if (b === 0x7b /* { */ || b === 0x5b /* [ */) {
        if (++this.values > MAX_JSON_VALUES) return tooManyValues();
        if (++this.depth > MAX_JSON_DEPTH) {
          return new ApiError(400, "too_deep", `the request body nests deeper than ${MAX_JSON_DEPTH} levels`);
        }
      } else if (b === 0x7d /* } */ || b === 0x5d /* ] */) this.depth--;
    }
    return null;
  }
}

function tooManyValues() {
  return new ApiError(
    400,
    "too_many_values",
    `the request body has more than ${MAX_JSON_VALUES} values (array elements and object fields); send a smaller payload, or keep large data at your target and send a reference`,
  );
}

/** The body's size bound: a tenant's from its payload limit, anything else the server's. */
function boundsOf(c: Context): BodyBounds {
  const tenant = c.get("tenant") as TenantRow | undefined;
  if (!tenant) return { maxBytes: MAX_BODY_BYTES, sizeHint: "send a smaller body" };
  return {
    maxBytes: Math.min(MAX_BODY_BYTES, 2 * tenant.maxPayloadBytes + BODY_SLACK_BYTES),
    sizeHint: `this tenant's payload limit is ${tenant.maxPayloadBytes} bytes (payload and target.body each)`,
  };
}

/** The body as text, read chunk by chunk through JsonShape (refused as soon as a bound is crossed).
 *  A refusal mid-body leaves the rest unread on the connection: the answer closes it
 *  (`connection: close`), so the client opens a fresh one instead of reusing a dirty socket. */
async function boundedText(c: Context): Promise<string> {
  const shape = new JsonShape(boundsOf(c));
  const body = c.req.raw.body;
  if (!body || c.req.raw.bodyUsed) {
    // Already read by something before (cached by Hono): checked whole, still before JSON.parse.
    const text = await c.req.text();
    const bad = shape.feed(new TextEncoder().encode(text));
    if (bad) throw bad;
    return text;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    let r: ReadableStreamReadResult<Uint8Array>;
    try {
      r = await reader.read();
    } catch {
      throw new ApiError(400, "invalid_json", "the request body could not be read");
    }
    if (r.done) break;
    const bad = shape.feed(r.value);
    if (bad) {
      reader.releaseLock();
      throw new ApiError(bad.status, bad.code, bad.message, undefined, { connection: "close" });
    }
    chunks.push(r.value);
    size += r.value.length;
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return new TextDecoder().decode(all);
}

/** Why a body that does not parse was refused. A form-encoded body (curl -d without -H) is named as
 *  such; a body sent as JSON gets the parser's own position. Either way: what to send instead. */
function notJson(contentType: string | undefined, err: unknown): ApiError {
  const type = contentType?.split(";")[0]?.trim().toLowerCase() ?? "";
  if (type && type !== "application/json" && !type.endsWith("+json")) {
    return new ApiError(
      400,
      "invalid_json",
      `the request body was sent as ${type.slice(0, 100)} and is not JSON: send a JSON object with content-type: application/json`,
    );
  }
  const why = err instanceof SyntaxError ? ` (${err.message.slice(0, 200)})` : "";
  return new ApiError(
    400,
    "invalid_json",
    `the request body is not valid JSON${why}: send a JSON object with content-type: application/json`,
  );
}

/** The parsed JSON body, checked for what Postgres refuses; an empty body is {}. */
export async function rawJsonBody(c: Context): Promise<unknown> {
  let raw: unknown;
  const text = await boundedText(c);
  try {
    raw = text.length === 0 ? {} : JSON.parse(text);
  } catch (err) {
    throw notJson(c.req.header("content-type"), err);
  }
  const bad = findBadJson(raw, 0, "");
  if (bad) throw bad;
  return raw;
}

export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const raw = await rawJsonBody(c);
  const r = schema.safeParse(raw);
  if (!r.success) throw fromZod(r.error);
  return r.data;
}

export function queryOf<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const r = schema.safeParse(c.req.query());
  if (!r.success) throw fromZod(r.error);
  return r.data;
}
