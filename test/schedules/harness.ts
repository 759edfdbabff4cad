// Shared set-up for the schedule tests: the real API app on a fresh Postgres database with
// an injected clock (no sleeping through real hours), tenants and keys made through the admin API,
// and small readers for the trigger rows the tests assert on.
import { createMemoryCoordinator } from "@fairway/coord";
import { createApp } from "@fairway/api";
import { query, sql, type Db } from "@fairway/store";
import { createTestDb, type TestDb } from "../support/pg.ts";

const ADMIN = "adm_schedules_test_token";

export interface Harness {
  tdb: TestDb;
  db: Db;
  /** The API's clock; tests move it. */
  clock: { now: number };
  call(
    key: string,
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: any }>;
  tenant(id: string): Promise<string>;
  close(): Promise<void>;
}

export async function createHarness(opts: { handlerTypes?: string[]; start?: number } = {}): Promise<Harness> {
  const tdb = await createTestDb();
  const clock = { now: opts.start ?? Date.now() };
  const app = createApp({
    db: tdb.store.db,
    coordinator: createMemoryCoordinator(),
    adminToken: ADMIN,
    allowPrivateTargets: true,
    handlerTypes: new Set(opts.handlerTypes ?? []),
    apiRatePerSecond: 0,
    now: () => clock.now,
  });
  const call: Harness["call"] = async (key, method, path, body, headers = {}) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };
  return {
    tdb,
    db: tdb.store.db,
    clock,
    call,
    async tenant(id) {
      const t = await call(ADMIN, "POST", "/v1/admin/tenants", { id, name: id, maxInFlight: 50 });
      if (t.status !== 201) throw new Error(`tenant ${id}: ${JSON.stringify(t.json)}`);
      return (await call(ADMIN, "POST", `/v1/admin/tenants/${id}/keys`)).json.key as string;
    },
    close: () => tdb.drop(),
  };
}

export interface Row {
  id: string;
  kind: string;
  at: string;
  status: string;
  reason: string | null;
}

/** A job's trigger rows, oldest instant first, instants as ISO strings without milliseconds. */
export async function triggerRows(db: Db, jobId: string): Promise<Row[]> {
  const rows = await query<Row & { at: string | Date }>(
    db,
    sql`SELECT id, kind, scheduled_for AS at, status, reason FROM triggers WHERE job_id = ${jobId} ORDER BY scheduled_for, id`,
  );
  return rows.map((r) => ({ ...r, at: iso(new Date(r.at)) }));
}

export { until } from "../support/until.ts";

export const iso = (d: Date | number) => new Date(d).toISOString().replace(".000Z", "Z");
