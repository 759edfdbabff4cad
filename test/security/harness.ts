// Shared set-up for the attacker's tests: the real app (the API with the dashboard, as the server runs
// it) on a fresh Postgres test database, an admin token, tenants and keys made through the admin API, captured JSON log lines,
// and row counts over every table (to prove a refused request wrote nothing).
import { createLogger, type SecretsKeyring } from "@fairway/core";
import { createMemoryCoordinator } from "@fairway/coord";
import type { createApp } from "@fairway/api";
import { serverApp } from "../../apps/server/src/app.ts";
import { query, sql, type Db } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";

export const ADMIN_TOKEN = "adm_security_test_token_0123456789";

export interface Harness {
  tdb: TestDb;
  db: Db;
  app: ReturnType<typeof createApp>;
  logs: string[];
  call(
    method: string,
    path: string,
    opts?: { token?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> },
  ): Promise<Response>;
  tenant(id: string): Promise<{ id: string; key: string; keyId: string; signingSecret: string }>;
  counts(): Promise<Record<string, number>>;
}

export async function createHarness(
  opts: { allowPrivateTargets?: boolean; handlerTypes?: string[]; secretsKey?: SecretsKeyring } = {},
): Promise<Harness> {
  const tdb = await createTestDb();
  const logs: string[] = [];
  const app = serverApp({
    db: tdb.store.db,
    coordinator: createMemoryCoordinator(),
    adminToken: ADMIN_TOKEN,
    allowPrivateTargets: opts.allowPrivateTargets ?? false,
    handlerTypes: new Set(opts.handlerTypes ?? []),
    apiRatePerSecond: 0,
    log: createLogger({ level: "debug", write: (l) => logs.push(l) }),
    secretsKey: opts.secretsKey,
  });
  const call: Harness["call"] = (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    const token = o.token === undefined ? ADMIN_TOKEN : o.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | undefined = o.raw;
    if (method === "GET" || method === "HEAD")
      body = undefined; // fetch forbids a body on these
    else if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers["content-type"] = "application/json";
    }
    return Promise.resolve(app.request(path, { method, headers, body }));
  };
  return {
    tdb,
    db: tdb.store.db,
    app,
    logs,
    call,
    async tenant(id) {
      const t = await call("POST", "/v1/admin/tenants", { body: { id, name: id } });
      if (t.status !== 201) throw new Error(`tenant ${id}: ${t.status} ${await t.text()}`);
      const k = await call("POST", `/v1/admin/tenants/${id}/keys`);
      if (k.status !== 201) throw new Error(`key ${id}: ${k.status} ${await k.text()}`);
      const key = (await k.json()) as { id: string; key: string };
      return {
        id,
        key: key.key,
        keyId: key.id,
        signingSecret: ((await t.json()) as { signingSecret: string }).signingSecret,
      };
    },
    counts: () => tableCounts(tdb.store.db),
  };
}

/** Row count of every table in the public schema (the schema grows; the list is read, not written down). */
async function tableCounts(db: Db): Promise<Record<string, number>> {
  const tables = await query<{ t: string }>(
    db,
    sql`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`,
  );
  const out: Record<string, number> = {};
  for (const { t } of tables) {
    const [r] = await query<{ n: number }>(db, sql.raw(`SELECT count(*)::int AS n FROM "${t}"`));
    out[t] = r.n;
  }
  return out;
}
