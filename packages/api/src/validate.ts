// Request parsing: JSON bodies and query strings through zod, failures as the error envelope.
// Before zod sees a body, it is checked for what JSON allows but Postgres refuses (a NUL character,
// an unpaired UTF-16 surrogate) and for absurd nesting: such input is a 400, never a 500 from the
// database or a stack overflow further down.
import type { Context } from "hono";
import type { z } from "zod";
import { isStorableText } from "@fairway/core";
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

/** The parsed JSON body, checked for what Postgres refuses; an empty body is {}. */
export async function rawJsonBody(c: Context): Promise<unknown> {
  let raw: unknown;
  try {
    const text = await c.req.text();
    raw = text.length === 0 ? {} : JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "the request body is not valid JSON");
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
