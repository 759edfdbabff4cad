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
