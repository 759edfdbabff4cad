// Status codes that tell the truth, list filters, dead letters a user can act on, the signing secret
// for the admin, and replies a terminal can show — over real HTTP on real Postgres. Triggers are
// claimed and settled with the store's own claim and settle, as an executor does.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claim, settle } from "@fairway/store";
import { ADMIN, startApi, type ApiHarness } from "./harness.ts";

let h: ApiHarness;
let key: string;
beforeAll(async () => {
  h = await startApi();
  key = await h.tenant("acme");
});
afterAll(async () => h?.close());

const target = { url: "http://127.0.0.1:9/hook" };

/** Claims every due trigger of pool `type` and settles it as `status`. */
async function settleAll(type: string, status: "succeeded" | "dead", error?: string) {
  const claimed = await claim(h.db, { type, budget: 50, owner: "test", leaseMs: 60_000 });
  await settle(
    h.db,
    claimed.map((c) => ({
      id: c.id,
      leaseToken: c.leaseToken,
      attempt: c.attempt,
      status,
      startedAt: new Date(),
      durationMs: 1,
      outcome: status === "succeeded" ? "success" : "http_error",
      httpStatus: status === "succeeded" ? 200 : 503,
      error: error ?? null,
    })),
  );
  return claimed.length;
}

describe("a job that exists but cannot take the action: 409 with a code naming why", () => {
  it("completed one-time job: PATCH, pause, resume and run answer 409 job_completed; GET still shows it", async () => {
    const job = (
      await h.call(key, "POST", "/v1/jobs", { name: "once", type: "once-q", schedule: { delayMs: 0 }, target })
    ).json;
    expect(await settleAll("once-q", "succeeded")).toBe(1);
    expect((await h.call(key, "GET", `/v1/jobs/${job.id}`)).json.status).toBe("completed");
    for (const [method, path, body] of [
      ["PATCH", `/v1/jobs/${job.id}`, { name: "x" }],
      ["POST", `/v1/jobs/${job.id}/pause`, undefined],
      ["POST", `/v1/jobs/${job.id}/resume`, undefined],
      ["POST", `/v1/jobs/${job.id}/run`, undefined],
    ] as const) {
      const r = await h.call(key, method, path, body);
      expect([path, r.status, r.json.error.code]).toEqual([path, 409, "job_completed"]);
      expect(r.json.error.message).toContain("create a new job");
    }
    // A completed job may still be deleted (cancelled, kept for history).
    expect((await h.call(key, "DELETE", `/v1/jobs/${job.id}`)).json.status).toBe("cancelled");
  });

  it("cancelled job: actions answer 409 job_cancelled; DELETE again answers 200 with the same body", async () => {
    const job = (await h.call(key, "POST", "/v1/jobs", { name: "c", schedule: { cron: "0 * * * *" }, target })).json;
    const first = await h.call(key, "DELETE", `/v1/jobs/${job.id}`);
    expect(first.status).toBe(200);
    const again = await h.call(key, "DELETE", `/v1/jobs/${job.id}`);
    expect(again.status).toBe(200);
    expect(again.text).toBe(first.text);
    for (const path of [`/v1/jobs/${job.id}/pause`, `/v1/jobs/${job.id}/resume`, `/v1/jobs/${job.id}/run`]) {
      const r = await h.call(key, "POST", path);
      expect([path, r.status, r.json.error.code]).toEqual([path, 409, "job_cancelled"]);
    }
    const p = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, { name: "y" });
    expect([p.status, p.json.error.code]).toEqual([409, "job_cancelled"]);
  });

  it("a job that does not exist (or is another tenant's) is 404 for every action", async () => {
    const other = await h.tenant("other");
    const job = (await h.call(key, "POST", "/v1/jobs", { name: "mine", schedule: { cron: "0 * * * *" }, target })).json;
    for (const [method, path] of [
      ["DELETE", `/v1/jobs/${job.id}`],
      ["POST", `/v1/jobs/${job.id}/run`],
      ["PATCH", "/v1/jobs/job_nope"],
    ] as const) {
      const r = await h.call(other, method, path, method === "PATCH" ? {} : undefined);
      expect([path, r.status, r.json.error.code]).toEqual([path, 404, "not_found"]);
    }
    expect((await h.call(key, "GET", `/v1/jobs/${job.id}`)).json.status).toBe("active");
  });
});

describe("GET /v1/jobs filters", () => {
  it("status, type and name; cancelled hidden unless asked for", async () => {
    const k = await h.tenant("lists");
    const mk = async (name: string, type = "webhook") =>
      (await h.call(k, "POST", "/v1/jobs", { name, type, schedule: { cron: "0 * * * *" }, target })).json.id as string;
    const a = await mk("alpha");
    const b = await mk("beta", "reports");
    const c = await mk("gamma");
    await h.call(k, "POST", `/v1/jobs/${b}/pause`);
    await h.call(k, "DELETE", `/v1/jobs/${c}`);
    const ids = async (q: string) =>
      (await h.call(k, "GET", `/v1/jobs${q}`)).json.data.map((j: { id: string }) => j.id);
    expect(await ids("")).toEqual([a, b].sort());
    expect(await ids("?status=cancelled")).toEqual([c]);
    expect(await ids("?status=paused")).toEqual([b]);
    expect(await ids("?status=active")).toEqual([a]);
    expect(await ids("?type=reports")).toEqual([b]);
    expect(await ids("?name=alpha")).toEqual([a]);
    expect(await ids("?name=gamma")).toEqual([]);
    const bad = await h.call(k, "GET", "/v1/jobs?status=done");
    expect([bad.status, bad.json.error.code]).toEqual([400, "validation_error"]);
    expect(bad.json.error.message).toBe("status: must be one of active, paused, completed, failed, cancelled");
  });
});

describe("dead letters", () => {
  it("carry the job's name and type and the last attempt's outcome, status and error; filter by job", async () => {
    const k = await h.tenant("dl");
    const mk = async (name: string) =>
      (
        await h.call(k, "POST", "/v1/jobs", {
          name,
          type: "dl-q",
          schedule: { delayMs: 0 },
          target,
          retry: { maxAttempts: 1 },
        })
      ).json.id as string;
    const one = await mk("sync-invoices");
    const two = await mk("sync-users");
    expect(await settleAll("dl-q", "dead", "HTTP 503 from target")).toBe(2);
    const all = await h.call(k, "GET", "/v1/dead-letters");
    expect(all.json.data).toHaveLength(2);
    const only = await h.call(k, "GET", `/v1/dead-letters?jobId=${one}`);
    expect(only.json.data).toHaveLength(1);
    expect(only.json.data[0]).toMatchObject({
      jobId: one,
      jobName: "sync-invoices",
      jobType: "dl-q",
      status: "dead",
      lastAttempt: { outcome: "http_error", httpStatus: 503, error: "HTTP 503 from target" },
    });
    expect((await h.call(k, "GET", `/v1/dead-letters?jobId=${two}`)).json.data[0].jobName).toBe("sync-users");
  });
});

describe("signing secret and replies", () => {
  it("the admin can read a tenant's signing secret again; a tenant key cannot", async () => {
    const created = await h.call(ADMIN, "POST", "/v1/admin/tenants", { id: "sec", name: "sec" });
    const r = await h.call(ADMIN, "GET", "/v1/admin/tenants/sec/signing-secret");
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ signingSecret: created.json.signingSecret });
    expect(r.json.signingSecret).toMatch(/^whsec_/);
    const rotated = await h.call(ADMIN, "POST", "/v1/admin/tenants/sec/signing-secret/rotate");
    expect((await h.call(ADMIN, "GET", "/v1/admin/tenants/sec/signing-secret")).json).toMatchObject({
      signingSecret: rotated.json.signingSecret,
      previousSigningSecret: created.json.signingSecret,
    });
    expect((await h.call(key, "GET", "/v1/admin/tenants/sec/signing-secret")).status).toBe(403);
    expect((await h.call(ADMIN, "GET", "/v1/admin/tenants/nope/signing-secret")).status).toBe(404);
  });

  it("every JSON reply ends with a newline: success, error, not-found route", async () => {
    for (const [token, method, path] of [
      [key, "GET", "/v1/jobs"],
      [key, "GET", "/v1/jobs/none"],
      [key, "GET", "/v1/nowhere"],
      ["bad", "GET", "/v1/jobs"],
      [ADMIN, "GET", "/v1/admin/stats"],
    ]) {
      const r = await h.call(token, method, path);
      expect(r.text.endsWith("}\n"), `${path}: ${JSON.stringify(r.text.slice(-5))}`).toBe(true);
    }
  });

  it("an `at` in the past is accepted and the 201 says it fires immediately; a future one does not", async () => {
    const past = await h.call(key, "POST", "/v1/jobs", {
      name: "late",
      schedule: { at: "2020-01-01T00:00:00Z" },
      target,
    });
    expect(past.status).toBe(201);
    expect(past.json.firesImmediately).toBe(true);
    const future = await h.call(key, "POST", "/v1/jobs", {
      name: "soon",
      schedule: { at: new Date(Date.now() + 3_600_000).toISOString() },
      target,
    });
    expect(future.json.firesImmediately).toBe(false);
    const cron = await h.call(key, "POST", "/v1/jobs", { name: "c", schedule: { cron: "0 * * * *" }, target });
    expect(cron.json.firesImmediately).toBe(false);
  });
});
