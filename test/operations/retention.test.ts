// History retention on real Postgres with an injected clock: finished triggers go after the tenant's
// historyRetentionDays with their attempts, dead ones after deadRetentionDays, finished one-time jobs
// once no trigger is left; pending work never goes, and a row another transaction holds is skipped,
// not waited on; notification fold windows go once they say nothing any more.
import postgres from "postgres";
import { expect, it } from "vitest";
import { createApp } from "@fairway/api";
import { createMemoryCoordinator } from "@fairway/coord";
import { Retention } from "../../packages/executor/src/retention.ts";
import { silentLogger } from "@fairway/core";
import { claim, createChannel, deleteExpiredTriggers, notifyQuotaExhausted, query, settle, sql } from "@fairway/store";
import { seedDue, seedTenant, succeeded } from "../support/seed.ts";
import { until } from "../support/until.ts";
import { useTestDb } from "../support/use-db.ts";

const DAY = 86_400_000;
const h = useTestDb();
const count = async (table: "triggers" | "attempt_log" | "success_detail" | "jobs", where = sql`true`) =>
  (await query<{ n: number }>(h.db, sql`SELECT count(*)::int AS n FROM ${sql.raw(table)} WHERE ${where}`))[0].n;

it("deletes finished history after its tenant's period, dead after its own; pending stays; locked rows are skipped", async () => {
  await seedTenant(h.db, "a", { maxInFlight: 1000 });
  const app = createApp({
    db: h.db,
    coordinator: createMemoryCoordinator(),
    adminToken: "admin-token-retention-test",
    allowPrivateTargets: true,
  });
  const patch = await app.request("/v1/admin/tenants/a", {
    method: "PATCH",
    headers: { authorization: "Bearer admin-token-retention-test", "content-type": "application/json" },
    body: JSON.stringify({ historyRetentionDays: 7, deadRetentionDays: 30 }),
  });
  expect(await patch.json()).toMatchObject({ historyRetentionDays: 7, deadRetentionDays: 30 });

  const ok = await seedDue(h.db, "a", 30);
  await seedDue(h.db, "a", 10, { maxAttempts: 2 });
  await seedDue(h.db, "a", 5, { at: new Date(Date.now() + 3600_000) });
  // Succeed the first 30, each with a request and response detail (a success_detail row each); the next
  // 10 fail twice and are dead (two attempt_log rows each).
  const detail = { request: null, responseHeaders: { "x-a": "1" }, responseTruncated: false };
  const c1 = await claim(h.db, { type: "work", budget: 100, owner: "t", leaseMs: 60_000 });
  await settle(
    h.db,
    c1.map((c) =>
      ok.triggerIds.includes(c.id)
        ? succeeded(c, { detail })
        : succeeded(c, { status: "pending", outcome: "http_error", nextAttemptAt: new Date(Date.now() - 1000) }),
    ),
  );
  const c2 = await claim(h.db, { type: "work", budget: 100, owner: "t", leaseMs: 60_000 });
  expect(c2).toHaveLength(10);
  await settle(
    h.db,
    c2.map((c) => succeeded(c, { status: "dead", outcome: "http_error", reason: "exhausted" })),
  );
  await h.db.execute(sql`UPDATE jobs SET status = 'completed' WHERE id = ${ok.jobId}`);
  expect(await count("attempt_log")).toBe(20);
  expect(await count("success_detail")).toBe(30);

  const retentionAt = (offsetMs: number) =>
    new Retention({ db: h.db, now: () => Date.now() + offsetMs, log: silentLogger }, { batch: 7, pauseMs: 0 });
  expect(await retentionAt(6 * DAY).pass()).toEqual({ triggers: 0, jobs: 0, folds: 0, keys: 0 });

  // A succeeded trigger locked elsewhere (a settle or replay in flight) is skipped, and the pass does not wait.
  const other = postgres(h.t.url, { max: 1 });
  try {
    await other.begin(async (tx) => {
      await tx`SELECT 1 FROM triggers WHERE id = ${ok.triggerIds[0]} FOR UPDATE`;
      expect(await retentionAt(8 * DAY).pass()).toEqual({ triggers: 29, jobs: 0, folds: 0, keys: 0 });
    });
  } finally {
    await other.end();
  }
  expect(await count("success_detail")).toBe(1); // the skipped trigger's stays with it
  expect(await retentionAt(8 * DAY).pass()).toEqual({ triggers: 1, jobs: 1, folds: 0, keys: 0 }); // and the completed job with it
  expect(await count("triggers", sql`status = 'dead'`)).toBe(10);
  expect(await count("attempt_log")).toBe(20);
  expect(await count("success_detail")).toBe(0);

  // Eight of the ten dead ones, all of one instant, locked elsewhere: more than a batch. The pass
  // neither waits nor reads them forever; it deletes none of them, and the next pass the rest.
  const dead = (await query<{ id: string }>(h.db, sql`SELECT id FROM triggers WHERE status = 'dead' ORDER BY id`)).map(
    (r) => r.id,
  );
  const holder = postgres(h.t.url, { max: 1 });
  let first = 0;
  try {
    await holder.begin(async (tx) => {
      await tx`SELECT 1 FROM triggers WHERE id = ANY (${dead.slice(0, 8)}) FOR UPDATE`;
      first = (await retentionAt(31 * DAY).pass()).triggers;
      expect(first).toBeLessThanOrEqual(2);
      expect(await count("triggers", sql`id IN ${dead.slice(0, 8)}`)).toBe(8);
    });
  } finally {
    await holder.end();
  }
  expect(await retentionAt(31 * DAY).pass()).toEqual({ triggers: 10 - first, jobs: 0, folds: 0, keys: 0 }); // the failing job is still active
  expect(await count("attempt_log")).toBe(0);
  expect(await count("triggers", sql`status = 'pending'`)).toBe(5);
  expect(await count("jobs")).toBe(2);
  expect(await deleteExpiredTriggers(h.db, new Date(Date.now() + 3650 * DAY))).toEqual({
    deleted: 0,
    found: 0,
    next: null,
  });
});

it("stops at once when stopped during a pass, between two batches", async () => {
  await seedTenant(h.db, "b", { maxInFlight: 1000 });
  const done = await seedDue(h.db, "b", 3);
  const c = await claim(h.db, { type: "work", budget: 100, owner: "t", leaseMs: 60_000 });
  await settle(
    h.db,
    c.map((x) => succeeded(x)),
  );
  expect(c.map((x) => x.id).sort()).toEqual([...done.triggerIds].sort());
  // One trigger a batch, an hour between batches and between passes: only stop() can end it.
  const r = new Retention(
    { db: h.db, now: () => Date.now() + 40 * DAY, log: silentLogger },
    { batch: 1, pauseMs: 3_600_000, everyMs: 3_600_000 },
  );
  r.start();
  await until(
    () => count("triggers", sql`tenant_id = 'b'`),
    (n) => n === 2,
  );
  await r.stop(); // the test's own timeout fails it if this sleeps an interval
  expect(await count("triggers", sql`tenant_id = 'b'`)).toBe(2); // no batch after the stop
});

it("forgets fold windows that say nothing: past the window with nothing folded, or of a job or channel that is gone", async () => {
  await seedTenant(h.db, "f", { maxInFlight: 1000 });
  for (const id of ["nch_fa", "nch_fb"])
    await createChannel(h.db, {
      id,
      tenantId: "f",
      type: "webhook",
      url: "https://example.com/hook",
      to: null,
      events: null,
      windowSeconds: 60,
    });
  const gone = await seedDue(h.db, "f", 2, { maxAttempts: 1 });
  const live = await seedDue(h.db, "f", 2, { maxAttempts: 1 });
  const dead = (id: { id: string; leaseToken: string; attempt: number }) =>
    succeeded(id, { status: "dead", outcome: "http_error", httpStatus: 400, reason: "exhausted" });
  const claimed = await claim(h.db, { type: "work", budget: 100, owner: "t", leaseMs: 60_000 });
  const of = (ids: string[]) => claimed.filter((c) => ids.includes(c.id));
  // The gone job: two dead letters, the second folded. The live job: one, nothing folded. The tenant:
  // two quota refusals, the second folded. Each at both channels.
  await settle(h.db, of([gone.triggerIds[0], live.triggerIds[0]]).map(dead));
  await settle(h.db, of([gone.triggerIds[1]]).map(dead));
  await notifyQuotaExhausted(h.db, "f", 10);
  await notifyQuotaExhausted(h.db, "f", 10);
  const folds = () =>
    query<{ channel: string; subject: string; folded: number }>(
      h.db,
      sql`SELECT channel_id AS channel, subject, folded FROM notification_folds ORDER BY 1, 2`,
    );
  expect(await folds()).toEqual(
    ["nch_fa", "nch_fb"].flatMap((channel) =>
      [
        { subject: "", folded: 1 },
        { subject: gone.jobId, folded: 1 },
        { subject: live.jobId, folded: 0 },
      ]
        .sort((a, b) => (a.subject < b.subject ? -1 : 1))
        .map((f) => ({ channel, ...f })),
    ),
  );
  await query(h.db, sql`DELETE FROM jobs WHERE id = ${gone.jobId}`);
  await query(h.db, sql`DELETE FROM notification_channels WHERE id = 'nch_fb'`); // as a tenant's deletion does

  const retention = new Retention(
    { db: h.db, now: () => Date.now() + 120_000, log: silentLogger },
    { batch: 2, pauseMs: 0 },
  );
  // Inside the window nothing goes but the deleted channel's rows.
  const inside = new Retention({ db: h.db, now: () => Date.now(), log: silentLogger }, { batch: 2, pauseMs: 0 });
  expect(await inside.pass()).toEqual({ triggers: 0, jobs: 0, folds: 3, keys: 0 });
  // Past it: the gone job's and the live job's (nothing folded), not the tenant's (one folded, to report);
  // a row held elsewhere is skipped and goes in the next pass.
  const other = postgres(h.t.url, { max: 1 });
  try {
    await other.begin(async (tx) => {
      await tx`SELECT 1 FROM notification_folds WHERE subject = ${live.jobId} FOR UPDATE`;
      expect(await retention.pass()).toEqual({ triggers: 0, jobs: 0, folds: 1, keys: 0 });
    });
  } finally {
    await other.end();
  }
  expect(await retention.pass()).toEqual({ triggers: 0, jobs: 0, folds: 1, keys: 0 });
  expect(await folds()).toEqual([{ channel: "nch_fa", subject: "", folded: 1 }]);

  // The live job's next dead letter is sent, reporting nothing folded, as it would have been with the row.
  await settle(h.db, of([live.triggerIds[1]]).map(dead));
  const sent = await query<{ folded: number }>(
    h.db,
    sql`SELECT folded FROM notifications WHERE channel_id = 'nch_fa' AND job_id = ${live.jobId} ORDER BY id`,
  );
  expect(sent).toEqual([{ folded: 0 }, { folded: 0 }]);
});
