// triggers_job_idx (schema.ts, migration 0003): one index serves a job's triggers by instant and keeps
// at most one scheduled trigger per (job, instant). What must hold: a second scheduled trigger at the
// same instant is refused (materializer races rely on it); manual runs never collide; a one-time job
// moved away from its instant and back revives its own trigger (same id, same webhook-id); and no
// second (job_id, …) index comes back to cost every trigger write an extra entry.
import { beforeAll, expect, it } from "vitest";
import { newId } from "@fairway/core";
import { createJob, query, runJobNow, sql, updateJob } from "@fairway/store";
import { TRIGGER_KEY_FILLFACTOR } from "../src/schema.ts";
import { useTestDb } from "../../../test/support/use-db.ts";
import { seedTenant } from "../../../test/support/seed.ts";

const pg = useTestDb();
const tenantId = "tn_jobidx";

beforeAll(() => seedTenant(pg.db, tenantId));

async function oneTimeJob(runAt: Date) {
  const r = await createJob(
    pg.db,
    {
      id: newId("job"),
      tenantId,
      name: "once",
      type: "webhook",
      cron: null,
      timezone: null,
      runAt,
      nextFireAt: runAt,
      target: { url: "https://example.com/hook", method: "POST" },
      payload: null,
      maxAttempts: 3,
      initialDelayMs: 1000,
      maxDelayMs: 60_000,
    },
    { maxJobs: 1000 },
  );
  if (r.kind !== "created") throw new Error(r.kind);
  return r.job;
}

const triggersOf = (jobId: string) =>
  query<{ id: string; kind: string; status: string; reason: string | null; at: string }>(
    pg.db,
    sql`SELECT id, kind, status, reason, scheduled_for::text AS at FROM triggers WHERE job_id = ${jobId} ORDER BY created_at, id`,
  );

const insertTrigger = (jobId: string, kind: string, at: Date) =>
  query(
    pg.db,
    sql`
    INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts)
    VALUES (${newId("trg")}, ${tenantId}, ${jobId}, 'webhook', ${kind}, ${at.toISOString()}::timestamptz, ${at.toISOString()}::timestamptz, 3)`,
  );

it("refuses a second scheduled trigger of a job at the same instant, and lets manual runs share it", async () => {
  const at = new Date(Date.now() + 3_600_000);
  const job = await oneTimeJob(at);
  expect(await triggersOf(job.id)).toHaveLength(1);
  await expect(insertTrigger(job.id, "scheduled", at)).rejects.toMatchObject({
    code: "23505",
    constraint_name: "triggers_job_idx",
  });
  await insertTrigger(job.id, "manual", at);
  await insertTrigger(job.id, "manual", at);
  expect((await triggersOf(job.id)).map((r) => r.kind)).toEqual(["scheduled", "manual", "manual"]);
});

it("a one-time job moved away from its instant and back revives its own trigger, same id", async () => {
  const t1 = new Date(Date.now() + 3_600_000);
  const t2 = new Date(t1.getTime() + 60_000);
  const job = await oneTimeJob(t1);
  const [first] = await triggersOf(job.id);

  await updateJob(pg.db, tenantId, job.id, { runAt: t2 }, new Date());
  await updateJob(pg.db, tenantId, job.id, { runAt: t1 }, new Date());
  const rows = await triggersOf(job.id);
  expect(rows).toHaveLength(2);
  expect(rows[0]).toMatchObject({ id: first.id, status: "pending", reason: null });
  expect(rows[1]).toMatchObject({ status: "cancelled", reason: "rescheduled" });

  // A manual run now is its own trigger, whatever instant it lands on.
  const run = await runJobNow(pg.db, tenantId, job.id, new Date());
  expect(run).toMatchObject({ kind: "manual", status: "pending" });
  expect(await triggersOf(job.id)).toHaveLength(3);
});

it("leaves a finished trigger alone: moving back to its instant makes no second one and revives nothing", async () => {
  const t1 = new Date(Date.now() + 3_600_000);
  const job = await oneTimeJob(t1);
  const [first] = await triggersOf(job.id);
  await query(pg.db, sql`UPDATE triggers SET status = 'cancelled', reason = 'cancelled' WHERE id = ${first.id}`);
  await updateJob(pg.db, tenantId, job.id, { runAt: new Date(t1.getTime() + 60_000) }, new Date());
  await updateJob(pg.db, tenantId, job.id, { runAt: t1 }, new Date());
  const rows = await triggersOf(job.id);
  expect(rows.find((r) => r.id === first.id)).toMatchObject({ status: "cancelled", reason: "cancelled" });
  expect(rows.filter((r) => r.status === "pending")).toHaveLength(0);
});

it("keeps one index that leads with job_id", async () => {
  const idx = await query<{ indexname: string }>(
    pg.db,
    sql`SELECT indexname FROM pg_indexes WHERE tablename = 'triggers' AND indexdef LIKE '%(job_id%' ORDER BY indexname`,
  );
  expect(idx.map((r) => r.indexname)).toEqual(["triggers_job_idx"]);
});

it("leaves room on the leaf pages of the two indexes that keep a trigger's key for life", async () => {
  // Claim and settle each add a version with the same key (schema.ts, TRIGGER_KEY_FILLFACTOR); the
  // primary key's setting is a hand-written migration, so a regenerated one would lose it silently.
  const rows = await query<{ relname: string; opts: string[] | null }>(
    pg.db,
    sql`SELECT relname, reloptions AS opts FROM pg_class WHERE relname IN ('triggers_pkey', 'triggers_job_idx') ORDER BY relname`,
  );
  const want = [`fillfactor=${TRIGGER_KEY_FILLFACTOR}`];
  expect(rows).toEqual([
    { relname: "triggers_job_idx", opts: want },
    { relname: "triggers_pkey", opts: want },
  ]);
});
