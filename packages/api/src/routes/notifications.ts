// Notification channels (where a tenant hears about dead letters, pauses and recoveries) and the
// notifications sent to them (docs/notifications.md). Sending is the executor's: a notification is a
// trigger of the tenant's notifications job, so it is fair, leased, retried and recorded.
import { isForbiddenAddress, newId, type Logger } from "@fairway/core";
import {
  type ChannelRow,
  createChannel,
  deleteChannel,
  getChannel,
  listChannels,
  listNotifications,
  NOTIFICATION_POOL,
  testChannel,
} from "@fairway/store";
import type { ResolvedDeps } from "../env.ts";
import { route } from "../route.ts";
import { announceWork } from "../announce.ts";
import { ApiError, fromZod, notFound } from "../errors.ts";
import { checkUrl } from "../job-input.ts";
import { createChannelBody, notificationListQuery, pageQuery } from "../schemas.ts";
import { channelJson, notificationJson, page } from "../serialize.ts";
import { queryOf, rawJsonBody } from "../validate.ts";

const CHANNEL_ID = { id: "The channel id" };

/** At most this many channels per tenant: each event fans out to every channel that takes it. */
const MAX_CHANNELS = 20;

/** Makes a channel from a request body (parsed JSON, or the dashboard's form as the same shape) with
 *  the API's rules; a refusal is an ApiError. The dashboard is handed this function, so a channel added
 *  there is validated, and refused, exactly as through the API. */
export async function addChannel(deps: ResolvedDeps, tenantId: string, raw: unknown, log: Logger): Promise<ChannelRow> {
  const parsed = createChannelBody.safeParse(raw);
  if (!parsed.success) throw fromZod(parsed.error);
  const body = parsed.data;
  if (body.type === "email" && deps.emailUnavailable) {
    throw new ApiError(400, "email_unavailable", `email channels cannot be created here: ${deps.emailUnavailable}`);
  }
  if (body.type !== "email" && body.url.includes("${secrets.")) {
    throw new ApiError(
      400,
      "validation_error",
      "url: a channel URL is stored as given; it takes no secret placeholders",
    );
  }
  const url = body.type === "email" ? null : checkUrl(body.url, deps.allowPrivateTargets, "url");
  // Notifications carry a signature and job details: https only. Plain http only where private
  // targets are allowed (local testing), and only to a private address, as the flag means.
  if (url && new URL(url).protocol === "http:") {
    const host = new URL(url).hostname;
    if (!deps.allowPrivateTargets || !(host === "localhost" || isForbiddenAddress(host))) {
      throw new ApiError(
        400,
        "validation_error",
        "url: must be an https URL (plain http only to a private address with FAIRWAY_ALLOW_PRIVATE_TARGETS=true)",
      );
    }
  }
  if ((await listChannels(deps.db, tenantId, null, MAX_CHANNELS)).length >= MAX_CHANNELS) {
    throw new ApiError(
      409,
      "too_many_channels",
      `a tenant may have at most ${MAX_CHANNELS} notification channels; delete one first`,
    );
  }
  const channel = await createChannel(deps.db, {
    id: newId("nch"),
    tenantId,
    type: body.type,
    url,
    to: body.type === "email" ? body.to : null,
    events: body.events ?? null,
    windowSeconds: body.windowSeconds,
  });
  log.info("notification channel created", { tenantId, channelId: channel.id, type: channel.type });
  return channel;
}

export const notificationRoutes = [
  route({
    method: "post",
    path: "/v1/notification-channels",
    summary: "Create a notification channel: webhook (signed Standard Webhooks envelope), slack or email",
    body: { name: "CreateChannel", example: { type: "webhook", url: "https://example.com/notify" } },
    ok: { status: 201, description: "The channel", json: "Channel" },
    errors: [400, 409],
    handler: async (c) => {
      const channel = await addChannel(c.var.deps, c.var.tenant.id, await rawJsonBody(c), c.var.log);
      return c.json(channelJson(channel), 201);
    },
  }),
  route({
    method: "get",
    path: "/v1/notification-channels",
    summary: "The tenant's notification channels",
    query: pageQuery,
    ok: { status: 200, description: "A page of channels", json: "ChannelPage" },
    errors: [400],
    handler: async (c) => {
      const q = queryOf(c, pageQuery);
      const rows = await listChannels(c.var.deps.db, c.var.tenant.id, q.cursor ?? null, q.limit);
      return c.json(page(rows, q.limit, channelJson));
    },
  }),
  route({
    method: "delete",
    path: "/v1/notification-channels/:id",
    summary: "Delete a channel (its notifications not yet sent are cancelled)",
    params: CHANNEL_ID,
    ok: { status: 204, description: "Deleted" },
    errors: [404],
    handler: async (c) => {
      if (!(await deleteChannel(c.var.deps.db, c.var.tenant.id, c.req.param("id"))))
        throw notFound("notification channel");
      c.var.log.info("notification channel deleted", { channelId: c.req.param("id") });
      return c.body(null, 204);
    },
  }),
  /** Queues a notification.test to the channel, whatever its fold window says; 202 with the notification. */
  route({
    method: "post",
    path: "/v1/notification-channels/:id/test",
    summary: "Queue a test notification to the channel (outside its fold window)",
    params: CHANNEL_ID,
    ok: { status: 202, description: "The queued notification", json: "Notification" },
    errors: [404],
    handler: async (c) => {
      const { deps, tenant } = c.var;
      const channel = await getChannel(deps.db, tenant.id, c.req.param("id"));
      if (!channel) throw notFound("notification channel");
      const made = await testChannel(deps.db, tenant.id, channel.id);
      if (!made) throw notFound("notification channel"); // deleted meanwhile
      announceWork(
        deps.coordinator,
        c.var.log,
        { type: NOTIFICATION_POOL, tenantId: tenant.id, dueAt: null },
        deps.now(),
      );
      const [row] = await listNotifications(deps.db, tenant.id, {
        before: `${made.id}~`,
        limit: 1,
        channelId: channel.id,
      });
      return c.json(notificationJson(row), 202);
    },
  }),
  route({
    method: "get",
    path: "/v1/notifications",
    summary: "Notifications, newest first: event, channel, when, delivery status",
    query: notificationListQuery,
    ok: { status: 200, description: "A page of notifications", json: "NotificationPage" },
    errors: [400],
    handler: async (c) => {
      const q = queryOf(c, notificationListQuery);
      const rows = await listNotifications(c.var.deps.db, c.var.tenant.id, {
        before: q.cursor ?? null,
        limit: q.limit,
        channelId: q.channelId,
        event: q.event,
      });
      return c.json(page(rows, q.limit, notificationJson));
    },
  }),
];
