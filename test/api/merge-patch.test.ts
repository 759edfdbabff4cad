// PATCH is JSON Merge Patch (RFC 7396) for jobs, tenants and pools, over real HTTP on real Postgres:
// absent fields keep their value, nested objects merge, null clears what may be cleared, and the
// merged whole is checked like a create.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, startApi, type ApiHarness } from "./harness.ts";

let h: ApiHarness;
let key: string;
beforeAll(async () => {
  h = await startApi();
  key = await h.tenant("acme");
});
afterAll(async () => h?.close());

const cronJob = (over: Record<string, unknown> = {}) => ({
  name: "nightly",
  schedule: { cron: "0 3 * * *", timezone: "Europe/Berlin" },
  target: { url: "http://127.0.0.1:9/hook", method: "POST", headers: { authorization: "Bearer a", "x-team": "t1" } },
  payload: { report: "daily", opts: { format: "csv", gzip: true } },
  retry: { maxAttempts: 3, initialDelayMs: 2000 },
  priority: 5,
  ...over,
});

async function create(body: Record<string, unknown>) {
  const r = await h.call(key, "POST", "/v1/jobs", body);
  expect(r.status, r.text).toBe(201);
  return r.json;
}

describe("field names", () => {
  it("hasOwnProperty and __proto__ in a document are plain data: merged, never a 500", async () => {
    const body = `{"name":"odd","schedule":{"cron":"0 3 * * *"},"target":{"url":"http://127.0.0.1:9/h"},"payload":{"hasOwnProperty":1,"__proto__":{"x":1},"a":1}}`;
    const created = await h.call(key, "POST", "/v1/jobs", body);
    expect(created.status, created.text).toBe(201);
    const r = await h.call(
      key,
      "PATCH",
      `/v1/jobs/${created.json.id}`,
      `{"payload":{"a":null,"hasOwnProperty":{"b":2}}}`,
    );
    expect(r.status, r.text).toBe(200);
    expect(r.json.payload).toEqual(JSON.parse(`{"hasOwnProperty":{"b":2},"__proto__":{"x":1}}`));
    const top = await h.call(key, "PATCH", "/v1/key-defaults", `{"hasOwnProperty":{},"weight":2,"ratePerSecond":null}`);
    expect([top.status, top.json.error.code]).toEqual([400, "validation_error"]);
    expect(top.json.error.message).toMatch(/unknown field "hasOwnProperty"/);
  });
});

describe("jobs", () => {
  it("changing cron keeps the time zone and everything else", async () => {
    const job = await create(cronJob());
    const r = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, { schedule: { cron: "30 7 * * *" } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.schedule).toEqual({ cron: "30 7 * * *", timezone: "Europe/Berlin" });
    expect(r.json.nextFires[0]).toMatch(/T0[56]:30:00/); // 07:30 Berlin is 05:30 or 06:30 UTC
    expect(r.json).toMatchObject({
      name: "nightly",
      priority: 5,
      target: job.target,
      payload: job.payload,
      retry: job.retry,
    });
  });

  it("{target: {method: PUT}} changes the method and keeps url and headers", async () => {
    const job = await create(cronJob());
    const r = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, { target: { method: "PUT" } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.target).toEqual({ ...job.target, method: "PUT" });
  });

  it("nested objects merge and null removes one key (a header, a payload field)", async () => {
    const job = await create(cronJob());
    const r = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, {
      target: { headers: { "x-team": null, "x-new": "1" } },
      payload: { opts: { gzip: null, level: 9 } },
      retry: { maxAttempts: 7 },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.target.headers).toEqual({ authorization: "Bearer a", "x-new": "1" });
    expect(r.json.payload).toEqual({ report: "daily", opts: { format: "csv", level: 9 } });
    expect(r.json.retry).toEqual({ ...job.retry, maxAttempts: 7 });
  });

  it("null clears what may be cleared: payload, timeoutMs, the retry policy (back to the pool's defaults)", async () => {
    const job = await create(cronJob({ timeoutMs: 5000 }));
    const pool = (await h.call(ADMIN, "GET", "/v1/admin/pools/webhook")).json;
    const r = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, { payload: null, timeoutMs: null, retry: null });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({
      payload: null,
      timeoutMs: null,
      retry: { maxAttempts: pool.maxAttempts, initialDelayMs: pool.initialDelayMs, maxDelayMs: pool.maxDelayMs },
    });
  });

  it("null on a required field is refused with the create schema's message, and changes nothing", async () => {
    const job = await create(cronJob());
    for (const [patch, words] of [
      [{ name: null }, ["name", "required"]],
      [{ target: null }, ["target", "required"]],
      [{ schedule: null }, ["schedule", "required", "exactly one of cron, at or delayMs"]],
      [{ target: { url: null } }, ["target.url", "required"]],
      [{ type: "other" }, ["type", "cannot be changed"]],
    ] as const) {
      const r = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, patch);
      expect(r.status, JSON.stringify(patch)).toBe(400);
      for (const w of words) expect(r.json.error.message, JSON.stringify(patch)).toContain(w);
    }
    expect((await h.call(key, "GET", `/v1/jobs/${job.id}`)).json).toMatchObject({
      name: "nightly",
      target: job.target,
      schedule: job.schedule,
    });
  });

  it("naming another kind of schedule replaces it; timezone alone merges into the cron", async () => {
    const job = await create(cronJob());
    const tz = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, { schedule: { timezone: "Asia/Kolkata" } });
    expect(tz.json.schedule).toEqual({ cron: "0 3 * * *", timezone: "Asia/Kolkata" });
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const r = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, { schedule: { at } });
    expect(r.status, r.text).toBe(200);
    expect(r.json.schedule).toEqual({ at });
    const back = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, { schedule: { cron: "*/10 * * * *" } });
    expect(back.json.schedule).toEqual({ cron: "*/10 * * * *", timezone: "UTC" });
  });

  it("a body that is not an object is refused", async () => {
    const job = await create(cronJob());
    const r = await h.call(key, "PATCH", `/v1/jobs/${job.id}`, [1]);
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain("JSON object of the fields to change");
  });
});

describe("tenants", () => {
  it("absent fields keep their value; null hands a quota back (no rate limit, the default cap); required fields cannot be cleared", async () => {
    await h.call(ADMIN, "POST", "/v1/admin/tenants", {
      id: "t2",
      name: "Two",
      maxInFlight: 7,
      ratePerSecond: 5,
      burst: 10,
    });
    const r = await h.call(ADMIN, "PATCH", "/v1/admin/tenants/t2", { weight: 3 });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ name: "Two", maxInFlight: 7, ratePerSecond: 5, burst: 10, weight: 3 });
    const cleared = await h.call(ADMIN, "PATCH", "/v1/admin/tenants/t2", { ratePerSecond: null, burst: null });
    expect(cleared.json).toMatchObject({ ratePerSecond: null, burst: null, maxInFlight: 7, weight: 3 });
    const bad = await h.call(ADMIN, "PATCH", "/v1/admin/tenants/t2", { name: null, maxInFlight: null });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/^name: /);
    expect((await h.call(ADMIN, "GET", "/v1/admin/tenants/t2")).json.maxInFlight).toBe(7);
    // Without a plan, a quota's null is its default.
    const back = await h.call(ADMIN, "PATCH", "/v1/admin/tenants/t2", { maxInFlight: null });
    expect([back.status, back.json.maxInFlight, back.json.overrides]).toEqual([200, 10, { weight: 3 }]);
  });
});

describe("pools", () => {
  it("PATCH merges into the pool's config (its defaults when it has none); null resets a field", async () => {
    const put = await h.call(ADMIN, "PUT", "/v1/admin/pools/reports", {
      concurrency: 4,
      timeoutMs: 10_000,
      maxAttempts: 9,
    });
    expect(put.status, put.text).toBe(200);
    const r = await h.call(ADMIN, "PATCH", "/v1/admin/pools/reports", { concurrency: 8 });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ concurrency: 8, timeoutMs: 10_000, maxAttempts: 9 });
    const reset = await h.call(ADMIN, "PATCH", "/v1/admin/pools/reports", { maxAttempts: null });
    expect(reset.json).toMatchObject({ concurrency: 8, maxAttempts: 5 });
    const fresh = await h.call(ADMIN, "PATCH", "/v1/admin/pools/new-pool", { concurrency: 2 });
    expect(fresh.json).toMatchObject({ type: "new-pool", concurrency: 2, timeoutMs: 30_000 });
    const bad = await h.call(ADMIN, "PATCH", "/v1/admin/pools/reports", { concurrency: "8" });
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toContain("concurrency: must be a number");
  });
});
