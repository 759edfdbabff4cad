// Fairway on a Citus cluster the test starts (a coordinator and two workers on loopback): the server as
// `npm start` runs it against the coordinator, and the distributed layout (docs/scaling.md) — every
// per-tenant table distributed by tenant and colocated, the shared ones reference tables, shards on
// both workers, the step idempotent — with a tenant's reads routed to one shard.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oneTenant, connectPostgres, query, sql, type Store } from "@fairway/store";
import { DISTRIBUTED_TABLES, REFERENCE_TABLES } from "../../packages/store/src/citus.ts";
import { QUEUE_FUNCTIONS } from "../../packages/store/src/sql/queue-functions.ts";
import { delegatedFunctions } from "../../packages/store/src/sql/delegated.ts";
import { migrate } from "../../packages/store/src/node.ts";
import { releaseLeases, releaseStatement } from "../../packages/store/src/sql/release.ts";
import { verticalSlice } from "../e2e/vertical-slice.ts";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { until } from "../support/until.ts";
import { startCitusCluster, type CitusCluster } from "./support/cluster.ts";

let cluster: CitusCluster;

beforeAll(async () => {
  cluster = await startCitusCluster(2);
}, 120_000);
afterAll(() => cluster?.stop());

// Without `distribute` every table stays on the coordinator: Fairway runs there as on one PostgreSQL.
verticalSlice("on a Citus coordinator", async () => ({
  env: { DATABASE_URL: await cluster.createDatabase("slice") },
  cleanup: async () => {},
}));

interface CitusTable {
  name: string;
  kind: string;
  column: string;
  colocation: number;
}

describe("the distributed layout", () => {
  let store: Store;
  const tables = async () =>
    query<CitusTable>(
      store.db,
      sql`SELECT table_name::text AS name, citus_table_type AS kind, distribution_column AS column,
                 colocation_id AS colocation
            FROM citus_tables`,
    );

  const explain = async (statement: ReturnType<typeof sql>) =>
    (await query<{ "QUERY PLAN": string }>(store.db, sql`EXPLAIN ${statement}`)).map((r) => r["QUERY PLAN"]).join("\n");

  beforeAll(async () => {
    store = connectPostgres(cluster.url);
    await migrate(store, { distribute: true });
  }, 120_000);
  afterAll(() => store?.close());

  it("distributes the per-tenant tables by tenant, colocated, and copies the shared ones to every node, keeps executors on the coordinator", async () => {
    const byName = new Map((await tables()).map((t) => [t.name, t]));
    const tenants = byName.get("tenants");
    expect(tenants).toMatchObject({ kind: "distributed", column: "id" });
    for (const name of DISTRIBUTED_TABLES)
      expect(byName.get(name), name).toMatchObject({
        kind: "distributed",
        column: "tenant_id",
        colocation: tenants!.colocation,
      });
    for (const name of REFERENCE_TABLES) expect(byName.get(name), name).toMatchObject({ kind: "reference" });
    // Every Fairway table is one or the other but `executors`, which stays on the coordinator: a table
    // added later and left out fails here.
    const local = await query<{ name: string }>(
      store.db,
      sql`SELECT tablename::text AS name FROM pg_tables WHERE schemaname = 'public'
           AND tablename::regclass NOT IN (SELECT table_name FROM citus_tables)`,
    );
    expect(local.map((r) => r.name)).toEqual(["executors"]);
    const nodes = await query<{ port: number }>(
      store.db,
      sql`SELECT DISTINCT nodeport AS port FROM citus_shards WHERE table_name = 'triggers'::regclass`,
    );
    expect(nodes.map((r) => r.port).sort()).toEqual(cluster.workers.map((w) => w.port).sort());
  });

  it("runs again after every migration and changes nothing the second time", async () => {
    const before = await tables();
    await migrate(store, { distribute: true });
    expect(await tables()).toEqual(before);
  });

  it("holds on every node each function as its one source writes it, the delegated ones distributed by tenant", async () => {
    const texts = [...QUEUE_FUNCTIONS, ...delegatedFunctions()].map((f) => f.clusterText);
    await store.db.execute(sql`CREATE SCHEMA fn_expect`);
    for (const text of texts) {
      const name = /FUNCTION (\w+)\(/.exec(text)![1]!;
      await store.db.execute(sql.raw(text.replace(`FUNCTION ${name}(`, `FUNCTION fn_expect.${name}(`)));
      const [expected] = await query<{ def: string }>(
        store.db,
        sql`SELECT pg_get_functiondef(${`fn_expect.${name}`}::regproc) AS def`,
      );
      const def = expected!.def.replace(`fn_expect.${name}(`, `public.${name}(`);
      const [here] = await query<{ def: string }>(
        store.db,
        sql`SELECT pg_get_functiondef(${`public.${name}`}::regproc) AS def`,
      );
      expect(here!.def, name).toBe(def);
      const there = await query<{ success: boolean; result: string }>(
        store.db,
        sql`SELECT success, result FROM run_command_on_workers(${`SELECT pg_get_functiondef('public.${name}'::regproc)`})`,
      );
      expect(
        there.map((w) => [w.success, w.result]),
        name,
      ).toEqual(cluster.workers.map(() => [true, def]));
    }
    await store.db.execute(sql`DROP SCHEMA fn_expect CASCADE`);
    const delegated = await query<{ fn: string; arg: number; colocated: boolean }>(
      store.db,
      sql`SELECT objid::regprocedure::text AS fn, distribution_argument_index AS arg,
                 colocationid = (SELECT colocation_id FROM citus_tables WHERE table_name = 'tenants'::regclass) AS colocated
            FROM pg_dist_object WHERE classid = 'pg_proc'::regclass AND distribution_argument_index IS NOT NULL
           ORDER BY 1`,
    );
    expect(delegated).toEqual(
      delegatedFunctions()
        .map((f) => ({ fn: f.signature.replaceAll(", ", ","), arg: 0, colocated: true }))
        .sort((a, b) => (a.fn < b.fn ? -1 : 1)),
    );
  });

  it("routes a tenant's reads of its jobs and queue to one shard", async () => {
    const explain = async (statement: ReturnType<typeof sql>) =>
      (await query<{ "QUERY PLAN": string }>(store.db, sql`EXPLAIN ${statement}`))
        .map((r) => r["QUERY PLAN"])
        .join("\n");
    const tenant = "acme";
    const reads = [
      sql`SELECT * FROM jobs WHERE tenant_id = ${tenant} AND id = ${"job_1"}`,
      sql`SELECT id FROM trigger_queue WHERE tenant_id = ${tenant} AND type = ${"work"}
           ORDER BY priority DESC, next_attempt_at LIMIT 10 FOR UPDATE SKIP LOCKED`,
      sql`SELECT coalesce(sum(running), 0) FROM tenant_pools WHERE tenant_id = ${tenant}`,
    ];
    for (const statement of reads) {
      const plan = await explain(statement);
      expect(plan, plan).toMatch(/Task Count: 1\b/);
    }
    // Across tenants a statement fans out to every shard: what the cross-tenant choice must not do per claim.
    expect(await explain(sql`SELECT count(*) FROM trigger_queue`)).not.toMatch(/Task Count: 1\b/);
  });

  it("keeps a tenant's rows together on one node", async () => {
    await seedPool(store.db, "work");
    await seedTenant(store.db, "acme");
    const rows = await query<{ n: number }>(
      store.db,
      sql`SELECT count(DISTINCT nodeport)::int AS n FROM citus_shards s
           WHERE s.shardid IN (SELECT get_shard_id_for_distribution_column(t, ${"acme"}::text)
                                 FROM unnest(${`{tenants,${DISTRIBUTED_TABLES.join(",")}}`}::regclass[]) t)`,
    );
    expect(rows[0]!.n).toBe(1);
  });

  it("keeps the queue, running counts and dead letters in step with the triggers on their shards", async () => {
    await seedTenant(store.db, "globex");
    const a = await seedDue(store.db, "acme", 5);
    const g = await seedDue(store.db, "globex", 3, { key: "user-1" });
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    // pending → running → dead (sync), dead → pending (a replay), then deletes of each kind.
    const [one, two] = a.triggerIds;
    await store.db.execute(sql`UPDATE triggers SET status = 'running', attempt_count = 1
                                 WHERE tenant_id = 'acme' AND id IN (${one}, ${two})`);
    await store.db.execute(sql`DELETE FROM trigger_queue WHERE tenant_id = 'acme' AND id IN (${one}, ${two})`);
    await store.db.execute(
      sql`INSERT INTO tenant_pools AS tp (tenant_id, type, running) VALUES ('acme', 'work', 2)
          ON CONFLICT (tenant_id, type) DO UPDATE SET running = tp.running + 2`,
    );
    await store.db.execute(sql`UPDATE triggers SET status = 'dead' WHERE tenant_id = 'acme' AND id = ${one}`);
    await store.db.execute(
      sql`UPDATE tenant_pools SET running = running - 1 WHERE tenant_id = 'acme' AND type = 'work'`,
    );
    await store.db.execute(sql`UPDATE triggers SET status = 'cancelled' WHERE tenant_id = 'acme' AND id = ${two}`);
    await store.db.execute(
      sql`UPDATE triggers SET status = 'dead' WHERE tenant_id = 'globex' AND id = ${g.triggerIds[0]}`,
    );
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    const deadLetters = await query<{ n: number }>(store.db, sql`SELECT count(*)::int AS n FROM dead_letters`);
    expect(deadLetters[0]!.n).toBe(2);
    await store.db.execute(sql`UPDATE triggers SET status = 'pending' WHERE tenant_id = 'acme' AND id = ${one}`);
    await store.db.execute(sql`DELETE FROM triggers WHERE tenant_id = 'globex'`);
    await store.db.execute(sql`DELETE FROM triggers WHERE tenant_id = 'acme' AND id = ${a.triggerIds[4]}`);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    const queued = await query<{ n: number }>(store.db, sql`SELECT count(*)::int AS n FROM trigger_queue`);
    expect(queued[0]!.n).toBe(3);
  });

  it("releases a tenant's leases in one statement on its shard", async () => {
    const { triggerIds } = await seedDue(store.db, "acme", 2, { key: "user-2" });
    const token = "lease-acme";
    const leases = triggerIds.map((id) => ({ id, leaseToken: token }));
    // As a claim leaves them: running under a lease, out of the queue, counted in the tenant and key.
    await store.db.execute(sql`UPDATE triggers SET status = 'running', attempt_count = 1, lease_token = ${token},
                                      lease_expires_at = now() + interval '1 minute'
                                WHERE tenant_id = 'acme' AND id IN (${triggerIds[0]}, ${triggerIds[1]})`);
    await store.db.execute(
      sql`DELETE FROM trigger_queue WHERE tenant_id = 'acme' AND id IN (${triggerIds[0]}, ${triggerIds[1]})`,
    );
    await store.db.execute(
      sql`INSERT INTO tenant_pools AS tp (tenant_id, type, running) VALUES ('acme', 'work', 2)
          ON CONFLICT (tenant_id, type) DO UPDATE SET running = tp.running + 2`,
    );
    await store.db.execute(sql`UPDATE tenant_keys SET running = running + 2, queued = queued - 2
                                WHERE tenant_id = 'acme' AND key = 'user-2'`);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    const plan = await explain(releaseStatement(leases, "acme"));
    expect(plan, plan).toMatch(/Task Count: 1\b/);
    expect(await releaseLeases(store.db, leases, oneTenant("acme"))).toBe(2);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  // Last: it stops a worker. A tenant's statements go to its shard group's node alone, so the tenants
  // of the other node go on while one is down, and the stopped node's tenants resume when it returns.
  it("stalls only the tenants of a worker that is down, and resumes them when it returns", async () => {
    const nodeOf = async (tenant: string) =>
      (
        await query<{ port: number }>(
          store.db,
          sql`SELECT nodeport AS port FROM citus_shards
               WHERE shardid = get_shard_id_for_distribution_column('triggers', ${tenant}::text)`,
        )
      )[0]!.port;
    const [down, up] = cluster.workers;
    const tenants: Record<number, string> = {};
    for (let i = 0; !(tenants[down!.port] && tenants[up!.port]); i++) {
      const id = `node-${i}`;
      await seedTenant(store.db, id);
      tenants[await nodeOf(id)] ??= id;
    }
    const write = (tenant: string, n: number) =>
      store.db.execute(sql`
        WITH job AS (
          INSERT INTO jobs (id, tenant_id, name, type, run_at, max_attempts, initial_delay_ms, max_delay_ms)
          VALUES (${`job-${tenant}-${n}`}, ${tenant}, 'x', 'work', now(), 3, 10, 100) RETURNING id, tenant_id)
        INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts)
        SELECT ${`trg-${tenant}-${n}`}, ${tenant}, id, 'work', 'manual', now(), now(), 3 FROM job`);
    const queued = async (tenant: string) =>
      (
        await query<{ n: number }>(
          store.db,
          sql`SELECT count(*)::int AS n FROM trigger_queue WHERE tenant_id = ${tenant}`,
        )
      )[0]!.n;
    await write(tenants[down!.port]!, 1);
    await write(tenants[up!.port]!, 1);

    down!.stop();
    try {
      await write(tenants[up!.port]!, 2);
      expect(await queued(tenants[up!.port]!)).toBe(2);
      await expect(write(tenants[down!.port]!, 2)).rejects.toThrow();
    } finally {
      down!.start();
    }
    // The coordinator's connections to the node were cut: the first statements after may fail.
    await until(
      () =>
        write(tenants[down!.port]!, 2).then(
          () => true,
          () => false,
        ),
      (ok) => ok,
      30_000,
      "a write for the returned node's tenant",
    );
    expect(await queued(tenants[down!.port]!)).toBe(2);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  // A worker added and the shards rebalanced onto it while tenants' writes go on: every write
  // acknowledged is there after, and the queue matches the triggers.
  it("rebalances onto a new worker under writes and loses nothing acknowledged", async () => {
    const tenants = Array.from({ length: 6 }, (_, i) => `move-${i}`);
    for (const t of tenants) await seedTenant(store.db, t);
    const added = await cluster.addWorker();
    const acknowledged: string[] = [];
    let failed = 0;
    let moving = true;
    const writer = (async () => {
      for (let n = 0; moving || n < 30; n++) {
        const tenant = tenants[n % tenants.length]!;
        const id = `trg-${tenant}-${n}`;
        await store.db
          .execute(sql`
            WITH job AS (
              INSERT INTO jobs (id, tenant_id, name, type, run_at, max_attempts, initial_delay_ms, max_delay_ms)
              VALUES (${`job-${tenant}-${n}`}, ${tenant}, 'x', 'work', now(), 3, 10, 100) RETURNING id)
            INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts)
            SELECT ${id}, ${tenant}, id, 'work', 'manual', now(), now(), 3 FROM job`)
          .then(
            () => acknowledged.push(id),
            () => failed++,
          );
      }
    })();
    try {
      await store.db.execute(sql`SELECT citus_rebalance_start()`);
      await store.db.execute(sql`SELECT citus_rebalance_wait()`);
    } finally {
      moving = false;
      await writer;
    }
    const onAdded = await query<{ n: number }>(
      store.db,
      sql`SELECT count(*)::int AS n FROM citus_shards WHERE nodeport = ${added.port} AND table_name = 'triggers'::regclass`,
    );
    expect(onAdded[0]!.n).toBeGreaterThan(0);
    const present = await query<{ id: string }>(
      store.db,
      sql`SELECT id FROM triggers WHERE tenant_id = ANY (${`{${tenants.join(",")}}`}::text[])`,
    );
    const have = new Set(present.map((r) => r.id));
    expect(acknowledged.filter((id) => !have.has(id))).toEqual([]);
    expect(have.size).toBe(acknowledged.length);
    expect(acknowledged.length).toBeGreaterThan(failed);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    // The shard moves (logical replication, a worker's initial copy) take most of it.
  }, 120_000);
});
