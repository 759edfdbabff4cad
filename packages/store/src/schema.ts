// The Postgres schema: the only source of truth. Migrations in /drizzle are generated from this file
// by drizzle-kit and never hand-edited; CI fails when they drift from it. The one exception is what
// drizzle cannot declare, written by hand and named here: 0006 (the primary key's fillfactor,
// TRIGGER_KEY_FILLFACTOR) and the end of 0009 (the triggers that keep trigger_queue and dead_letters —
// docs/architecture.md, "The queue's triggers" — the backfill, and the triggers table's fillfactor).
import { DEFAULT_CATCHUP_WINDOW_MS, DEFAULT_COST_MS, DEFAULT_POOL_SETTINGS, DEFAULT_RETRY } from "@fairway/core";
import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  customType,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  pgView,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  type AnyPgColumn,
} from "drizzle-orm/pg-core";

const ts = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });

/** An identifier or key (ids, tenant ids, pool types, key hashes): text compared byte by byte.
 *  Every btree index on these columns compares keys on each insert and lookup; under the database's
 *  linguistic collation (en_US.UTF-8, or even C.UTF-8 on PostgreSQL 15) each comparison goes through
 *  strcoll, under "C" it is a memcmp. Ids are ASCII, so their order is the same either way. Every
 *  column holding one of these keys takes it, so joins between them never mix two collations
 *  (docs/decisions/0011-c-collation-keys.md). */
const key = customType<{ data: string }>({ dataType: () => 'text COLLATE "C"' });

/** A key no control character can get into. The claim and the settle send ids, types and words back
 *  joined by two control characters (sql/packed.ts); ids are generated or slugs, and the API accepts
 *  nothing else, but a row written past the API must not be able to break that either. */
const printable = (name: string, column: AnyPgColumn) => check(name, sql`${column} !~ '[[:cntrl:]]'`);

/** A quota plan (a tier: free, pro, …): values its tenants take where they set none of their own.
 *  null: the plan sets nothing there, and its tenants take the default. The claim never reads this
 *  table: a plan's values reach its tenants' own rows (the effective columns below) in the same
 *  transaction as the plan's change (sql/plans.ts). */
export const plans = pgTable(
  "plans",
  {
    id: key("id").primaryKey(),
    name: text("name"),
    maxInFlight: integer("max_in_flight"),
    weight: doublePrecision("weight"),
    ratePerSecond: doublePrecision("rate_per_second"),
    burst: integer("burst"),
    maxJobs: integer("max_jobs"),
    maxPayloadBytes: integer("max_payload_bytes"),
    historyDays: integer("history_days"),
    keyMaxInFlight: integer("key_max_in_flight"),
    keyRatePerSecond: doublePrecision("key_rate_per_second"),
    keyWeight: doublePrecision("key_weight"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [printable("plans_id_printable", t.id)],
);

export const tenants = pgTable(
  "tenants",
  {
    id: key("id").primaryKey(),
    name: text("name").notNull(),
    status: text("status").notNull().default("active"), // active | suspended
    // The tenant's plan (plans.id; no foreign key: the plan commands lock the plan row instead) and the
    // quota values set on the tenant itself, { maxInFlight: 5, keyWeight: 2, … } (sql/plans.ts,
    // OWN_FIELDS). The quota columns below are the effective values (own, else the plan's, else the
    // default), written with either in one transaction: they are what the claim reads.
    planId: key("plan_id"),
    own: jsonb("own").notNull().default({}),
    maxInFlight: integer("max_in_flight").notNull().default(10),
    weight: doublePrecision("weight").notNull().default(1),
    ratePerSecond: doublePrecision("rate_per_second"), // null = unlimited
    burst: integer("burst"), // bucket capacity; null = max(1, ratePerSecond)
    rateTokens: doublePrecision("rate_tokens"), // token bucket, refilled lazily by the claimer
    rateUpdatedAt: ts("rate_updated_at"),
    maxJobs: integer("max_jobs").notNull().default(10000),
    maxPayloadBytes: integer("max_payload_bytes").notNull().default(262144),
    signingSecret: text("signing_secret").notNull(),
    // During rotation the previous secret still signs deliveries until it expires.
    previousSigningSecret: text("previous_signing_secret"),
    previousSecretExpiresAt: ts("previous_secret_expires_at"),
    // History retention (executor retention.ts): finished triggers, their attempts and finished one-time
    // jobs are deleted this many days after they finished; dead ones after deadRetentionDays.
    historyRetentionDays: integer("history_retention_days").notNull().default(30),
    deadRetentionDays: integer("dead_retention_days").notNull().default(90),
    // Auto-pause (sql/notification-fanout.ts): a job whose last this-many triggers all dead-lettered is
    // paused (reason consecutive_failures); 0 turns it off.
    consecutiveFailureLimit: integer("consecutive_failure_limit").notNull().default(15),
    // Fairness keys (tenantKeys): the policy of every key of the tenant without an override.
    keyMaxInFlight: integer("key_max_in_flight"), // null = no cap per key
    keyRatePerSecond: doublePrecision("key_rate_per_second"), // null = no rate per key
    keyWeight: doublePrecision("key_weight").notNull().default(1),
    // Portal sessions and links carry the epoch they were made in and are refused once it moved on:
    // bumped by POST …/portal-sessions/revoke, a signing-secret rotation and a suspension.
    portalEpoch: integer("portal_epoch").notNull().default(0),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [printable("tenants_id_printable", t.id), index("tenants_plan_idx").on(t.planId)],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    id: key("id").primaryKey(),
    tenantId: key("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    prefix: text("prefix").notNull(), // first characters, to recognise a key in lists
    hash: key("hash").notNull(), // sha256 of the key; the key itself is never stored
    createdAt: ts("created_at").notNull().defaultNow(),
    lastUsedAt: ts("last_used_at"),
    revokedAt: ts("revoked_at"),
  },
  (t) => [uniqueIndex("api_keys_hash_idx").on(t.hash), index("api_keys_tenant_idx").on(t.tenantId)],
);

export const pools = pgTable("pools", {
  type: key("type").primaryKey(),
  concurrency: integer("concurrency").notNull().default(DEFAULT_POOL_SETTINGS.concurrency),
  timeoutMs: integer("timeout_ms").notNull().default(DEFAULT_POOL_SETTINGS.timeoutMs),
  leaseMs: integer("lease_ms").notNull().default(DEFAULT_POOL_SETTINGS.leaseMs),
  maxAttempts: integer("max_attempts").notNull().default(DEFAULT_RETRY.maxAttempts),
  initialDelayMs: integer("initial_delay_ms").notNull().default(DEFAULT_RETRY.initialDelayMs),
  maxDelayMs: integer("max_delay_ms").notNull().default(DEFAULT_RETRY.maxDelayMs),
  backoff: text("backoff").notNull().default("exponential"), // exponential | linear | fixed
  jitter: text("jitter").notNull().default("full"), // full | none
  // Response bytes an attempt keeps (64 KiB; the API allows up to 1 MiB).
  maxResponseBytes: integer("max_response_bytes").notNull().default(65536),
  // Pool virtual clock for fair share: a tenant returning from idle starts here (no banked credit).
  vclock: doublePrecision("vclock").notNull().default(0),
  // Paused: the claim takes nothing of this type (claim.ts); running work finishes, pending work waits.
  paused: boolean("paused").notNull().default(false),
  // Set and refreshed by handler workers (createWorker) that serve this type; null for webhook pools.
  // A set value makes the pool a handler pool: untargeted jobs are accepted, and executors without
  // its handler leave it alone.
  handlerSeenAt: ts("handler_seen_at"),
  updatedAt: ts("updated_at").notNull().defaultNow(),
});

/** Per tenant: live (active or paused) jobs, for the maxJobs quota in O(1). Created on a tenant's first
 *  job from a real count; changed in the same transaction as every job that becomes or stops being live. */
export const tenantCounters = pgTable("tenant_counters", {
  tenantId: key("tenant_id")
    .primaryKey()
    .references(() => tenants.id, { onDelete: "cascade" }),
  liveJobs: integer("live_jobs").notNull(),
});

/** Per tenant and pool: the fair-share ledger. */
export const tenantPools = pgTable(
  "tenant_pools",
  {
    tenantId: key("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    type: key("type").notNull(),
    vtime: doublePrecision("vtime").notNull().default(0), // worker-ms received ÷ weight
    costMs: doublePrecision("cost_ms").notNull().default(DEFAULT_COST_MS), // EWMA of real durations
    // The tenant's triggers of this pool that are `running`: +n by the claim, −n by the settle and by
    // release, in the statements that already lock and charge this row (and by the delete trigger in
    // migration 0009). The cap reads the sum over the tenant's pools. A count of running rows would need
    // an index on `status`, and any such index keeps both the claim and the settle from being HOT
    // updates (docs/decisions/0004-hot-claim-and-settle.md). A trigger whose lease expired counts until
    // it is reaped.
    running: integer("running").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.type] })],
);

export const jobs = pgTable(
  "jobs",
  {
    id: key("id").primaryKey(),
    tenantId: key("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    type: key("type").notNull(),
    cron: text("cron"), // null for one-time jobs
    timezone: text("timezone"),
    // Spread window in ms (docs/schedules.md, "Spread"): each fire is its cron instant plus an offset
    // in [0, spread_ms) from the job's id; next_fire_at and the triggers' instants are shifted.
    spreadMs: integer("spread_ms"),
    runAt: ts("run_at"), // one-time jobs
    target: jsonb("target"), // { url, method, headers } or null for in-process handlers
    payload: jsonb("payload"),
    maxAttempts: integer("max_attempts").notNull(),
    initialDelayMs: integer("initial_delay_ms").notNull(),
    maxDelayMs: integer("max_delay_ms").notNull(),
    backoff: text("backoff").notNull().default("exponential"), // exponential | linear | fixed
    jitter: text("jitter").notNull().default("full"), // full | none
    timeoutMs: integer("timeout_ms"),
    priority: integer("priority").notNull().default(0),
    overlap: text("overlap").notNull().default("allow"),
    misfire: text("misfire").notNull().default("fire_once"),
    delivery: text("delivery").notNull().default("at_least_once"), // at_least_once | at_most_once
    catchupWindowMs: integer("catchup_window_ms").notNull().default(DEFAULT_CATCHUP_WINDOW_MS),
    // active | paused | completed | failed | cancelled, or system: a tenant's notifications job (sql/notifications.ts),
    // which no list shows and no lifecycle route changes.
    status: text("status").notNull().default("active"),
    // Why a job was paused by Fairway (http_410, consecutive_failures, schedule_not_computable); null
    // when active or paused by its owner.
    pauseReason: text("pause_reason"),
    // Triggers in a row that ended dead (reset by a success after one, and by resume): auto-pause.
    failureStreak: integer("failure_streak").notNull().default(0),
    // Which channels hear about it: null = every channel of the tenant, false = none,
    // { channels: [ids] } = those.
    notify: jsonb("notify"),
    nextFireAt: ts("next_fire_at"),
    idempotencyKey: key("idempotency_key"),
    idempotencyHash: text("idempotency_hash"),
    // Fairness key (tenantKeys): the tenant's share is divided among its keys; null = no key, claimed
    // as a job without one always was. Carried by the job's triggers.
    key: key("key"),
    // A debounced one-time job (sql/debounce.ts): { key, periodMs, maxWaitMs, deadline, folded }, the
    // creates it folded counted in `folded`; null for any other job.
    debounce: jsonb("debounce"),
    // What a due trigger does while the job's key is at its cap (sql/on-busy.ts): queue | skip |
    // replace_queued | cancel_running. Only with a key.
    onBusy: text("on_busy").notNull().default("queue"),
    // The tenant's labels, { name: value } (at most 10; the API checks the shape): GET /v1/jobs?tag=
    // filters on them (jobs_tags_idx), and the delivery envelope carries them. NULL: none.
    tags: jsonb("tags"),
    // The W3C trace context of the create request (docs/observability.md): a one-time job's triggers
    // join this trace, a cron job's fires start their own linked to it. Validated at the API (core
    // trace-context.ts); NULL: the create carried none.
    traceparent: text("traceparent"),
    tracestate: text("tracestate"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [
    index("jobs_tenant_idx").on(t.tenantId, t.id),
    // The onBusy pass: the few live jobs with a policy other than queue (none: one empty index probe).
    index("jobs_on_busy_idx").on(t.tenantId, t.key).where(sql`on_busy <> 'queue' AND status = 'active'`),
    // GET /v1/jobs?key=: a tenant's jobs of one key. Partial: jobs without a key cost no entry.
    index("jobs_key_idx").on(t.tenantId, t.key, t.id).where(sql`key IS NOT NULL`),
    // GET /v1/jobs?tag=k:v: containment (tags @> {…}) through GIN; jsonb_path_ops keeps one entry per
    // name and value pair. Partial: jobs without tags cost no entry, and a create without them no work.
    index("jobs_tags_idx").using("gin", sql`${t.tags} jsonb_path_ops`).where(sql`tags IS NOT NULL`),
    printable("jobs_key_printable", t.key),
    uniqueIndex("jobs_idempotency_idx").on(t.tenantId, t.idempotencyKey),
    // The materializer's scan: active cron jobs by next fire.
    index("jobs_due_cron_idx").on(t.nextFireAt).where(sql`status = 'active' and cron is not null`),
    printable("jobs_id_printable", t.id),
    printable("jobs_type_printable", t.type),
  ],
);

/** Leaf fill of the two indexes whose key a trigger keeps for life, triggers_pkey and triggers_job_idx.
 *  Claim and settle are HOT updates except where a heap page has no room for the new version; then
 *  each adds an entry with the same key, and on full leaf pages those set off bottom-up deletion and
 *  page splits. Half-full pages take them in place, and by the settle the insert's version is dead and
 *  reclaimable. The price is index space while triggers wait
 *  (docs/decisions/0005-trigger-key-fillfactor.md). The primary key takes the setting in migration
 *  0006, hand-written: drizzle cannot declare it. */
export const TRIGGER_KEY_FILLFACTOR = 50;

/** The third key of triggers_job_idx: true for a scheduled trigger, NULL for a manual run. */
export const SCHEDULED_KEY = "(CASE WHEN kind = 'scheduled' THEN true END)";
/** `ON CONFLICT <this>`: a second scheduled trigger of the same job at the same instant. */
export const jobInstantConflict = sql.raw(`(job_id, scheduled_for, ${SCHEDULED_KEY})`);

export const triggers = pgTable(
  "triggers",
  {
    id: key("id").primaryKey(),
    tenantId: key("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    jobId: key("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    type: key("type").notNull(), // the pool; copied from the job so the claim needs no join
    kind: text("kind").notNull().default("scheduled"), // scheduled | manual
    scheduledFor: ts("scheduled_for").notNull(),
    status: text("status").notNull().default("pending"),
    priority: integer("priority").notNull().default(0),
    // onBusy cancel_running (sql/on-busy.ts): a newer trigger of its key asks this running one to stop;
    // its executor polls the flag (executor/cancel-watch.ts), aborts the run and records it cancelled.
    cancelRequested: boolean("cancel_requested").notNull().default(false),
    // Overlap policy skip / buffer_one: never claimed while another trigger of its job is running.
    exclusive: boolean("exclusive").notNull().default(false),
    attemptCount: integer("attempt_count").notNull().default(0),
    maxAttempts: integer("max_attempts").notNull(),
    nextAttemptAt: ts("next_attempt_at").notNull(),
    leaseOwner: text("lease_owner"),
    leaseToken: text("lease_token"),
    leaseExpiresAt: ts("lease_expires_at"),
    reason: text("reason"), // why skipped / cancelled / dead / unknown
    // Set by a replay of the dead trigger (its triggeredBy is then "replay"); NULL otherwise, which
    // costs a row nothing.
    replayedAt: ts("replayed_at"),
    // At-most-once delivery: the attempt durably recorded as starting before its request left
    // (sql/sending.ts). A trigger whose lease is lost while this equals attempt_count may have been
    // delivered: the reaper ends it `unknown` (lost_in_flight), never sent again. No index reads it.
    sendingAttempt: integer("sending_attempt"),
    // A running trigger claimed on standby (sql/standby.ts): leased to its executor, which starts it in
    // the slot one of its tenant's runs frees, but not counted in tenant_pools.running until that
    // settle records the hand-over. Meaningful only while status = 'running'; every claim sets it.
    standby: boolean("standby").notNull().default(false),
    // Its job's fairness key (jobs.key), copied so that claim, settle and release need no join; NULL,
    // which costs a row nothing, for a job without one.
    key: key("key"),
    // The backfill that made it (kind 'backfill', sql/backfill.ts); NULL, which costs a row nothing,
    // for any other trigger. Never changes, so claim and settle stay HOT.
    backfillId: key("backfill_id"),
    // A re-run (kind 'rerun', sql/trigger-verbs.ts): the finished trigger it re-runs, and what it sends
    // instead of its job's { payload?, body? }, read by the executor before its request (executor.ts).
    // NULL, which costs a row nothing, for any other trigger; never changed, so claim and settle stay HOT.
    rerunOf: key("rerun_of"),
    override: jsonb("override"),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
    finishedAt: ts("finished_at"),
    // A first attempt that succeeded is kept here, in the row version its settle writes anyway, not as
    // an attempt_log row: most triggers succeed at once, and that row with its index entry would be a
    // large share of a trigger's cost (docs/decisions/0006-first-success-in-trigger-row.md). Set only
    // for that case, so one test tells where a trigger's first attempt is: ok_started_at IS NOT NULL.
    // Its outcome is "success" and its error null by definition (settle's `ok`).
    okStartedAt: ts("ok_started_at"),
    okDurationMs: integer("ok_duration_ms"),
    okHttpStatus: integer("ok_http_status"),
    okResponseBody: text("ok_response_body"),
    // The rest of that attempt's record, when it has any, is a success_detail row (successDetail).
  },
  (t) => [
    // A job's triggers by instant, and at most one scheduled trigger per (job, instant), ever, in one
    // index. The third key is true for a scheduled trigger and NULL for a manual run; NULLs are
    // distinct, so manual runs never collide. One index, not a plain one next to a partial unique one:
    // a second index is a second entry for every non-HOT version. An insert names it by jobInstantConflict.
    uniqueIndex("triggers_job_idx")
      .on(t.jobId, t.scheduledFor, sql.raw(SCHEDULED_KEY))
      .with({ fillfactor: TRIGGER_KEY_FILLFACTOR }),
    // A backfill's triggers (its counts, its cancel). Partial: other triggers cost no entry.
    index("triggers_backfill_idx").on(t.backfillId).where(sql`backfill_id IS NOT NULL`),
  ],
);

/** The pending triggers, the claim's queue: a row here for each trigger whose status is `pending`, with
 *  what the claim orders and filters on. Migration 0009's triggers keep it: an insert of pending
 *  triggers adds their rows (one statement trigger per insert), and an update that moves a trigger into
 *  or out of `pending`, or changes a pending one's due time, priority, type or exclusive flag, adds,
 *  changes or removes its row — except the claim's own pending → running, which deletes the rows it
 *  claims itself. No index on `triggers` reads a column the claim or a success changes, so both
 *  updates are HOT: no new entries in triggers' two key indexes
 *  (docs/decisions/0004-hot-claim-and-settle.md). No foreign keys: their per-row checks would cost
 *  every insert; triggers are deleted only finished (by retention, sql/retention.ts) or by tests, and
 *  the delete trigger removes their rows then. */
export const triggerQueue = pgTable(
  "trigger_queue",
  {
    id: key("id").primaryKey(),
    tenantId: key("tenant_id").notNull(),
    jobId: key("job_id").notNull(),
    type: key("type").notNull(),
    priority: integer("priority").notNull(),
    exclusive: boolean("exclusive").notNull(),
    nextAttemptAt: ts("next_attempt_at").notNull(),
    key: key("key"),
  },
  (t) => [
    // The claim: a tenant's due work in one pool, best first.
    index("trigger_queue_claim_idx").on(t.tenantId, t.type, t.priority.desc(), t.nextAttemptAt),
    // The keyed claim (claim-keys.ts, keyedIds): one key's due work in one pool, best first. Partial: a
    // trigger without a key costs no entry.
    index("trigger_queue_key_idx")
      .on(t.tenantId, t.type, t.key, t.priority.desc(), t.nextAttemptAt)
      .where(sql`key IS NOT NULL`),
    // Candidate tenants per pool (skip-scan) and the ready-index rebuild.
    index("trigger_queue_type_idx").on(t.type, t.tenantId, t.nextAttemptAt),
  ],
);

/** Per tenant and fairness key: the key's ledger and its override (docs/fairness.md, "Fairness keys").
 *  A row is made by the first queued trigger of its key (migration 0020's triggers) or by an override;
 *  retention removes rows of keys idle past it that carry no override (sql/retention.ts).
 *  - `queued`: the key's rows in trigger_queue, over all pools, kept by the queue's triggers and the
 *    claim's and the standby claim's dequeue. Only keys with queued work are in `tenant_keys_due_idx`,
 *    which the claim walks in virtual-time order: an idle key costs the claim nothing.
 *  - `running`: the key's running triggers not on standby, +n by the claim under the tenant lock, ±0 by
 *    a settle that hands a finished run's slot to a standby trigger of the key (sql/standby.ts), −n by
 *    settle, release and the triggers' sync and delete functions; the per-key cap reads it, as the
 *    tenant cap reads tenant_pools.running.
 *  - `vtime`: worker-ms received ÷ weight, charged by the claim at its tenant's run-time estimate in
 *    the pool (tenant_pools.cost_ms) and corrected by the real duration at settle; a key that becomes
 *    backlogged starts at the tenant's least backlogged vtime. No estimate per key: a key with few runs
 *    would learn its own too slowly, and the settle's correction already charges what it used. */
export const tenantKeys = pgTable(
  "tenant_keys",
  {
    tenantId: key("tenant_id").notNull(),
    key: key("key").notNull(),
    vtime: doublePrecision("vtime").notNull().default(0),
    running: integer("running").notNull().default(0),
    queued: integer("queued").notNull().default(0),
    // The settles' corrections of vtime (real worker-ms less the claim's charge, ÷ weight) not yet in
    // vtime: kept out of the indexed column so that a settle's update of the row is HOT (it changes no
    // indexed column). The next claim of the key, or its next backlog, folds it into vtime; the claim's
    // key slots read vtime + vcorr.
    vcorr: doublePrecision("vcorr").notNull().default(0),
    rateTokens: doublePrecision("rate_tokens"),
    rateUpdatedAt: ts("rate_updated_at"),
    // Worker-ms settled, halved every KEY_WORK_HALF_LIFE_S as of work_at (sql/keys.ts): the key's
    // recent worker time, for workerTimeShare and topKeys.
    workMs: doublePrecision("work_ms").notNull().default(0),
    workAt: ts("work_at").notNull().defaultNow(),
    // The last time work of the key was queued: retention's clock (a key is deleted only with nothing
    // queued or running). No index reads it: claim and settle change vtime (tenant_keys_due_idx), so
    // their updates are not HOT and every index of the table takes an entry per update; retention
    // finds idle keys by a scan it stops after a batch.
    activeAt: ts("active_at").notNull().defaultNow(),
    // { maxInFlight?, ratePerSecond?, weight? } set by the tenant (sql/keys.ts); a field absent takes
    // the tenant's default (tenants.key_*). NULL: no override.
    override: jsonb("override"),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.key] }),
    index("tenant_keys_due_idx").on(t.tenantId, t.vtime, t.key).where(sql`queued > 0`),
    printable("tenant_keys_key_printable", t.key),
  ],
);

/** The dead letters: a row per trigger whose status is `dead`, kept by migration 0009's sync trigger
 *  (a settle to dead adds it, a replay removes it). Listing them needed an index on `status`, which
 *  would make every claim and settle a non-HOT update (see triggerQueue), and a generated `dead` column
 *  with its own index would cost every claim and settle an index entry, for a row few triggers reach. */
export const deadLetters = pgTable(
  "dead_letters",
  { tenantId: key("tenant_id").notNull(), triggerId: key("trigger_id").notNull() },
  (t) => [primaryKey({ columns: [t.tenantId, t.triggerId] })],
);

/** One row per claim: its lease token, and the triggers it claimed. The reaper finds expired leases
 *  here (an index on the triggers' lease columns would make the claim's update non-HOT). `expiresAt` is
 *  the claim's lease, moved on by renewals; each trigger keeps its own lease_expires_at, which decides.
 *  The reaper deletes a row once none of its triggers is still running under its token. */
export const leases = pgTable("leases", {
  token: key("token").primaryKey(),
  /** The claim's tenant when it claimed for one tenant (always, on a Citus cluster, where leases are
   *  distributed by it: docs/scaling.md); null for a claim across tenants. */
  tenantId: key("tenant_id"),
  owner: text("owner").notNull(),
  expiresAt: ts("expires_at").notNull(),
  triggerIds: text("trigger_ids").array().notNull(),
});

/** Live executors: each one upserts its row on every heartbeat (executor heartbeat.ts). One whose
 *  heartbeat is older than its own timeout is marked lost, and its leases are cut short so the reaper
 *  takes them at once, still fenced by their tokens. */
export const executors = pgTable("executors", {
  id: key("id").primaryKey(),
  host: text("host").notNull(),
  pid: integer("pid").notNull(),
  version: text("version").notNull(),
  startedAt: ts("started_at").notNull(),
  heartbeatAt: ts("heartbeat_at").notNull(),
  heartbeatTimeoutMs: integer("heartbeat_timeout_ms").notNull(),
  // { [type]: { concurrency, inFlight } } as of the last heartbeat.
  pools: jsonb("pools").notNull(),
  stoppedAt: ts("stopped_at"),
  lostAt: ts("lost_at"),
});

/** The fields of one finished attempt, as attempt_log stores them and the attempts view reads them. */
const attemptColumns = () => ({
  triggerId: key("trigger_id").notNull(),
  tenantId: key("tenant_id").notNull(),
  attempt: integer("attempt").notNull(),
  startedAt: ts("started_at").notNull(),
  durationMs: integer("duration_ms").notNull(),
  outcome: text("outcome").notNull(),
  httpStatus: integer("http_status"),
  error: text("error"),
  responseBody: text("response_body"),
  /** { request: {method, url, headers, body, truncated?}, responseHeaders, responseTruncated }: the
   *  request as sent (secrets as their placeholders), the response's headers. */
  detail: jsonb("detail"),
  createdAt: ts("created_at").notNull(),
});

/** One row per finished attempt, except a first attempt that succeeded (kept in its trigger's row, see
 *  `okStartedAt`): read them all through the `attempts` view. Written only by settle, in the statement
 *  that moves its trigger out of `running` under the same fence, so the trigger always exists. No
 *  foreign key on trigger_id: its per-row check is a large share of a settle
 *  (docs/decisions/0007-no-foreign-keys-on-hot-paths.md); retention deletes a trigger's attempt_log
 *  rows in the statement that deletes the trigger. */
export const attemptLog = pgTable(
  "attempt_log",
  { ...attemptColumns(), createdAt: ts("created_at").notNull().defaultNow() },
  // One row per attempt number: a late or duplicate settle can never double-count. The name is the
  // one it had while the table was "attempts" (renamed in migration 0007 without rebuilding it).
  (t) => [primaryKey({ name: "attempts_trigger_id_attempt_pk", columns: [t.triggerId, t.attempt] })],
);

/** The rest of a first attempt that succeeded, `{ request, responseHeaders, responseTruncated }` (see
 *  `detail` above), one row per trigger that has any: a webhook's, not an in-process handler's. Not in
 *  the trigger's row: a value this wide leaves the settle's new version no room in the page, and the
 *  update is no longer HOT. JSON text, not jsonb: the settle stores the string it was given, and the
 *  `attempts` view parses it for the few that are read (docs/decisions/0050-success-detail-side-table.md).
 *  Written only by settle, in the statement that sets the trigger's ok_* columns; deleted by retention
 *  with its trigger. No foreign key, as on attempt_log. */
export const successDetail = pgTable("success_detail", {
  triggerId: key("trigger_id").primaryKey(),
  /** Its trigger's tenant: on a Citus cluster the table is distributed by it (docs/scaling.md). */
  tenantId: key("tenant_id"),
  detail: text("detail").notNull(),
});

/** Every finished attempt: the attempt log, and the first-attempt successes kept in trigger rows with
 *  their success_detail. What readers (the API, operators in psql, the tests) query; only settle
 *  writes, to the three places. A lookup by trigger_id reaches each through its primary key. */
export const attempts = pgView("attempts", attemptColumns()).as(sql`
  SELECT trigger_id, tenant_id, attempt, started_at, duration_ms, outcome, http_status, error, response_body, detail, created_at
    FROM attempt_log
  UNION ALL
  SELECT t.id, t.tenant_id, 1, t.ok_started_at, t.ok_duration_ms, 'success', t.ok_http_status, NULL, t.ok_response_body,
         s.detail::jsonb, t.finished_at
    FROM triggers t LEFT JOIN success_detail s ON s.tenant_id = t.tenant_id AND s.trigger_id = t.id
   WHERE t.ok_started_at IS NOT NULL`);

/** A tenant's secrets, sealed (core secrets-crypto.ts: AES-256-GCM, the key id inside the value).
 *  Read by name at delivery, for the targets that name one; never returned by the API. */
export const secrets = pgTable(
  "secrets",
  {
    tenantId: key("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: key("name").notNull(),
    sealed: text("sealed").notNull(),
    keyId: text("key_id").notNull(),
    createdAt: ts("created_at").notNull().defaultNow(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.name] })],
);

/** Where a tenant hears about failures (docs/notifications.md): a webhook (Standard Webhooks envelope,
 *  signed with the tenant's secret), a Slack incoming webhook, or an email address. */
export const notificationChannels = pgTable(
  "notification_channels",
  {
    id: key("id").primaryKey(),
    tenantId: key("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    type: text("type").notNull(), // webhook | slack | email
    url: text("url"),
    to: text("to"),
    events: text("events").array(), // null = every event
    windowSeconds: integer("window_seconds").notNull().default(900),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [index("notification_channels_tenant_idx").on(t.tenantId, t.id)],
);

/** One row per notification, keyed by its trigger's id: the trigger (in the tenant's notifications job,
 *  pool fairway.notifications) carries its delivery state and attempts; this row what it says. */
export const notifications = pgTable(
  "notifications",
  {
    id: key("id").primaryKey(),
    tenantId: key("tenant_id").notNull(),
    channelId: key("channel_id").notNull(),
    event: text("event").notNull(),
    jobId: key("job_id"),
    data: jsonb("data").notNull(),
    // Events of the same job and type this channel did not send in the window before this one.
    folded: integer("folded").notNull().default(0),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [index("notifications_tenant_idx").on(t.tenantId, t.id)],
);

/** The fold window per channel, subject (a job id, or '' for tenant events) and event: when the last
 *  notification went out, and how many were folded since. */
export const notificationFolds = pgTable(
  "notification_folds",
  {
    /** The channel's tenant: on a Citus cluster the table is distributed by it (docs/scaling.md), so
     *  that a settle's fold is written on the tenant's node, not on every node. */
    tenantId: key("tenant_id"),
    channelId: key("channel_id").notNull(),
    subject: key("subject").notNull(),
    event: key("event").notNull(),
    sentAt: ts("sent_at").notNull(),
    folded: integer("folded").notNull().default(0),
    // What the last one sent reported as folded (the fold statement returns it from here).
    reported: integer("reported").notNull().default(0),
    // The channel's window as the last fold read it: the fold decides on the locked row with it
    // (notification-fanout.ts), reading no other table there (on a Citus cluster it could not).
    windowSeconds: integer("window_seconds"),
  },
  (t) => [primaryKey({ columns: [t.channelId, t.subject, t.event] })],
);

/** The open debounce of each (tenant, debounce key): the one-time job creates with that key fold into
 *  while its trigger is pending (sql/debounce.ts). The row is the lock concurrent creates queue on,
 *  from any API process; it points at the newest debounced job of the key. */
export const debounces = pgTable(
  "debounces",
  {
    tenantId: key("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    key: key("key").notNull(),
    jobId: key("job_id").notNull(),
    updatedAt: ts("updated_at").notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.key] }), printable("debounces_key_printable", t.key)],
);

/** A backfill of a cron job (sql/backfill.ts): the fires of [from, to) written as triggers of kind
 *  'backfill' behind the tenant's live work; its triggers carry its id. */
export const backfills = pgTable(
  "backfills",
  {
    id: key("id").primaryKey(),
    tenantId: key("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    jobId: key("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    fromAt: ts("from_at").notNull(),
    toAt: ts("to_at").notNull(),
    overlap: text("overlap").notNull(), // skip | allow
    fires: integer("fires").notNull(), // fires in the range
    skipped: integer("skipped").notNull(), // of those, not written (overlap skip)
    cancelledAt: ts("cancelled_at"),
    createdAt: ts("created_at").notNull().defaultNow(),
  },
  (t) => [index("backfills_job_idx").on(t.jobId, t.id)],
);
