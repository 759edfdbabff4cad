// A network error that escapes a driver as an unhandled rejection (seen in the Postgres-outage drill:
// `read ECONNRESET` rejected inside postgres.js after a connection reset, outside any promise of ours)
// must not kill an executor: Postgres holds all state and every write is fenced, so nothing in this
// process is left inconsistent by a dropped connection. Anything else still exits, as Node's default
// would, because it may be a real bug.
import type { Logger } from "@fairway/core";

const NETWORK_CODES = new Set([
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
]);

export function isNetworkError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && NETWORK_CODES.has(code);
}

export function installProcessGuards(log: Logger): void {
  process.on("unhandledRejection", (err) => {
    if (isNetworkError(err)) {
      log.error("a network error escaped a driver; continuing", { code: (err as { code: string }).code, err });
      return;
    }
    log.error("unhandled rejection; exiting", { err });
    process.exit(1);
  });
}
