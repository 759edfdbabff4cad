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

/** Connection-level failures: Postgres restarting or failing over, unreachable, or (a standby) read-only. */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "database_deadline", // no answer within the store's deadline (store guarded-client.ts)
  "53300", // too_many_connections: another client holds every connection slot
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now (starting up, shutting down, in recovery)
]);

/** A 503 with Retry-After for an error that says the database is unavailable for now (a failover, a
 *  restart, a standby answering), else null. Found on the error or its causes (drizzle wraps the
 *  driver's). The write may or may not have happened: a client retries a create with its
 *  Idempotency-Key. */
export function databaseUnavailable(err: unknown): ApiError | null {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 5; depth++) {
    const code = typeof e.code === "string" ? e.code : "";
    if (code === "25006")
      return new ApiError(
        503,
        "database_unavailable",
        "the database is read-only (a standby, or a failover in progress); retry in a few seconds",
        undefined,
        { "Retry-After": "2" },
      );
    if (UNREACHABLE.has(code) || code.startsWith("08"))
      return new ApiError(
        503,
        "database_unavailable",
        "the database is unavailable (a failover or restart in progress); retry in a few seconds",
        undefined,
        { "Retry-After": "2" },
      );
    e = typeof e.cause === "object" && e.cause !== null ? (e.cause as typeof e) : undefined;
  }
  return null;
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
