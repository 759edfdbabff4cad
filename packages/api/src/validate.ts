// Request parsing: JSON bodies and query strings through zod, failures as the error envelope.
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError, fromZod } from "./errors.ts";

export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  let raw: unknown;
  try {
    const text = await c.req.text();
    raw = text.length === 0 ? {} : JSON.parse(text);
  } catch {
    throw new ApiError(400, "invalid_json", "the request body is not valid JSON");
  }
  const r = schema.safeParse(raw);
  if (!r.success) throw fromZod(r.error);
  return r.data;
}

export function queryOf<S extends z.ZodType>(c: Context, schema: S): z.infer<S> {
  const r = schema.safeParse(c.req.query());
  if (!r.success) throw fromZod(r.error);
  return r.data;
}
