// The schedule-facing API: strict cron and IANA zone validation (bad input changes nothing), the next
// 5 fires on GET, Idempotency-Key under 50 concurrent requests, and dead letters with replay.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claim, query, settle, sql, type ClaimedTrigger, type Settlement } from "@fairway/store";
import { createHarness, type Harness } from "./harness.ts";

describe("schedule API", () => {
  let h: Harness;
  let key: string;
  let otherKey: string;
  const jobCount = async () => (await query<{ n: number }>(h.db, sql`SELECT count(*)::int AS n FROM jobs`))[0].n;
  const cronJob = (cron: unknown, timezone: unknown = "UTC") => ({
    name: "c",
    schedule: { cron, timezone },
    target: { url: "http://127.0.0.1:9/x" },
  });

  beforeAll(async () => {
    h = await createHarness({ start: Date.parse("2025-03-08T12:00:00Z") });
    key = await h.tenant("api");
    otherKey = await h.tenant("other");
  });
  afterAll(async () => h?.close());

  describe("strict cron", () => {
    const bad: Array<[string, RegExp]> = [
      ["", /empty/],
      ["* * * *", /5 fields .* or 6 .*found 4/],
      ["* * * * * * *", /found 7/],
      ["61 * * * *", /minute value 61 is out of range 0-59/],
      ["0 25 * * *", /hour value 25/],
      ["0 0 30 2 *", /can never fire.*February 30/],
      ["0 0 31 4 *", /can never fire/],
      ["*/0 * * * *", /step 0/],
      ["@every_minute", /unknown cron alias/],
      ["a b c d e", /not a number/],
    ];
    for (const [cron, message] of bad) {
      it(`rejects ${JSON.stringify(cron)} saying what is wrong, and writes nothing`, async () => {
        const before = await jobCount();
        const res = await h.call(key, "POST", "/v1/jobs", cronJob(cron));
        expect(res.status).toBe(400);
        expect(res.json.error.code).toBe("invalid_cron");
        expect(res.json.error.message).toMatch(message);
        expect(await jobCount()).toBe(before);
      });
    }

    it("rejects unknown and empty time zones", async () => {
      for (const tz of ["Mars/Olympus_Mons", "", "EST5EDT6"]) {
        const res = await h.call(key, "POST", "/v1/jobs", cronJob("0 9 * * *", tz));
        expect([res.status, res.json.error.code]).toEqual([400, "invalid_timezone"]);
      }
    });

    it("accepts 5 fields, 6 fields (seconds) and aliases; GET shows the next 5 fires, DST included", async () => {
      const six = await h.call(key, "POST", "/v1/jobs", cronJob("15 30 9 * * 1-5", "Europe/Berlin"));
      expect(six.status).toBe(201);
      const alias = await h.call(key, "POST", "/v1/jobs", cronJob("@HOURLY"));
      expect([alias.status, alias.json.schedule.cron]).toEqual([201, "@hourly"]);
      const ny = await h.call(key, "POST", "/v1/jobs", cronJob("30 2 * * *", "America/New_York"));
      const got = await h.call(key, "GET", `/v1/jobs/${ny.json.id}`);
      expect(got.json.nextFires).toEqual([
        "2025-03-09T07:00:00.000Z", // 02:30 does not exist on the spring-forward day: 03:00 EDT
        "2025-03-10T06:30:00.000Z",
        "2025-03-11T06:30:00.000Z",
        "2025-03-12T06:30:00.000Z",
        "2025-03-13T06:30:00.000Z",
      ]);
      expect(got.json.nextFireAt).toBe(got.json.nextFires[0]);
    });
  });

  describe("Idempotency-Key", () => {
    const body = {
      name: "once",
      schedule: { at: "2030-01-01T00:00:00Z" },
      target: { url: "http://127.0.0.1:9/x" },
      payload: { n: 1 },
    };

    it("50 concurrent requests with one key create one job and all get the same response", async () => {
      const before = await jobCount();
      const responses = await Promise.all(
        Array.from({ length: 50 }, () => h.call(key, "POST", "/v1/jobs", body, { "idempotency-key": "k-50" })),
      );
      expect(await jobCount()).toBe(before + 1);
      expect(new Set(responses.map((r) => r.status))).toEqual(new Set([201]));
      for (const r of responses) expect(r.json).toEqual(responses[0].json);
      const [{ n }] = await query<{ n: number }>(
        h.db,
        sql`SELECT count(*)::int AS n FROM triggers WHERE job_id = ${responses[0].json.id}`,
      );
      expect(n).toBe(1);
    });

    it("the same key with a different body is a 409 and changes nothing; another tenant's key space is its own", async () => {
      const before = await jobCount();
      const res = await h.call(key, "POST", "/v1/jobs", { ...body, payload: { n: 2 } }, { "idempotency-key": "k-50" });
      expect([res.status, res.json.error.code]).toEqual([409, "idempotency_conflict"]);
      expect(res.json.error.message).toMatch(/different request body/);
      expect(await jobCount()).toBe(before);
      expect((await h.call(otherKey, "POST", "/v1/jobs", body, { "idempotency-key": "k-50" })).status).toBe(201);
    });
  });

  describe("dead letters and replay", () => {
    const settleAs = (c: ClaimedTrigger[], status: "dead" | "succeeded"): Settlement[] =>
      c.map((x) => ({
        id: x.id,
        leaseToken: x.leaseToken,
        attempt: x.attempt,
        status,
        startedAt: new Date(),
        durationMs: 3,
        outcome: status === "dead" ? "http_error" : "success",
        httpStatus: status === "dead" ? 400 : 200,
        reason: status === "dead" ? "http_400" : null,
      }));
    const claimAll = () => claim(h.db, { type: "dl", budget: 10, owner: "t", leaseMs: 60_000 });
    const jobIds: string[] = [];

    beforeAll(async () => {
      h.clock.now = Date.now() - 1000;
      for (let i = 0; i < 3; i++) {
        const res = await h.call(key, "POST", "/v1/jobs", {
          name: `dl${i}`,
          type: "dl",
          schedule: { delayMs: 0 },
          target: { url: "http://127.0.0.1:9/x" },
          retry: { maxAttempts: 1 },
        });
        jobIds.push(res.json.id);
      }
      await settle(h.db, settleAs(await claimAll(), "dead"));
    });

    it("GET /v1/dead-letters: filter by job, cursor pagination, tenant-scoped", async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { status: number; json: any } = await h.call(
          key,
          "GET",
          `/v1/dead-letters?limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        );
        seen.push(...page.json.data.map((t: { id: string }) => t.id));
        cursor = page.json.nextCursor;
      } while (cursor);
      expect(seen).toHaveLength(3);
      expect(new Set(seen).size).toBe(3);
      const one = await h.call(key, "GET", `/v1/dead-letters?jobId=${jobIds[1]}`);
      expect(one.json.data.map((t: { jobId: string; status: string }) => [t.jobId, t.status])).toEqual([
        [jobIds[1], "dead"],
      ]);
      expect((await h.call(otherKey, "GET", "/v1/dead-letters")).json.data).toEqual([]);
    });

    it("replay: same trigger (same webhook-id), fresh attempt budget, history kept", async () => {
      const [dead] = (await h.call(key, "GET", `/v1/dead-letters?jobId=${jobIds[0]}`)).json.data;
      expect((await h.call(otherKey, "POST", `/v1/triggers/${dead.id}/replay`)).status).toBe(404);
      const replayed = await h.call(key, "POST", `/v1/triggers/${dead.id}/replay`);
      expect(replayed.json).toMatchObject({ id: dead.id, status: "pending", attemptCount: 1, maxAttempts: 2 });
      const again = await h.call(key, "POST", `/v1/triggers/${dead.id}/replay`);
      expect([again.status, again.json.error.code]).toEqual([409, "not_dead"]);
      const [c] = await claimAll();
      expect([c.id, c.attempt]).toEqual([dead.id, 2]); // the id is the webhook-id
      await settle(h.db, settleAs([c], "succeeded"));
      const t = (await h.call(key, "GET", `/v1/triggers/${dead.id}`)).json;
      expect(t.status).toBe("succeeded");
      expect(t.attempts.map((a: { attempt: number; outcome: string }) => [a.attempt, a.outcome])).toEqual([
        [1, "http_error"],
        [2, "success"],
      ]);
      expect((await h.call(key, "GET", `/v1/dead-letters?jobId=${jobIds[0]}`)).json.data).toEqual([]);
    });
  });
});
