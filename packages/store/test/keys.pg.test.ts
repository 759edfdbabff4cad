// Fairness keys in the store (sql/keys.ts, schema.ts tenantKeys): a job's key reaches its triggers and
// their queue rows by every path that makes a trigger, the key filters of the reads, the defaults and
// overrides, and the per-key counts the claim relies on (queued, running) against the rows they mirror.
import { expect, it } from "vitest";
import { newId } from "@fairway/core";
import {
  createJob,
  deleteIdleKeys,
  deleteKeyOverride,
  getKeyDefaults,
  getKeyInfo,
  listJobs,
  listKeys,
  listTriggers,
  putKeyOverride,
  query,
  replayTrigger,
  runJobNow,
  setKeyDefaults,
  sql,
  topKeys,
  updateJob,
  type KeyInfo,
  type KeyOverride,
  type KeyPolicy,
  type NewJob,
} from "@fairway/store";
import { useTestDb } from "../../../test/support/use-db.ts";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { seedPool, seedTenant } from "../../../test/support/seed.ts";

const pg = useTestDb();

function job(tenantId: string, key: string | null, runAt: Date | null = new Date(Date.now() - 1000)): NewJob {
  return {
    id: newId("job"),
    tenantId,
    name: "k",
    type: "keys",
    runAt,
    nextFireAt: runAt,
    target: { url: "https://example.com/hook", method: "POST" },
    maxAttempts: 3,
    initialDelayMs: 1000,
    maxDelayMs: 60_000,
    key,
  };
}

const keyOf = async (triggerId: string) =>
  (
    await query<{ t: string | null; q: string | null }>(
      pg.db,
      sql`SELECT t.key AS t, q.key AS q FROM triggers t LEFT JOIN trigger_queue q ON q.id = t.id WHERE t.id = ${triggerId}`,
    )
  )[0];

it("a job's key is carried by its triggers (create, run now, patch, replay) and filters the reads", async () => {
  await seedPool(pg.db, "keys", 10);
  await seedTenant(pg.db, "kt", { maxInFlight: 10 });
  const a = await createJob(pg.db, job("kt", "user:a"), { maxJobs: 100, poolKnown: true });
  const none = await createJob(pg.db, job("kt", null), { maxJobs: 100, poolKnown: true });
  if (a.kind !== "created" || none.kind !== "created") throw new Error("not created");
  expect(a.job.key).toBe("user:a");
  expect(none.job.key).toBeNull();

  expect((await listJobs(pg.db, "kt", { after: null, limit: 10, key: "user:a" })).map((j) => j.id)).toEqual([a.job.id]);
  expect(await listJobs(pg.db, "kt", { after: null, limit: 10, key: "user:b" })).toEqual([]);

  const [first] = await listTriggers(pg.db, "kt", a.job.id, null, 10, { key: "user:a" });
  expect(await keyOf(first.id)).toEqual({ t: "user:a", q: "user:a" });
  const manual = await runJobNow(pg.db, "kt", a.job.id, new Date());
  expect(await keyOf(manual!.id)).toEqual({ t: "user:a", q: "user:a" });
  expect((await getKeyInfo(pg.db, "kt", "user:a")).due).toBe(2);

  // PATCH moves the triggers not started, and their counts, to the new key.
  await updateJob(pg.db, "kt", a.job.id, { key: "user:b" }, new Date());
  expect(await keyOf(manual!.id)).toEqual({ t: "user:b", q: "user:b" });
  expect((await getKeyInfo(pg.db, "kt", "user:a")).due).toBe(0);
  expect((await getKeyInfo(pg.db, "kt", "user:b")).due).toBe(2);
  expect(await listTriggers(pg.db, "kt", a.job.id, null, 10, { key: "user:a" })).toEqual([]);
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);

  // A dead trigger replayed takes its job's key as it is now.
  await pg.db.execute(sql`UPDATE triggers SET status = 'dead', finished_at = now() WHERE id = ${first.id}`);
  await updateJob(pg.db, "kt", a.job.id, { key: "user:c" }, new Date());
  await replayTrigger(pg.db, "kt", first.id);
  expect(await keyOf(first.id)).toEqual({ t: "user:c", q: "user:c" });
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);

  // Cancelled and deleted triggers leave the counts.
  await pg.db.execute(sql`UPDATE triggers SET status = 'cancelled' WHERE id = ${manual!.id}`);
  await pg.db.execute(sql`DELETE FROM triggers WHERE id = ${first.id}`);
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
  expect((await getKeyInfo(pg.db, "kt", "user:c")).due).toBe(0);
});

it("defaults, overrides and the policy in force", async () => {
  await seedTenant(pg.db, "kp");
  expect(await getKeyDefaults(pg.db, "kp")).toEqual({ maxInFlight: null, ratePerSecond: null, weight: 1 });
  expect(await setKeyDefaults(pg.db, "kp", { maxInFlight: 2, ratePerSecond: 5, weight: 1 })).toEqual({
    maxInFlight: 2,
    ratePerSecond: 5,
    weight: 1,
  });
  const never: KeyInfo = await getKeyInfo(pg.db, "kp", "never-seen");
  expect(never).toEqual({
    key: "never-seen",
    override: null,
    policy: { maxInFlight: 2, ratePerSecond: 5, weight: 1 },
    running: 0,
    due: 0,
    oldestDueLagMs: null,
    workerTimeShare: 0,
  });
  // An explicit null is an override too: no cap for this key, whatever the default.
  const override: KeyOverride = { maxInFlight: null, weight: 3 };
  const o = await putKeyOverride(pg.db, "kp", "vip", override);
  expect(o.override).toEqual(override);
  const inForce: KeyPolicy = { maxInFlight: null, ratePerSecond: 5, weight: 3 };
  expect(o.policy).toEqual(inForce);
  await putKeyOverride(pg.db, "kp", "a-low", { weight: 0.5 });
  expect((await listKeys(pg.db, "kp", { limit: 1 })).data.map((k) => k.key)).toEqual(["a-low"]);
  const page2 = await listKeys(pg.db, "kp", { limit: 1, cursor: "a-low" });
  expect(page2).toMatchObject({ data: [{ key: "vip" }], nextCursor: null });
  expect(await deleteKeyOverride(pg.db, "kp", "vip")).toBe(true);
  expect(await deleteKeyOverride(pg.db, "kp", "vip")).toBe(false);
  expect((await getKeyInfo(pg.db, "kp", "vip")).policy).toEqual({ maxInFlight: 2, ratePerSecond: 5, weight: 1 });

  await pg.db.execute(sql`INSERT INTO tenant_keys (tenant_id, key, work_ms, work_at) VALUES
    ('kp', 'busy', 300, now()), ('kp', 'quiet', 100, now())`);
  const top = await topKeys(pg.db, "kp", 2);
  expect(top.map((k) => k.key)).toEqual(["busy", "quiet"]);
  expect(top[0].workerTimeShare).toBeCloseTo(0.75, 2);
});

it("retention removes the state of keys idle past it, and only those", async () => {
  await seedPool(pg.db, "keys", 10);
  await seedTenant(pg.db, "kr");
  await pg.db.execute(sql`UPDATE tenants SET history_retention_days = 7 WHERE id = 'kr'`);
  await pg.db.execute(sql`INSERT INTO tenant_keys (tenant_id, key, active_at, queued, running, override) VALUES
    ('kr', 'idle', now() - interval '8 days', 0, 0, NULL),
    ('kr', 'recent', now() - interval '6 days', 0, 0, NULL),
    ('kr', 'set', now() - interval '8 days', 0, 0, '{"weight": 2}')`);
  const busy = await createJob(pg.db, job("kr", "busy"), { maxJobs: 100, poolKnown: true });
  expect(busy.kind).toBe("created");
  await pg.db.execute(sql`UPDATE tenant_keys SET active_at = now() - interval '8 days' WHERE key = 'busy'`);
  expect(await deleteIdleKeys(pg.db, new Date(), 10)).toEqual({ deleted: 1, found: 1 });
  const left = await query<{ key: string }>(
    pg.db,
    sql`SELECT key FROM tenant_keys WHERE tenant_id = 'kr' ORDER BY key`,
  );
  expect(left.map((r) => r.key)).toEqual(["busy", "recent", "set"]);
});
