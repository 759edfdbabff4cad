// Settle (docs/architecture.md): one fenced transaction per batch. A row changes only while the caller still
// holds the lease it claimed (same token, same attempt number), so a worker that lost its lease — or a
// reaper racing a late worker — changes 0 rows. The attempt is recorded in the same statement: a first
// attempt that succeeded in the trigger's own row (its ok_* columns) and its detail, if any, in
// success_detail (keyed by trigger); any other in attempt_log, where (trigger_id, attempt) is unique.
// Either way no attempt can be counted twice; the `attempts` view reads all three.
import { sql } from "drizzle-orm";
import { COST_EWMA_ALPHA, storableText, type AttemptRequest } from "@fairway/core";
import { pipelineTx, query, type Db } from "../db.ts";
import type { Scope } from "../layout/scope.ts";
import { boundedKeyWeight, boundedWeight } from "./columns.ts";
import { decayedWork } from "./keys.ts";
import { coldItems, decodeNotified, notifyStatements } from "./notification-fanout.ts";
import { packRows, unpackRows } from "./packed.ts";
import { scopeTo } from "../layout/scope.ts";

// The run-time estimate's EWMA, written into the statement's text (not bound) so it stays one plan.
const COST_TAKE = sql.raw(String(COST_EWMA_ALPHA));
const COST_KEEP = sql.raw(String(1 - COST_EWMA_ALPHA));

export interface Settlement {
  id: string;
  /** The trigger's tenant: on a Citus cluster the executor settles each tenant's apart (settler.ts).
   *  Not part of the statement (settleStatements takes the tenant). */
  tenantId?: string;
  leaseToken: string;
  /** The attempt number stamped by the claim. */
  attempt: number;
  status: "succeeded" | "pending" | "dead" | "unknown";
  /** For status pending: when to retry. */
  nextAttemptAt?: Date | null;
  reason?: string | null;
  startedAt: Date;
  durationMs: number;
  outcome: string;
  httpStatus?: number | null;
  error?: string | null;
  responseBody?: string | null;
  /** The rest of the attempt's record (schema.ts, attemptColumns: request as sent, response headers). */
  detail?: AttemptDetail | null;
  /** 410 Gone: pause the job. */
  pauseJob?: boolean;
  /** Set by the reaper: only applies while the lease is still expired (a renewal wins). */
  reap?: boolean;
  /** A success of a job that was failing (ClaimedTrigger.failing): its streak ends, job.recovered
   *  (notification-fanout.ts). Not part of the settle statement. */
  recover?: boolean;
  /** The trigger on standby (standby.ts) that took this run's slot when it finished: counted against
   *  its tenant's cap from this settle on, in place of this one. */
  successor?: { id: string; leaseToken: string; attempt: number } | null;
}

export interface AttemptDetail {
  request: AttemptRequest | null;
  responseHeaders: Record<string, string> | null;
  responseTruncated: boolean;
  /** A handler's ctx.log lines (executor trace.ts, AttemptLog), when it wrote any. */
  logs?: { lines: string[]; truncated: boolean };
}

export interface Settled {
  id: string;
  tenantId: string;
  jobId: string;
  type: string;
  status: string;
  durationMs: number;
  /** A notification trigger this settle's transaction made (notification-fanout.ts), not a settled row. */
  notification?: boolean;
}

/** A response body or an error's text is the target's, and may hold a NUL character or an unpaired
 *  surrogate, which no Postgres text can: the batch's statement failed on every retry, with every
 *  other result in it, until they were given up and their triggers re-run when their leases expired
 *  (test/faults/nul-body.test.ts). Such characters are stored as U+FFFD (core, text.ts). */
function storable(text: string | null | undefined): string | null {
  return text == null ? null : storableText(text);
}

/** Settle `items` in one transaction of statements; one tenant's scope: every item is that tenant's
 *  (settleStatements). Callers go through settleIn() (delegated.ts), which sends one tenant's batch
 *  without notifications as one call instead. */
export async function settleByStatements(db: Db, items: Settlement[], scope: Scope): Promise<Settled[]> {
  if (items.length === 0) return [];
  const s = settleStatements(items, scope.tenantId);
  if (s.statements.length === 1) return s.decode([await query(db, s.statements[0])]);
  return s.decode(await pipelineTx(db, s.statements));
}

/** The settle of `items` (not empty) as the statements of one transaction, and how to read their
 *  answers. A batch with a dead letter, a pause or a recovery also makes its notifications
 *  (notification-fanout.ts). Without `tenantId`: one statement, and the notifications'. With it (a Citus
 *  cluster, docs/scaling.md), each statement single-shard: Citus routes no statement whose CTEs insert
 *  (it runs each CTE as a step of its own, through the coordinator), so the settle changes the rows
 *  and the attempt records follow it as statements of their own (attemptStatements). */
export function settleStatements(items: Settlement[], tenantId?: string) {
  const split = tenantId !== undefined;
  // The jobs the notifications will update (a failure streak, a 410 pause, a recovery): locked by the
  // settle itself, before its ledger rows (lock order, docs/guarantees.md).
  const cold = coldItems(items).map((c) => c[0] as string);
  const b = boundOf(items);
  const parts = {
    tenantId,
    input: b.input,
    ids: b.ids,
    successors: b.successors,
    cold: cold.length === 0 ? null : JSON.stringify(cold),
  };
  const first = [settleSql(parts, split), ...(split ? attemptStatements(items, parts) : [])];
  const notify = notifyStatements(items, tenantId) ?? [];
  return {
    statements: [...first, ...notify],
    decode: (rows: unknown[][]): Settled[] => [
      ...decodeSettled(rows[0] as SettleResult[]),
      ...(notify.length > 0 ? decodeNotified(rows[first.length]!) : []),
    ],
  };
}

interface SettleResult {
  settled: string | null;
}

function decodeSettled(rows: SettleResult[]): Settled[] {
  return unpackSettled(rows[0]?.settled ?? null);
}

function unpackSettled(packed: string | null): Settled[] {
  return unpackRows(packed, 6).map(([id, tenantId, jobId, type, status, durationMs]) => ({
    id,
    tenantId,
    jobId,
    type,
    status,
    durationMs: Number(durationMs),
  }));
}

/** A batch's values as the statements bind them: the input (inputJson), the ids (a text[] literal:
 *  ids are [A-Za-z0-9_-]) and the successors, each a text value. */
function boundOf(items: Settlement[]) {
  return {
    input: inputJson(items),
    ids: `{${items.map((i) => i.id).join(",")}}`,
    successors: JSON.stringify(
      items.flatMap((i) => (i.successor ? [[i.successor.id, i.successor.leaseToken, i.successor.attempt]] : [])),
    ),
  };
}

/** What settleSql() and attemptStatements() are built from: the tenant (or none), the bound values
 *  (boundOf) and the jobs to lock, as JSON (null: none). Values or, for a function's body
 *  (delegated.ts), the names of its arguments. */
interface SettleParts {
  tenantId: string | undefined;
  input: string;
  ids: string;
  successors: string;
  cold: string | null;
}

/** The one-tenant settle as delegated.ts's function holds it (no jobs to lock: a batch with
 *  notifications is not delegated), with the values of `items` or the function's argument names. */
export function settleBound(
  b: { tenantId: string; items: Settlement[] } | { tenantId: string; input: string; ids: string; successors: string },
) {
  const bound = "items" in b ? boundOf(b.items) : b;
  const parts: SettleParts = {
    tenantId: b.tenantId,
    input: bound.input,
    ids: bound.ids,
    successors: bound.successors,
    cold: null,
  };
  const items = "items" in b ? b.items : [];
  return {
    settle: settleSql(parts, true),
    ...attemptSqlOf(parts),
    values: {
      ...bound,
      log: items.some((i) => needsLog(i)),
      detail: items.some((i) => i.detail != null),
    },
    decodeSettled: unpackSettled,
  };
}

/** The settle's input, positional (settleSql): what a settlement's row holds and its first attempt's
 *  success is recorded in the trigger's row (`ok`). */
function inputJson(items: Settlement[]): string {
  // Positional arrays, times as epoch ms, and a success stops after its outcome: a third of the bytes
  // of named fields with ISO times, and less for Node to build (a missing index reads as NULL).
  return JSON.stringify(
    items.map((i) => {
      const row: unknown[] = [i.id, i.leaseToken, i.attempt, i.status, i.startedAt.getTime(), i.durationMs, i.outcome];
      if (
        i.nextAttemptAt ||
        i.reason ||
        i.httpStatus != null ||
        i.error ||
        i.responseBody ||
        i.pauseJob ||
        i.reap ||
        i.detail
      ) {
        row.push(
          i.nextAttemptAt?.getTime() ?? null,
          storable(i.reason),
          i.httpStatus ?? null,
          storable(i.error),
          storable(i.responseBody),
          i.pauseJob || null,
          i.reap || null,
          // JSON text inside the input: one string for Postgres to read, not an object to build (see
          // ok_detail below).
          i.detail ? JSON.stringify(i.detail) : null,
        );
      }
      return row;
    }),
  );
}

function inputOf(input: string) {
  return sql`
      SELECT x->>0 AS id, x->>1 AS token, (x->>2)::int AS attempt, x->>3 AS status,
             to_timestamp((x->>4)::float8 / 1000) AS started_at, (x->>5)::float8 AS duration_ms,
             x->>6 AS outcome, to_timestamp((x->>7)::float8 / 1000) AS next_attempt_at, x->>8 AS reason,
             (x->>9)::int AS http_status, x->>10 AS error, x->>11 AS response_body,
             (x->>12)::boolean AS pause_job, (x->>13)::boolean AS reap, x->>14 AS detail,
             -- Recorded in the trigger's row (the attempts view spells it out as outcome "success", no error).
             coalesce(x->>3 = 'succeeded' AND (x->>2)::int = 1 AND x->>6 = 'success' AND x->>10 IS NULL, false) AS ok,
             -- Read once here: Citus refuses now() inside a CASE of an update of a distributed table.
             now() AS now
        FROM jsonb_array_elements(${input}::jsonb) AS x`;
}

/** The attempt records of a split settle (settleStatements), after its settle in its transaction: the
 *  rows that settle changed are the items' triggers as it left them — updated at this transaction's
 *  now(), at the item's status and attempt, no lease — and a row fenced out of it was changed by
 *  someone else, at another time (and a record twice is refused by the key anyway). Only the
 *  statements a batch needs: a first attempt's plain success has no record outside its row (inputOf). */
function attemptStatements(items: Settlement[], parts: SettleParts) {
  const { log, detail } = attemptSqlOf(parts);
  const out = [];
  if (items.some(needsLog)) out.push(log);
  if (items.some((i) => i.detail)) out.push(detail);
  return out;
}

/** An item whose attempt is recorded in attempt_log: any but a first attempt's plain success (inputOf's `ok`). */
const needsLog = (i: Settlement) =>
  !(i.status === "succeeded" && i.attempt === 1 && i.outcome === "success" && i.error == null);

function attemptSqlOf(parts: SettleParts) {
  const settled = sql`
        FROM triggers t JOIN (${inputOf(parts.input)}) i ON t.id = i.id
       WHERE t.tenant_id = ${parts.tenantId} AND t.id = ANY (${parts.ids}::text[]) AND t.updated_at = now()
         AND t.status = i.status AND t.attempt_count = i.attempt AND t.lease_token IS NULL`;
  return {
    log: sql`
      INSERT INTO attempt_log (trigger_id, tenant_id, attempt, started_at, duration_ms, outcome,
                               http_status, error, response_body, detail)
      SELECT t.id, t.tenant_id, i.attempt, i.started_at, round(i.duration_ms)::int, i.outcome,
             i.http_status, i.error, i.response_body, i.detail::jsonb
        ${settled} AND NOT i.ok
      ON CONFLICT DO NOTHING`,
    detail: sql`
      INSERT INTO success_detail (trigger_id, tenant_id, detail)
      SELECT t.id, t.tenant_id, i.detail ${settled} AND i.ok AND i.detail IS NOT NULL
      ON CONFLICT DO NOTHING`,
  };
}

/** With `split`, the attempt records are left to attemptStatements() and the input is read in place
 *  (no CTE of its own): the statement is single-shard on a Citus cluster. */
function settleSql(parts: SettleParts, split: boolean) {
  const { tenantId, successors, cold } = parts;
  const at = scopeTo(tenantId);
  const inputRows = inputOf(parts.input);
  // Split, the input is read in place, in the update's FROM, and the ids come as an array of their own:
  // Citus plans a CTE of no table that is read more than once as a subplan of its own (a round trip
  // first), and the whole statement then in steps.
  const ids = split ? parts.ids : "";
  const inputCte = split ? sql`` : sql`input AS (${inputRows}),`;
  const inputFrom = split ? sql`(${inputRows})` : sql`input`;
  const settledIds = split ? sql`${ids}::text[]` : sql`ARRAY(SELECT id FROM input)`;
  const notSettled = split ? sql`NOT (t.id = ANY (${ids}::text[]))` : sql`t.id NOT IN (SELECT id FROM input)`;
  const recorded = sql`
    att AS (
      INSERT INTO attempt_log (trigger_id, tenant_id, attempt, started_at, duration_ms, outcome,
                               http_status, error, response_body, detail)
      SELECT d.id, d.tenant_id, d.attempt, d.started_at, round(d.duration_ms)::int, d.outcome,
             d.http_status, d.error, d.response_body, d.detail::jsonb
        FROM done d
       WHERE NOT d.ok
      -- No target: the primary key is the table's only unique index, and on a Citus cluster it also
      -- holds tenant_id (store citus.ts).
      ON CONFLICT DO NOTHING
    ),
    -- That success's request and response headers: out of the trigger's row, whose settle stays a HOT
    -- update only while its new version fits in the page, and kept as the JSON text it came as: building
    -- it into jsonb here was most of what recording it cost (schema.ts, successDetail).
    ok_detail AS (
      INSERT INTO success_detail (trigger_id, tenant_id, detail)
      SELECT d.id, d.tenant_id, d.detail FROM done d
       WHERE d.ok AND d.detail IS NOT NULL
      ON CONFLICT DO NOTHING
    ),`;
  // One statement: the fenced trigger update, the attempt record (unless split), job completion, the
  // maxJobs counter, the hand-over of slots to standby triggers and the worker-time charge.
  return sql`
    WITH ${inputCte}
    done AS (
      UPDATE triggers t
         SET status = i.status,
             next_attempt_at = coalesce(i.next_attempt_at, t.next_attempt_at),
             reason = i.reason,
             lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
             finished_at = CASE WHEN i.status IN ('succeeded', 'dead', 'unknown') THEN i.now END,
             updated_at = now(),
             -- A first attempt that succeeded: recorded here, in the version this update writes anyway,
             -- instead of as an attempt_log row and its index entry (schema.ts, okStartedAt). Any other
             -- attempt leaves these NULL and goes to attempt_log.
             ok_started_at = CASE WHEN i.ok THEN i.started_at END,
             ok_duration_ms = CASE WHEN i.ok THEN round(i.duration_ms)::int END,
             ok_http_status = CASE WHEN i.ok THEN i.http_status END,
             ok_response_body = CASE WHEN i.ok THEN i.response_body END
        FROM ${inputFrom} i
       -- A HOT update (schema.ts, triggerQueue): no index reads a column it changes. A retry (status
       -- pending) goes back into the queue through the sync trigger of migration 0009.
       -- = ANY(ids) makes the planner probe the primary key per settled id. Joining the input alone
       -- (estimated 100 rows; running rows' statistics are always stale) made it hash-join a scan of
       -- every running trigger, thousands of rows read to settle a few hundred.
       WHERE t.id = ANY (${settledIds}) AND t.id = i.id AND t.lease_token = i.token
         AND t.status = 'running'
         AND t.attempt_count = i.attempt
         AND (i.reap IS NOT TRUE OR t.lease_expires_at <= now()) ${at("t")}
      -- The settlement's own fields come back with the row: nothing below joins "input" again.
      -- standby is not written here: what it returns is whether the row was counted as running.
      RETURNING t.id, t.tenant_id, t.job_id, t.type, t.kind, t.status, t.standby, t.key, i.attempt, i.started_at,
                i.duration_ms, i.outcome, i.http_status, i.error, i.response_body, i.detail, i.pause_job, i.ok
    ),
    -- Standby triggers (standby.ts) that took a finished run's slot: counted from now on. Fenced by
    -- their lease like the rows above; one settled in this same statement stays uncounted (it ran and
    -- ended without ever being counted).
    moved AS (
      UPDATE triggers t SET standby = false
        FROM (SELECT x->>0 AS id, x->>1 AS token, (x->>2)::int AS attempt
                FROM jsonb_array_elements(${successors}::jsonb) AS x) m
       WHERE t.id = ANY (ARRAY(SELECT x->>0 FROM jsonb_array_elements(${successors}::jsonb) AS x)) AND t.id = m.id
         AND t.lease_token = m.token AND t.attempt_count = m.attempt AND t.status = 'running' AND t.standby
         AND ${notSettled} ${at("t")}
      RETURNING t.tenant_id, t.type, t.key
    ),
${split ? sql`` : recorded}
    ${
      cold === null
        ? sql``
        : sql`jlock AS MATERIALIZED (
      SELECT j.id FROM jobs j
       WHERE j.id IN (SELECT d.job_id FROM done d WHERE d.id IN (SELECT jsonb_array_elements_text(${cold}::jsonb))) ${at("j")}
       ORDER BY j.id
         FOR NO KEY UPDATE OF j
    ),`
    }
    job_end AS (
      -- A one-time job ends when its scheduled trigger ends: completed when it succeeded, failed when
      -- it ended dead or unknown (at-most-once, lost in flight: not a success either); 410 Gone pauses
      -- any job. Each job is looked up once (grouped), not once per fire of a cron job's backlog in the
      -- batch. With two triggers of one job in a batch, a pause wins (a plain join would leave it to chance).
      UPDATE jobs j
         SET status = CASE WHEN e.pause_job THEN 'paused' WHEN e.failed THEN 'failed' ELSE 'completed' END,
             updated_at = now()
        FROM (SELECT d.job_id, bool_or(d.pause_job IS TRUE) AS pause_job,
                     bool_or(d.kind = 'scheduled' AND d.status IN ('dead', 'unknown')) AS failed FROM done d
               WHERE d.pause_job OR (d.kind = 'scheduled' AND d.status IN ('succeeded', 'dead', 'unknown'))
               GROUP BY d.job_id) e
       WHERE j.id = e.job_id AND j.status = 'active' AND (e.pause_job OR j.cron IS NULL)
         ${cold === null ? sql`` : sql`AND (SELECT count(*) FROM jlock) >= 0`} ${at("j")}
      RETURNING j.tenant_id, j.status
    ),
    uncount AS (
      -- A completed or failed job is no longer live: it stops counting against maxJobs.
      UPDATE tenant_counters c SET live_jobs = c.live_jobs - x.n
        FROM (SELECT tenant_id, count(*)::int AS n FROM job_end WHERE status IN ('completed', 'failed')
               GROUP BY tenant_id) x
       WHERE c.tenant_id = x.tenant_id ${at("c")}
      RETURNING 1
    ),
    -- Worker time: correct each tenant's virtual time by what it really used (the claim charged an
    -- estimate) and move the estimate towards reality (EWMA). 1 ms floor: no-op work still costs a slot.
    -- And the running count: less the settled rows that were counted, plus the standby rows moved in.
    used AS (
      SELECT tenant_id, type, sum(n)::int AS n, sum(total_ms) AS total_ms, sum(uncount)::int AS uncount FROM (
        SELECT d.tenant_id, d.type, count(*) AS n, sum(greatest(1, d.duration_ms)) AS total_ms,
               count(*) FILTER (WHERE NOT d.standby) AS uncount
          FROM done d GROUP BY d.tenant_id, d.type
        UNION ALL
        SELECT m.tenant_id, m.type, 0, 0, -count(*) FROM moved m GROUP BY m.tenant_id, m.type) x
       GROUP BY tenant_id, type
    ),
    -- Lock order (no deadlocks; docs/guarantees.md): the trigger rows, the jobs ("jlock", then the ones
    -- they end), the tenants' counters ("uncount", read in full first), then tenant_pools rows in key
    -- order, as the claim does. The rows are locked with what each is charged, so the update below joins nothing else per row (joining "used" and
    -- "locked" again plans as a nested loop over both, quadratic in the batch's tenants).
    locked AS MATERIALIZED (
      SELECT tp.tenant_id, tp.type, u.n, u.total_ms, u.uncount FROM tenant_pools tp
        JOIN used u ON u.tenant_id = tp.tenant_id AND u.type = tp.type
       WHERE (SELECT count(*) FROM uncount) >= 0 ${at("tp")}
       ORDER BY tp.tenant_id, tp.type
         FOR UPDATE OF tp
    ),
    charge AS (
      UPDATE tenant_pools tp
         SET vtime = tp.vtime + (l.total_ms - l.n * tp.cost_ms) / ${boundedWeight("t")},
             cost_ms = CASE WHEN l.n = 0 THEN tp.cost_ms
                            ELSE greatest(1, ${COST_KEEP} * tp.cost_ms + ${COST_TAKE} * (l.total_ms / l.n)) END,
             -- Every settled row was running (the fence), and none is now.
             running = tp.running - l.uncount
        FROM locked l JOIN tenants t ON t.id = l.tenant_id ${at("t", "id")}
       WHERE tp.tenant_id = l.tenant_id AND tp.type = l.type ${at("tp")}
    ),
    -- The same per fairness key, for the settled rows that have one: its correction by real worker
    -- time over its weight (the claim charged its tenant's estimate in the pool, read here as this
    -- statement found it), its running count (less the settled rows that were counted, plus the
    -- standby rows of the key moved in: a keyed standby trigger takes over only from its own key's run,
    -- standby.ts), and its recent worker time (sql/keys.ts). The correction goes to vcorr, not the indexed vtime (schema.ts, tenantKeys): the
    -- update is HOT. Locked in key order, after every tenant_pools row (lock order as above): count(*)
    -- reads all of "locked" first, where EXISTS would stop at its first row and lock the keys between
    -- two tenant_pools rows — a cycle with a claim, which locks them all first.
    kused AS (
      SELECT x.tenant_id, x.key, sum(x.total_ms) AS total_ms, sum(x.charged) AS charged, sum(x.uncount)::int AS uncount
        FROM (SELECT d.tenant_id, d.key, sum(greatest(1, d.duration_ms)) AS total_ms,
                     count(*) * coalesce(min(tp.cost_ms), 100) AS charged,
                     count(*) FILTER (WHERE NOT d.standby) AS uncount
                FROM done d LEFT JOIN tenant_pools tp ON tp.tenant_id = d.tenant_id AND tp.type = d.type ${at("tp")}
               WHERE d.key IS NOT NULL GROUP BY d.tenant_id, d.key, d.type
              UNION ALL
              SELECT m.tenant_id, m.key, 0, 0, -count(*) FROM moved m WHERE m.key IS NOT NULL GROUP BY m.tenant_id, m.key) x
       GROUP BY x.tenant_id, x.key
    ),
    klocked AS MATERIALIZED (
      SELECT k.tenant_id, k.key, u.total_ms, u.charged, u.uncount,
             ${boundedKeyWeight(sql`coalesce((k.override->>'weight')::float8, t.key_weight)`)} AS weight
        FROM tenant_keys k
        JOIN kused u ON u.tenant_id = k.tenant_id AND u.key = k.key
        JOIN tenants t ON t.id = k.tenant_id ${at("t", "id")}
       WHERE (SELECT count(*) FROM locked) >= 0 ${at("k")}
       ORDER BY k.tenant_id, k.key
         FOR UPDATE OF k
    ),
    kcharge AS (
      UPDATE tenant_keys k
         SET vcorr = k.vcorr + (l.total_ms - l.charged) / l.weight,
             running = k.running - l.uncount,
             work_ms = ${decayedWork(sql`k`)} + l.total_ms, work_at = now()
        FROM klocked l
       WHERE k.tenant_id = l.tenant_id AND k.key = l.key ${at("k")}
    )
    -- One text value (packed.ts): parsing it costs Node a fraction of what six columns × a thousand
    -- rows did, and building it costs Postgres less than JSON per row did.
    SELECT ${packRows(sql`d.id, d.tenant_id, d.job_id, d.type, d.status, d.duration_ms`)} AS settled
      FROM done d`;
}
