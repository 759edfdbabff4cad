// Tags on jobs over real HTTP on real Postgres, through the SDK: set on create, merged by PATCH (null
// removes one), filtered by GET /v1/jobs?tag=name:value (every tag given must match), bounds refused
// with nothing written, carried in the delivery envelope to a real receiver; and a tenant's 100k jobs
// filtered through the tags index (the plan, not a timing).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryCoordinator } from "@fairway/coord";
import { createClient, FairwayError, type FairwayClient } from "@fairway/sdk";
import { query, sql } from "@fairway/store";
import { startExecutor } from "../flow/executor.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { ADMIN, startApi, type ApiHarness } from "./harness.ts";

let h: ApiHarness;
let rx: Receiver;
let key: string;
let client: FairwayClient;
const coordinator = createMemoryCoordinator();
beforeAll(async () => {
  h = await startApi({ coordinator });
  rx = await startReceiver();
  key = await h.tenant("acme");
  client = createClient({ baseUrl: h.url, apiKey: key });
});
afterAll(async () => {
  await h?.close();
  await rx?.close();
});

const later = { delayMs: 3_600_000 };
const target = { url: "http://127.0.0.1:9/hook" };

describe("tags on jobs", () => {
  it("sets them on create, merges them by PATCH (null removes one), filters the list by every tag given", async () => {
    const a = await client.jobs.create({ name: "a", schedule: later, target, tags: { env: "prod", team: "ops" } });
    const b = await client.jobs.create({ name: "b", schedule: later, target, tags: { env: "prod", team: "web" } });
    const c = await client.jobs.create({ name: "c", schedule: later, target });
    expect([a.tags, c.tags]).toEqual([{ env: "prod", team: "ops" }, {}]);
    expect((await client.jobs.get(a.id)).tags).toEqual({ env: "prod", team: "ops" });

    const ids = async (tags: Record<string, string>) => (await client.jobs.list({ tags })).data.map((j) => j.id);
    expect(await ids({ env: "prod" })).toEqual([a.id, b.id]);
    expect(await ids({ env: "prod", team: "ops" })).toEqual([a.id]);
    expect(await ids({ env: "staging" })).toEqual([]);
    // The value may hold colons: only the first one ends the name.
    const url = await client.jobs.create({ name: "u", schedule: later, target, tags: { src: "https://x.test:8443" } });
    expect(await ids({ src: "https://x.test:8443" })).toEqual([url.id]);

    const patched = await client.jobs.update(b.id, { tags: { team: null, tier: "gold" } });
    expect(patched.tags).toEqual({ env: "prod", tier: "gold" });
    expect(await ids({ env: "prod", tier: "gold" })).toEqual([b.id]);
    expect((await client.jobs.update(b.id, { tags: null })).tags).toEqual({});
    expect(await ids({ env: "prod" })).toEqual([a.id]);
    // A PATCH that leaves tags out keeps them.
    expect((await client.jobs.update(a.id, { name: "a2" })).tags).toEqual({ env: "prod", team: "ops" });
  });

  it("refuses bad tags and bad filters with a code and a message, writing nothing", async () => {
    const before = await query<{ n: number }>(h.db, sql`SELECT count(*)::int AS n FROM jobs WHERE tenant_id = 'acme'`);
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`t${i}`, "x"]));
    for (const tags of [eleven, { Env: "prod" }, { env: "x".repeat(257) }, { env: 1 }, ["env"], { "": "x" }]) {
      const r = await h.call(key, "POST", "/v1/jobs", { name: "bad", schedule: later, target, tags });
      expect([r.status, r.json.error.code], JSON.stringify(tags)).toEqual([400, "validation_error"]);
      expect(r.json.error.message).toMatch(/tag/);
    }
    const after = await query<{ n: number }>(h.db, sql`SELECT count(*)::int AS n FROM jobs WHERE tenant_id = 'acme'`);
    expect(after).toEqual(before);
    for (const q of ["tag=env", "tag=Env:prod", "tag=:x", "tag=env:a&tag=env:b"]) {
      const r = await h.call(key, "GET", `/v1/jobs?${q}`);
      expect([r.status, r.json.error.code], q).toEqual([400, "validation_error"]);
      expect(r.json.error.message).toContain("tag");
    }
    const err = await client.jobs
      .create({ name: "bad", schedule: later, target, tags: { "no spaces": "x" } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FairwayError);
  });

  it("carries them in the delivery envelope; a job without tags sends the envelope without the field", async () => {
    const tenant = await h.call(ADMIN, "GET", "/v1/admin/tenants/acme/signing-secret");
    rx.secrets = [tenant.json.signingSecret];
    const stop = startExecutor(h.db, coordinator);
    try {
      const tagged = await client.jobs.create({
        name: "tagged",
        schedule: { delayMs: 0 },
        target: { url: `${rx.url}/ok/tagged` },
        tags: { env: "prod" },
      });
      const plain = await client.jobs.create({
        name: "plain",
        schedule: { delayMs: 0 },
        target: { url: `${rx.url}/ok/plain` },
      });
      await rx.waitFor(
        (ds) => ds.some((d) => d.path === "/ok/tagged") && ds.some((d) => d.path === "/ok/plain"),
        30_000,
      );
      const body = (path: string) => rx.deliveries.find((d) => d.path === path)!.body as Record<string, unknown>;
      expect(body("/ok/tagged")).toMatchObject({ jobId: tagged.id, tags: { env: "prod" } });
      expect(Object.keys(body("/ok/plain")).sort()).toEqual([
        "attempt",
        "id",
        "jobId",
        "jobName",
        "payload",
        "scheduledFor",
      ]);
      expect(body("/ok/plain").jobId).toBe(plain.id);
    } finally {
      await stop();
    }
  });

  it("filters a tenant's 100k jobs through the tags index", async () => {
    await h.tenant("big");
    const bigKey = (await h.call(ADMIN, "POST", "/v1/admin/tenants/big/keys")).json.key as string;
    // 100k jobs: every one tagged env, one in a thousand team:rare; cron-less and far in the future.
    await h.db.execute(sql`
      INSERT INTO jobs (id, tenant_id, name, type, run_at, target, max_attempts, initial_delay_ms, max_delay_ms, tags)
      SELECT 'job_big_' || lpad(i::text, 6, '0'), 'big', 'j' || i, 'webhook', now() + interval '1 day',
             '{"url":"http://127.0.0.1:9/x"}'::jsonb, 3, 1000, 60000,
             jsonb_build_object('env', CASE WHEN i % 2 = 0 THEN 'prod' ELSE 'staging' END, 'shard', (i % 100)::text)
               || CASE WHEN i % 1000 = 0 THEN '{"team":"rare"}'::jsonb ELSE '{}'::jsonb END
        FROM generate_series(1, 100000) AS i`);
    await h.db.execute(sql`ANALYZE jobs`);
    const big = createClient({ baseUrl: h.url, apiKey: bigKey });
    const rare = await big.jobs.list({ tags: { team: "rare", env: "prod" }, limit: 200 });
    expect(rare.data).toHaveLength(100);
    expect(rare.data.every((j) => j.tags.team === "rare" && j.tags.env === "prod")).toBe(true);
    expect((await big.jobs.list({ tags: { team: "rare", env: "staging" } })).data).toEqual([]);
    // The list's statement, as listJobs writes it: the rare tag is found through jobs_tags_idx.
    const plan = await query<{ "QUERY PLAN": string }>(
      h.db,
      sql`EXPLAIN SELECT * FROM jobs WHERE tenant_id = 'big' AND status NOT IN ('cancelled', 'system')
                 AND tags @> '{"team":"rare","env":"prod"}'::jsonb ORDER BY id LIMIT 51`,
    );
    expect(plan.map((r) => r["QUERY PLAN"]).join("\n")).toContain("jobs_tags_idx");
    // Another tenant's tags are not seen.
    expect((await client.jobs.list({ tags: { team: "rare" } })).data).toEqual([]);
  });
});
