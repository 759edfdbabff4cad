// POST /v1/jobs/batch over real HTTP on real Postgres, through the SDK: a 1,000-item batch with
// invalid and duplicate items gives exactly the expected result per item, in input order, with
// maxJobs counted exactly; a repeat of the batch is answered from its idempotency keys; a batch that
// fails in the database writes nothing; bounds on the batch itself are the request's 400.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type FairwayClient } from "@fairway/sdk";
import { query, sql } from "@fairway/store";
import { ADMIN, startApi, type ApiHarness } from "./harness.ts";

let h: ApiHarness;
let key: string;
let client: FairwayClient;
beforeAll(async () => {
  h = await startApi();
  key = await h.tenant("acme", { maxJobs: LIMIT });
  client = createClient({ baseUrl: h.url, apiKey: key });
});
afterAll(async () => h?.close());

const target = { url: "http://127.0.0.1:9/hook" };
const LIMIT = 900;
const counts = async (tenant: string) =>
  (
    await query<{ jobs: number; triggers: number; live: number | null }>(
      h.db,
      sql`SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = ${tenant}) AS jobs,
                 (SELECT count(*)::int FROM triggers WHERE tenant_id = ${tenant}) AS triggers,
                 (SELECT live_jobs FROM tenant_counters WHERE tenant_id = ${tenant}) AS live`,
    )
  )[0]!;

describe("POST /v1/jobs/batch", () => {
  it("1000 items with invalid and duplicate ones: each its own result, in order; maxJobs exact", async () => {
    // Item i: valid unless i % 100 is one of the cases below; every valid one has key k<i>.
    const items = Array.from({ length: 1000 }, (_, i) => {
      const base = { name: `r-${i}`, schedule: { delayMs: 3_600_000 }, target, idempotencyKey: `k${i}` };
      switch (i % 100) {
        case 7:
          return { ...base, schedule: { cron: "61 * * * *" } }; // 400 invalid_cron
        case 13:
          return { ...base, name: "" }; // 400 validation_error
        case 21:
          return { ...base, debounce: { key: "d", periodMs: 1000 } }; // 400 debounce_not_in_batch
        case 33:
          return { ...base, idempotencyKey: `k${i - 1}` }; // a duplicate of i - 1's key, another body: 409
        case 34:
          return { ...base, name: `r-${i - 2}`, idempotencyKey: `k${i - 2}` }; // i - 2's very body: its job
        default:
          return base;
      }
    });
    const { results } = await client.jobs.createMany(items as never);
    expect(results.map((r) => r.index)).toEqual(items.map((_, i) => i));

    // The rules of a single create, item by item in input order: the first LIMIT new jobs are admitted.
    const expected: Array<[number, string]> = [];
    let admitted = 0;
    const admit = (i: number): [number, string] => {
      if (admitted === LIMIT) return [409, "max_jobs_exceeded"];
      admitted++;
      return [201, `r-${i}`];
    };
    for (let i = 0; i < 1000; i++) {
      const c = i % 100;
      if (c === 7) expected.push([400, "invalid_cron"]);
      else if (c === 13) expected.push([400, "validation_error"]);
      else if (c === 21) expected.push([400, "debounce_not_in_batch"]);
      else if (c === 33) expected.push(expected[i - 1]![0] === 201 ? [409, "idempotency_conflict"] : admit(i));
      else if (c === 34) expected.push(expected[i - 2]![0] === 201 ? [200, `r-${i - 2}`] : admit(i - 2));
      else expected.push(admit(i));
    }
    const got = results.map((r): [number, string] => [r.status, "job" in r ? r.job.name : r.error.code]);
    expect(got).toEqual(expected);
    expect(got.filter(([s]) => s === 409).length).toBeGreaterThan(10); // the limit was reached
    // A duplicate of an earlier item's body answers that item's job.
    expect((results[34] as { job: { id: string } }).job.id).toBe((results[32] as { job: { id: string } }).job.id);
    const created = results.filter((r) => r.status === 201).length;
    expect(created).toBe(LIMIT);
    expect(await counts("acme")).toEqual({ jobs: LIMIT, triggers: LIMIT, live: LIMIT });
    const refusal = results[7]!;
    expect("error" in refusal && refusal.error.message.length > 10).toBe(true);
  });

  it("a repeat of the batch is answered from its idempotency keys; nothing new is written", async () => {
    await h.tenant("beta");
    const beta = createClient({
      baseUrl: h.url,
      apiKey: (await h.call(ADMIN, "POST", "/v1/admin/tenants/beta/keys")).json.key,
    });
    const items = Array.from({ length: 5 }, (_, i) => ({
      name: `b-${i}`,
      schedule: { delayMs: 3_600_000 },
      target,
      idempotencyKey: `b${i}`,
      tags: { batch: "1" },
    }));
    const first = await beta.jobs.createMany(items);
    expect(first.results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    const again = await beta.jobs.createMany(items);
    expect(again.results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(again.results.map((r) => ("job" in r ? r.job.id : null))).toEqual(
      first.results.map((r) => ("job" in r ? r.job.id : null)),
    );
    expect(await counts("beta")).toEqual({ jobs: 5, triggers: 5, live: 5 });
  });

  it("a batch the database refuses midway writes nothing", async () => {
    await h.tenant("gamma");
    const gammaKey = (await h.call(ADMIN, "POST", "/v1/admin/tenants/gamma/keys")).json.key as string;
    // A rule only the database knows, so the item passes every check before the write.
    await h.db.execute(sql`ALTER TABLE jobs ADD CONSTRAINT test_no_boom CHECK (name <> 'boom')`);
    try {
      const items = Array.from({ length: 300 }, (_, i) => ({
        name: i === 250 ? "boom" : `g-${i}`,
        schedule: { delayMs: 3_600_000 },
        target,
      }));
      const r = await h.call(gammaKey, "POST", "/v1/jobs/batch", { jobs: items });
      expect(r.status).toBe(500);
      expect(r.json.error.code).toBeTypeOf("string");
      expect(await counts("gamma")).toEqual({ jobs: 0, triggers: 0, live: null });
    } finally {
      await h.db.execute(sql`ALTER TABLE jobs DROP CONSTRAINT test_no_boom`);
    }
  });

  it("refuses an empty batch, more than 1000 items and a non-object item as the request's 400", async () => {
    const one = { name: "x", schedule: { delayMs: 1000 }, target };
    for (const body of [{ jobs: [] }, { jobs: Array.from({ length: 1001 }, () => one) }, { jobs: [1] }, {}]) {
      const r = await h.call(key, "POST", "/v1/jobs/batch", body);
      expect([r.status, r.json.error.code]).toEqual([400, "validation_error"]);
      expect(r.json.error.message).toMatch(/jobs|batch|item|object/);
    }
  });
});
