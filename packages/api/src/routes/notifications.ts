// Notification channels (where a tenant hears about dead letters, pauses and recoveries) and the
// notifications sent to them (docs/notifications.md). Sending is the executor's: a notification is a
// trigger of the tenant's notifications job, so it is fair, leased, retried and recorded.
import { listChannels, listNotifications } from "@fairway/store";
import { addChannel, deleteChannel, testChannel } from "../commands/channels.ts";
import { route } from "../route.ts";
import { notificationListQuery, pageQuery } from "../schemas.ts";
import { channelJson, notificationJson, page } from "../serialize.ts";
import { queryOf, rawJsonBody } from "../validate.ts";

const CHANNEL_ID = { id: "The channel id" };

export const notificationRoutes = [
  route({
    method: "post",
    path: "/v1/notification-channels",
    summary: "Create a notification channel: webhook (signed Standard Webhooks envelope), slack or email",
    body: { name: "CreateChannel", example: { type: "webhook", url: "https://example.com/notify" } },
    ok: { status: 201, description: "The channel", json: "Channel" },
    errors: [400, 409],
    handler: async (c) => {
      const channel = await addChannel(c.var, c.var.tenant.id, await rawJsonBody(c));
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
      await deleteChannel(c.var, c.var.tenant.id, c.req.param("id"));
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
      const { channel, notificationId } = await testChannel(c.var, tenant.id, c.req.param("id"));
      const [row] = await listNotifications(deps.db, tenant.id, {
        before: `${notificationId}~`,
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
