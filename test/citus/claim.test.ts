// The claim within a tenant on the distributed layout (docs/scaling.md): with ClaimInput.tenantId its two
// statements, and the standby claim with StandbyInput.tenantId, run on the tenant's shard alone — and
// claim exactly what they claim on one PostgreSQL: caps held across connections, the lease recorded
// with its tenant, the queue in step with the triggers.
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { oneTenant, connectPostgres, query, sql, type Store } from "@fairway/store";
import { migrate } from "../../packages/store/src/node.ts";
import { claimStatements, type ClaimInput, type ClaimedTrigger } from "../../packages/store/src/sql/claim.ts";
import { releaseLeases } from "../../packages/store/src/sql/release.ts";
import { standbyClaim, standbyStatement } from "../../packages/store/src/sql/standby.ts";
import { silentLogger } from "@fairway/core";
import { DEFAULT_POOL, pendingByTenant } from "@fairway/store";
import { Claimer } from "../../packages/executor/src/claimer.ts";
import { InDoubtClaims } from "../../packages/executor/src/in-doubt.ts";
import { Pool } from "../../packages/executor/src/pool.ts";
import { ReadyIndex } from "../../packages/executor/src/ready-index.ts";
import { createRedisCoordinator } from "@fairway/coord";
import { deletePrefix, REDIS_URL, testPrefix } from "../support/redis.ts";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { until } from "../support/until.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startCitusCluster, type CitusCluster } from "./support/cluster.ts";
import { expectDelegated, expectSingleShard } from "./support/router.ts";
import { claimCall, claimReport } from "../../packages/store/src/sql/delegated.ts";

let cluster: CitusCluster;
let store: Store;
let url: string;

beforeAll(async () => {
  cluster = await startCitusCluster(2);
  url = await cluster.createDatabase("claim");
  store = connectPostgres(url);
  await migrate(store, { distribute: true });
  await seedPool(store.db, "work");
}, 120_000);
afterAll(async () => {
  await store?.close();
  await cluster?.stop();
});

const input = (tenantId: string, budget = 50): ClaimInput => ({
  type: "work",
  budget,
  owner: "exec_test",
  leaseMs: 30_000,
  tenantId,
});

const running = async (tenantId: string) =>
  (
    await query<{ n: number }>(
      store.db,
      sql`SELECT coalesce(sum(running), 0)::int AS n FROM tenant_pools WHERE tenant_id = ${tenantId}`,
    )
  )[0].n;

describe("the claim within a tenant on a Citus cluster", () => {
  beforeAll(async () => {
    await seedTenant(store.db, "ten_plain", { maxInFlight: 3 });
    await seedDue(store.db, "ten_plain", 5);
    await seedTenant(store.db, "ten_keyed", { maxInFlight: 4 });
    await seedDue(store.db, "ten_keyed", 3, { key: "k1" });
    await seedDue(store.db, "ten_keyed", 3, { key: "k2" });
    await seedTenant(store.db, "ten_rated", { maxInFlight: 10, ratePerSecond: 2, burst: 2 });
    await seedDue(store.db, "ten_rated", 4);
  });

  it("locks and claims on the tenant's shard alone, keyed or not", async () => {
    for (const tenantId of ["ten_plain", "ten_keyed"]) {
      // The lock, the lease and ledger rows (oneTenantRows), the claim.
      const statements = claimStatements(input(tenantId)).statements;
      expect(statements).toHaveLength(4);
      for (const s of statements) await expectSingleShard(store.db, s);
    }
  });

  it("sends the claim to the tenant's node as one call of its function", async () => {
    await seedTenant(store.db, "ten_call", { maxInFlight: 5 });
    await seedDue(store.db, "ten_call", 2);
    const [row] = (await expectDelegated(
      store.db,
      url,
      claimCall({ ...input("ten_call"), budget: 1, owner: "exec_call", tenantId: "ten_call" }, "lse_delegated"),
    )) as Array<{ r: { claim: { triggers: string } } }>;
    const claimed = row!.r.claim.triggers.split("\u001e");
    expect(claimed).toHaveLength(1);
    await releaseLeases(
      store.db,
      [{ id: claimed[0]!.split("\u001f")[0]!, leaseToken: "lse_delegated" }],
      oneTenant("ten_call"),
    );
    expect(await running("ten_call")).toBe(0);
  });

  /** A session on worker `i`'s copy of this file's database. */
  const onWorker = (i: number) =>
    postgres(`postgres://postgres@127.0.0.1:${cluster.workers[i]!.port}/claim`, { max: 1, onnotice: () => {} });
  /** The index in cluster.workers of the node holding `tenantId`'s shard group, and of another. */
  async function nodesOf(tenantId: string): Promise<{ home: number; other: number }> {
    const [row] = await query<{ port: number }>(
      store.db,
      sql`SELECT nodeport AS port FROM citus_shards
           WHERE shardid = get_shard_id_for_distribution_column('tenants', ${tenantId}::text)`,
    );
    const home = cluster.workers.findIndex((w) => w.port === row!.port);
    return { home, other: 1 - home };
  }
  const claimOn = (session: postgres.Sql, tenantId: string, token: string) =>
    session.unsafe<Array<{ r: { claim: { triggers: string } } }>>(
      "SELECT fairway_claim($1, 'work', 1, 'exec_node', 30000::float8, $2) AS r",
      [tenantId, token],
    );
  const claimedIds = (r: { claim: { triggers: string } }) =>
    r.claim.triggers === "" ? [] : r.claim.triggers.split("\u001e").map((t) => t.split("\u001f")[0]!);

  it("runs the function on its node against the tenant's own shards, with no statement Citus plans", async () => {
    await seedTenant(store.db, "ten_local", { maxInFlight: 5 });
    await seedDue(store.db, "ten_local", 2);
    const { home } = await nodesOf("ten_local");
    const worker = onWorker(home);
    try {
      const [row] = await claimOn(worker, "ten_local", "lse_local");
      expect(claimedIds(row!.r)).toHaveLength(1);
      // The session's prepared statements (shard-local.ts): each names shard relations only, so
      // PostgreSQL plans it without Citus (no Custom Scan), and nothing in it names a distributed table.
      const prepared = await worker.unsafe<Array<{ name: string; statement: string }>>(
        "SELECT name, statement FROM pg_prepared_statements WHERE name LIKE 'fw\\_%' ORDER BY name",
      );
      expect(prepared.map((p) => p.name.replace(/^fw_\w{8}_/, "").replace(/_\d+$/, ""))).toEqual([
        "claim0",
        "claim1",
        "claim2",
        "claim3",
      ]);
      for (const p of prepared) {
        const plan = (
          await worker.unsafe(`EXPLAIN EXECUTE ${p.name}('ten_local', 'work', 1, 'exec_node', 30000, 'lse_explain')`)
        )
          .map((r) => r["QUERY PLAN"])
          .join("\n");
        expect(plan, plan).not.toMatch(/Custom Scan \(Citus/);
      }
      await releaseLeases(store.db, [{ id: claimedIds(row!.r)[0]!, leaseToken: "lse_local" }], oneTenant("ten_local"));
    } finally {
      await worker.end({ timeout: 5 });
    }
    expect(await running("ten_local")).toBe(0);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("runs the function through Citus on a node that does not hold the tenant's shards", async () => {
    await seedTenant(store.db, "ten_away", { maxInFlight: 5 });
    await seedDue(store.db, "ten_away", 2);
    const { other } = await nodesOf("ten_away");
    const worker = onWorker(other);
    try {
      const [row] = await claimOn(worker, "ten_away", "lse_away");
      expect(claimedIds(row!.r)).toHaveLength(1);
      // The claim ran through Citus (its shards are elsewhere): nothing was prepared here.
      expect(await worker.unsafe("SELECT name FROM pg_prepared_statements WHERE name LIKE 'fw\\_%'")).toHaveLength(0);
      await releaseLeases(store.db, [{ id: claimedIds(row!.r)[0]!, leaseToken: "lse_away" }], oneTenant("ten_away"));
    } finally {
      await worker.end({ timeout: 5 });
    }
    expect(await running("ten_away")).toBe(0);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("claims on standby on the tenant's shard alone, for the tenant and for a key", async () => {
    for (const [tenantId, key] of [
      ["ten_plain", null],
      ["ten_keyed", "k1"],
    ] as const) {
      const s = standbyStatement({
        type: "work",
        owner: "exec_test",
        leaseMs: 30_000,
        want: [{ tenantId, n: 2, key }],
        tenantId,
      });
      for (const statement of s.statements) await expectSingleShard(store.db, statement);
    }
  });

  it("claims up to each tenant's cap, keys and rate, records the leases with their tenant, and keeps the queue in step", async () => {
    const plain = await claimReport(store.db, input("ten_plain"));
    expect(plain.claimed).toHaveLength(3);
    expect(new Set(plain.claimed.map((c) => c.tenantId))).toEqual(new Set(["ten_plain"]));
    expect(plain.claimed.every((c) => c.atCap)).toBe(true);
    const keyed = await claimReport(store.db, input("ten_keyed"));
    expect(keyed.claimed).toHaveLength(4);
    // Two keys of equal weight share the tenant's slots.
    expect(keyed.claimed.filter((c) => c.key === "k1")).toHaveLength(2);
    const rated = await claimReport(store.db, input("ten_rated"));
    expect(rated.claimed).toHaveLength(2);
    // Slots in WFQ order, as fairOrder gives them across tenants.
    for (const r of [plain, keyed, rated])
      for (let i = 1; i < r.claimed.length; i++) expect(r.claimed[i].vt).toBeGreaterThanOrEqual(r.claimed[i - 1].vt);

    expect(await running("ten_plain")).toBe(3);
    expect(await running("ten_keyed")).toBe(4);
    expect(await running("ten_rated")).toBe(2);
    const leases = await query<{ tenant_id: string; n: number }>(
      store.db,
      sql`SELECT tenant_id, cardinality(trigger_ids)::int AS n FROM leases WHERE owner = 'exec_test' ORDER BY tenant_id`,
    );
    expect(leases).toEqual([
      { tenant_id: "ten_keyed", n: 4 },
      { tenant_id: "ten_plain", n: 3 },
      { tenant_id: "ten_rated", n: 2 },
    ]);
    const rows = await query<{ tenant_id: string; n: number }>(
      store.db,
      sql`SELECT tenant_id, count(*)::int AS n FROM triggers
           WHERE status = 'running' AND lease_owner = 'exec_test' AND NOT standby GROUP BY 1 ORDER BY 1`,
    );
    expect(rows).toEqual([
      { tenant_id: "ten_keyed", n: 4 },
      { tenant_id: "ten_plain", n: 3 },
      { tenant_id: "ten_rated", n: 2 },
    ]);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);

    // At its cap, a tenant gets nothing more, and is not reported as held by another claim.
    const again = await claimReport(store.db, input("ten_plain"));
    expect(again).toEqual({ claimed: [], busy: [] });
    expect(await running("ten_plain")).toBe(3);
  });

  it("holds a tenant at its cap's next triggers on standby, not counted", async () => {
    const held = await standbyClaim(store.db, {
      type: "work",
      owner: "exec_test",
      leaseMs: 30_000,
      want: [{ tenantId: "ten_plain", n: 2 }],
      tenantId: "ten_plain",
    });
    expect(held).toHaveLength(2);
    expect(held.every((c) => c.tenantId === "ten_plain")).toBe(true);
    expect(await running("ten_plain")).toBe(3);
    const [{ n }] = await query<{ n: number }>(
      store.db,
      sql`SELECT count(*)::int AS n FROM triggers WHERE tenant_id = 'ten_plain' AND status = 'running' AND standby`,
    );
    expect(n).toBe(2);
    const [lease] = await query<{ tenant_id: string }>(
      store.db,
      sql`SELECT tenant_id FROM leases WHERE token = ${held[0].leaseToken}`,
    );
    expect(lease.tenant_id).toBe("ten_plain");
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
  });

  it("reads a tenant's earliest queued trigger for the ready index on its shard alone", async () => {
    const due = await pendingByTenant(store.db, "work", ["ten_rated", "ten_none"]);
    expect(due.map((d) => [d.tenantId, d.dueAtMs === null])).toEqual([
      ["ten_rated", false],
      ["ten_none", true],
    ]);
  });

  it("never claims past a tenant's cap from two connections at once", async () => {
    await seedTenant(store.db, "ten_race", { maxInFlight: 7 });
    await seedDue(store.db, "ten_race", 60);
    const a = connectPostgres(url);
    const b = connectPostgres(url);
    try {
      let claimed = 0;
      const held: ClaimedTrigger[] = [];
      for (let round = 0; round < 10; round++) {
        const rs = await Promise.all(
          [a, b, a, b].map((s) => claimReport(s.db, { ...input("ten_race", 3), owner: "exec_race" })),
        );
        for (const r of rs) held.push(...r.claimed);
        claimed += rs.reduce((n, r) => n + r.claimed.length, 0);
        expect(held.length).toBeLessThanOrEqual(7);
        expect(await running("ten_race")).toBe(held.length);
        // Free two slots, as a stop would (release.ts, on the tenant's shard too): the next round may
        // refill them, never overfill.
        await releaseLeases(store.db, held.splice(0, 2), oneTenant("ten_race"));
      }
      expect(claimed).toBeGreaterThan(7);
      expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe("the claimer on a Citus cluster", () => {
  it("claims per tenant, splits the budget by weight, holds caps and moves the pool clock", async () => {
    await seedPool(store.db, "split");
    await seedTenant(store.db, "ten_w3", { maxInFlight: 500, weight: 3 });
    await seedTenant(store.db, "ten_w1", { maxInFlight: 500, weight: 1 });
    await seedTenant(store.db, "ten_c2", { maxInFlight: 2, weight: 1 });
    for (const t of ["ten_w3", "ten_w1", "ten_c2"]) await seedDue(store.db, t, 200, { type: "split" });
    const pool = new Pool({ ...DEFAULT_POOL, type: "split", concurrency: 8, leaseMs: 60_000 });
    const got: ClaimedTrigger[] = [];
    const claimer = new Claimer({
      db: store.db,
      owner: "exec_split",
      pools: new Map([["split", pool]]),
      ready: null,
      log: silentLogger,
      inDoubt: new InDoubtClaims(store.db, silentLogger),
      // Held, not run: the pool keeps its room, and every pass claims a full budget.
      dispatch: (_pool, t) => void got.push(t),
      stats: { claimed: 0 },
    });
    for (let i = 0; i < 8; i++) await claimer.pass(Date.now());
    const by = (id: string) => got.filter((t) => t.tenantId === id).length;
    expect(by("ten_c2")).toBe(2);
    for (const t of ["ten_w3", "ten_w1", "ten_c2"]) expect(await running(t)).toBe(by(t));
    // 3:1 once their steps are known (the first pass splits evenly: nothing is known of them yet).
    expect(by("ten_w3") / by("ten_w1")).toBeGreaterThan(2);
    expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    // The clock the claims started at, written by the claimer (not by a claim), at most once a second:
    // passes go on until it is.
    const clock = await until(
      async () => {
        await claimer.pass(Date.now());
        return (await query<{ v: number }>(store.db, sql`SELECT vclock AS v FROM pools WHERE type = 'split'`))[0].v;
      },
      (v) => v > 0,
    );
    expect(clock).toBeLessThanOrEqual(Math.max(...got.map((t) => t.vt)));
  });

  it("takes its candidates from the ready index, and sets aside those it could not serve", async () => {
    const prefix = testPrefix("citus-claim");
    const coord = createRedisCoordinator({ url: REDIS_URL, prefix });
    const warnings: string[] = [];
    const log = { ...silentLogger, warn: (msg: string) => void warnings.push(msg) };
    try {
      await seedPool(store.db, "indexed");
      await seedTenant(store.db, "ten_i1", { maxInFlight: 500 });
      await seedTenant(store.db, "ten_i2", { maxInFlight: 500 });
      await seedTenant(store.db, "ten_i3", { maxInFlight: 1 });
      for (const t of ["ten_i1", "ten_i2", "ten_i3"]) await seedDue(store.db, t, 30, { type: "indexed" });
      const ready = new ReadyIndex(coord, store.db, log, 60_000);
      const pool = new Pool({ ...DEFAULT_POOL, type: "indexed", concurrency: 4, leaseMs: 60_000 });
      const got: ClaimedTrigger[] = [];
      const claimer = new Claimer({
        db: store.db,
        owner: "exec_indexed",
        pools: new Map([["indexed", pool]]),
        ready,
        log,
        inDoubt: new InDoubtClaims(store.db, log),
        dispatch: (_pool, t) => void got.push(t),
        stats: { claimed: 0 },
      });
      // The first pass is the index's sweep (a read of the queue); the rest ask the index, rebuilt
      // from Postgres.
      for (let i = 0; i < 6; i++) await claimer.pass(Date.now());
      const by = (id: string) => got.filter((t) => t.tenantId === id).length;
      expect(by("ten_i3")).toBe(1);
      expect(by("ten_i1") + by("ten_i2")).toBeGreaterThan(20);
      for (const t of ["ten_i1", "ten_i2", "ten_i3"]) expect(await running(t)).toBe(by(t));
      expect(warnings).toEqual([]);
      expect(await queueDrift(store.db)).toEqual(NO_DRIFT);
    } finally {
      await coord.close();
      await deletePrefix(prefix);
    }
  });
});
