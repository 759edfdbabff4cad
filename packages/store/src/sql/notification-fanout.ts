// The notification fan-out (docs/notifications.md): the events a settle, the materializer or a quota
// refusal reports become notifications, in the transaction of what they report — the settle of a dead
// letter, a pause, a recovery — so none is lost; a settle with none of those runs no statement of this
// file. Each event goes to the tenant's channels that take it, folded per channel, job and event type:
// at most one per window, and the next one says how many it folded. Channels themselves are
// notifications.ts; this file reads the settle's items by shape (SettledItem), so settle.ts and
// hand-off.ts import it and it imports neither.
import { sql, type SQL } from "drizzle-orm";
import { query, type Db } from "../db.ts";
import { NOTIFICATION_POOL, notificationJobId } from "./notifications.ts";
import { scopeTo } from "../layout/scope.ts";

/** What the fan-out reads of a settle's item (settle.ts, Settlement). */
export interface SettledItem {
  id: string;
  attempt: number;
  status: string;
  outcome: string;
  httpStatus?: number | null;
  error?: string | null;
  pauseJob?: boolean;
  recover?: boolean;
}

/** A notification trigger just made, for the ready-tenant index. */
export interface Notified {
  id: string;
  tenantId: string;
}

/** Notification ids: `ntf_` + the time in ms (hex) + random, so they sort by creation like trigger ids. */
const NEW_ID = sql.raw(
  `'ntf_' || lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0') || replace(gen_random_uuid()::text, '-', '')`,
);

/** The fan-out of the events `ev` (tenant_id, job_id, channel_id, event, data, at) yields: to each channel of the
 *  tenant that takes the event and that the job's `notify` names, folded per (channel, job, event). A
 *  fold row is updated under its lock (ON CONFLICT), so two transactions folding the same event cannot
 *  both send. `fold: false` (a channel test) sends whatever the window says. Returns the new triggers. */
function fanOut(events: SQL, fold = true, tenantId?: string): SQL {
  const at = scopeTo(tenantId);
  // The fold row's last notification is inside its channel's window. The time is the event's (`at`:
  // this transaction's now(), as the statement that made the event read it; on a Citus cluster a read
  // in a step of its own is a worker's), and a difference of times (immutable), not a time less an
  // interval (stable: time zones); the window comes with the row: Citus takes only immutable functions
  // and no other table in a DO UPDATE.
  const within = fold ? sql`excluded.sent_at - f.sent_at < make_interval(secs => excluded.window_seconds)` : sql`false`;
  return sql`
    ev AS (${events}),
    fan AS (
      SELECT c.id AS channel_id, ev.tenant_id, ev.job_id, coalesce(ev.job_id, '') AS subject, ev.event, ev.data, ev.at,
             c.window_seconds, nj.max_attempts AS notify_attempts, row_number() OVER w AS k, count(*) OVER w AS n
        FROM ev
        JOIN notification_channels c ON c.tenant_id = ev.tenant_id ${at("c")}
        LEFT JOIN jobs j ON j.id = ev.job_id AND j.tenant_id = ev.tenant_id ${at("j")}
        -- The tenant's notifications job, read here: the insert of its triggers below then reads no
        -- table, and on a Citus cluster it is not pushed into the shard as a query whose triggers
        -- (the queue's) would have to run distributed statements there.
        LEFT JOIN jobs nj ON nj.id = ${notificationJobId("")} || ev.tenant_id AND nj.tenant_id = ev.tenant_id ${at("nj")}
       -- A test names its channel; an event goes to the channels that take it and that its job's
       -- notify names (null: every channel; false: none).
       WHERE CASE WHEN ev.channel_id IS NOT NULL THEN c.id = ev.channel_id
                  ELSE (c.events IS NULL OR ev.event = ANY (c.events))
                       AND (j.notify IS NULL OR (jsonb_typeof(j.notify) = 'object' AND j.notify->'channels' ? c.id))
             END
      WINDOW w AS (PARTITION BY c.id, coalesce(ev.job_id, ''), ev.event)
    ),
    fold AS (
      -- Within the channel's window since the last one sent: folded, not sent. Otherwise sent, and it
      -- reports what was folded since the last one (kept in "reported" for RETURNING).
      -- The key named by its constraint: on a Citus cluster it also holds tenant_id (store citus.ts).
      INSERT INTO notification_folds AS f (tenant_id, channel_id, subject, event, sent_at, folded, reported, window_seconds)
      SELECT tenant_id, channel_id, subject, event, at, n - 1, 0, window_seconds FROM fan WHERE k = 1
      ON CONFLICT ON CONSTRAINT notification_folds_channel_id_subject_event_pk DO UPDATE
         SET window_seconds = excluded.window_seconds,
             sent_at = CASE WHEN ${within} THEN f.sent_at ELSE excluded.sent_at END,
             reported = CASE WHEN ${within} THEN f.reported ELSE f.folded END,
             folded = CASE WHEN ${within} THEN f.folded + excluded.folded + 1 ELSE excluded.folded END
      RETURNING f.channel_id, f.subject, f.event, f.reported, f.sent_at
    ),
    out AS (
      SELECT ${NEW_ID} AS id, fan.tenant_id, fan.channel_id, fan.event, fan.job_id, fan.data, fold.reported AS folded,
             fan.notify_attempts
        FROM fold JOIN fan ON fan.channel_id = fold.channel_id AND fan.subject = fold.subject
                          AND fan.event = fold.event AND fan.k = 1
       -- Sent: the row holds this event's time (not folded into an earlier one's).
       WHERE fold.sent_at = fan.at
    ),
    made AS (
      INSERT INTO notifications (id, tenant_id, channel_id, event, job_id, data, folded)
      SELECT id, tenant_id, channel_id, event, job_id, data, folded FROM out
    ),
    queued AS (
      INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts)
      SELECT o.id, o.tenant_id, ${notificationJobId("")} || o.tenant_id, ${NOTIFICATION_POOL}, 'manual', now(), now(),
             o.notify_attempts
        FROM out o WHERE o.notify_attempts IS NOT NULL
      RETURNING id, tenant_id
    )
    SELECT id, tenant_id AS "tenantId" FROM queued`;
}

/** What a settle reported, for the notifications it makes: dead letters, 410 pauses, and successes of
 *  jobs that were failing (ClaimedTrigger.failing). */
export function coldItems(items: SettledItem[]) {
  return items
    .filter((i) => i.status === "dead" || i.pauseJob || (i.recover && i.status === "succeeded"))
    .map((i) => [i.id, i.attempt, i.status, i.pauseJob || null, i.outcome, i.httpStatus ?? null, i.error ?? null]);
}

/** The statements to run after settle(items), in its transaction; null when the batch has nothing to
 *  report (the usual case: then nothing more runs). The first finds the rows that this transaction's settle
 *  really changed (finished at its now(), at the attempt the item settled), moves each job's failure
 *  streak, pauses a job whose streak reached its tenant's consecutiveFailureLimit, names the reason of
 *  a 410 pause, and makes the notifications. Notification triggers report nothing: a failed
 *  notification never notifies. */
/** `tenantId`: every item is that tenant's, and each table is read and written at it (a Citus cluster,
 *  docs/scaling.md). The second statement is then single-shard; the first inserts in its CTEs (the
 *  folds, the notifications, their triggers), which Citus runs as steps of their own, each at the
 *  tenant's shard group: a few round trips between the coordinator and the tenant's node, and no other
 *  node in the transaction. Only a batch with something to report pays them. */
export function notifyStatements(items: SettledItem[], tenantId?: string): SQL[] | null {
  const cold = coldItems(items);
  if (cold.length === 0) return null;
  return [notifyStatement(cold, tenantId), rewindStatement(cold, tenantId)];
}

function notifyStatement(cold: unknown[][], tenantId?: string): SQL {
  const at = scopeTo(tenantId);
  // The rows this transaction's settle changed: finished at its now(), at the item's attempt. On a Citus
  // cluster this statement runs in steps (its inserts), and a read in a step of its own runs on the
  // tenant's node, where now() is when that node's part of the transaction began, not the coordinator's
  // now() the settle wrote: there the time is read with the input, a step the coordinator runs itself.
  const layout = tenantId !== undefined;
  return sql`
    WITH input AS ${layout ? sql`MATERIALIZED` : sql``} (
      SELECT x->>0 AS id, (x->>1)::int AS attempt, x->>2 AS status, (x->>3)::boolean AS gone, x->>4 AS outcome,
             (x->>5)::int AS http_status, x->>6 AS error, now() AS now
        FROM jsonb_array_elements(${JSON.stringify(cold)}::jsonb) AS x
    ),
    hit AS (
      SELECT i.*, t.tenant_id, t.job_id, t.scheduled_for, t.attempt_count, t.reason, t.replayed_at
        FROM input i JOIN triggers t ON t.id = i.id ${at("t")}
       WHERE t.status = i.status AND t.attempt_count = i.attempt AND t.finished_at = i.now
         AND t.type <> ${NOTIFICATION_POOL}
    ),
    per_job AS (
      -- A replay that ends dead again is the same fire, already in the streak: it adds nothing to it.
      SELECT h.job_id, h.tenant_id, count(*) FILTER (WHERE h.status = 'dead' AND h.replayed_at IS NULL)::int AS dead,
             bool_or(h.status = 'succeeded') AS ok, bool_or(h.gone IS TRUE) AS gone,
             (array_agg(h.id ORDER BY h.id DESC) FILTER (WHERE h.status = 'succeeded'))[1] AS ok_trigger,
             -- Read here, in a grouped row no planner folds into the update below: Citus refuses now()
             -- inside a CASE of an update of a distributed table.
             max(h.now) AS now
        FROM hit h GROUP BY h.job_id, h.tenant_id
    ),
    jobup AS (
      UPDATE jobs j
         SET failure_streak = CASE WHEN p.ok THEN 0 ELSE j.failure_streak + p.dead END,
             status = CASE WHEN p.streak_paused THEN 'paused' ELSE j.status END,
             pause_reason = CASE WHEN p.streak_paused THEN 'consecutive_failures'
                                 WHEN p.gone_paused THEN 'http_410' ELSE j.pause_reason END,
             updated_at = CASE WHEN p.streak_paused THEN p.now ELSE j.updated_at END
        FROM (SELECT pj.*, j0.failure_streak AS before, j0.name,
                     NOT pj.ok AND tn.consecutive_failure_limit > 0 AND j0.status = 'active'
                       AND j0.failure_streak + pj.dead >= tn.consecutive_failure_limit AS streak_paused,
                     -- The settle's own 410 pause (its job_end), in this transaction.
                     pj.gone AND j0.status = 'paused' AND j0.updated_at = pj.now AND j0.pause_reason IS NULL AS gone_paused
                FROM per_job pj JOIN jobs j0 ON j0.id = pj.job_id AND j0.tenant_id = pj.tenant_id ${at("j0")}
                JOIN tenants tn ON tn.id = pj.tenant_id ${at("tn", "id")}) p
       WHERE j.id = p.job_id AND j.tenant_id = p.tenant_id ${at("j")} AND (p.dead > 0 OR p.gone_paused OR (p.ok AND p.before > 0))
      RETURNING j.id, j.tenant_id, p.name, j.pause_reason, p.streak_paused OR p.gone_paused AS paused,
                p.ok AND p.before > 0 AS recovered, p.before, p.ok_trigger, p.now
    ),
    cancelled AS (
      -- Paused for its failures: its pending triggers are cancelled as a pause by its owner would. One a
      -- claim holds this moment is left to it (SKIP LOCKED): this transaction holds ledger rows the
      -- claim may wait for (lock order, docs/guarantees.md).
      UPDATE triggers SET status = 'cancelled', reason = 'paused', finished_at = now(), updated_at = now()
       WHERE id IN (SELECT p.id FROM triggers p
                     WHERE p.job_id IN (SELECT id FROM jobup WHERE paused AND pause_reason = 'consecutive_failures')
                       AND p.status = 'pending' ${at("p")}
                       FOR UPDATE SKIP LOCKED) ${at("triggers")}
    ),
    ${fanOut(
      sql`
      SELECT h.tenant_id, h.job_id, NULL::text AS channel_id, 'trigger.dead' AS event,
             jsonb_build_object(
               'job', jsonb_build_object('id', h.job_id, 'name', j.name),
               'trigger', jsonb_build_object('id', h.id, 'scheduledFor', h.scheduled_for, 'attempts', h.attempt_count),
               'reason', h.reason,
               'lastAttempt', jsonb_build_object('outcome', h.outcome, 'httpStatus', h.http_status, 'error', h.error)) AS data,
             h.now AS at
        FROM hit h JOIN jobs j ON j.id = h.job_id AND j.tenant_id = h.tenant_id ${at("j")}
       WHERE h.status = 'dead'
      UNION ALL
      SELECT u.tenant_id, u.id, NULL, 'job.paused',
             jsonb_build_object('job', jsonb_build_object('id', u.id, 'name', u.name), 'reason', u.pause_reason), u.now
        FROM jobup u WHERE u.paused
      UNION ALL
      SELECT u.tenant_id, u.id, NULL, 'job.recovered',
             jsonb_build_object('job', jsonb_build_object('id', u.id, 'name', u.name),
                                'trigger', jsonb_build_object('id', u.ok_trigger), 'failedBefore', u.before), u.now
        FROM jobup u WHERE u.recovered`,
      true,
      tenantId,
    )}`;
}

/** A cron job paused for its failures had its fires written ahead cancelled (the first statement):
 *  its schedule goes back to the first of them not yet due, so a resume plans them again, as after a
 *  pause by its owner (job-lifecycle.ts, cancelAndRewind). Reads only the job's triggers ahead of now. */
function rewindStatement(cold: unknown[][], tenantId?: string): SQL {
  const at = scopeTo(tenantId);
  return sql`
    UPDATE jobs j
       SET next_fire_at = LEAST(j.next_fire_at, (
             SELECT min(t.scheduled_for) FROM triggers t
              WHERE t.job_id = j.id AND t.tenant_id = j.tenant_id ${at("t")} AND t.scheduled_for > now() AND t.status = 'cancelled' AND t.reason = 'paused'
                AND t.kind = 'scheduled' AND t.attempt_count = 0 AND t.finished_at = now()))
     WHERE j.id IN (SELECT x.job_id FROM triggers x
                     WHERE x.id IN (SELECT e->>0 FROM jsonb_array_elements(${JSON.stringify(cold)}::jsonb) e) ${at("x")})
       ${at("j")}
       AND j.cron IS NOT NULL AND j.status = 'paused' AND j.pause_reason = 'consecutive_failures'
       AND j.updated_at = now()`;
}

/** The notification triggers notifyStatements() made, as settled rows the executor's ready-index
 *  marking picks up (status pending). */
export function decodeNotified(rows: unknown[]) {
  return (rows as Notified[]).map((r) => ({
    id: r.id,
    tenantId: r.tenantId,
    jobId: notificationJobId(r.tenantId),
    type: NOTIFICATION_POOL,
    status: "pending",
    durationMs: 0,
    notification: true as const,
  }));
}

/** Cron jobs whose schedule can no longer be computed: paused with reason schedule_not_computable, in
 *  the materializer's transaction, and a job.paused for each. */
export async function pauseUncomputable(db: Db, jobIds: string[], errors: string[]): Promise<Notified[]> {
  return query<Notified>(
    db,
    sql`
    WITH paused AS (
      UPDATE jobs SET status = 'paused', pause_reason = 'schedule_not_computable', updated_at = now()
       WHERE id IN (SELECT jsonb_array_elements_text(${JSON.stringify(jobIds)}::jsonb)) AND status = 'active'
      RETURNING id, tenant_id, name
    ),
    errs AS (
      SELECT x.id, e.error FROM jsonb_array_elements_text(${JSON.stringify(jobIds)}::jsonb) WITH ORDINALITY x(id, n)
        JOIN jsonb_array_elements_text(${JSON.stringify(errors)}::jsonb) WITH ORDINALITY e(error, n) ON e.n = x.n
    ),
    ${fanOut(sql`
      SELECT p.tenant_id, p.id AS job_id, NULL::text AS channel_id, 'job.paused' AS event,
             jsonb_build_object('job', jsonb_build_object('id', p.id, 'name', p.name),
                                'reason', 'schedule_not_computable', 'error', e.error) AS data, now() AS at
        FROM paused p LEFT JOIN errs e ON e.id = p.id`)}`,
  );
}

/** tenant.quota_exhausted: a create was refused at maxJobs (folded like any event, per channel). */
export async function notifyQuotaExhausted(db: Db, tenantId: string, limit: number): Promise<Notified[]> {
  return query<Notified>(
    db,
    sql`WITH ${fanOut(sql`
      SELECT ${tenantId}::text AS tenant_id, NULL::text AS job_id, NULL::text AS channel_id,
             'tenant.quota_exhausted' AS event,
             jsonb_build_object('quota', 'maxJobs', 'limit', ${limit}::int) AS data, now() AS at`)}`,
  );
}

/** A test notification to one channel, sent whatever its fold window says. */
export async function testChannel(db: Db, tenantId: string, channelId: string): Promise<Notified | null> {
  const [row] = await query<Notified>(
    db,
    sql`WITH ${fanOut(
      sql`
      SELECT ${tenantId}::text AS tenant_id, NULL::text AS job_id, ${channelId}::text AS channel_id,
             'notification.test' AS event,
             jsonb_build_object('message', 'A test notification from Fairway: this channel works.') AS data,
             now() AS at`,
      false,
    )}`,
  );
  return row ?? null;
}
