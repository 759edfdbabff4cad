// Fairway behind PgBouncer in transaction mode with PgBouncer's default settings (Debian's 1.18: no
// named prepared statements, no startup parameters beyond the standard ones): DATABASE_URL at the
// pooler, DATABASE_DIRECT_URL at Postgres for the migrations. The end-to-end slice, a kill -9 of an
// executor, and the refusals of a misconfiguration.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { runToExit } from "../support/fairway-process.ts";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";
import { verticalSlice } from "../e2e/vertical-slice.ts";
import { fleet, type Fleet } from "./support/fleet.ts";
import { havePgBouncer, startPgBouncer, type PgBouncer } from "./support/processes.ts";

let bouncer: PgBouncer;

beforeAll(async () => {
  if (!havePgBouncer) throw new Error("pgbouncer is not installed: apt-get install -y pgbouncer (.ci/run does)");
  bouncer = await startPgBouncer();
});
afterAll(() => bouncer?.stop());

verticalSlice("through PgBouncer (transaction mode)", async () => {
  const db = await createTestDb();
  await db.store.close();
  return {
    env: { DATABASE_URL: bouncer.url(db.name), DATABASE_DIRECT_URL: db.url },
    cleanup: () => db.drop(),
  };
});

describe("through PgBouncer", () => {
  let db: TestDb;
  let receiver: Receiver;
  let f: Fleet;

  beforeAll(async () => {
    db = await createTestDb();
    receiver = await startReceiver();
    f = fleet({ DATABASE_URL: bouncer.url(db.name), DATABASE_DIRECT_URL: db.url });
  });
  afterAll(async () => {
    await f?.stop();
    await receiver?.close();
    await db?.drop();
  });

  it("refuses a pooler without DATABASE_DIRECT_URL, or as DATABASE_DIRECT_URL, in one line", {
    timeout: 60_000,
  }, async () => {
    const base = { FAIRWAY_DATA_DIR: "/nonexistent-unused", FAIRWAY_ADMIN_TOKEN: "fwadmin_unused_0123456789" };
    const noDirect = await runToExit({ ...base, DATABASE_URL: bouncer.url(db.name) });
    expect(noDirect.code).toBe(1);
    expect(noDirect.output.trim().split("\n")).toHaveLength(1);
    expect(noDirect.output).toMatch(/DATABASE_URL .* is a transaction pooler: set DATABASE_DIRECT_URL/);

    const pooledDirect = await runToExit({
      ...base,
      DATABASE_URL: bouncer.url(db.name),
      DATABASE_DIRECT_URL: bouncer.url(db.name),
    });
    expect(pooledDirect.code).toBe(1);
    expect(pooledDirect.output.trim().split("\n")).toHaveLength(1);
    expect(pooledDirect.output).toMatch(/DATABASE_DIRECT_URL .* is a transaction pooler too/);
  });

  it("kill -9 of an executor working through the pooler: every job delivered, only the leases it held run twice", async () => {
    const TOTAL = 40;
    const t0 = Date.now();
    const mark = (what: string) => console.log(`${what} at ${Date.now() - t0} ms`);
    const api = await f.start("api");
    const { client } = await f.tenant(api.url, "acme");
    const target = { url: `${receiver.url}/slow/1500` };
    mark("api up");
    const victim = await f.start("executor", { FAIRWAY_HEARTBEAT_MS: "200", FAIRWAY_HEARTBEAT_TIMEOUT_MS: "1000" });
    for (let i = 0; i < TOTAL; i++) await client.jobs.create({ name: `j${i}`, schedule: { delayMs: 0 }, target });
    await until(
      () => receiver.open.get("/slow/1500") ?? 0,
      (n) => n >= 5,
      20_000,
      "the victim delivering",
    );
    mark("victim delivering");
    await victim.stop("SIGKILL");
    await f.start("executor");
    mark("survivor started");
    const done = await until(
      () => query<{ n: number }>(db.store.db, sql`SELECT count(*)::int AS n FROM triggers WHERE status = 'succeeded'`),
      (r) => r[0]!.n === TOTAL,
      30_000,
      "every trigger succeeded",
    );
    expect(done[0]!.n).toBe(TOTAL);
    const ids = receiver.deliveries.map((d) => d.id);
    const unique = new Set(ids);
    expect(unique.size).toBe(TOTAL);
    const duplicates = ids.length - unique.size;
    // What ran twice is what the victim held when it died (requests it had sent may still be arriving
    // after the kill, so the receiver's count at that moment is no bound): each duplicate's first
    // attempt is its lost lease, reaped.
    const reaped = new Set(
      (
        await query<{ id: string }>(
          db.store.db,
          sql`SELECT DISTINCT trigger_id AS id FROM attempts WHERE outcome = 'lease_expired'`,
        )
      ).map((r) => r.id),
    );
    const twice = ids.filter((id, i) => ids.indexOf(id) !== i);
    expect(twice.filter((id) => !reaped.has(id))).toEqual([]);
    expect(duplicates).toBeLessThanOrEqual(reaped.size);
    console.log(JSON.stringify({ drill: "pooler-kill9", total: TOTAL, reaped: reaped.size, duplicates }));
  }, 120_000);
});
