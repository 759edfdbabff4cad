/** @jsxImportSource hono/jsx */
// A tenant's notification channels and the notifications sent to them. A channel is added through the
// API's own function (DashboardDeps.addChannel): the form is turned into the API's body shape and gets
// the API's validation and refusals, word for word. Delete and "Send test" run the store functions the
// API's routes run. Targets are shown as the API shows them: a Slack URL is a credential, so only its
// origin.
import type { Context } from "hono";
import { Hono } from "hono";
import {
  type ChannelRow,
  listChannels,
  listNotifications,
  NOTIFICATION_EVENTS,
  notificationStatus,
  shownChannelTarget,
} from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { refusalOf } from "./errors.ts";
import { When } from "./time.tsx";
import { PAGE_SIZE } from "./forms.ts";
import { Pager, PostForm, StatusChip } from "./layout.tsx";
import { type Flash, page } from "./tenant-shell.tsx";

export const notificationsPage = new Hono<DashEnv>();

const DONE: Record<string, string> = {
  added: "Channel added. It gets the events it takes from now on.",
  deleted: "Channel deleted. Its notifications not yet sent were cancelled.",
  tested: "Test notification queued. It is listed below; this page refreshes until it is sent.",
};

/** What the add-channel form last held, to show it again with the refusal. */
interface AddForm {
  type: string;
  url: string;
  to: string;
  events: string[];
  windowSeconds: string;
}

const EMPTY_FORM: AddForm = { type: "webhook", url: "", to: "", events: [], windowSeconds: "900" };

const text = (v: unknown) => (typeof v === "string" ? v : "");

/** The form as the API's request body: the address field of the chosen type, the checked events (none
 *  checked: left out, so every event), and the window as a number (empty: left out, the default). */
function apiBody(f: AddForm): Record<string, unknown> {
  const body: Record<string, unknown> = { type: f.type };
  if (f.type === "email") body.to = f.to.trim();
  else body.url = f.url.trim();
  if (f.events.length > 0) body.events = f.events;
  if (f.windowSeconds.trim() !== "") body.windowSeconds = Number(f.windowSeconds);
  return body;
}

function fmtWindow(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** The job's name as the notification carries it (trigger.dead, job.paused, job.recovered). */
function jobName(data: Record<string, unknown>): string | null {
  const name = (data.job as { name?: unknown } | undefined)?.name;
  return typeof name === "string" ? name : null;
}

function target(ch: ChannelRow): string {
  const t = shownChannelTarget(ch);
  return "to" in t ? t.to : t.url;
}

async function render(
  c: Context<DashEnv>,
  opts: { form?: AddForm; error?: string; flash?: Flash; status?: 200 | 400 } = {},
) {
  const d = c.var.dash;
  const base = c.var.base;
  const before = opts.form ? null : (c.req.query("before")?.slice(0, 100) ?? null);
  const [channels, rows] = await Promise.all([
    listChannels(d.db, c.var.tenantId, null, PAGE_SIZE),
    listNotifications(d.db, c.var.tenantId, { before, limit: PAGE_SIZE + 1 }),
  ]);
  const list = rows.slice(0, PAGE_SIZE);
  const next =
    rows.length > PAGE_SIZE ? `${base}/notifications?before=${encodeURIComponent(list[list.length - 1].id)}` : null;
  const done = c.req.query("done");
  const flash =
    opts.flash !== undefined ? opts.flash : done && DONE[done] ? { kind: "ok" as const, text: DONE[done] } : null;
  const form = opts.form ?? EMPTY_FORM;
  const csrf = c.var.csrf;
  const live = list.some((n) => notificationStatus(n) === "pending") && !before;
  return page(
    c,
    "Notifications",
    "/notifications",
    <>
      <h1>Notifications</h1>
      <p class="sub">
        Where this account hears about dead letters, paused jobs, recoveries and a full job quota, without polling. At
        most one notification per job and event in a channel's fold window; the next one counts those folded into it.
      </p>
      <h2 id="channels-h">Channels</h2>
      {channels.length === 0 ? (
        <p class="card empty">No channels: nothing is notified. Add one below.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack" aria-labelledby="channels-h">
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Target</th>
                <th scope="col">Events</th>
                <th scope="col">Fold window</th>
                <th scope="col">Id</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {channels.map((ch) => {
                const url = `${base}/notifications/channels/${encodeURIComponent(ch.id)}`;
                return (
                  <tr>
                    <td data-label="Type">{ch.type}</td>
                    <td data-label="Target" class="mono">
                      {target(ch)}
                    </td>
                    <td data-label="Events">{ch.events ? ch.events.join(", ") : "all"}</td>
                    <td data-label="Fold window">{fmtWindow(ch.windowSeconds)}</td>
                    <td data-label="Id" class="mono">
                      {ch.id}
                    </td>
                    <td data-label="Actions">
                      <div class="row-actions">
                        <PostForm action={`${url}/test`} csrf={csrf}>
                          <button type="submit" class="secondary" aria-label={`Send a test notification to ${ch.id}`}>
                            Send test
                          </button>
                        </PostForm>
                        <PostForm action={`${url}/delete`} csrf={csrf}>
                          <button type="submit" class="danger" aria-label={`Delete channel ${ch.id}`}>
                            Delete
                          </button>
                        </PostForm>
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <section class="card" aria-labelledby="add-h">
        <h2 id="add-h">Add a channel</h2>
        {opts.error && (
          <p class="flash err" role="alert">
            {opts.error}
          </p>
        )}
        <PostForm action={`${base}/notifications/channels`} csrf={csrf} label="Add a channel">
          <div class="field">
            <label for="ch-type">Type</label>
            <select id="ch-type" name="type">
              {(["webhook", "slack", "email"] as const).map((t) => (
                <option value={t} selected={form.type === t}>
                  {t === "webhook" ? "Webhook (signed JSON)" : t === "slack" ? "Slack (incoming webhook)" : "Email"}
                </option>
              ))}
            </select>
          </div>
          <div class="field">
            <label for="ch-url">URL (webhook or Slack)</label>
            <input
              id="ch-url"
              name="url"
              inputmode="url"
              class="mono"
              value={form.url}
              autocomplete="off"
              aria-describedby="ch-url-hint"
            />
            <p class="hint" id="ch-url-hint">
              An absolute https URL. A Slack URL is kept as a credential: only its origin is shown again.
            </p>
          </div>
          <div class="field">
            <label for="ch-to">Email address (email)</label>
            <input id="ch-to" name="to" inputmode="email" value={form.to} autocomplete="off" />
          </div>
          <fieldset class="checks">
            <legend>Events</legend>
            {NOTIFICATION_EVENTS.map((ev) => (
              <label>
                <input type="checkbox" name="events" value={ev} checked={form.events.includes(ev)} />
                <span class="mono">{ev}</span>
              </label>
            ))}
            <p class="hint">None checked: every event, including ones added later.</p>
          </fieldset>
          <div class="field">
            <label for="ch-window">Fold window (seconds)</label>
            <input
              id="ch-window"
              name="windowSeconds"
              inputmode="numeric"
              value={form.windowSeconds}
              aria-describedby="ch-window-hint"
            />
            <p class="hint" id="ch-window-hint">
              At most one notification per job and event in this window (1–86400; 900 is 15 minutes).
            </p>
          </div>
          <button type="submit">Add channel</button>
        </PostForm>
      </section>
      <h2 id="sent-h">Recent notifications</h2>
      <div data-live={live ? `${base}/notifications/live` : undefined} data-every="2000">
        <NotificationTable c={c} list={list} />
      </div>
      <Pager next={next} first={before ? `${base}/notifications` : null} label="Notification pages" />
    </>,
    flash,
    opts.status ?? 200,
  );
}

function NotificationTable(props: { c: Context<DashEnv>; list: Awaited<ReturnType<typeof listNotifications>> }) {
  const base = props.c.var.base;
  if (props.list.length === 0) return <p class="card empty">No notifications yet.</p>;
  return (
    <div class="table-wrap">
      <table class="stack" aria-labelledby="sent-h">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Event</th>
            <th scope="col">Job</th>
            <th scope="col">Channel</th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Attempts
            </th>
            <th scope="col" class="num">
              Folded
            </th>
          </tr>
        </thead>
        <tbody>
          {props.list.map((n) => (
            <tr>
              <td data-label="When">
                <When d={n.createdAt} />
              </td>
              <td data-label="Event" class="mono">
                {n.event}
              </td>
              <td data-label="Job">
                {n.jobId ? (
                  <a href={`${base}/jobs/${encodeURIComponent(n.jobId)}`}>{jobName(n.data) ?? n.jobId}</a>
                ) : (
                  "—"
                )}
              </td>
              <td data-label="Channel" class="mono">
                {`${n.channelType} ${n.channelId}`}
              </td>
              <td data-label="Status">
                <StatusChip status={notificationStatus(n)} />
              </td>
              <td data-label="Attempts" class="num">
                {n.attempts}
              </td>
              <td data-label="Folded" class="num">
                {n.folded}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

notificationsPage.get("/notifications", (c) => render(c));

/** The first page of notifications, for live.js while one is pending. */
notificationsPage.get("/notifications/live", async (c) => {
  const rows = await listNotifications(c.var.dash.db, c.var.tenantId, { before: null, limit: PAGE_SIZE });
  return c.html(<NotificationTable c={c} list={rows} />);
});

notificationsPage.post("/notifications/channels", async (c) => {
  const b = await c.req.parseBody({ all: true });
  const events = ([] as unknown[]).concat(b.events ?? []).map(text);
  const form: AddForm = {
    type: text(b.type),
    url: text(b.url),
    to: text(b.to),
    events,
    windowSeconds: text(b.windowSeconds),
  };
  try {
    await c.var.dash.commands.addChannel(c.var.tenantId, apiBody(form));
  } catch (err) {
    const r = refusalOf(err);
    if (!r) throw err;
    return render(c, {
      form,
      error: r.message,
      flash: { kind: "err", text: "Channel not added." },
      status: 400,
    });
  }
  return c.redirect(`${c.var.base}/notifications?done=added`, 303);
});

notificationsPage.post("/notifications/channels/:id/delete", async (c) => {
  await c.var.dash.commands.deleteChannel(c.var.tenantId, c.req.param("id"));
  return c.redirect(`${c.var.base}/notifications?done=deleted`, 303);
});

notificationsPage.post("/notifications/channels/:id/test", async (c) => {
  await c.var.dash.commands.testChannel(c.var.tenantId, c.req.param("id"));
  return c.redirect(`${c.var.base}/notifications?done=tested`, 303);
});
