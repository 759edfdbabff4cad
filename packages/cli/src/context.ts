// What every client command shares: where the server is, which token to send, and how to print.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createAdminClient, createClient, FairwayError } from "@fairway/sdk";

export interface GlobalOptions {
  url: string;
  token?: string;
  json?: boolean;
}

export function tenantClient(o: GlobalOptions) {
  if (!o.token)
    fail("no API key: pass --token fw_… or set FAIRWAY_TOKEN (create one with `fairway keys create <tenant>`)");
  return createClient({ baseUrl: o.url, apiKey: o.token });
}

/** The admin token: --token / FAIRWAY_TOKEN, else FAIRWAY_ADMIN_TOKEN, else the one `fairway start`
 *  generated in the data directory (FAIRWAY_DATA_DIR, default ./.fairway). */
export function adminClient(o: GlobalOptions) {
  const file = join(process.env.FAIRWAY_DATA_DIR || "./.fairway", "admin-token");
  const token =
    o.token ?? process.env.FAIRWAY_ADMIN_TOKEN ?? (existsSync(file) ? readFileSync(file, "utf8").trim() : undefined);
  if (!token)
    fail(`no admin token: pass --token, set FAIRWAY_TOKEN or FAIRWAY_ADMIN_TOKEN, or run where ${file} exists`);
  return createAdminClient({ baseUrl: o.url, adminToken: token });
}

/** Prints `value` as JSON with --json, else as `human(value)`. */
export function print<T>(o: GlobalOptions, value: T, human: (v: T) => string): void {
  process.stdout.write((o.json ? JSON.stringify(value, null, 2) : human(value)) + "\n");
}

export function table(rows: Array<Record<string, unknown>>, columns: string[]): string {
  if (rows.length === 0) return "(none)";
  const cell = (v: unknown) =>
    v === null || v === undefined ? "-" : typeof v === "object" ? JSON.stringify(v) : String(v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join(
    "\n",
  );
}

class CliError extends Error {}

export function fail(message: string): never {
  throw new CliError(message);
}

/** The one place errors are printed: the API's code and message, or ours; exit status 1. */
export function report(err: unknown, json: boolean): never {
  if (err instanceof FairwayError) {
    if (json)
      process.stderr.write(
        JSON.stringify({ error: { status: err.status, code: err.code, message: err.message, details: err.details } }) +
          "\n",
      );
    else process.stderr.write(`error: ${err.code}: ${err.message}\n`);
  } else if (err instanceof CliError) {
    process.stderr.write(
      json ? JSON.stringify({ error: { code: "usage", message: err.message } }) + "\n" : `error: ${err.message}\n`,
    );
  } else {
    process.stderr.write(`error: ${(err as Error)?.stack ?? String(err)}\n`);
  }
  process.exit(1);
}
