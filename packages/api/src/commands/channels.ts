// Notification channel commands: add, delete, and queue a test, for the API and the dashboard alike.
import { isPrivateHost, newId } from "@fairway/core";
import {
  type ChannelRow,
  createChannel,
  deleteChannel as deleteChannelRow,
  getChannel,
  listChannels,
  NOTIFICATION_POOL,
  testChannel as testChannelRow,
} from "@fairway/store";
import { announceWork } from "../announce.ts";
import { ApiError, fromZod, notFound } from "../errors.ts";
import { checkUrl } from "../job-input.ts";
import { createChannelBody } from "../schemas.ts";
import type { CommandContext } from "./jobs.ts";

/** At most this many channels per tenant: each event fans out to every channel that takes it. */
const MAX_CHANNELS = 20;

/** Makes a channel from a request body (parsed JSON, or the dashboard's form as the same shape); a
 *  refusal is an ApiError, the same through the API and the dashboard. */
export async function addChannel({ deps, log }: CommandContext, tenantId: string, raw: unknown): Promise<ChannelRow> {
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
    if (!deps.allowPrivateTargets || !isPrivateHost(host)) {
      throw new ApiError(
        400,
        "validation_error",
        `url: must be an https URL; ${host} is a public host (plain http only to a private address or name, such as 127.0.0.1 or localhost, with FAIRWAY_ALLOW_PRIVATE_TARGETS=true)`,
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

/** Deletes a channel; its notifications not yet sent are cancelled. */
export async function deleteChannel({ deps, log }: CommandContext, tenantId: string, id: string): Promise<void> {
  if (!(await deleteChannelRow(deps.db, tenantId, id))) throw notFound("notification channel");
  log.info("notification channel deleted", { tenantId, channelId: id });
}

/** Queues a notification.test to the channel, whatever its fold window says. */
export async function testChannel({ deps, log }: CommandContext, tenantId: string, id: string) {
  const channel = await getChannel(deps.db, tenantId, id);
  if (!channel) throw notFound("notification channel");
  const made = await testChannelRow(deps.db, tenantId, channel.id);
  if (!made) throw notFound("notification channel"); // deleted meanwhile
  announceWork(deps.coordinator, log, { type: NOTIFICATION_POOL, tenantId, dueAt: null }, deps.now());
  return { channel, notificationId: made.id };
}
