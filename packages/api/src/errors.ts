// One error envelope for every failure: { error: { code, message, details? } }.
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

/** What may be logged about an unexpected error. A drizzle query error's message carries the
 *  statement's parameters (a new signing secret, a key hash, a tenant's payload): log the statement
 *  text and the database's own code and message instead, never the parameters. */
export function loggableError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { err: String(err).slice(0, 200) };
  const cause = err.cause as { code?: unknown; message?: unknown } | undefined;
  const query = (err as { query?: unknown }).query;
  if (typeof query === "string") {
    return {
      err: typeof cause?.message === "string" ? cause.message : "query failed",
      dbCode: cause?.code,
      query: query.slice(0, 500),
    };
  }
  return { err: err.message.slice(0, 500), errName: err.name };
}
