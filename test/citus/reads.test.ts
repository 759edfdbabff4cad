// Everything a user reads, on a Citus cluster's distributed layout (docs/scaling.md): every read behind
// the API's GET routes, the dashboard and /metrics runs there and returns what was seeded; a tenant's
// reads go to its shard alone; the per-node figures show each worker, down and up again; and the real
// server, migrated with FAIRWAY_DISTRIBUTE=true, answers the operator's lists and the dashboard's
// pages. One cluster for the file.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId } from "@fairway/core";
import * as store from "@fairway/store";
import { connectPostgres, query, sql, type Db, type Store } from "@fairway/store";
import { getBackfill, listBackfills } from "../../packages/store/src/sql/backfill.ts";
import { activitySeries } from "../../packages/store/src/sql/activity-reads.ts";
import { clusterNodes } from "../../packages/store/src/sql/cluster-reads.ts";
import {
  activityWindow,
  deadLettersByType,
  listDeadLetterSummaries,
  poolOverview,
  searchJobs,
  secretNamesPage,
  tenantOverview,
} from "../../packages/store/src/sql/dashboard-reads.ts";
import { listExecutors } from "../../packages/store/src/sql/executors.ts";
import { listChannels, listNotifications } from "../../packages/store/src/sql/notifications.ts";
import { poolStats } from "../../packages/store/src/sql/pool-pause.ts";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { until } from "../support/until.ts";
import { startCitusCluster, type CitusCluster } from "./support/cluster.ts";
import { distributedStore, planOfText } from "./support/router.ts";

let cluster: CitusCluster;

beforeAll(async () => {
  // Durable: a drill below stops a worker with -m immediate, which without synchronous commit may take
  // the last commits with it, and then counts that worker's tenants.
  cluster = await startCitusCluster(2, { durable: true });
}, 120_000);
afterAll(() => cluster?.stop());

/** A Db on `url` that records every statement it sends (text and parameters), for EXPLAIN. */
function recordingDb(url: string) {
  const sent: Array<{ text: string; params: unknown[] }> = [];
  const conn = connectPostgres(url, {
    max: 4,
    debug: (_conn, text, params) => sent.push({ text, params }),
  });
  const db = conn.db;
  return {
    db,
    conn,
    /** The statements `read` sends (EXPLAINs and the layout check left out). */
    async statementsOf(read: () => Promise<unknown>) {
      await store.layoutOf(db);
      sent.length = 0;
      await read();
      return sent.filter((s) => !/^\s*EXPLAIN/i.test(s.text));
    },
  };
}

/** Seeds of one tenant: a keyed one-time job with a trigger in every status, a cron job with a
 *  backfill, an attempt history, a dead letter, a notification channel and notification, a secret, a
 *  debounce and a key override. */
async function seedTenantData(db: Db, tenant: string) {
  await seedTenant(db, tenant);
  const keyed = await seedDue(db, tenant, 7, { key: "k1" });
  const [dead, ok, running, , cancelled, skipped, unknown] = keyed.triggerIds;
  const set = (id: string | undefined, what: ReturnType<typeof sql>) =>
    db.execute(sql`UPDATE triggers SET ${what} WHERE tenant_id = ${tenant} AND id = ${id}`);
  await set(dead, sql`status = 'dead', attempt_count = 3, finished_at = now(), reason = 'retries_exhausted'`);
  await db.execute(sql`
    INSERT INTO attempt_log (trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, http_status, error)
    VALUES (${dead}, ${tenant}, 1, now(), 7, 'http_error', 500, 'boom'),
           (${dead}, ${tenant}, 2, now(), 7, 'http_error', 503, 'still down')`);
  await set(
    ok,
    sql`status = 'succeeded', attempt_count = 1, ok_started_at = now(), ok_duration_ms = 5, ok_http_status = 200,
        finished_at = now()`,
  );
  await set(running, sql`status = 'running', attempt_count = 1, lease_expires_at = now() + interval '1 minute'`);
  await db.execute(
    sql`INSERT INTO tenant_pools AS tp (tenant_id, type, running) VALUES (${tenant}, 'work', 1)
        ON CONFLICT (tenant_id, type) DO UPDATE SET running = tp.running + 1`,
  );
  // As a claim leaves it: out of the queue, counted in its tenant's pool and its key.
  await db.execute(sql`DELETE FROM trigger_queue WHERE tenant_id = ${tenant} AND id = ${running}`);
  await db.execute(
    sql`UPDATE tenant_keys SET running = running + 1, queued = queued - 1 WHERE tenant_id = ${tenant} AND key = 'k1'`,
  );
  await set(cancelled, sql`status = 'cancelled', finished_at = now()`);
  await set(skipped, sql`status = 'skipped', finished_at = now()`);
  await set(unknown, sql`status = 'unknown', attempt_count = 1, finished_at = now()`);
  const cronId = newId("job");
  await db.execute(sql`
    INSERT INTO jobs (id, tenant_id, name, type, cron, timezone, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at)
    VALUES (${cronId}, ${tenant}, 'nightly-report', 'work', '0 3 * * *', 'UTC', 3, 10, 1000, now() + interval '1 hour')`);
  const backfillId = newId("bf");
  await db.execute(sql`
    INSERT INTO backfills (id, tenant_id, job_id, from_at, to_at, overlap, fires, skipped)
    VALUES (${backfillId}, ${tenant}, ${cronId}, now() - interval '2 days', now(), 'allow', 2, 0)`);
  await db.execute(sql`
    INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts, backfill_id)
    VALUES (${newId("trg")}, ${tenant}, ${cronId}, 'work', 'backfill', now() - interval '1 day', now(), 3, ${backfillId})`);
  const channelId = newId("ch");
  await db.execute(sql`
    INSERT INTO notification_channels (id, tenant_id, type, url) VALUES (${channelId}, ${tenant}, 'webhook', 'https://example.com/hook')`);
  await db.execute(sql`
    INSERT INTO notifications (id, tenant_id, channel_id, event, job_id, data)
    VALUES (${newId("trg")}, ${tenant}, ${channelId}, 'job.failing', ${keyed.jobId}, '{"n": 1}'::jsonb)`);
  await db.execute(sql`
    INSERT INTO secrets (tenant_id, name, sealed, key_id) VALUES (${tenant}, 'API_TOKEN', 'sealed', 'k0')`);
  await db.execute(sql`INSERT INTO debounces (tenant_id, key, job_id) VALUES (${tenant}, 'signup', ${keyed.jobId})`);
  await db.execute(
    sql`UPDATE tenant_keys SET override = '{"maxInFlight": 2}'::jsonb, work_ms = 50 WHERE tenant_id = ${tenant} AND key = 'k1'`,
  );
  return { keyedJob: keyed.jobId, cronId, backfillId, channelId, dead: dead!, ok: ok!, running: running! };
}

describe("the reads on the distributed layout", () => {
  let s: Store;
  let rec: ReturnType<typeof recordingDb>;
  let db: Db;
  let acme: Awaited<ReturnType<typeof seedTenantData>>;
  let globex: Awaited<ReturnType<typeof seedTenantData>>;

  beforeAll(async () => {
    s = await distributedStore(cluster, "reads");
    rec = recordingDb(urlOf("reads"));
    db = rec.db;
    await seedPool(s.db, "work");
    acme = await seedTenantData(s.db, "acme");
    globex = await seedTenantData(s.db, "globex");
    await seedTenant(s.db, "initech");
    expect(await queueDrift(s.db)).toEqual(NO_DRIFT);
  }, 120_000);
  afterAll(async () => {
    await rec?.conn.close();
    await s?.close();
  });
  const urlOf = (name: string) => `postgres://postgres@127.0.0.1:${cluster.coordinator.port}/${name}`;

  it("reads a tenant's jobs, triggers, attempts, dead letters and usage", async () => {
    expect((await store.layoutOf(db)).name).toBe("per-tenant");
    expect(await store.getJob(db, "acme", acme.keyedJob)).toMatchObject({ id: acme.keyedJob, key: "k1" });
    expect(await store.getJob(db, "globex", acme.keyedJob)).toBeNull();
    const jobs = await store.listJobs(db, "acme", { after: null, limit: 10 });
    expect(jobs.map((j) => j.id).sort()).toEqual([acme.keyedJob, acme.cronId].sort());
    expect(await store.listJobs(db, "acme", { after: null, limit: 10, key: "k1" })).toHaveLength(1);
    expect(await store.listTriggers(db, "acme", acme.keyedJob, null, 10)).toHaveLength(7);
    const dead = await store.getTrigger(db, "acme", acme.dead);
    expect(dead?.attempts.map((a) => a.error)).toEqual(["boom", "still down"]);
    const ok = await store.getTrigger(db, "acme", acme.ok);
    expect(ok?.attempts).toMatchObject([{ attempt: 1, outcome: "success", httpStatus: 200 }]);
    const letters = await store.listDeadLetters(db, "acme", { after: null, limit: 10 });
    expect(letters).toMatchObject([{ id: acme.dead, jobName: "seeded", lastHttpStatus: 503, lastError: "still down" }]);
    expect(await store.tenantUsage(db, "acme")).toMatchObject({ running: 1, pending: 2, due: 2, jobs: 2, dead: 1 });
    const all = await store.allTenantUsage(db);
    expect(all.map((u) => [u.tenantId, u.dead])).toEqual([
      ["acme", 1],
      ["globex", 1],
      ["initech", 0],
    ]);
    const last = await store.lastRuns(db, "acme", [acme.keyedJob, acme.cronId]);
    expect(last.get(acme.keyedJob)?.outcome).toBeDefined();
    expect(last.has(acme.cronId)).toBe(false);
  });

  it("reads what the dashboard shows", async () => {
    const overview = await tenantOverview(db, { after: null, limit: 10 });
    expect(overview.map((t) => [t.id, t.running, t.dead])).toEqual([
      ["acme", 1, 1],
      ["globex", 1, 1],
      ["initech", 0, 0],
    ]);
    expect(await tenantOverview(db, { after: null, limit: 1, ids: ["globex"] })).toMatchObject([{ id: "globex" }]);
    const pools = await poolOverview(db, store.DEFAULT_POOL);
    expect(pools).toMatchObject([{ type: "work", running: 2, due: 4 }]);
    expect(await poolStats(db)).toMatchObject([{ type: "work", running: 2, due: 4, pending: 4 }]);
    const byType = await deadLettersByType(db);
    expect(byType.rows.map((r) => [r.tenantId, r.count]).sort()).toEqual([
      ["acme", 1],
      ["globex", 1],
    ]);
    const summaries = await listDeadLetterSummaries(db, { after: null, limit: 10 });
    expect(summaries.map((r) => r.id)).toEqual([acme.dead, globex.dead]);
    expect(
      await listDeadLetterSummaries(db, { after: { tenantId: "acme", triggerId: acme.dead }, limit: 10 }),
    ).toMatchObject([{ id: globex.dead, tenantId: "globex" }]);
    expect(await listDeadLetterSummaries(db, { tenantId: "globex", after: null, limit: 10 })).toHaveLength(1);
    const groups = await store.deadLetterGroups(db, { limit: 10 });
    expect(groups.groups.map((g) => [g.tenantId, g.count, g.error])).toEqual(
      expect.arrayContaining([
        ["acme", 1, "still down"],
        ["globex", 1, "still down"],
      ]),
    );
    expect((await store.deadLetterGroups(db, { tenantId: "acme", limit: 10 })).groups).toMatchObject([
      { jobId: acme.keyedJob, latestId: acme.dead, httpStatus: 503 },
    ]);
    const found = await searchJobs(db, "acme", { q: "nightly", after: null, limit: 10 });
    expect(found.map((j) => j.id)).toEqual([acme.cronId]);
    expect(await secretNamesPage(db, "acme", { after: null, limit: 10 })).toMatchObject([{ name: "API_TOKEN" }]);
    expect(await listBackfills(db, "acme", acme.cronId, null, 10)).toMatchObject([
      { id: acme.backfillId, counts: { pending: 1 } },
    ]);
    expect(await getBackfill(db, "acme", acme.backfillId)).toMatchObject({ fires: 2 });
    expect(await listChannels(db, "acme", null, 10)).toMatchObject([{ id: acme.channelId }]);
    expect(await listNotifications(db, "acme", { before: null, limit: 10 })).toMatchObject([
      { channelId: acme.channelId, channelType: "webhook", event: "job.failing" },
    ]);
    expect(await store.listSecrets(db, "acme")).toMatchObject([{ name: "API_TOKEN" }]);
    expect(await listExecutors(db)).toEqual([]);
    expect(await store.getTenant(db, "acme")).toMatchObject({ id: "acme" });
    expect((await store.listTenants(db, "acme", 10)).map((t) => t.id)).toEqual(["globex", "initech"]);
  });

  it("reads the activity history across tenants and of one", async () => {
    const nowMs = Date.now();
    const window = await activityWindow(db, { windowMs: 3_600_000, nowMs });
    expect(window.workerMs.map((w) => [w.tenantId, w.attempts, w.failures]).sort()).toEqual([
      ["acme", 3, 2],
      ["globex", 3, 2],
    ]);
    const mine = await activityWindow(db, { windowMs: 3_600_000, nowMs, tenantId: "acme" });
    expect(mine.workerMs).toMatchObject([{ tenantId: "acme", attempts: 3, failures: 2, retries: 1 }]);
    const series = (o: { tenantId?: string; key?: string } = {}) =>
      activitySeries(db, { nowMs, bucketMs: 60_000, count: 5, perBucket: 100, ...o });
    const sum = (r: Awaited<ReturnType<typeof series>>) => r.buckets.reduce((n, b) => n + b.deliveries, 0);
    const fleet = await series();
    expect(sum(fleet)).toBe(6);
    expect(fleet.groups.map((g) => g.name).sort()).toEqual(["acme", "globex"]);
    const one = await series({ tenantId: "acme" });
    expect(sum(one)).toBe(3);
    expect(one.groups).toMatchObject([{ name: "k1", deliveries: 3, failures: 2, dead: 1 }]);
    expect(sum(await series({ tenantId: "acme", key: "k1" }))).toBe(3);
  });

  it("reads a tenant's fairness keys and the metrics", async () => {
    expect(await store.getKeyInfo(db, "acme", "k1")).toMatchObject({
      key: "k1",
      running: 1,
      due: 1,
      override: { maxInFlight: 2 },
    });
    const keys = await store.listKeys(db, "acme", { limit: 10 });
    expect(keys.data.map((k) => k.key)).toEqual(["k1"]);
    expect((await store.topKeys(db, "acme", 5)).map((k) => k.key)).toEqual(["k1"]);
    expect(await store.getKeyDefaults(db, "acme")).toMatchObject({ weight: 1 });
    const fleet = await store.metricsSnapshot(db, { topTenants: 10 });
    expect(fleet).toMatchObject({ pools: [{ type: "work", due: 4, running: 2 }], deadLetters: 2, executors: 0 });
    expect(fleet.tenants.map((t) => t.tenantId).sort()).toEqual(["acme", "globex", "initech"]);
    const own = await store.metricsSnapshot(db, { topTenants: 1, tenantId: "acme" });
    expect(own).toMatchObject({
      pools: [{ type: "work", due: 2, running: 1 }],
      tenants: [{ tenantId: "acme", dead: 1 }],
    });
  });

  it("sends each read of one tenant to its shard alone", async () => {
    const reads: Array<[string, () => Promise<unknown>]> = [
      ["getJob", () => store.getJob(db, "acme", acme.keyedJob)],
      ["listJobs", () => store.listJobs(db, "acme", { after: null, limit: 10 })],
      ["listJobs by tag", () => store.listJobs(db, "acme", { after: null, limit: 10, tags: { env: "prod" } })],
      ["listTriggers", () => store.listTriggers(db, "acme", acme.keyedJob, null, 10)],
      ["getTrigger", () => store.getTrigger(db, "acme", acme.dead)],
      ["listDeadLetters", () => store.listDeadLetters(db, "acme", { after: null, limit: 10 })],
      ["tenantUsage", () => store.tenantUsage(db, "acme")],
      ["lastRuns", () => store.lastRuns(db, "acme", [acme.keyedJob, acme.cronId])],
      ["tenantOverview", () => tenantOverview(db, { after: null, limit: 1, ids: ["acme"] })],
      ["listDeadLetterSummaries", () => listDeadLetterSummaries(db, { tenantId: "acme", after: null, limit: 10 })],
      ["deadLetterGroups", () => store.deadLetterGroups(db, { tenantId: "acme", limit: 10 })],
      ["searchJobs", () => searchJobs(db, "acme", { q: "nightly", after: null, limit: 10 })],
      ["searchJobs by tag", () => searchJobs(db, "acme", { tags: { env: "prod" }, after: null, limit: 10 })],
      ["secretNamesPage", () => secretNamesPage(db, "acme", { after: null, limit: 10 })],
      [
        "activitySeries",
        () => activitySeries(db, { nowMs: Date.now(), bucketMs: 60_000, count: 5, perBucket: 100, tenantId: "acme" }),
      ],
      ["activityWindow", () => activityWindow(db, { windowMs: 60_000, nowMs: Date.now(), tenantId: "acme" })],
      ["getKeyInfo", () => store.getKeyInfo(db, "acme", "k1")],
      ["listKeys", () => store.listKeys(db, "acme", { limit: 10 })],
      ["topKeys", () => store.topKeys(db, "acme", 5)],
      ["getKeyDefaults", () => store.getKeyDefaults(db, "acme")],
      ["getTenant", () => store.getTenant(db, "acme")],
      ["listBackfills", () => listBackfills(db, "acme", acme.cronId, null, 10)],
      ["getBackfill", () => getBackfill(db, "acme", acme.backfillId)],
      ["listChannels", () => listChannels(db, "acme", null, 10)],
      ["listNotifications", () => listNotifications(db, "acme", { before: null, limit: 10 })],
      ["listSecrets", () => store.listSecrets(db, "acme")],
      ["metricsSnapshot", () => store.metricsSnapshot(db, { topTenants: 1, tenantId: "acme" })],
    ];
    const multi: string[] = [];
    for (const [name, read] of reads) {
      const statements = await rec.statementsOf(read);
      expect(statements.length, name).toBeGreaterThan(0);
      for (const st of statements) {
        const plan = await planOfText(rec.db, st.text, st.params);
        if (!/Task Count: 1\b/.test(plan) || /Distributed Subplan/.test(plan)) multi.push(`${name}: ${plan}`);
      }
    }
    expect(multi).toEqual([]);
  });

  it("shows each worker with its shard groups, tenants and work, and a stopped worker down then up", async () => {
    const nodes = await clusterNodes(db);
    expect(nodes.map((n) => n.node).sort()).toEqual(cluster.workers.map((w) => `127.0.0.1:${w.port}`).sort());
    for (const n of nodes) {
      expect(n.up).toBe(true);
      expect(n.shards).toBeGreaterThan(0);
    }
    const [{ shards }] = await query<{ shards: number }>(
      s.db,
      sql`SELECT count(*)::int AS shards FROM pg_dist_shard WHERE logicalrelid = 'tenants'::regclass`,
    );
    expect(nodes.reduce((n, x) => n + x.shards, 0)).toBe(shards);
    expect(nodes.reduce((n, x) => n + (x.tenants ?? 0), 0)).toBe(3);
    expect(nodes.reduce((n, x) => n + (x.queued ?? 0), 0)).toBe(4);
    expect(nodes.reduce((n, x) => n + (x.running ?? 0), 0)).toBe(2);

    const stopped = cluster.workers[1]!;
    const name = `127.0.0.1:${stopped.port}`;
    stopped.stop();
    try {
      const during = await clusterNodes(db);
      expect(during.find((n) => n.node === name)).toMatchObject({ up: false, tenants: null, queued: null });
      expect(during.find((n) => n.node !== name)).toMatchObject({ up: true });
    } finally {
      await stopped.start();
    }
    // Every node answers again, with every tenant (a node just started may answer before its counts do).
    const after = await until(
      () => clusterNodes(db),
      (ns) => ns.every((n) => n.up && n.tenants !== null) && ns.reduce((n, x) => n + (x.tenants ?? 0), 0) === 3,
    );
    expect(after.reduce((n, x) => n + (x.tenants ?? 0), 0)).toBe(3);
  }, 120_000);
});

describe("the server's GET routes and dashboard pages on the distributed layout", () => {
  let server: ServerProcess;
  let s: Store;
  let apiKey: string;
  let seeded: Awaited<ReturnType<typeof seedTenantData>>;

  beforeAll(async () => {
    const url = await cluster.createDatabase("reads_http");
    server = await startServerProcess({ DATABASE_URL: url, FAIRWAY_DISTRIBUTE: "true", FAIRWAY_ROLE: "api" });
    s = store.connectPostgres(url);
    await seedPool(s.db, "work");
    seeded = await seedTenantData(s.db, "acme");
    apiKey = await issueKey("acme");
    // A tenant on each worker, for the outage below.
    for (let i = 0; !(byNode.has(cluster.workers[0]!.port) && byNode.has(cluster.workers[1]!.port)); i++) {
      const id = `node-${i}`;
      await seedTenant(s.db, id);
      const [{ port }] = await query<{ port: number }>(
        s.db,
        sql`SELECT nodeport AS port FROM citus_shards
             WHERE shardid = get_shard_id_for_distribution_column('tenants', ${id}::text)`,
      );
      if (!byNode.has(port)) byNode.set(port, { id, key: await issueKey(id) });
    }
  }, 120_000);
  const byNode = new Map<number, { id: string; key: string }>();
  const issueKey = async (tenant: string) => {
    const res = await fetch(`${server.url}/v1/admin/tenants/${tenant}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.adminToken}` },
    });
    expect(res.status, await res.clone().text()).toBe(201);
    return ((await res.json()) as { key: string }).key;
  };
  afterAll(async () => {
    await s?.close();
    await server?.stop();
  });

  const get = (path: string, token: string) =>
    fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

  it("answers the operator's lists and the metrics, with the cluster's nodes", async () => {
    for (const path of [
      "/v1/admin/tenants",
      "/v1/admin/tenants/acme",
      "/v1/admin/stats",
      "/v1/admin/pools",
      "/v1/admin/executors",
      "/v1/admin/tenants/acme/fairness-keys",
      "/v1/admin/tenants/acme/key-defaults",
      "/v1/admin/tenants/acme/signing-secret",
      "/v1/admin/pools/work",
    ]) {
      const res = await get(path, server.adminToken);
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    }
    // A pool with an in-process handler, so the stats count its due work too.
    await s.db.execute(sql`UPDATE pools SET handler_seen_at = now() WHERE type = 'work'`);
    const stats = (await (await get("/v1/admin/stats", server.adminToken)).json()) as {
      tenants: Array<{ tenantId: string; dead: number }>;
      pools: Array<{ type: string; due: number; running: number }>;
      handlerPools: Array<{ type: string; due: number }>;
    };
    expect(stats.tenants.find((t) => t.tenantId === "acme")).toMatchObject({ dead: 1 });
    expect(stats.pools.find((p) => p.type === "work")).toMatchObject({ due: 2, running: 1 });
    expect(stats.handlerPools).toMatchObject([{ type: "work", due: 2 }]);
    const metrics = await (await get("/metrics", server.adminToken)).text();
    for (const w of cluster.workers) expect(metrics).toContain(`fairway_cluster_node_up{node="127.0.0.1:${w.port}"} 1`);
    expect(metrics).toMatch(/fairway_cluster_node_shards\{node="[^"]+"\} [1-9]/);
    expect(metrics).toContain(`fairway_dead_letters 1`);
  });

  it("answers a tenant's reads", async () => {
    for (const path of [
      "/v1/jobs",
      `/v1/jobs/${seeded.keyedJob}`,
      `/v1/jobs/${seeded.keyedJob}/triggers`,
      `/v1/triggers/${seeded.dead}`,
      "/v1/dead-letters",
      "/v1/quota",
      "/v1/keys",
      "/v1/keys/k1",
      "/v1/key-defaults",
      "/v1/secrets",
      "/v1/notification-channels",
      "/v1/notifications",
      `/v1/jobs/${seeded.cronId}/backfills`,
      `/v1/backfills/${seeded.backfillId}`,
      "/v1/metrics",
    ]) {
      const res = await get(path, apiKey);
      expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    }
  });

  /** The operator's session cookie, signed in through the login form. */
  const signIn = async () => {
    const login = await fetch(`${server.url}/dashboard/login`, {
      method: "POST",
      redirect: "manual",
      headers: { origin: server.url, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: server.adminToken }),
    });
    expect(login.status).toBe(303);
    return login.headers.get("set-cookie")!.split(";")[0]!;
  };

  it("serves the dashboard's pages", async () => {
    const cookie = await signIn();
    const page = async (path: string) => {
      const res = await fetch(`${server.url}/dashboard${path}`, { headers: { cookie }, redirect: "manual" });
      const html = await res.text();
      expect(res.status, `${path}: ${html.slice(0, 500)}`).toBe(200);
      return html;
    };
    const overview = await page("/admin");
    expect(overview).toContain("Cluster");
    for (const w of cluster.workers) expect(overview).toContain(`127.0.0.1:${w.port}`);
    const t = "/admin/t/acme";
    for (const path of [
      "/admin/pools",
      "/admin/executors",
      "/admin/dead-letters",
      "/admin/activity",
      "/admin/activity?tenant=acme",
      "/admin/tenants/acme",
      "/admin/live/tenants",
      "/admin/live/pools",
      "/admin/live/executors",
      `${t}/jobs`,
      `${t}/jobs/${seeded.keyedJob}`,
      `${t}/jobs/${seeded.cronId}`,
      `${t}/jobs/${seeded.cronId}/edit`,
      `${t}/jobs/${seeded.keyedJob}/live/triggers`,
      `${t}/jobs/new`,
      `${t}/triggers/${seeded.dead}/live`,
      `${t}/keys/live`,
      `${t}/notifications/live`,
      `${t}/live/usage`,
      `${t}/triggers/${seeded.dead}`,
      `${t}/dead-letters`,
      `${t}/keys`,
      `${t}/secrets`,
      `${t}/notifications`,
      `${t}/usage`,
    ])
      await page(path);
  });

  // Last: it stops a worker.
  it("says which worker is down, in /metrics and on the overview, and shows it up again", async () => {
    const stopped = cluster.workers[1]!;
    const node = `127.0.0.1:${stopped.port}`;
    const cookie = await signIn();
    stopped.stop();
    try {
      const metrics = await get("/metrics", server.adminToken);
      const text = await metrics.text();
      expect(metrics.status, text).toBe(200);
      expect(text).toContain(`fairway_cluster_node_up{node="${node}"} 0`);
      expect(text).toMatch(new RegExp(`fairway_cluster_node_shards\\{node="${node}"\\} [1-9]`));
      expect(text).not.toContain(`fairway_cluster_node_tenants{node="${node}"}`);
      const overview = await fetch(`${server.url}/dashboard/admin`, { headers: { cookie } });
      const html = await overview.text();
      expect(overview.status, html.slice(0, 500)).toBe(200);
      expect(html).toContain("A worker node is down");
      expect(html).toMatch(new RegExp(`${node}[\\s\\S]*?down`));
      // A tenant on the other node reads on; one on the stopped node does not.
      const up = byNode.get(cluster.workers[0]!.port)!;
      const down = byNode.get(stopped.port)!;
      for (const path of ["/v1/jobs", "/v1/quota", "/v1/dead-letters", "/v1/keys", "/v1/metrics"])
        expect((await get(path, up.key)).status, path).toBe(200);
      const tenantPage = await fetch(`${server.url}/dashboard/admin/t/${up.id}/jobs`, { headers: { cookie } });
      expect(tenantPage.status).toBe(200);
      expect((await get("/v1/jobs", down.key)).status).toBeGreaterThanOrEqual(500);
    } finally {
      await stopped.start();
    }
    const back = await until(
      async () => (await get("/metrics", server.adminToken)).text(),
      (text) => text.includes(`fairway_cluster_node_up{node="${node}"} 1`),
    );
    expect(back).toContain("fairway_dead_letters 1");
  }, 120_000);
});
