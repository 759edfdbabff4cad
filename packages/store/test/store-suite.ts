// The store's behaviour suite, on real Postgres: the only engine Fairway runs on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ALL_TENANTS,
  cancelJob,
  claim,
  findExpiredLeases,
  getTrigger,
  pauseJob,
  query,
  releaseLeases,
  renewLeases,
  resumeJob,
  settle,
  sql,
  updateJob,
  type Db,
  type LayoutName,
  type Store,
} from "@fairway/store";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { seedDue, seedTenant, succeeded } from "../../../test/support/seed.ts";

export interface StoreHarness {
  /** The layout the store was connected with (default: read from the catalog, single here). */
  layout?: LayoutName;
  /** A store on a fresh database, and how many extra independent connections (stores) it can open. */
  open(): Promise<{ store: Store; more(): Promise<Store>; drop(): Promise<void> }>;
}

export function storeSuite(name: string, harness: StoreHarness) {
  describe(`store on ${name}`, () => {
    let env: Awaited<ReturnType<StoreHarness["open"]>>;
    let db: Db;
    beforeAll(async () => {
      env = await harness.open();
      db = env.store.db;
    });
    afterAll(async () => env?.drop());

    it("claims due work with a fenced lease and settles it with an attempt row", async () => {
      await seedTenant(db, "s1", { maxInFlight: 10 });
      const { triggerIds } = await seedDue(db, "s1", 3, { type: "s1pool" });
      const got = await claim(db, { type: "s1pool", budget: 10, owner: "a", leaseMs: 30_000 });
      expect(got.map((g) => g.id).sort()).toEqual([...triggerIds].sort());
      expect(got.every((g) => g.attempt === 1 && g.leaseToken.length > 10 && g.secrets.length === 1)).toBe(true);
      expect(got.every((g) => g.scheduledFor instanceof Date && !Number.isNaN(g.scheduledFor.getTime()))).toBe(true);
      // Nothing left to claim: a second claimer gets nothing.
      expect(await claim(db, { type: "s1pool", budget: 10, owner: "b", leaseMs: 30_000 })).toHaveLength(0);
      const settled = await settle(
        db,
        got.map((g) => succeeded(g)),
      );
      expect(settled).toHaveLength(3);
      const rows = await query<{ status: string; n: number }>(
        db,
        sql`SELECT t.status, (SELECT count(*)::int FROM attempts a WHERE a.trigger_id = t.id) AS n FROM triggers t WHERE t.tenant_id = 's1'`,
      );
      expect(rows.every((r) => r.status === "succeeded" && r.n === 1)).toBe(true);
    });

    it("a stale lease's settle, renew and second settle change 0 rows", async () => {
      await seedTenant(db, "s2");
      await seedDue(db, "s2", 1, { type: "s2pool" });
      const [c] = await claim(db, { type: "s2pool", budget: 1, owner: "a", leaseMs: 30_000 });
      expect(await settle(db, [succeeded(c, { leaseToken: "not-the-token" })])).toHaveLength(0);
      expect((await renewLeases(db, [{ id: c.id, leaseToken: "nope" }], 1000, ALL_TENANTS)).size).toBe(0);
      expect(await settle(db, [succeeded(c)])).toHaveLength(1);
      // Settling twice (a duplicate flush) changes nothing and adds no attempt.
      expect(await settle(db, [succeeded(c)])).toHaveLength(0);
      const [{ n }] = await query<{ n: number }>(
        db,
        sql`SELECT count(*)::int AS n FROM attempts WHERE trigger_id = ${c.id}`,
      );
      expect(n).toBe(1);
    });

    it("every attempt reads back through the attempts view, whether settle kept it in the trigger row or in the log", async () => {
      await seedTenant(db, "s2c");
      const { triggerIds } = await seedDue(db, "s2c", 2, { type: "s2cpool" });
      const got = await claim(db, { type: "s2cpool", budget: 2, owner: "a", leaseMs: 30_000 });
      const [once, twice] = triggerIds.map((id) => got.find((g) => g.id === id)!);
      const startedAt = new Date("2026-01-02T03:04:05.678Z");
      const request = {
        method: "POST",
        url: "https://example.com/h?k=${secrets.K}",
        headers: { "webhook-id": once.id },
        body: "{}",
      };
      const okDetail = { request, responseHeaders: { "x-a": "1" }, responseTruncated: false };
      const failDetail = {
        request: { ...request, body: null },
        responseHeaders: { "retry-after": "5" },
        responseTruncated: true,
      };
      // Attempt 1: one succeeds (kept in its trigger's row), the other fails and is retried (logged).
      await settle(db, [
        succeeded(once, { startedAt, durationMs: 12.4, httpStatus: 200, responseBody: "thanks", detail: okDetail }),
        succeeded(twice, {
          status: "pending",
          outcome: "http_error",
          httpStatus: 503,
          error: "HTTP 503",
          nextAttemptAt: new Date(0),
          detail: failDetail,
        }),
      ]);
      const [again] = await claim(db, { type: "s2cpool", budget: 2, owner: "a", leaseMs: 30_000 });
      expect([again.id, again.attempt]).toEqual([twice.id, 2]);
      // Many connections settle the retry's success at once: one wins, one attempt is recorded.
      const stores = [env.store, await env.more(), await env.more()];
      const wins = await Promise.all(
        stores.map((s) => settle(s.db, [succeeded(again, { startedAt, durationMs: 3, httpStatus: 204 })])),
      );
      expect(wins.flat()).toHaveLength(1);
      // A duplicate of the first success changes nothing either.
      expect(await settle(db, [succeeded(once, { durationMs: 99 })])).toHaveLength(0);

      const logged = await query<{ trigger_id: string; attempt: number }>(
        db,
        sql`SELECT trigger_id, attempt FROM attempt_log WHERE tenant_id = 's2c' ORDER BY attempt`,
      );
      expect(logged).toEqual([
        { trigger_id: twice.id, attempt: 1 },
        { trigger_id: twice.id, attempt: 2 },
      ]);
      const first = await getTrigger(db, "s2c", once.id);
      expect(first?.attempts).toEqual([
        {
          triggerId: once.id,
          tenantId: "s2c",
          attempt: 1,
          startedAt,
          durationMs: 12,
          outcome: "success",
          httpStatus: 200,
          error: null,
          responseBody: "thanks",
          detail: okDetail,
          createdAt: first!.finishedAt,
        },
      ]);
      const second = await getTrigger(db, "s2c", twice.id);
      expect(second?.attempts.map((a) => [a.attempt, a.outcome, a.httpStatus, a.error])).toEqual([
        [1, "http_error", 503, "HTTP 503"],
        [2, "success", 204, null],
      ]);
      expect(second?.attempts.map((a) => a.detail)).toEqual([failDetail, null]);
      expect([first?.status, second?.status]).toEqual(["succeeded", "succeeded"]);
      // The row's copy of that attempt is read through the view only, not with every trigger read.
      expect(first).not.toHaveProperty("okResponseBody");
    });

    it("a batch settling two triggers of one job pauses it on a 410 whatever their order", async () => {
      await seedTenant(db, "s2d");
      const { jobId, triggerIds } = await seedDue(db, "s2d", 2, { type: "s2dpool" });
      // Two scheduled fires of one one-time job (a success would complete it), a second apart.
      await db.execute(sql`UPDATE triggers SET kind = 'scheduled',
        scheduled_for = scheduled_for - CASE WHEN id = ${triggerIds[0]} THEN interval '1 second' ELSE interval '0' END
        WHERE job_id = ${jobId}`);
      const got = await claim(db, { type: "s2dpool", budget: 2, owner: "a", leaseMs: 30_000 });
      const [first, second] = triggerIds.map((id) => got.find((g) => g.id === id)!);
      const gone = {
        status: "dead" as const,
        reason: "http_410",
        outcome: "http_error",
        httpStatus: 410,
        error: "HTTP 410",
        pauseJob: true,
      };
      expect(await settle(db, [succeeded(first), succeeded(second, gone)])).toHaveLength(2);
      const [job] = await query<{ status: string }>(db, sql`SELECT status FROM jobs WHERE id = ${jobId}`);
      expect(job.status).toBe("paused");
    });

    it("a claim's lease token fences only that claim: re-claimed, its triggers refuse the old token", async () => {
      await seedTenant(db, "s2b");
      await seedDue(db, "s2b", 2, { type: "s2bpool" });
      const first = await claim(db, { type: "s2bpool", budget: 2, owner: "a", leaseMs: 1 });
      expect(first).toHaveLength(2);
      expect(first[0].leaseToken).toBe(first[1].leaseToken); // one token per claim
      await new Promise((r) => setTimeout(r, 20));
      // One lease expires and is reaped back to pending, then claimed again: a new claim, a new token.
      const [lost, kept] = first;
      await renewLeases(db, [kept], 30_000, ALL_TENANTS);
      expect(
        await settle(db, [
          succeeded(lost, { status: "pending", outcome: "lease_expired", reap: true, nextAttemptAt: new Date(0) }),
        ]),
      ).toHaveLength(1);
      const [again] = await claim(db, { type: "s2bpool", budget: 2, owner: "b", leaseMs: 30_000 });
      expect(again.id).toBe(lost.id);
      expect(again.leaseToken).not.toBe(lost.leaseToken);
      // The first claim's token (and its attempt number) no longer settles or renews the re-claimed trigger …
      expect((await renewLeases(db, [lost], 30_000, ALL_TENANTS)).size).toBe(0);
      expect(await settle(db, [succeeded(lost), succeeded({ ...again, leaseToken: lost.leaseToken })])).toHaveLength(0);
      // … while the trigger it still holds, and the new claim, settle normally.
      expect((await settle(db, [succeeded(kept), succeeded(again)])).map((r) => r.id).sort()).toEqual(
        [kept.id, again.id].sort(),
      );
    });

    it("never runs more of a tenant's triggers than its cap", async () => {
      await seedTenant(db, "s3", { maxInFlight: 4 });
      await seedDue(db, "s3", 20, { type: "s3pool" });
      const first = await claim(db, { type: "s3pool", budget: 50, owner: "a", leaseMs: 30_000 });
      expect(first).toHaveLength(4);
      expect(await claim(db, { type: "s3pool", budget: 50, owner: "b", leaseMs: 30_000 })).toHaveLength(0);
      await settle(
        db,
        first.slice(0, 2).map((g) => succeeded(g)),
      );
      expect(await claim(db, { type: "s3pool", budget: 50, owner: "b", leaseMs: 30_000 })).toHaveLength(2);
    });

    it("marks the triggers of a tenant the claim took to its cap, and only those", async () => {
      await seedTenant(db, "s3a", { maxInFlight: 3 });
      await seedTenant(db, "s3b", { maxInFlight: 100 });
      await seedTenant(db, "s3c", { maxInFlight: 5 });
      await seedDue(db, "s3a", 10, { type: "s3cap" });
      await seedDue(db, "s3b", 4, { type: "s3cap" });
      // Exactly its cap's worth due: taken to its cap, with nothing left waiting.
      await seedDue(db, "s3c", 5, { type: "s3cap" });
      const got = await claim(db, { type: "s3cap", budget: 100, owner: "a", leaseMs: 30_000 });
      const byTenant = (id: string) => got.filter((g) => g.tenantId === id);
      expect(byTenant("s3a")).toHaveLength(3);
      expect(byTenant("s3a").every((g) => g.atCap)).toBe(true);
      expect(byTenant("s3b")).toHaveLength(4);
      expect(byTenant("s3b").some((g) => g.atCap)).toBe(false);
      expect(byTenant("s3c").every((g) => g.atCap)).toBe(true);
      // One settled: the next claim takes the freed slot, and the tenant is at its cap again.
      await settle(
        db,
        byTenant("s3a")
          .slice(0, 1)
          .map((g) => succeeded(g)),
      );
      const again = await claim(db, { type: "s3cap", budget: 100, owner: "a", leaseMs: 30_000 });
      expect(again.map((g) => [g.tenantId, g.atCap])).toEqual([["s3a", true]]);
    });

    // The claim statement's split by weight and the pool clock it moves are the single-node layout's: on
    // the per-tenant layout the executor splits and keeps the clock (executor tenant-shares.ts).
    it.skipIf((harness.layout ?? "single") !== "single")(
      "gives each claimed trigger its WFQ slot, and the pool clock to a tenant that starts at it",
      async () => {
        // Equal costs (the 100 ms estimate of a new ledger row); weights 1 and 2.
        await seedTenant(db, "s4a", { maxInFlight: 100, weight: 1 });
        await seedTenant(db, "s4b", { maxInFlight: 100, weight: 2 });
        await seedDue(db, "s4a", 10, { type: "s4vt" });
        await seedDue(db, "s4b", 10, { type: "s4vt" });
        const slots = (got: Awaited<ReturnType<typeof claim>>) => got.map((g) => [g.tenantId, g.vt, g.vclock]);
        // Both new, at the clock (0): a's slots 0, 100, …, b's 0, 50, …; the four smallest, in order.
        const first = await claim(db, { type: "s4vt", budget: 4, owner: "a", leaseMs: 30_000 });
        expect(slots(first)).toEqual([
          ["s4a", 0, 0],
          ["s4b", 0, 0],
          ["s4b", 50, 0],
          ["s4a", 100, 0],
        ]);
        // Both now have virtual time of their own ahead of the clock (a 200, b 100): no clock.
        const second = await claim(db, { type: "s4vt", budget: 3, owner: "a", leaseMs: 30_000 });
        expect(slots(second)).toEqual([
          ["s4b", 100, null],
          ["s4b", 150, null],
          ["s4a", 200, null],
        ]);
        // A tenant new to the pool starts at the clock, which the last claim moved to its least start (100).
        await seedTenant(db, "s4c", { maxInFlight: 100, weight: 1 });
        await seedDue(db, "s4c", 1, { type: "s4vt" });
        const third = await claim(db, { type: "s4vt", budget: 1, owner: "a", leaseMs: 30_000 });
        expect(slots(third)).toEqual([["s4c", 100, 100]]);
      },
    );

    it("expired leases are found by the reaper and a renewal keeps them", async () => {
      await seedTenant(db, "s4");
      await seedDue(db, "s4", 2, { type: "s4pool" });
      const got = await claim(db, { type: "s4pool", budget: 2, owner: "a", leaseMs: 1 });
      await new Promise((r) => setTimeout(r, 20));
      const expired = await findExpiredLeases(db);
      expect(expired.map((e) => e.id).sort()).toEqual(got.map((g) => g.id).sort());
      // Renewing one brings it back to life; the reaper's fenced write then skips it.
      await renewLeases(db, [got[0]], 30_000, ALL_TENANTS);
      const reaped = await settle(
        db,
        got.map((g) =>
          succeeded(g, { status: "pending", outcome: "lease_expired", reap: true, nextAttemptAt: new Date() }),
        ),
      );
      expect(reaped.map((r) => r.id)).toEqual([got[1].id]);
      // The owner of the renewed lease settles normally.
      expect(await settle(db, [succeeded(got[0])])).toHaveLength(1);
    });

    it("concurrent claimers never double-claim and never exceed a cap", async () => {
      const tenants = Array.from({ length: 12 }, (_, i) => `c${i}`);
      for (const t of tenants) {
        await seedTenant(db, t, { maxInFlight: 3 });
        await seedDue(db, t, 15, { type: "race" });
      }
      const stores = [env.store, await env.more(), await env.more(), await env.more()];
      const seen = new Map<string, number>();
      let overCap = 0;
      let stop = false;
      const watcher = (async () => {
        while (!stop) {
          const rows = await query<{ n: number }>(
            db,
            sql`SELECT count(*)::int AS n FROM triggers t JOIN tenants tn ON tn.id = t.tenant_id
                 WHERE t.type = 'race' AND t.status = 'running' AND t.lease_expires_at > now()
                 GROUP BY t.tenant_id, tn.max_in_flight HAVING count(*) > tn.max_in_flight`,
          );
          overCap += rows.length;
          await new Promise((r) => setTimeout(r, 1));
        }
      })();
      await Promise.all(
        stores.map(async (s, w) => {
          for (let round = 0; round < 200; round++) {
            const got = await claim(s.db, { type: "race", budget: 7, owner: `w${w}`, leaseMs: 30_000 });
            for (const g of got) seen.set(`${g.id}#${g.attempt}`, (seen.get(`${g.id}#${g.attempt}`) ?? 0) + 1);
            if (got.length)
              await settle(
                s.db,
                got.map((g) => succeeded(g)),
              );
            const [{ left }] = await query<{ left: number }>(
              s.db,
              sql`SELECT count(*)::int AS left FROM triggers WHERE type = 'race' AND status <> 'succeeded'`,
            );
            if (left === 0) break;
          }
        }),
      );
      stop = true;
      await watcher;
      expect(overCap).toBe(0);
      expect([...seen.values()].every((n) => n === 1)).toBe(true);
      expect(seen.size).toBe(12 * 15);
      expect(await queueDrift(db)).toEqual(NO_DRIFT);
    });

    // A trigger cancelled while a claim is choosing it (claim.ts: picked rows are SKIP LOCKED, and the
    // UPDATE re-checks the status) never starts as `running` after its job was cancelled, and neither
    // side fails (no deadlock between the claim's and the cancel's row locks).
    it("claims racing job cancellation never start a cancelled trigger", async () => {
      const jobs: Array<{ tenant: string; jobId: string }> = [];
      for (let t = 0; t < 8; t++) {
        await seedTenant(db, `x${t}`, { maxInFlight: 1000 });
        for (let j = 0; j < 5; j++)
          jobs.push({ tenant: `x${t}`, jobId: (await seedDue(db, `x${t}`, 12, { type: "xrace" })).jobId });
      }
      const stores = [env.store, await env.more(), await env.more()];
      const claimed = new Set<string>();
      let cancelling = true;
      const canceller = (async () => {
        for (const { tenant, jobId } of jobs.filter((_, i) => i % 2 === 0))
          await cancelJob(stores[2].db, tenant, jobId);
        cancelling = false;
      })();
      await Promise.all(
        stores.slice(0, 2).map(async (s, w) => {
          while (cancelling) {
            for (const g of await claim(s.db, { type: "xrace", budget: 5, owner: `x${w}`, leaseMs: 30_000 }))
              claimed.add(g.id);
          }
        }),
      );
      await canceller;
      const rows = await query<{ id: string; status: string; reason: string | null; cancelledJob: boolean }>(
        db,
        sql`SELECT t.id, t.status, t.reason, j.status = 'cancelled' AS "cancelledJob"
              FROM triggers t JOIN jobs j ON j.id = t.job_id WHERE t.type = 'xrace'`,
      );
      expect(rows).toHaveLength(8 * 5 * 12);
      for (const r of rows) {
        if (claimed.has(r.id)) expect(r).toMatchObject({ status: "running", reason: null });
        else expect(r.status).toBe(r.cancelledJob ? "cancelled" : "pending");
      }
      expect(claimed.size).toBeGreaterThan(0);
      expect(await queueDrift(db)).toEqual(NO_DRIFT);
    });

    // The claim dequeues only what it claimed. A trigger it picked from the queue while a PATCH, a
    // pause, a resume or a release held the trigger's row is skipped, and keeps its queue row; every
    // one of those writers changes the queue through migration 0009's triggers. Afterwards the queue
    // is exactly the pending triggers, the pools count exactly the running ones, and every trigger
    // still pending is claimed by a final drain: none was lost from the queue.
    it("claims racing PATCH, pause, resume, release and retries keep the queue exactly the pending triggers", async () => {
      const jobs: Array<{ tenant: string; jobId: string }> = [];
      for (let t = 0; t < 6; t++) {
        await seedTenant(db, `q${t}`, { maxInFlight: 1000 });
        for (let j = 0; j < 4; j++)
          jobs.push({ tenant: `q${t}`, jobId: (await seedDue(db, `q${t}`, 15, { type: "qrace" })).jobId });
      }
      const stores = [env.store, await env.more(), await env.more()];
      let writing = true;
      const writer = (async () => {
        for (let round = 0; round < 3; round++) {
          for (const [i, { tenant, jobId }] of jobs.entries()) {
            const w = stores[2].db;
            if (i % 3 === 0) await updateJob(w, tenant, jobId, { priority: round + i }, new Date());
            else if (i % 3 === 1) await pauseJob(w, tenant, jobId);
            else await resumeJob(w, tenant, jobId, new Date());
          }
        }
        writing = false;
      })();
      const claimed: Array<{ id: string; leaseToken: string; attempt: number }> = [];
      await Promise.all(
        stores.slice(0, 2).map(async (s, w) => {
          while (writing) {
            const got = await claim(s.db, { type: "qrace", budget: 6, owner: `q${w}`, leaseMs: 30_000 });
            // A third go back unstarted, a third fail and wait for a retry, a third succeed.
            const [back, retry, done] = [
              got.filter((_, i) => i % 3 === 0),
              got.filter((_, i) => i % 3 === 1),
              got.filter((_, i) => i % 3 === 2),
            ];
            await releaseLeases(s.db, back, ALL_TENANTS);
            await settle(s.db, [
              ...retry.map((g) =>
                succeeded(g, { status: "pending", outcome: "http_error", httpStatus: 500, nextAttemptAt: new Date() }),
              ),
              ...done.map((g) => succeeded(g)),
            ]);
            claimed.push(...done);
          }
        }),
      );
      await writer;
      expect(await queueDrift(db)).toEqual(NO_DRIFT);
      // Drain: every trigger still pending is claimable.
      const [{ pending }] = await query<{ pending: number }>(
        db,
        sql`SELECT count(*)::int AS pending FROM triggers WHERE type = 'qrace' AND status = 'pending'`,
      );
      let drained = 0;
      for (let got; (got = await claim(db, { type: "qrace", budget: 500, owner: "drain", leaseMs: 30_000 })).length; ) {
        drained += got.length;
        await settle(
          db,
          got.map((g) => succeeded(g)),
        );
      }
      expect(drained).toBe(pending);
      expect(claimed.length).toBeGreaterThan(0);
      expect(await queueDrift(db)).toEqual(NO_DRIFT);
    });
  });
}
