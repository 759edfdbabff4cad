// One error envelope for every failure (DESIGN.md §7): { error: { code, message, details? } }.
// Routes throw ApiError; app.onError turns anything into the envelope, and never leaks internals.
import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const notFound = (what: string) => new ApiError(404, "not_found", `${what} not found`);

export function fromZod(err: z.ZodError): ApiError {
  const details = err.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
  const first = details[0];
  const where = first?.path ? `${first.path}: ` : "";
  return new ApiError(400, "validation_error", `${where}${first?.message ?? "invalid input"}`, details);
}

export function errorResponse(c: Context, err: ApiError) {
  for (const [k, v] of Object.entries(err.headers ?? {})) c.header(k, v);
  const body: { code: string; message: string; details?: unknown } = { code: err.code, message: err.message };
  if (err.details !== undefined) body.details = err.details;
  return c.json({ error: body }, err.status);
}
