// Job lifecycle through the API with an injected clock: pause (pending triggers cancelled, reason
// `paused`), resume (the misfire policy handles the gap), DELETE, PATCH (from the next fire), run now
// (its own trigger id, never colliding with a scheduled instant), and one-time jobs completing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claim, materialize, settle } from "@fairway/store";
import { createHarness, iso, triggerRows, type Harness } from "./harness.ts";

const MIN = 60_000;

describe("job lifecycle", () => {
  let h: Harness;
  let key: string;
  // A real past half-hour boundary: triggers at these instants are due for the claim (database now()).
  const T = Math.floor((Date.now() - 40 * MIN) / (30 * MIN)) * (30 * MIN);
  const rows = async (jobId: string) =>
    (await triggerRows(h.db, jobId)).map((r) => `${r.at} ${r.kind} ${r.status}${r.reason ? ` ${r.reason}` : ""}`);
  const cronJob = async (extra: Record<string, unknown> = {}) => {
    const res = await h.call(key, "POST", "/v1/jobs", {
      name: "every-minute",
      schedule: { cron: "* * * * *", timezone: "UTC" },
      target: { url: "http://127.0.0.1:9/x" },
      ...extra,
    });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    return res.json.id as string;
  };

  beforeAll(async () => {
    h = await createHarness({ start: T - 1000 });
    key = await h.tenant("life");
  });
  afterAll(async () => h?.close());

  it("pause cancels pending triggers (reason paused) and stops new ones; resume applies the misfire policy to the gap", async () => {
    h.clock.now = T - 1000;
    const id = await cronJob({ misfire: "fire_once" });
    await materialize(h.db, new Date(T - 500), 1000); // T is pending
    expect((await h.call(key, "POST", `/v1/jobs/${id}/pause`)).json).toMatchObject({
      status: "paused",
      nextFireAt: null,
    });
    await materialize(h.db, new Date(T + 10 * MIN), 1000); // paused: nothing
    expect(await rows(id)).toEqual([`${iso(T)} scheduled cancelled paused`]);

    h.clock.now = T + 10 * MIN + 30_000;
    const resumed = await h.call(key, "POST", `/v1/jobs/${id}/resume`);
    expect(resumed.json).toMatchObject({ status: "active" });
    await materialize(h.db, new Date(h.clock.now), 1000);
    const after = await rows(id);
    // T+1 … T+9 missed during the pause (skipped); T+10, 30 s ago, is the one catch-up: once the gap is
    // a misfire, every overdue fire counts, those inside the 60 s grace too.
    expect(after[0]).toBe(`${iso(T)} scheduled cancelled paused`);
    expect(after.slice(1, 10)).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8, 9].map((k) => `${iso(T + k * MIN)} scheduled skipped misfire`),
    );
    expect(after.slice(10)).toEqual([`${iso(T + 10 * MIN)} scheduled pending`]);
  });

  it("DELETE cancels the job and its pending triggers; nothing is materialized afterwards", async () => {
    h.clock.now = T - 1000;
    const id = await cronJob();
    await materialize(h.db, new Date(T - 500), 1000);
    const del = await h.call(key, "DELETE", `/v1/jobs/${id}`);
    expect(del.json).toMatchObject({ status: "cancelled", nextFireAt: null });
    await materialize(h.db, new Date(T + 5 * MIN), 1000);
    expect(await rows(id)).toEqual([`${iso(T)} scheduled cancelled job_cancelled`]);
    const resume = await h.call(key, "POST", `/v1/jobs/${id}/resume`);
    expect([resume.status, resume.json.error.code]).toEqual([409, "job_cancelled"]);
    expect(await h.call(key, "DELETE", `/v1/jobs/${id}`)).toEqual({ status: 200, json: del.json }); // idempotent
  });

  it("PATCH changes the schedule from the next fire; an instant both schedules share still fires once", async () => {
    h.clock.now = T - 1000;
    const id = await cronJob({ schedule: { cron: "0,30 * * * *", timezone: "UTC" } });
    await materialize(h.db, new Date(T - 500), 1000); // T is pending under the old schedule
    h.clock.now = T - 400;
    const patched = await h.call(key, "PATCH", `/v1/jobs/${id}`, {
      schedule: { cron: "*/10 * * * *", timezone: "UTC" },
    });
    expect(patched.json).toMatchObject({ schedule: { cron: "*/10 * * * *" }, nextFireAt: new Date(T).toISOString() });
    expect(patched.json.nextFires).toEqual([0, 10, 20, 30, 40].map((k) => new Date(T + k * MIN).toISOString()));
    await materialize(h.db, new Date(T - 300), 1000);
    await materialize(h.db, new Date(T + 10 * MIN - 300), 1000);
    const live = (await triggerRows(h.db, id)).filter((r) => r.status === "pending").map((r) => r.at);
    expect(live).toEqual([iso(T), iso(T + 10 * MIN)]);
  });

  it("run now: a manual trigger with its own id, even at a scheduled instant", async () => {
    h.clock.now = T - 1000;
    const id = await cronJob();
    await materialize(h.db, new Date(T - 500), 1000);
    h.clock.now = T;
    const run = await h.call(key, "POST", `/v1/jobs/${id}/run`);
    expect(run.status).toBe(201);
    expect(run.json).toMatchObject({ kind: "manual", status: "pending", scheduledFor: new Date(T).toISOString() });
    const all = await triggerRows(h.db, id);
    expect(all.map((r) => `${r.at} ${r.kind}`)).toEqual([`${iso(T)} scheduled`, `${iso(T)} manual`]);
    expect(new Set(all.map((r) => r.id)).size).toBe(2);
  });

  it("a one-time job completes when its trigger settles; a manual run does not complete it", async () => {
    h.clock.now = T;
    const res = await h.call(key, "POST", "/v1/jobs", {
      name: "once",
      type: "once-q",
      schedule: { delayMs: 0 },
      target: { url: "http://127.0.0.1:9/x" },
    });
    expect(res.json).toMatchObject({ status: "active", schedule: { at: new Date(T).toISOString() } });
    await h.call(key, "POST", `/v1/jobs/${res.json.id}/run`);
    const claimed = await claim(h.db, { type: "once-q", budget: 10, owner: "t", leaseMs: 60_000 });
    expect(claimed.map((c) => c.kind).sort()).toEqual(["manual", "scheduled"]);
    const done = (c: (typeof claimed)[number]) => ({
      id: c.id,
      leaseToken: c.leaseToken,
      attempt: c.attempt,
      status: "succeeded" as const,
      startedAt: new Date(),
      durationMs: 1,
      outcome: "success",
    });
    await settle(h.db, claimed.filter((c) => c.kind === "manual").map(done));
    expect((await h.call(key, "GET", `/v1/jobs/${res.json.id}`)).json.status).toBe("active");
    await settle(h.db, claimed.filter((c) => c.kind === "scheduled").map(done));
    expect((await h.call(key, "GET", `/v1/jobs/${res.json.id}`)).json.status).toBe("completed");
  });

  it("a one-time job paused before its time and resumed still fires at its time", async () => {
    h.clock.now = T;
    const at = new Date(T + 60 * MIN).toISOString();
    const res = await h.call(key, "POST", "/v1/jobs", {
      name: "later",
      schedule: { at },
      target: { url: "http://127.0.0.1:9/x" },
    });
    await h.call(key, "POST", `/v1/jobs/${res.json.id}/pause`);
    expect(await rows(res.json.id)).toEqual([`${iso(T + 60 * MIN)} scheduled cancelled paused`]);
    await h.call(key, "POST", `/v1/jobs/${res.json.id}/resume`);
    expect(await rows(res.json.id)).toEqual([`${iso(T + 60 * MIN)} scheduled pending`]);
  });

  it("a one-time job paused past its time fires once on resume", async () => {
    h.clock.now = T;
    const res = await h.call(key, "POST", "/v1/jobs", {
      name: "missed",
      schedule: { at: new Date(T + MIN).toISOString() },
      target: { url: "http://127.0.0.1:9/x" },
    });
    await h.call(key, "POST", `/v1/jobs/${res.json.id}/pause`);
    h.clock.now = T + 5 * MIN;
    await h.call(key, "POST", `/v1/jobs/${res.json.id}/resume`);
    await h.call(key, "POST", `/v1/jobs/${res.json.id}/resume`); // twice: still one trigger
    const pending = (await triggerRows(h.db, res.json.id)).filter((r) => r.status === "pending");
    expect(pending.map((r) => r.at)).toEqual([iso(T + 5 * MIN)]);
  });

  it("a one-time job PATCHed to a new time and back keeps exactly one live trigger", async () => {
    h.clock.now = T;
    const first = new Date(T + 60 * MIN).toISOString();
    const res = await h.call(key, "POST", "/v1/jobs", {
      name: "moved",
      schedule: { at: first },
      target: { url: "http://127.0.0.1:9/x" },
    });
    await h.call(key, "PATCH", `/v1/jobs/${res.json.id}`, { schedule: { at: new Date(T + 90 * MIN).toISOString() } });
    await h.call(key, "PATCH", `/v1/jobs/${res.json.id}`, { schedule: { at: first } });
    const pending = (await triggerRows(h.db, res.json.id)).filter((r) => r.status === "pending");
    expect(pending.map((r) => r.at)).toEqual([iso(T + 60 * MIN)]);
  });
});
