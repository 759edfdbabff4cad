// Sending one notification: the handler of the fairway.notifications pool, which every executor
// serves. The trigger is an ordinary one (claimed under its tenant's caps, leased, retried, recorded);
// this reads what it carries and sends it to its channel. A webhook channel gets the Standard
// Webhooks envelope {type, timestamp, data}, signed with the tenant's secret like any delivery; Slack a
// readable {text}; email a plain-text message through the executor's mailer. A throw is a failed
// attempt, retried with backoff; a notification that runs out of attempts is dead and notifies no one
// (store notification-fanout.ts skips its pool).
import { checkTargetUrl, signWebhook, signWebhookSync } from "@fairway/core";
import { notificationDelivery, type Db, type NotificationDelivery } from "@fairway/store";
import type { Handler } from "./run-trigger.ts";
import type { Transport } from "./transport.ts";

/** Sends one plain-text email: nodemailer over SMTP on a Node server, or an HTTP mail API
 *  (http-mailer.ts). `signal` aborts it when the notification's attempt times out. */
export type Mailer = (msg: { to: string; subject: string; text: string }, signal?: AbortSignal) => Promise<void>;

export interface NotifyDeps {
  db: Db;
  transport: Transport;
  allowPrivateTargets: boolean;
  now: () => number;
  mailer?: Mailer;
  /** One call per attempt: sent, or failed (to be retried, or dead after the last attempt). */
  finished?: (n: { event: string; channelType: string; status: "sent" | "failed" }) => void;
}

export function notificationHandler(deps: NotifyDeps): Handler {
  return async (ctx) => {
    const n = await notificationDelivery(deps.db, ctx.triggerId);
    if (!n) return; // its channel was deleted: nothing to send
    try {
      await send(n, ctx.triggerId, ctx.signal, deps);
      deps.finished?.({ event: n.event, channelType: n.channelType, status: "sent" });
    } catch (err) {
      deps.finished?.({ event: n.event, channelType: n.channelType, status: "failed" });
      throw err;
    }
  };
}

async function send(n: NotificationDelivery, id: string, signal: AbortSignal, deps: NotifyDeps): Promise<void> {
  const data = { ...n.data, folded: n.folded };
  if (n.channelType === "email") {
    if (!deps.mailer)
      throw new Error("this executor cannot send email (configure SMTP or an HTTP mail API: docs/notifications.md)");
    const { subject, text } = describe(n.event, data);
    return deps.mailer({ to: n.to!, subject, text: `${text}\n\n${JSON.stringify(data, null, 2)}\n` }, signal);
  }
  const checked = checkTargetUrl(n.url!, { allowPrivate: deps.allowPrivateTargets });
  if (!checked.ok) throw new Error(checked.message);
  const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "Fairway-Webhooks/1" };
  let body: string;
  if (n.channelType === "slack") {
    const { subject, text } = describe(n.event, data);
    body = JSON.stringify({ text: `*${subject}*\n${text}` });
  } else {
    const timestampSec = Math.floor(deps.now() / 1000);
    body = JSON.stringify({ type: n.event, timestamp: n.createdAt.toISOString(), data });
    const toSign = { secrets: n.secrets, id, timestampSec, body };
    headers["webhook-id"] = id;
    headers["webhook-timestamp"] = String(timestampSec);
    headers["webhook-signature"] = signWebhookSync(toSign) ?? (await signWebhook(toSign));
  }
  const res = await deps.transport({
    url: checked.url.toString(),
    method: "POST",
    headers,
    body,
    signal,
    maxResponseBytes: 1024,
  });
  if (res.status < 200 || res.status >= 300) {
    const err = new Error(`HTTP ${res.status} from the ${n.channelType} channel`);
    // A redirect is never followed, so asking again gets the same answer: a 3xx carries its status and
    // is final (run-trigger.ts classifies it like a webhook's); anything else is retried.
    throw res.status >= 300 && res.status < 400 ? Object.assign(err, { httpStatus: res.status }) : err;
  }
}

type Data = Record<string, unknown> & { folded: number };
const job = (d: Data) => d.job as { id: string; name: string } | undefined;

/** A subject line and a few readable lines, for Slack and email. */
function describe(event: string, d: Data): { subject: string; text: string } {
  const j = job(d);
  const named = j ? `job "${j.name}" (${j.id})` : "";
  const short = j ? j.name : "";
  const folded =
    d.folded > 0 ? `\n${d.folded} more like it since the last notification were folded into this one.` : "";
  switch (event) {
    case "trigger.dead": {
      const t = d.trigger as { id: string; attempts: number };
      const last = d.lastAttempt as { outcome: string; httpStatus: number | null; error: string | null };
      const how = last.httpStatus !== null ? `HTTP ${last.httpStatus}` : (last.error ?? last.outcome);
      return {
        subject: `Fairway: ${short} failed`,
        text: `Trigger ${t.id} of ${named} is dead after ${t.attempts} attempt(s): ${how} (${String(d.reason)}). Replay it with POST /v1/triggers/${t.id}/replay.${folded}`,
      };
    }
    case "job.paused":
      return {
        subject: `Fairway: ${short} was paused`,
        text: `Fairway paused ${named}: ${String(d.reason)}. Resume it with POST /v1/jobs/${j?.id}/resume.${folded}`,
      };
    case "job.recovered":
      return { subject: `Fairway: ${short} recovered`, text: `${named} succeeded again after failing.${folded}` };
    case "tenant.quota_exhausted":
      return {
        subject: "Fairway: job quota reached",
        text: `A job could not be created: this tenant has reached its limit of ${String(d.limit)} jobs.${folded}`,
      };
    default:
      return { subject: "Fairway: test notification", text: String(d.message ?? event) };
  }
}
