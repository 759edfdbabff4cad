// The dashboard's reads (sql/dashboard-reads.ts) on real Postgres: search and filters page through
// exactly the matching jobs of one tenant; dead letters page across tenants without gaps or repeats;
// the activity window counts the attempts that started in it, by tenant and by minute, and nothing older;
// pools carry their pause flag; secret names page through one tenant's, and no value is read.
import { beforeAll, describe, expect, it } from "vitest";
import { newId, ulid } from "@fairway/core";
import {
  activityWindow,
  DEFAULT_POOL,
  listDeadLetterSummaries,
  poolOverview,
  putSecret,
  query,
  secretNamesPage,
  searchJobs,
  setPoolPaused,
  sql,
  tenantOverview,
} from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { seedDue, seedTenant } from "../../../test/support/seed.ts";

const pg = useTestDb();

async function insertJob(tenantId: string, name: string, status: string) {
  const id = newId("job");
  await query(
    pg.db,
    sql`
    INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, status, max_attempts, initial_delay_ms, max_delay_ms)
    VALUES (${id}, ${tenantId}, ${name}, 'webhook', '0 9 * * *', 'UTC', ${status}, 3, 1000, 60000)`,
  );
  return id;
}

describe("searchJobs", () => {
  const expected: string[] = [];
  beforeAll(async () => {
    await seedTenant(pg.db, "dash_a");
    await seedTenant(pg.db, "dash_b");
    for (let i = 0; i < 130; i++) {
      const name = i % 3 === 0 ? `Nightly-${i}` : `report-${i}`;
      const status = i % 2 === 0 ? "active" : "paused";
      const id = await insertJob("dash_a", name, status);
      if (name.startsWith("Nightly") && status === "active") expected.push(id);
    }
    await insertJob("dash_b", "nightly-other-tenant", "active");
    await insertJob("dash_a", "100%_literal", "active");
  });

  it("pages through exactly one tenant's matching jobs, case-insensitively, in id order", async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: Awaited<ReturnType<typeof searchJobs>> = await searchJobs(pg.db, "dash_a", {
        q: "nightly",
        status: "active",
        after,
        limit: 7,
      });
      seen.push(...page.map((j) => j.id));
      if (page.length < 7) break;
      after = page[page.length - 1].id;
    }
    expect(seen).toEqual([...expected].sort());
  });

  it("treats % and _ in the search as text", async () => {
    expect((await searchJobs(pg.db, "dash_a", { q: "0%_", after: null, limit: 50 })).map((j) => j.name)).toEqual([
      "100%_literal",
    ]);
    expect(await searchJobs(pg.db, "dash_a", { q: "%", after: null, limit: 500 })).toHaveLength(1);
  });
});

describe("dead letters and tenant figures", () => {
  it("pages dead letters across tenants by tenant, newest first within each, and counts due work", async () => {
    await seedTenant(pg.db, "dash_c");
    await seedTenant(pg.db, "dash_d");
    const dead: string[] = [];
    for (const t of ["dash_c", "dash_d"]) {
      const { triggerIds } = await seedDue(pg.db, t, 5);
      await query(
        pg.db,
        sql`UPDATE triggers SET status = 'dead', reason = 'http_400', finished_at = now()
                              WHERE id IN (${sql.join(
                                triggerIds.slice(0, 3).map((id) => sql`${id}`),
                                sql`, `,
                              )})`,
      );
      dead.push(
        ...triggerIds
          .slice(0, 3)
          .sort()
          .reverse() // trigger ids are time-ordered: newest first
          .map((id) => `${t}/${id}`),
      );
    }
    const seen: string[] = [];
    let after: { tenantId: string; triggerId: string } | null = null;
    for (;;) {
      const page: Awaited<ReturnType<typeof listDeadLetterSummaries>> = await listDeadLetterSummaries(pg.db, {
        after,
        limit: 4,
      });
      seen.push(...page.map((r) => `${r.tenantId}/${r.id}`));
      if (page.length < 4) break;
      const last = page[page.length - 1];
      after = { tenantId: last.tenantId, triggerId: last.id };
    }
    expect(seen.filter((s) => s.startsWith("dash_c/") || s.startsWith("dash_d/"))).toEqual(dead);
    expect(
      (await listDeadLetterSummaries(pg.db, { tenantId: "dash_d", after: null, limit: 50 })).map(
        (r) => `dash_d/${r.id}`,
      ),
    ).toEqual(dead.slice(3));
    const [c] = await tenantOverview(pg.db, { after: null, limit: 1, ids: ["dash_c"] });
    expect(c).toMatchObject({ id: "dash_c", due: 2, dead: 3, running: 0 });
    expect(c.oldestDueLagMs).toBeGreaterThan(0);
  });
});

describe("activityWindow", () => {
  it("sums worker time by tenant and counts attempts by minute, from the window only", async () => {
    await seedTenant(pg.db, "act_a");
    await seedTenant(pg.db, "act_b");
    const jobA = await insertJob("act_a", "a", "active");
    const jobB = await insertJob("act_b", "b", "active");
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    const trigger = async (
      tenantId: string,
      jobId: string,
      createdMs: number,
      ok: { startedMs: number; durationMs: number } | null,
    ) => {
      const id = `trg_${ulid(createdMs)}`;
      await query(
        pg.db,
        sql`
        INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts, status,
                              ok_started_at, ok_duration_ms, ok_http_status, finished_at)
        VALUES (${id}, ${tenantId}, ${jobId}, 'webhook', 'scheduled', ${at(createdMs)}::timestamptz, ${at(createdMs)}::timestamptz, 3,
                ${ok ? "succeeded" : "dead"}, ${ok ? at(ok.startedMs) : null}::timestamptz, ${ok?.durationMs ?? null}, ${ok ? 200 : null},
                ${at(createdMs + 1000)}::timestamptz)`,
      );
      return id;
    };
    // In the window: two first-attempt successes of act_a (300 + 200 ms, 100 ms and 300 ms late).
    await trigger("act_a", jobA, now - 120_000, { startedMs: now - 119_900, durationMs: 300 });
    await trigger("act_a", jobA, now - 60_000, { startedMs: now - 59_700, durationMs: 200 });
    // act_b: one trigger with two failed attempts in the log (50 + 70 ms).
    const failed = await trigger("act_b", jobB, now - 90_000, null);
    for (const [n, ms] of [
      [1, 50],
      [2, 70],
    ]) {
      await query(
        pg.db,
        sql`
        INSERT INTO attempt_log (trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, http_status)
        VALUES (${failed}, 'act_b', ${n}, ${at(now - 89_000 + n * 1000)}::timestamptz, ${ms}, 'http_error', 500)`,
      );
    }
    // Before the window: not counted.
    await trigger("act_a", jobA, now - 20 * 60_000, { startedMs: now - 20 * 60_000, durationMs: 5000 });

    const a = await activityWindow(pg.db, { windowMs: 10 * 60_000, nowMs: now });
    const byTenant = Object.fromEntries(
      a.workerMs.filter((w) => w.tenantId.startsWith("act_")).map((w) => [w.tenantId, w.ms]),
    );
    expect(byTenant).toEqual({ act_a: 500, act_b: 120 });
    const total = a.minutes.reduce((s, m) => s + m.attempts, 0);
    const failures = a.minutes.reduce((s, m) => s + m.failures, 0);
    expect({ total, failures }).toEqual({ total: 4, failures: 2 });
    const lags = a.minutes.flatMap((m) => (m.lagMaxMs == null ? [] : [m.lagMaxMs]));
    // act_b's first attempt started 2 s after its scheduled instant; act_a's 0.1 s and 0.3 s after.
    expect(Math.max(...lags)).toBe(2000);
    expect(a.truncated).toBe(false);
    const onlyB = await activityWindow(pg.db, { windowMs: 10 * 60_000, nowMs: now, tenantId: "act_b" });
    expect(onlyB.workerMs).toEqual([{ tenantId: "act_b", ms: 120, attempts: 2, failures: 2, retries: 1 }]);
  });
});

describe("pools and secret names", () => {
  it("lists a paused pool as paused, and a resumed one as not", async () => {
    await setPoolPaused(pg.db, "dash_paused", true);
    const paused = (await poolOverview(pg.db, DEFAULT_POOL)).find((p) => p.type === "dash_paused");
    expect(paused).toMatchObject({ paused: true, running: 0, due: 0 });
    await setPoolPaused(pg.db, "dash_paused", false);
    expect((await poolOverview(pg.db, DEFAULT_POOL)).find((p) => p.type === "dash_paused")?.paused).toBe(false);
  });

  it("pages through one tenant's secret names in order, without values", async () => {
    await seedTenant(pg.db, "dash_s1");
    await seedTenant(pg.db, "dash_s2");
    const names = Array.from({ length: 12 }, (_, i) => `KEY_${String(i).padStart(2, "0")}`);
    for (const n of [...names].reverse()) await putSecret(pg.db, "dash_s1", n, `sealed-${n}`, "k1");
    await putSecret(pg.db, "dash_s2", "OTHER_TENANT", "sealed-other", "k1");
    const seen: string[] = [];
    let after: string | null = null;
    for (;;) {
      const page: Awaited<ReturnType<typeof secretNamesPage>> = await secretNamesPage(pg.db, "dash_s1", {
        after,
        limit: 5,
      });
      for (const row of page) expect(Object.keys(row).sort()).toEqual(["createdAt", "name", "updatedAt"]);
      seen.push(...page.map((r) => r.name));
      if (page.length < 5) break;
      after = page[page.length - 1].name;
    }
    expect(seen).toEqual(names);
  });
});
