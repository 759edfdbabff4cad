// Failure notifications (docs/notifications.md): a tenant's channels, and its notifications as sent. A
// notification is a trigger of the tenant's notifications job (status `system`, pool
// fairway.notifications): claimed under the tenant's caps, leased, retried with backoff and recorded
// like any other trigger; its `notifications` row says what it carries and to which channel. They are
// made by the fan-out (notification-fanout.ts), in the transaction of what they report.
import { sql } from "drizzle-orm";
import { jsonColumn, pipelineTx, query, withDates, type Db } from "../db.ts";

/** The system pool notifications run in. */
export const NOTIFICATION_POOL = "fairway.notifications";
type ChannelType = "webhook" | "slack" | "email";

/** The events a channel may take (its `events`; none named: all of them). */
export const NOTIFICATION_EVENTS = ["trigger.dead", "job.paused", "job.recovered", "tenant.quota_exhausted"] as const;

/** The tenant's notifications job: one per tenant, made with its first channel. Its retry policy
 *  (the system pool's, made with defaults below) is what a notification gets. */
export const notificationJobId = (tenantId: string) => `job_notifications_${tenantId}`;
const NOTIFY_RETRY = { maxAttempts: 5, initialDelayMs: 5_000, maxDelayMs: 600_000 };

export interface ChannelRow {
  id: string;
  tenantId: string;
  type: ChannelType;
  url: string | null;
  to: string | null;
  events: string[] | null;
  windowSeconds: number;
  createdAt: Date;
}

const channelColumns = sql`id, tenant_id AS "tenantId", type, url, "to", events, window_seconds AS "windowSeconds",
  created_at AS "createdAt"`;

/** Where a channel sends, as the API and the dashboard show it. A Slack incoming-webhook URL is itself
 *  a credential (whoever has it can post to the workspace), so only its origin is shown. */
export function shownChannelTarget(c: Pick<ChannelRow, "type" | "url" | "to">): { to: string } | { url: string } {
  if (c.type === "email") return { to: c.to! };
  return { url: c.type === "slack" ? `${new URL(c.url!).origin}/…` : c.url! };
}

/** A channel, and (the first time) the tenant's notifications job and the system pool. The pool row (a
 *  reference table on the distributed layout, where a write is a transaction on every node) is written
 *  only while it is missing, before; the rest is one transaction of statements that each name the
 *  tenant, on its shard group alone (docs/scaling.md). */
export async function createChannel(db: Db, c: Omit<ChannelRow, "createdAt">): Promise<ChannelRow> {
  const readPool = () =>
    query<{ maxAttempts: number; initialDelayMs: number; maxDelayMs: number; backoff: string; jitter: string }>(
      db,
      sql`SELECT max_attempts AS "maxAttempts", initial_delay_ms AS "initialDelayMs", max_delay_ms AS "maxDelayMs",
                 backoff, jitter
            FROM pools WHERE type = ${NOTIFICATION_POOL}`,
    );
  let [pool] = await readPool();
  if (!pool) {
    await query(
      db,
      sql`INSERT INTO pools (type, max_attempts, initial_delay_ms, max_delay_ms)
          VALUES (${NOTIFICATION_POOL}, ${NOTIFY_RETRY.maxAttempts}, ${NOTIFY_RETRY.initialDelayMs}, ${NOTIFY_RETRY.maxDelayMs})
          ON CONFLICT DO NOTHING`,
    );
    [pool] = await readPool();
  }
  const p = pool!;
  const job = notificationJobId(c.tenantId);
  const [, , rows] = await pipelineTx(db, [
    // The job's retry policy is the pool's (admin pools API), refreshed with every channel made. (The
    // job's key is (id) on plain PostgreSQL and (tenant_id, id) on the layout: a conflict on either is
    // the job being there, and the update that follows refreshes it.)
    sql`INSERT INTO jobs (id, tenant_id, name, type, status, max_attempts, initial_delay_ms, max_delay_ms, backoff, jitter)
        VALUES (${job}, ${c.tenantId}, 'notifications', ${NOTIFICATION_POOL}, 'system', ${p.maxAttempts}, ${p.initialDelayMs},
                ${p.maxDelayMs}, ${p.backoff}, ${p.jitter})
        ON CONFLICT DO NOTHING`,
    sql`UPDATE jobs SET max_attempts = ${p.maxAttempts}, initial_delay_ms = ${p.initialDelayMs},
               max_delay_ms = ${p.maxDelayMs}, backoff = ${p.backoff}, jitter = ${p.jitter}
         WHERE tenant_id = ${c.tenantId} AND id = ${job}`,
    sql`INSERT INTO notification_channels (id, tenant_id, type, url, "to", events, window_seconds)
        VALUES (${c.id}, ${c.tenantId}, ${c.type}, ${c.url}, ${c.to}, ${textArray(c.events)}::text[], ${c.windowSeconds})
        RETURNING ${channelColumns}`,
  ]);
  return withDates(rows as ChannelRow[], "createdAt")[0];
}

/** A text[] literal (NULL for null): Citus takes no subquery inside an INSERT's VALUES. */
const textArray = (values: string[] | null) =>
  values === null ? null : `{${values.map((v) => `"${v.replace(/["\\]/g, "\\$&")}"`).join(",")}}`;

export async function listChannels(db: Db, tenantId: string, after: string | null, limit: number) {
  const rows = await query<ChannelRow>(
    db,
    sql`SELECT ${channelColumns} FROM notification_channels
         WHERE tenant_id = ${tenantId} AND id > ${after ?? ""} ORDER BY id LIMIT ${limit}`,
  );
  return withDates(rows, "createdAt");
}

export async function getChannel(db: Db, tenantId: string, id: string): Promise<ChannelRow | null> {
  const rows = await query<ChannelRow>(
    db,
    sql`SELECT ${channelColumns} FROM notification_channels WHERE tenant_id = ${tenantId} AND id = ${id}`,
  );
  return withDates(rows, "createdAt")[0] ?? null;
}

/** Delete a channel: its notifications not yet sent are cancelled, its fold windows forgotten, in one
 *  transaction on the tenant's shard group. */
export async function deleteChannel(db: Db, tenantId: string, id: string): Promise<boolean> {
  const [, gone] = await pipelineTx(db, [
    sql`UPDATE triggers SET status = 'cancelled', reason = 'channel_deleted', finished_at = now(), updated_at = now()
         WHERE tenant_id = ${tenantId}
           AND id IN (SELECT id FROM notifications WHERE tenant_id = ${tenantId} AND channel_id = ${id})
           AND status = 'pending'`,
    sql`DELETE FROM notification_channels WHERE tenant_id = ${tenantId} AND id = ${id} RETURNING id`,
    sql`DELETE FROM notification_folds WHERE tenant_id = ${tenantId} AND channel_id = ${id}`,
  ]);
  return gone.length > 0;
}

/** The ids in `ids` that are not channels of the tenant. */
export async function missingChannels(db: Db, tenantId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await query<{ id: string }>(
    db,
    sql`SELECT x AS id FROM jsonb_array_elements_text(${JSON.stringify(ids)}::jsonb) x
         WHERE NOT EXISTS (SELECT 1 FROM notification_channels c WHERE c.tenant_id = ${tenantId} AND c.id = x)`,
  );
  return rows.map((r) => r.id);
}

export interface NotificationRow {
  id: string;
  channelId: string;
  channelType: ChannelType;
  event: string;
  jobId: string | null;
  data: Record<string, unknown>;
  folded: number;
  createdAt: Date;
  status: string;
  attempts: number;
  finishedAt: Date | null;
}

/** A notification's delivery state, from its trigger's. */
const DELIVERY_STATUS: Record<string, "pending" | "sent" | "failed" | "cancelled"> = {
  pending: "pending",
  running: "pending",
  succeeded: "sent",
  dead: "failed",
  cancelled: "cancelled",
};

export function notificationStatus(n: Pick<NotificationRow, "status">): "pending" | "sent" | "failed" | "cancelled" {
  return DELIVERY_STATUS[n.status] ?? "sent";
}

/** A tenant's notifications, newest first, with their triggers' delivery state. */
export async function listNotifications(
  db: Db,
  tenantId: string,
  opts: { before: string | null; limit: number; channelId?: string; event?: string },
): Promise<NotificationRow[]> {
  const rows = await query<NotificationRow & { data: unknown }>(
    db,
    sql`
    SELECT n.id, n.channel_id AS "channelId", coalesce(c.type, 'webhook') AS "channelType", n.event, n.job_id AS "jobId",
           n.data, n.folded, n.created_at AS "createdAt", coalesce(t.status, 'unknown') AS status,
           coalesce(t.attempt_count, 0) AS attempts, t.finished_at AS "finishedAt"
      FROM notifications n
      LEFT JOIN triggers t ON t.tenant_id = n.tenant_id AND t.id = n.id
      LEFT JOIN notification_channels c ON c.tenant_id = n.tenant_id AND c.id = n.channel_id
     WHERE n.tenant_id = ${tenantId}
       ${opts.before ? sql`AND n.id < ${opts.before}` : sql``}
       ${opts.channelId ? sql`AND n.channel_id = ${opts.channelId}` : sql``}
       ${opts.event ? sql`AND n.event = ${opts.event}` : sql``}
     ORDER BY n.id DESC LIMIT ${opts.limit}`,
  );
  for (const r of rows) r.data = jsonColumn(r.data as Record<string, unknown>);
  return withDates(rows, "createdAt", "finishedAt") as NotificationRow[];
}

/** What the executor sends for one notification trigger; null when its channel was deleted. */
export interface NotificationDelivery {
  event: string;
  data: Record<string, unknown>;
  folded: number;
  createdAt: Date;
  channelType: ChannelType;
  url: string | null;
  to: string | null;
  /** The tenant's signing secrets in force (webhook channels are signed like deliveries). */
  secrets: string[];
}

export async function notificationDelivery(db: Db, id: string): Promise<NotificationDelivery | null> {
  const [row] = await query<NotificationDelivery & { data: unknown }>(
    db,
    sql`
    SELECT n.event, n.data, n.folded, n.created_at AS "createdAt", c.type AS "channelType", c.url, c."to",
           array_remove(ARRAY[tn.signing_secret,
             CASE WHEN tn.previous_secret_expires_at > now() THEN tn.previous_signing_secret END], NULL) AS secrets
      FROM notifications n
      JOIN notification_channels c ON c.id = n.channel_id
      JOIN tenants tn ON tn.id = n.tenant_id
     WHERE n.id = ${id}`,
  );
  if (!row) return null;
  row.data = jsonColumn(row.data as Record<string, unknown>);
  return withDates([row], "createdAt")[0] as NotificationDelivery;
}
