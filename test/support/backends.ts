// The two databases a server process runs on in the end-to-end tests: its embedded PostgreSQL (the
// default, on a data directory of the test's) and a real Postgres database. And a JSON caller of its API.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresOn } from "./fairway-process.ts";
import { createTestDb } from "./pg.ts";
import { until } from "./until.ts";

export type Backend = () => Promise<{ env: Record<string, string>; done: () => Promise<void> }>;

export const serverBackends: Array<[name: string, backend: Backend]> = [
  [
    "embedded PostgreSQL",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "fairway-backend-"));
      return {
        env: { FAIRWAY_DATA_DIR: dir },
        done: async () => {
          await until(
            () => postgresOn(dir),
            (p) => p.length === 0,
            30_000,
          ).catch(() => {});
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    "Postgres",
    async () => {
      const db = await createTestDb();
      return { env: { DATABASE_URL: db.url }, done: () => db.drop() };
    },
  ],
];

/** `api(token, method, path, body?)` against the server `base()` names now (it may be restarted). */
export function jsonApi(base: () => string) {
  return async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(base() + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
}
