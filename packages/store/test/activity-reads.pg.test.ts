// The Activity page's read on real Postgres: exact figures per bucket, tenant and key while a bucket
// holds no more than it reads, and a scaled estimate, marked as such, when it holds more.
import { beforeAll, describe, expect, it } from "vitest";
import { ulid } from "@fairway/core";
import { activitySeries, sql, type Db } from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { seedDue, seedTenant } from "../../../test/support/seed.ts";

const MIN = 60_000;
const NOW = Date.UTC(2026, 10, 28, 12, 0, 30);
const BUCKET0 = Date.UTC(2026, 10, 28, 11, 50); // the first of 11 one-minute buckets up to NOW

interface Fire {
  tenant: string;
  job: string;
  key: string | null;
  at: number;
  /** The first attempt's outcome: a success (kept in the trigger row) or a failure that dead-lettered. */
  ok: boolean;
  lagMs: number;
  ms: number;
}

async function insertFires(db: Db, fires: Fire[]): Promise<void> {
  const rows = fires.map((f) => ({ ...f, id: `trg_${ulid(f.at)}` }));
  await db.execute(sql`
    INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts, status, key,
                          created_at, attempt_count, ok_started_at, ok_duration_ms)
    SELECT r.id, r.tenant, r.job, 'work', 'scheduled', to_timestamp(r.at / 1000.0), to_timestamp(r.at / 1000.0), 1,
           CASE WHEN r.ok THEN 'succeeded' ELSE 'dead' END, r.key, to_timestamp(r.at / 1000.0), 1,
           CASE WHEN r.ok THEN to_timestamp((r.at + r."lagMs") / 1000.0) END, CASE WHEN r.ok THEN r.ms END
      FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS r(id text, tenant text, job text, key text, at float8, ok boolean, "lagMs" int, ms int)`);
  await db.execute(sql`
    INSERT INTO attempt_log (trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, http_status, error)
    SELECT r.id, r.tenant, 1, to_timestamp((r.at + r."lagMs") / 1000.0), r.ms, 'http_error', 500, 'HTTP 500'
      FROM jsonb_to_recordset(${JSON.stringify(rows.filter((r) => !r.ok))}::jsonb)
        AS r(id text, tenant text, at float8, "lagMs" int, ms int)`);
}

const pg = useTestDb();

describe("activitySeries", () => {
  let jobA: string;
  let jobB: string;
  beforeAll(async () => {
    await seedTenant(pg.db, "a");
    await seedTenant(pg.db, "b");
    jobA = (await seedDue(pg.db, "a", 0)).jobId;
    jobB = (await seedDue(pg.db, "b", 0)).jobId;
    const at = (minute: number, s: number) => BUCKET0 + minute * MIN + s * 1000;
    await insertFires(pg.db, [
      // Minute 2: three successes of tenant a (two with key k1), and a dead letter of b.
      { tenant: "a", job: jobA, key: "k1", at: at(2, 1), ok: true, lagMs: 10, ms: 100 },
      { tenant: "a", job: jobA, key: "k1", at: at(2, 2), ok: true, lagMs: 20, ms: 200 },
      { tenant: "a", job: jobA, key: null, at: at(2, 3), ok: true, lagMs: 30, ms: 300 },
      { tenant: "b", job: jobB, key: null, at: at(2, 4), ok: false, lagMs: 40, ms: 50 },
      // Before the range: not counted.
      { tenant: "a", job: jobA, key: "k1", at: BUCKET0 - 5 * MIN, ok: true, lagMs: 1, ms: 1 },
      // Minute 5: 600 successes of b spread evenly over the minute, more than a bucket reads.
      ...Array.from({ length: 600 }, (_, i) => ({
        tenant: "b",
        job: jobB,
        key: null,
        at: at(5, 0) + i * 100,
        ok: true,
        lagMs: 5,
        ms: 10,
      })),
    ]);
  });

  const read = (o: { tenantId?: string; key?: string } = {}) =>
    activitySeries(pg.db, { nowMs: NOW, bucketMs: MIN, count: 11, perBucket: 200, ...o });

  it("counts exactly per bucket, tenant and key while a bucket holds no more than it reads", async () => {
    const all = await read();
    expect(all.buckets.map((b) => b.start)).toEqual(Array.from({ length: 11 }, (_, i) => BUCKET0 + i * MIN));
    expect(all.buckets[2]).toMatchObject({
      deliveries: 4,
      failures: 1,
      workerMs: 650,
      dead: 1,
      lagP50Ms: 25,
      estimated: false,
    });
    expect(all.buckets.filter((_, i) => i !== 2 && i !== 5).every((b) => b.deliveries === 0)).toBe(true);
    expect(all.groups.find((g) => g.name === "a")).toMatchObject({
      deliveries: 3,
      failures: 0,
      dead: 0,
      workerMs: 600,
    });

    const a = await read({ tenantId: "a" });
    expect(a.buckets[2]).toMatchObject({ deliveries: 3, failures: 0, dead: 0 });
    expect(a.groups.map((g) => [g.name, g.deliveries])).toEqual([
      ["k1", 2],
      ["", 1],
    ]);
    const k1 = await read({ tenantId: "a", key: "k1" });
    expect(k1.buckets[2]).toMatchObject({ deliveries: 2, workerMs: 300, lagP50Ms: 15 });
    expect(k1.buckets[5].deliveries).toBe(0);
  });

  it("scales a bucket that holds more than it reads, and marks it estimated", async () => {
    const { buckets } = await read({ tenantId: "b" });
    // 200 read of 600 spread over the minute: the first 200 cover a third of it.
    expect(buckets[5].estimated).toBe(true);
    expect(buckets[5].deliveries).toBeGreaterThan(540);
    expect(buckets[5].deliveries).toBeLessThan(660);
    expect(buckets[5].lagP50Ms).toBe(5);
    expect(buckets[2]).toMatchObject({ deliveries: 1, failures: 1, dead: 1, estimated: false });
  });
});
