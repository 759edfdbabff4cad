// A refusal the dashboard shows as a page: a stable code, and a message saying what to do instead.
import type { ContentfulStatusCode } from "hono/utils/http-status";

export class DashboardError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string) =>
  new DashboardError(404, "not_found", `${what} not found: check the link, or go back to the list`);

/** A refusal from the command layer (the API's ApiError, which this package does not import): a 4xx
 *  with a stable code and a message, shown like the dashboard's own. */
export function refusalOf(err: unknown): DashboardError | null {
  if (err instanceof DashboardError) return err;
  const e = err as { status?: unknown; code?: unknown; message?: unknown } | null;
  return e && typeof e.status === "number" && e.status >= 400 && e.status < 500 && typeof e.code === "string"
    ? new DashboardError(e.status as ContentfulStatusCode, e.code, String(e.message))
    : null;
}
