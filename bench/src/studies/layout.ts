// Design study (docs/decisions/0004-hot-claim-and-settle.md): Postgres CPU per row of claim + settle on ONE backend for
// three layouts of the triggers table. Not part of `npm run bench`; run it by hand:
//
//   LAYOUT=current|inplace|nullq|split|split2 [FILLFACTOR=50] npx tsx bench/src/studies/layout.ts
//
// - current: the triggers table's columns and five indexes as before migration 0009.
// - inplace: the same table, the pending and dead indexes filtering on stored generated columns, no
//   running index, a running counter per tenant: no index reads `status`, so a settle may be HOT.
// - nullq: as inplace, but the pending indexes filter on a nullable due column that the claim clears
//   instead of generated columns.
// - split: pending work in a narrow queue table that the claim deletes from; trigger rows indexed only
//   by primary key and job; a running counter per tenant.
// - split2: split as migration 0009 built it: also the generated `dead` column and its index, the
//   queue-sync trigger (its WHEN tested on every updated row), and a lease row per claim.
// The statements are the claim's and settle's cores (pick by tenant, update by row version; settle by
// id), not the product's full statements: the study compares layouts, not Fairway's absolute cost.
// CPU is the backend's own, from /proc/<pid>/schedstat (Linux), parse to commit.
import { readFileSync } from "node:fs";
import postgres from "postgres";
import { PG_BASE_URL, urlFor } from "../../../test/support/pg.ts";

const ROWS = 60_000;
const TENANTS = 100;
const CLAIM = 2_000;
const SETTLE = 1_000;
const layout = process.env.LAYOUT ?? "current";
const fillfactor = Number(
  process.env.FILLFACTOR ?? (layout === "current" ? 100 : layout.startsWith("split") ? 50 : 70),
);
if (!["current", "inplace", "nullq", "split", "split2"].includes(layout))
  throw new Error(`LAYOUT must be current, inplace, nullq, split or split2`);

const columns = `id text COLLATE "C" PRIMARY KEY, tenant_id text COLLATE "C" NOT NULL, job_id text COLLATE "C" NOT NULL,
  type text COLLATE "C" NOT NULL, kind text NOT NULL DEFAULT 'scheduled', scheduled_for timestamptz NOT NULL,
  status text NOT NULL DEFAULT 'pending', priority int NOT NULL DEFAULT 0, exclusive boolean NOT NULL DEFAULT false,
  attempt_count int NOT NULL DEFAULT 0, max_attempts int NOT NULL DEFAULT 3, next_attempt_at timestamptz NOT NULL,
  lease_owner text, lease_token text, lease_expires_at timestamptz, reason text,
  created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now(), finished_at timestamptz,
  ok_started_at timestamptz, ok_duration_ms int, ok_http_status int, ok_response_body text`;

const schema: Record<string, string[]> = {
  current: [
    `CREATE TABLE t (${columns}) WITH (fillfactor = ${fillfactor})`,
    `CREATE INDEX t_claim ON t (tenant_id, type, priority DESC, next_attempt_at) WHERE status = 'pending'`,
    `CREATE INDEX t_pending_type ON t (type, tenant_id, next_attempt_at) WHERE status = 'pending'`,
    `CREATE INDEX t_running ON t (tenant_id, lease_expires_at) WHERE status = 'running'`,
    `CREATE INDEX t_dead ON t (tenant_id, id) WHERE status = 'dead'`,
  ],
  inplace: [
    `CREATE TABLE t (${columns}, queued boolean GENERATED ALWAYS AS (status = 'pending') STORED,
       dead boolean GENERATED ALWAYS AS (status = 'dead') STORED) WITH (fillfactor = ${fillfactor})`,
    `CREATE INDEX t_claim ON t (tenant_id, type, priority DESC, next_attempt_at) WHERE queued`,
    `CREATE INDEX t_pending_type ON t (type, tenant_id, next_attempt_at) WHERE queued`,
    `CREATE INDEX t_dead ON t (tenant_id, id) WHERE dead`,
  ],
  nullq: [
    `CREATE TABLE t (${columns}, due timestamptz, dead_at timestamptz) WITH (fillfactor = ${fillfactor})`,
    `CREATE INDEX t_claim ON t (tenant_id, type, priority DESC, due) WHERE due IS NOT NULL`,
    `CREATE INDEX t_pending_type ON t (type, tenant_id, due) WHERE due IS NOT NULL`,
    `CREATE INDEX t_dead ON t (tenant_id, id) WHERE dead_at IS NOT NULL`,
  ],
  split2: [
    // NODEAD=1: without the generated column and its index (the dead letters in a table of their own).
    process.env.NODEAD
      ? `CREATE TABLE t (${columns}) WITH (fillfactor = ${fillfactor})`
      : `CREATE TABLE t (${columns}, dead boolean GENERATED ALWAYS AS (status = 'dead') STORED) WITH (fillfactor = ${fillfactor})`,
    process.env.NODEAD ? `SELECT 1` : `CREATE INDEX t_dead ON t (tenant_id, id) WHERE dead`,
    `CREATE TABLE q (id text COLLATE "C" PRIMARY KEY, tenant_id text COLLATE "C" NOT NULL, type text COLLATE "C" NOT NULL,
       priority int NOT NULL, next_attempt_at timestamptz NOT NULL)`,
    `CREATE INDEX q_claim ON q (tenant_id, type, priority DESC, next_attempt_at)`,
    `CREATE INDEX q_pending_type ON q (type, tenant_id, next_attempt_at)`,
    `CREATE FUNCTION qsync() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
       IF OLD.status = 'pending' AND NEW.status <> 'pending' THEN DELETE FROM q WHERE id = OLD.id; END IF;
       IF NEW.status = 'pending' THEN INSERT INTO q VALUES (NEW.id, NEW.tenant_id, NEW.type, NEW.priority, NEW.next_attempt_at)
         ON CONFLICT (id) DO UPDATE SET priority = excluded.priority, next_attempt_at = excluded.next_attempt_at; END IF;
       RETURN NULL; END $$`,
    `CREATE TRIGGER t_qsync AFTER UPDATE ON t FOR EACH ROW WHEN (
       (OLD.status = 'pending' AND NEW.status NOT IN ('pending', 'running')) OR
       (NEW.status = 'pending' AND (OLD.status <> 'pending' OR OLD.priority <> NEW.priority OR OLD.next_attempt_at <> NEW.next_attempt_at)))
       EXECUTE FUNCTION qsync()`,
    `CREATE TABLE leases (token text PRIMARY KEY, expires_at timestamptz NOT NULL, ids text NOT NULL)`,
  ],
  split: [
    `CREATE TABLE t (${columns}) WITH (fillfactor = ${fillfactor})`,
    `CREATE TABLE q (id text COLLATE "C" PRIMARY KEY, tenant_id text COLLATE "C" NOT NULL, type text COLLATE "C" NOT NULL,
       priority int NOT NULL, next_attempt_at timestamptz NOT NULL)`,
    `CREATE INDEX q_claim ON q (tenant_id, type, priority DESC, next_attempt_at)`,
    `CREATE INDEX q_pending_type ON q (type, tenant_id, next_attempt_at)`,
  ],
};

const tenantIds = `SELECT 't' || lpad(g::text, 4, '0') AS id FROM generate_series(1, ${TENANTS}) g`;
const perTenant = Math.ceil(CLAIM / TENANTS);
const claimSet = `status = 'running', lease_owner = 'exe_study', lease_token = $1, lease_expires_at = now() + interval '60 s',
  attempt_count = attempt_count + 1, updated_at = now()`;
const pick = (table: string, pending: string) => `
  picked AS (SELECT p.ctid FROM (${tenantIds}) a CROSS JOIN LATERAL (
    SELECT x.ctid FROM ${table} x WHERE x.tenant_id = a.id AND x.type = 'noop' AND ${pending} AND x.next_attempt_at <= now()
     ORDER BY x.priority DESC NULLS LAST, x.next_attempt_at LIMIT ${perTenant} FOR UPDATE SKIP LOCKED) p)`;
const count = (rows: string, sign: string) => `
  counted AS (UPDATE running c SET n = c.n ${sign} g.n FROM (SELECT tenant_id, count(*)::int AS n FROM ${rows} GROUP BY 1) g
               WHERE c.tenant_id = g.tenant_id)`;

const claimSql: Record<string, string> = {
  current: `WITH ${pick("t", "x.status = 'pending'")}
    UPDATE t SET ${claimSet} WHERE ctid = ANY (ARRAY(SELECT ctid FROM picked)) AND (status = 'pending') IS TRUE RETURNING id`,
  inplace: `WITH ${pick("t", "x.queued")},
    claimed AS (UPDATE t SET ${claimSet} WHERE ctid = ANY (ARRAY(SELECT ctid FROM picked)) AND (status = 'pending') IS TRUE
                RETURNING id, tenant_id), ${count("claimed", "+")}
    SELECT id FROM claimed`,
  nullq: `WITH ${pick("t", "x.due IS NOT NULL").replace("x.next_attempt_at <= now()", "x.due <= now()").replace("x.next_attempt_at LIMIT", "x.due LIMIT")},
    claimed AS (UPDATE t SET ${claimSet}, due = NULL WHERE ctid = ANY (ARRAY(SELECT ctid FROM picked)) AND due IS NOT NULL
                RETURNING id, tenant_id), ${count("claimed", "+")}
    SELECT id FROM claimed`,
  split: `WITH ${pick("q", "true")},
    gone AS (DELETE FROM q WHERE ctid = ANY (ARRAY(SELECT ctid FROM picked)) RETURNING id, tenant_id), ${count("gone", "+")}
    UPDATE t SET ${claimSet} WHERE id = ANY (ARRAY(SELECT id FROM gone)) RETURNING id`,
  split2: `WITH ${pick("q", "true")},
    gone AS (DELETE FROM q WHERE ctid = ANY (ARRAY(SELECT ctid FROM picked)) RETURNING id, tenant_id),
    claimed AS (UPDATE t SET ${claimSet} WHERE id = ANY (ARRAY(SELECT id FROM gone)) AND (status = 'pending') IS TRUE RETURNING id, tenant_id),
    ${count("claimed", "+")},
    lease AS (INSERT INTO leases SELECT $1, now() + interval '60 s', string_agg(id, ',') FROM claimed)
    SELECT id FROM claimed`,
};

const settleSet = `status = 'succeeded', lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL, finished_at = now(),
  updated_at = now(), ok_started_at = now(), ok_duration_ms = 1`;
const settleSql =
  layout === "current"
    ? `UPDATE t SET ${settleSet} WHERE id = ANY ($1::text[]) AND (status = 'running') IS TRUE RETURNING id`
    : `WITH settled AS (UPDATE t SET ${settleSet} WHERE id = ANY ($1::text[]) AND status = 'running' RETURNING id, tenant_id),
       ${count("settled", "-")}
     SELECT id FROM settled`;

const name = `fairway_study_${process.pid}`;
const admin = postgres(PG_BASE_URL, { max: 1, onnotice: () => {} });
await admin.unsafe(`CREATE DATABASE ${name}`);
const db = postgres(urlFor(name), { max: 1, onnotice: () => {} });
try {
  for (const ddl of schema[layout]) await db.unsafe(ddl);
  await db.unsafe(`CREATE UNIQUE INDEX t_job ON t (job_id, scheduled_for) WITH (fillfactor = 50)`);
  await db.unsafe(`
    INSERT INTO t (id, tenant_id, job_id, type, scheduled_for, next_attempt_at)
    SELECT 'trg_' || lpad(g::text, 27, '0'), 't' || lpad((g % ${TENANTS} + 1)::text, 4, '0'),
           'job_' || lpad((g % ${TENANTS} + 1)::text, 27, '0'), 'noop',
           now() - interval '1 s' + g * interval '1 microsecond', now() - interval '1 s'
      FROM generate_series(1, ${ROWS}) g`);
  if (layout === "nullq") {
    await db.unsafe(`UPDATE t SET due = next_attempt_at`);
    await db.unsafe(`VACUUM FULL t`);
  }
  if (layout.startsWith("split"))
    await db.unsafe(`INSERT INTO q SELECT id, tenant_id, type, priority, next_attempt_at FROM t`);
  if (layout !== "current") {
    await db.unsafe(`CREATE TABLE running (tenant_id text COLLATE "C" PRIMARY KEY, n int NOT NULL DEFAULT 0)`);
    await db.unsafe(`INSERT INTO running (tenant_id) ${tenantIds}`);
  }
  await db.unsafe(`VACUUM ANALYZE`);
  const [{ pid }] = await db<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
  const cpuUs = () => Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1000;

  const total = { claimUs: 0, claimed: 0, settleUs: 0, settled: 0 };
  const running: string[] = [];
  for (let round = 0; (round + 1) * CLAIM < ROWS; round++) {
    const measured = round >= 2; // the first two rounds warm the caches and plans
    let t0 = cpuUs();
    const claimed = await db.unsafe<{ id: string }[]>(claimSql[layout], [`lease_${round}`], { prepare: true });
    if (measured) {
      total.claimUs += cpuUs() - t0;
      total.claimed += claimed.length;
    }
    running.push(...claimed.map((r) => r.id));
    // Settle all but the newest claim, oldest first, in SETTLE-sized batches: a live pool's shape.
    while (running.length >= CLAIM + SETTLE) {
      const batch = running.splice(0, SETTLE);
      t0 = cpuUs();
      const settled = await db.unsafe<{ id: string }[]>(settleSql, [batch], { prepare: true });
      if (measured) {
        total.settleUs += cpuUs() - t0;
        total.settled += settled.length;
      }
    }
  }
  const [stats] = await db<{ hot: number; updates: number }[]>`
    SELECT n_tup_hot_upd::int AS hot, n_tup_upd::int AS updates FROM pg_stat_user_tables WHERE relname = 't'`;
  const claim = total.claimUs / total.claimed;
  const settle = total.settleUs / total.settled;
  console.log(
    JSON.stringify({
      layout,
      fillfactor,
      claim_us_per_row: +claim.toFixed(1),
      settle_us_per_row: +settle.toFixed(1),
      sum: +(claim + settle).toFixed(1),
      claimed: total.claimed,
      settled: total.settled,
      hot_updates: stats.hot,
      updates: stats.updates,
    }),
  );
} finally {
  await db.end();
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
