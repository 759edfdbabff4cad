// Crons cannot outrun their tenant's rate quota (issue 60): a tenant allowed 0.2 runs a second with
// five every-second crons. The materializer is driven through 380 s of its own time, a pass per second,
// and the claim takes what the quota lets it between passes; the pending fires stay within the bound
// docs/schedules.md states ("Fires over the quota"): per job, the fires of the last minute and of the
// lookahead, and one catch-up. What does not run is a skipped row with its reason, by policy.
import { afterAll, beforeAll, expect, test } from "vitest";
import { claim, materialize, query, sql } from "@fairway/store";
import { createHarness, type Harness } from "./harness.ts";

const LOOKAHEAD_MS = 10_000;
const SECONDS = 380;
// Fire instants are real past times, so the claim (which uses the database's now()) can take them.
const START = Math.floor((Date.now() - (SECONDS + 30) * 1000) / 1000) * 1000;

let h: Harness;
const jobs: Record<string, string> = {};

beforeAll(async () => {
  h = await createHarness({ start: START - 500 });
  const key = await h.tenant("slow");
  const admin = await h.call("adm_schedules_test_token", "PATCH", "/v1/admin/tenants/slow", { ratePerSecond: 0.2 });
  expect(admin.status).toBe(200);
  const policies = ["fire_once", "fire_once", "fire_once", "skip", "fire_all"] as const;
  for (const [i, misfire] of policies.entries()) {
    const res = await h.call(key, "POST", "/v1/jobs", {
      name: `every-second-${i}`,
      schedule: { cron: "* * * * * *", timezone: "UTC" },
      target: { url: "http://127.0.0.1:9/x" },
      misfire,
      // fire_all delivers what is inside its window: the window is its bound.
      ...(misfire === "fire_all" ? { catchupWindowMs: 30_000 } : {}),
    });
    expect(res.status).toBe(201);
    jobs[`${misfire}-${i}`] = res.json.id;
  }
}, 60_000);
afterAll(async () => h?.close());

const pendingByJob = async () =>
  Object.fromEntries(
    (
      await query<{ job_id: string; n: number }>(
        h.db,
        sql`SELECT job_id, count(*)::int AS n FROM triggers WHERE tenant_id = 'slow' AND status = 'pending' GROUP BY job_id`,
      )
    ).map((r) => [r.job_id, r.n]),
  );

test("five every-second crons over a 0.2/s quota: each job's pending fires stay bounded, the rest skipped by policy", async () => {
  // The documented bound per job: the last minute's fires, the lookahead's, and one catch-up (fire_all:
  // its 30 s window in place of the minute); one more for the fire a pass writes as it crosses.
  const bound = { fire_once: 60 + 10 + 2, skip: 60 + 10 + 2, fire_all: 60 + 10 + 2 };
  let most = 0;
  let claimed = 0;
  for (let s = 0; s <= SECONDS; s++) {
    const now = new Date(START + s * 1000);
    await materialize(h.db, now, LOOKAHEAD_MS);
    claimed += (await claim(h.db, { type: "webhook", budget: 5, owner: "t", leaseMs: 600_000 })).length;
    const pending = await pendingByJob();
    for (const [name, id] of Object.entries(jobs)) {
      const policy = name.replace(/-\d+$/, "") as keyof typeof bound;
      expect(pending[id] ?? 0, `${name} at ${s} s`).toBeLessThanOrEqual(bound[policy]);
    }
    most = Math.max(most, ...Object.values(pending));
  }
  // The quota held: a handful of runs, not five a second (its bucket refills in real time).
  expect(claimed).toBeGreaterThan(0);
  expect(claimed).toBeLessThan(SECONDS);
  // Without the bound every job would hold every fire of the 380 s.
  expect(most).toBeGreaterThan(60);

  const reasons = await query<{ job_id: string; reason: string; n: number }>(
    h.db,
    sql`SELECT job_id, reason, count(*)::int AS n FROM triggers
         WHERE tenant_id = 'slow' AND status = 'skipped' GROUP BY job_id, reason`,
  );
  const skipped = (id: string, reason: string) => reasons.find((r) => r.job_id === id && r.reason === reason)?.n ?? 0;
  // Every fire of the 380 s is a row: pending, running, or skipped with the policy's reason.
  for (const [name, id] of Object.entries(jobs)) {
    const reason = name.startsWith("fire_all") ? "misfire_outside_window" : "misfire";
    expect(skipped(id, reason), name).toBeGreaterThan(SECONDS - 100);
  }
  const [{ total }] = await query<{ total: number }>(
    h.db,
    sql`SELECT count(DISTINCT (job_id, scheduled_for))::int AS total FROM triggers
         WHERE tenant_id = 'slow' AND scheduled_for <= ${new Date(START + SECONDS * 1000).toISOString()}::timestamptz`,
  );
  expect(total).toBe(5 * (SECONDS + 1));
}, 300_000);
