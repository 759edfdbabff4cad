// createJob batches a tenant's concurrent creates into one statement (sql/createJob.ts). These race it on
// real Postgres: two database handles stand for two API processes, whose batches meet on the counter row.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "@fairway/core";
import { connectPostgres, createJob, query, sql, type CreateJobResult, type Db, type NewJob, type Store } from "@fairway/store";
import { createTestDb, type TestDb } from "../../../test/support/pg.ts";
import { seedTenant } from "../../../test/support/seed.ts";

function newJob(tenantId: string, i: number, extra: Partial<NewJob> = {}): NewJob {
  const cron = i % 3 === 0;
  const at = new Date(Date.now() + 3_600_000);
  return {
    id: newId("job"),
    tenantId,
    name: `j${i}`,
    type: "webhook",
    cron: cron ? "0 9 * * *" : null,
    timezone: cron ? "UTC" : null,
    runAt: cron ? null : at,
    nextFireAt: at,
    target: { url: "https://example.com/hook", method: "POST" },
    payload: { i },
    maxAttempts: 3,
    initialDelayMs: 1000,
    maxDelayMs: 60_000,
    ...extra,
  };
}

const settled = (ps: Array<Promise<CreateJobResult>>) => Promise.allSettled(ps);
const kinds = (rs: Array<PromiseSettledResult<CreateJobResult>>) =>
  rs.map((r) => (r.status === "fulfilled" ? r.value.kind : "error"));

describe("createJob batches", () => {
  let t: TestDb;
  let db: Db;
  let other: Store;
  const counts = async (tenantId: string) =>
    (
      await query<{ jobs: number; triggers: number; counter: number | null }>(db, sql`
        SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = ${tenantId} AND status IN ('active', 'paused')) AS jobs,
               (SELECT count(*)::int FROM triggers WHERE tenant_id = ${tenantId}) AS triggers,
               (SELECT live_jobs FROM tenant_counters WHERE tenant_id = ${tenantId}) AS counter`)
    )[0];

  beforeAll(async () => {
    t = await createTestDb({ max: 10 });
    db = t.store.db;
    other = connectPostgres(t.url, { max: 10 });
  });
  afterAll(async () => {
    await other?.close();
    await t?.drop();
  });

  it("two processes' concurrent batches never pass maxJobs, and every request gets its own outcome", async () => {
    for (const [round, tenant] of ["race1", "race2", "race3"].entries()) {
      await seedTenant(db, tenant);
      const limit = 25 + round * 7;
      const jobs = Array.from({ length: 80 }, (_, i) => newJob(tenant, i));
      const results = await settled(jobs.map((j, i) => createJob(i % 2 ? other.db : db, j, { maxJobs: limit, poolKnown: true })));
      const k = kinds(results);
      expect(k.filter((x) => x === "created")).toHaveLength(limit);
      expect(k.filter((x) => x === "max_jobs")).toHaveLength(80 - limit);
      const created = jobs.filter((_, i) => k[i] === "created");
      const c = await counts(tenant);
      expect(c).toEqual({ jobs: limit, counter: limit, triggers: created.filter((j) => j.runAt).length });
      // Exactly the jobs reported created exist.
      const ids = await query<{ id: string }>(db, sql`SELECT id FROM jobs WHERE tenant_id = ${tenant}`);
      expect(new Set(ids.map((r) => r.id))).toEqual(new Set(created.map((j) => j.id)));
    }
  });

  it("one bad job in a batch fails alone; the others of its batch are created", async () => {
    await seedTenant(db, "bad");
    const taken = newJob("bad", 0);
    expect((await createJob(db, taken, { maxJobs: 100, poolKnown: true })).kind).toBe("created");
    // Submitted together: the first goes at once, the rest wait and go as one batch, which the reused
    // primary key fails; each is then tried alone.
    const jobs = Array.from({ length: 10 }, (_, i) => (i === 5 ? { ...newJob("bad", i), id: taken.id } : newJob("bad", i)));
    const results = await settled(jobs.map((j) => createJob(db, j, { maxJobs: 100, poolKnown: true })));
    expect(kinds(results)).toEqual(jobs.map((_, i) => (i === 5 ? "error" : "created")));
    expect(String((results[5] as PromiseRejectedResult).reason)).toMatch(/jobs_pkey/);
    expect(await counts("bad")).toMatchObject({ jobs: 10, counter: 10 });
  });

  it("Idempotency-Keys within one batch: the first of a key inserts, later ones replay or conflict", async () => {
    await seedTenant(db, "idem");
    const existing = newJob("idem", 0);
    expect((await createJob(db, existing, { maxJobs: 100, idempotencyKey: "a", requestHash: "ha" })).kind).toBe("created");
    const opts = (key: string | undefined, hash: string | undefined) => ({ maxJobs: 100, idempotencyKey: key, requestHash: hash });
    const calls: Array<[NewJob, ReturnType<typeof opts>]> = [
      [newJob("idem", 1), opts(undefined, undefined)], // goes alone, first
      [newJob("idem", 2), opts("b", "hb")],
      [newJob("idem", 3), opts("b", "hb")],
      [newJob("idem", 4), opts("b", "other")],
      [newJob("idem", 5), opts("a", "ha")],
      [newJob("idem", 6), opts("a", "other")],
      [newJob("idem", 7), opts(undefined, undefined)],
    ];
    const results = await Promise.all(calls.map(([j, o]) => createJob(db, j, o)));
    expect(results.map((r) => r.kind)).toEqual(["created", "created", "replayed", "idempotency_conflict", "replayed", "idempotency_conflict", "created"]);
    const job = (r: CreateJobResult) => ("job" in r ? r.job : null);
    expect(job(results[2])).toEqual(job(results[1]));
    expect(job(results[4])?.id).toBe(existing.id);
    expect(await counts("idem")).toMatchObject({ jobs: 4, counter: 4 });
  });

  it("a tenant without a counter row: its first batch counts the live jobs it already has", async () => {
    await seedTenant(db, "fresh");
    for (let i = 0; i < 3; i++) await createJob(db, newJob("fresh", i), { maxJobs: 100, poolKnown: true });
    await db.execute(sql`DELETE FROM tenant_counters WHERE tenant_id = 'fresh'`);
    const jobs = Array.from({ length: 12 }, (_, i) => newJob("fresh", 10 + i));
    const results = await settled(jobs.map((j, i) => createJob(i % 2 ? other.db : db, j, { maxJobs: 8, poolKnown: true })));
    expect(kinds(results).filter((x) => x === "created")).toHaveLength(5);
    expect(kinds(results).filter((x) => x === "max_jobs")).toHaveLength(7);
    expect(await counts("fresh")).toMatchObject({ jobs: 8, counter: 8 });
  });
});
