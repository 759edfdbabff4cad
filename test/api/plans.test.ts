// Quota plans over real HTTP on real Postgres: a plan's values reach its tenants' effective quota (the
// columns the claim reads) in the plan's own transaction; a value set on the tenant wins, and null
// hands it back to the plan; key defaults likewise; 409 plan_in_use; bad input is a 400 with its code
// and writes nothing; racing tenant and plan writes end with every tenant on its plan's values.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { ADMIN, startApi, type ApiHarness } from "./harness.ts";

let h: ApiHarness;
beforeAll(async () => {
  h = await startApi();
});
afterAll(async () => {
  await h?.close();
});

const admin = (method: string, path: string, body?: unknown) => h.call(ADMIN, method, path, body);
/** The columns the claim reads, straight from the row. */
const columns = async (id: string) =>
  (
    await query<Record<string, unknown>>(
      h.db,
      sql`SELECT max_in_flight AS "maxInFlight", weight, rate_per_second AS "ratePerSecond", burst,
                 max_jobs AS "maxJobs", history_retention_days AS "historyRetentionDays",
                 key_max_in_flight AS "keyMaxInFlight", key_weight AS "keyWeight"
            FROM tenants WHERE id = ${id}`,
    )
  )[0];

describe("quota plans", () => {
  it("a plan's values are its tenants' effective quota; own values win; null hands one back", async () => {
    const p = await admin("POST", "/v1/admin/plans", {
      id: "pro",
      name: "Pro",
      maxInFlight: 40,
      weight: 4,
      ratePerSecond: 20,
      historyDays: 60,
      keyDefaults: { maxInFlight: 3 },
    });
    expect(p.status, p.text).toBe(201);
    expect(p.json).toMatchObject({
      id: "pro",
      maxInFlight: 40,
      maxJobs: null,
      tenants: 0,
      keyDefaults: { maxInFlight: 3, weight: null },
    });

    const t = await admin("POST", "/v1/admin/tenants", { id: "t-pro", name: "T", plan: "pro", weight: 9 });
    expect(t.status, t.text).toBe(201);
    expect(t.json.plan).toBe("pro");
    expect(t.json.overrides).toEqual({ weight: 9 });
    expect(t.json.effective).toEqual({
      maxInFlight: 40,
      weight: 9,
      ratePerSecond: 20,
      burst: null,
      maxJobs: 10000,
      maxPayloadBytes: 262144,
      historyRetentionDays: 60,
      keyDefaults: { maxInFlight: 3, ratePerSecond: null, weight: 1 },
    });
    expect(await columns("t-pro")).toMatchObject({ maxInFlight: 40, weight: 9, ratePerSecond: 20, keyMaxInFlight: 3 });

    // The tenant's own maxInFlight wins over the plan's; its null hands weight back to the plan.
    const patched = await admin("PATCH", "/v1/admin/tenants/t-pro", { maxInFlight: 2, weight: null });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.json.overrides).toEqual({ maxInFlight: 2 });
    expect([patched.json.maxInFlight, patched.json.weight]).toEqual([2, 4]);

    // A plan change moves every tenant on it, but not the values a tenant set itself.
    await admin("POST", "/v1/admin/tenants", { id: "t-pro-2", name: "T2", plan: "pro" });
    const changed = await admin("PATCH", "/v1/admin/plans/pro", {
      maxInFlight: 7,
      weight: 2,
      ratePerSecond: null,
      keyDefaults: { weight: 5 },
    });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.json).toMatchObject({
      maxInFlight: 7,
      weight: 2,
      ratePerSecond: null,
      tenants: 2,
      keyDefaults: { maxInFlight: 3, weight: 5 },
    });
    expect(await columns("t-pro")).toMatchObject({
      maxInFlight: 2,
      weight: 2,
      ratePerSecond: null,
      keyMaxInFlight: 3,
      keyWeight: 5,
    });
    expect(await columns("t-pro-2")).toMatchObject({ maxInFlight: 7, weight: 2, ratePerSecond: null, keyWeight: 5 });
    const shown = await admin("GET", "/v1/admin/tenants/t-pro-2");
    expect([shown.json.plan, shown.json.effective.maxInFlight, shown.json.effective.keyDefaults.weight]).toEqual([
      "pro",
      7,
      5,
    ]);

    // Off the plan: the defaults, except what the tenant set itself.
    const off = await admin("PATCH", "/v1/admin/tenants/t-pro", { plan: null });
    expect(off.status, off.text).toBe(200);
    expect([off.json.plan, off.json.maxInFlight, off.json.weight, off.json.effective.keyDefaults]).toEqual([
      null,
      2,
      1,
      { maxInFlight: null, ratePerSecond: null, weight: 1 },
    ]);
  });

  it("key defaults set on the tenant win over its plan's; null hands them back", async () => {
    await admin("POST", "/v1/admin/plans", { id: "keys", keyDefaults: { maxInFlight: 4, weight: 2 } });
    await admin("POST", "/v1/admin/tenants", { id: "t-keys", name: "K", plan: "keys" });
    const own = await admin("PATCH", "/v1/admin/tenants/t-keys/key-defaults", { maxInFlight: 1 });
    expect(own.status, own.text).toBe(200);
    expect(own.json).toEqual({ maxInFlight: 1, ratePerSecond: null, weight: 2 });
    const back = await admin("PATCH", "/v1/admin/tenants/t-keys/key-defaults", { maxInFlight: null });
    expect(back.json).toEqual({ maxInFlight: 4, ratePerSecond: null, weight: 2 });
    expect((await admin("GET", "/v1/admin/tenants/t-keys")).json.overrides).toEqual({});
  });

  it("a plan in use cannot be deleted; an unused one can", async () => {
    await admin("POST", "/v1/admin/plans", { id: "used" });
    await admin("POST", "/v1/admin/tenants", { id: "t-used", name: "U", plan: "used" });
    const refused = await admin("DELETE", "/v1/admin/plans/used");
    expect([refused.status, refused.json.error.code]).toEqual([409, "plan_in_use"]);
    expect(refused.json.error.message).toContain("1 tenant");
    expect((await admin("GET", "/v1/admin/plans/used")).status).toBe(200);
    await admin("PATCH", "/v1/admin/tenants/t-used", { plan: null });
    expect((await admin("DELETE", "/v1/admin/plans/used")).json).toEqual({ id: "used", deleted: true });
    expect((await admin("GET", "/v1/admin/plans/used")).status).toBe(404);
    expect((await admin("DELETE", "/v1/admin/plans/used")).status).toBe(404);
  });

  it("bad input is a 400 with its code and writes nothing", async () => {
    const bad = async (method: string, path: string, body: unknown, code: string) => {
      const r = await admin(method, path, body);
      expect([r.status, r.json?.error?.code], `${method} ${path} ${JSON.stringify(body)}: ${r.text}`).toEqual([
        400,
        code,
      ]);
      return r.json.error.message as string;
    };
    expect(await bad("POST", "/v1/admin/plans", { name: "no id" }, "validation_error")).toMatch(/id/);
    await bad("POST", "/v1/admin/plans", { id: "Bad Id" }, "validation_error");
    await bad("POST", "/v1/admin/plans", { id: "x", maxInFlight: 0 }, "validation_error");
    await bad("POST", "/v1/admin/plans", { id: "x", keyDefaults: { cap: 1 } }, "validation_error");
    await bad("POST", "/v1/admin/plans", { id: "x", tier: "gold" }, "validation_error");
    expect((await admin("GET", "/v1/admin/plans/x")).status).toBe(404);
    expect((await admin("POST", "/v1/admin/plans", { id: "dup" })).status).toBe(201);
    const dup = await admin("POST", "/v1/admin/plans", { id: "dup" });
    expect([dup.status, dup.json.error.code]).toEqual([409, "plan_exists"]);

    expect(await bad("POST", "/v1/admin/tenants", { id: "t-nope", name: "N", plan: "nope" }, "unknown_plan")).toContain(
      "POST /v1/admin/plans",
    );
    expect((await admin("GET", "/v1/admin/tenants/t-nope")).status).toBe(404);

    await admin("POST", "/v1/admin/plans", { id: "steady", maxInFlight: 5 });
    await admin("POST", "/v1/admin/tenants", { id: "t-steady", name: "S", plan: "steady", maxJobs: 3 });
    const before = await admin("GET", "/v1/admin/tenants/t-steady");
    await bad("PATCH", "/v1/admin/tenants/t-steady", { plan: "nope", maxJobs: 9 }, "unknown_plan");
    await bad("PATCH", "/v1/admin/tenants/t-steady", { maxInFlight: -1 }, "validation_error");
    await bad("PATCH", "/v1/admin/plans/steady", { maxInFlight: "many" }, "validation_error");
    await bad("PATCH", "/v1/admin/plans/steady", { id: "other" }, "validation_error");
    expect((await admin("GET", "/v1/admin/tenants/t-steady")).json).toEqual(before.json);
    expect((await admin("GET", "/v1/admin/plans/steady")).json.maxInFlight).toBe(5);
  });

  it("lists plans with their tenant counts, a page at a time", async () => {
    const first = await admin("GET", "/v1/admin/plans?limit=2");
    expect(first.status).toBe(200);
    expect(first.json.data).toHaveLength(2);
    const rest = await admin("GET", `/v1/admin/plans?cursor=${first.json.nextCursor}`);
    const all = [...first.json.data, ...rest.json.data];
    expect(all.map((p: { id: string }) => p.id)).toEqual([...all.map((p: { id: string }) => p.id)].sort());
    expect(all.find((p: { id: string }) => p.id === "pro").tenants).toBe(1);
  });

  it("racing plan changes and tenants joining it end with every tenant on the plan's latest values", async () => {
    await admin("POST", "/v1/admin/plans", { id: "race", maxInFlight: 1 });
    const ids = Array.from({ length: 12 }, (_, i) => `t-race-${i}`);
    await Promise.all(ids.map((id) => admin("POST", "/v1/admin/tenants", { id, name: id })));
    const writes: Array<Promise<{ status: number }>> = [];
    for (let i = 0; i < ids.length; i++) {
      writes.push(admin("PATCH", `/v1/admin/tenants/${ids[i]}`, { plan: "race" }));
      writes.push(admin("PATCH", "/v1/admin/plans/race", { maxInFlight: 2 + i }));
    }
    expect((await Promise.all(writes)).map((r) => r.status)).toEqual(writes.map(() => 200));
    const plan = (await admin("GET", "/v1/admin/plans/race")).json;
    expect(plan.tenants).toBe(ids.length);
    for (const id of ids) expect((await columns(id))!.maxInFlight, id).toBe(plan.maxInFlight);
  });
});
