// The dashboard's operations and notification views in a real browser (Chromium through
// playwright-core) against the real server process on real Postgres: pools (paused from the keyboard),
// executors, what an attempt sent and got back, secrets, phone widths, and notification channels.
import { hostname } from "node:os";
import postgres from "postgres";
import { beforeAll, describe, expect, it } from "vitest";
import { openBrowser } from "../support/browser.ts";
import { until } from "../support/until.ts";
import {
  overflowsX,
  refusal,
  shot,
  startEchoReceiver,
  unlabelledControls,
  useDashboard,
  type Dashboard,
} from "./support.ts";

describe("dashboard in a real browser: operations and notifications", () => {
  const dashboard = useDashboard({ signedIn: true });
  let server: Dashboard["server"];
  let receiver: Dashboard["receiver"];
  let admin: Dashboard["admin"];
  let acme: Dashboard["acme"];
  let globex: Dashboard["globex"];
  let page: Dashboard["page"];
  beforeAll(() => {
    ({ server, receiver, admin, acme, globex, page } = dashboard);
  });

  it("shows pools, activity and the operator's tenant page", async () => {
    await admin.tenants.update("acme", { maxInFlight: 7, weight: 2.5 });
    // A run of the webhook pool, so that the pool and the activity have something to show.
    const job = await acme.jobs.create({
      name: "first-run",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/ok` },
    });
    await until(
      () => acme.jobs.triggers(job.id),
      (p) => p.data[0]?.status === "succeeded",
    );
    // One PostgreSQL: the overview has no Cluster section.
    await page.goto(`${server.url}/dashboard/admin`);
    await expect(page.locator("#cluster-heading").count()).resolves.toBe(0);
    await page.goto(`${server.url}/dashboard/admin/pools`);
    await expect(page.locator("tr", { hasText: "webhook" }).textContent()).resolves.toContain("50");
    await page.goto(`${server.url}/dashboard/admin/activity`);
    await expect(page.locator("figure svg").count()).resolves.toBe(4);
    await shot(page, "admin-activity");
    await page.goto(`${server.url}/dashboard/admin/t/acme/usage`);
    const usage = await page.locator("main").textContent();
    // The caps (acme's quota as set above), weight, retention, and live usage.
    for (const text of ["In-flight cap", "2.5", "History kept30 days", "Dead letters kept90 days", "Running0 of 7"])
      expect(usage).toContain(text);
    await shot(page, "tenant-usage");
  });

  it('shows a handler pool whose workers stopped as "no worker", one served lately as active', async () => {
    // Two handler pools as their workers leave them: one stamped now, one last stamped a minute ago
    // (a worker stops stamping when it stops; after 30 s without a stamp no worker serves the pool).
    const sql = postgres(dashboard.db.url, { max: 1, onnotice: () => {} });
    try {
      await sql`INSERT INTO pools (type, handler_seen_at) VALUES
                  ('email.send', now() - interval '1 minute'), ('sms.send', now())`;
    } finally {
      await sql.end();
    }
    await page.goto(`${server.url}/dashboard/admin/pools`);
    const state = (type: string) => page.locator("tr", { hasText: type }).locator("td[data-label=State]").textContent();
    await expect(state("email.send")).resolves.toBe("no worker");
    await expect(state("sms.send")).resolves.toBe("active");
    await expect(state("webhook")).resolves.toBe("active");
    await shot(page, "admin-pools-no-worker");
  });

  it("pauses a pool from the dashboard (by keyboard): its due work waits, and runs once resumed", async () => {
    // The executor serves the pool: a first job of the type is delivered.
    const first = await acme.jobs.create({
      name: "report-first",
      type: "reports",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/reports/first` },
    });
    await until(
      () => acme.jobs.triggers(first.id),
      (p) => p.data[0]?.status === "succeeded",
    );
    await page.goto(`${server.url}/dashboard/admin/pools`);
    const row = page.locator("tr", { hasText: "reports" });
    await expect(row.textContent()).resolves.toContain("active");
    // Keyboard only: Tab from the top of the page to the pool's Pause button, then Enter.
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(() => document.activeElement?.getAttribute("aria-label") === "Pause pool reports");
    }
    expect(reached).toBe(true);
    await Promise.all([page.waitForURL(/done=paused/), page.keyboard.press("Enter")]);
    await expect(page.getByRole("status").textContent()).resolves.toContain("Pool reports paused");
    await expect(row.textContent()).resolves.toContain("paused");
    expect((await admin.pools.get("reports")).paused).toBe(true);

    const second = await acme.jobs.create({
      name: "report-second",
      type: "reports",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/reports/second` },
    });
    const [waiting] = (
      await until(
        () => acme.jobs.triggers(second.id),
        (p) => p.data.length === 1,
      )
    ).data;
    // Two webhook jobs created after it are delivered one after the other: the second was claimed by a
    // claim pass that began after the first was delivered, and every pass also claims for the reports pool.
    for (const n of [1, 2]) {
      const w = await acme.jobs.create({
        name: `while-paused-${n}`,
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/ok` },
      });
      await until(
        () => acme.jobs.triggers(w.id),
        (p) => p.data[0]?.status === "succeeded",
      );
    }
    expect(await acme.triggers.get(waiting.id)).toMatchObject({ status: "pending", attemptCount: 0 });
    expect(receiver.deliveries.some((d) => d.path === "/reports/second")).toBe(false);
    await page.reload();
    expect((await row.locator("td").allTextContents()).slice(0, 2)).toEqual(["reports", "paused"]);
    await expect(row.locator("td[data-label=Due]").textContent()).resolves.toBe("1");
    await shot(page, "admin-pools");

    await Promise.all([
      page.waitForURL(/done=resumed/),
      page.getByRole("button", { name: "Resume pool reports" }).click(),
    ]);
    await expect(page.getByRole("status").textContent()).resolves.toContain("Pool reports resumed");
    const done = await until(
      () => acme.triggers.get(waiting.id),
      (x) => x.status === "succeeded",
    );
    expect(done.attemptCount).toBe(1);
    expect(receiver.deliveries.filter((d) => d.path === "/reports/second").map((d) => d.id)).toEqual([waiting.id]);
  });

  it("lists the running executor with its heartbeat and per pool load", async () => {
    // The next heartbeat after the reports pool was loaded carries it too.
    type Beat = { id: string; pid: number; status: string; pools: Array<{ type: string }> };
    const [exec] = await until(
      async () => (await admin.executors()).data as Beat[],
      (rows) => rows.length === 1 && rows[0].pools.some((p) => p.type === "reports"),
    );
    expect(exec.status).toBe("live");
    await page.goto(`${server.url}/dashboard/admin/executors`);
    const row = page.locator("tr", { hasText: exec.id });
    const cells = await row.locator("td").allTextContents();
    expect(cells[1]).toBe("live");
    expect(cells[2]).toBe(`${hostname()} ${exec.pid}`);
    // Per pool: in flight / concurrency; nothing is running now.
    expect(cells[6]).toContain("webhook 0 / 50");
    expect(cells[6]).toContain("reports 0 / 50");
    await shot(page, "admin-executors");
  });

  it("shows what an attempt sent and got back, secrets as placeholders, and never a secret's value", async () => {
    const echo = await startEchoReceiver();
    try {
      const PH = "${secrets.API_TOKEN}";
      const value = `sk_live_${Math.random().toString(36).slice(2)}${Date.now()}`;
      await acme.secrets.put("API_TOKEN", value);
      const job = await acme.jobs.create({
        name: "charge-customer",
        schedule: { cron: "0 0 1 1 *", timezone: "UTC" },
        target: {
          url: `${echo.url}/charge?key=${PH}`,
          method: "POST",
          // A credential typed in literally rather than as a secret: recorded, but never shown.
          headers: { authorization: `Bearer ${PH}`, "x-team": "billing", "x-api-key": "literal-key-123" },
          body: { order: 42, token: PH },
        },
      });
      await page.goto(`${server.url}/dashboard/admin/t/acme/jobs/${job.id}`);
      await Promise.all([page.waitForURL(/\/triggers\//), page.getByRole("button", { name: "Run now" }).click()]);
      const triggerId = new URL(page.url()).pathname.split("/").pop()!;
      const attempt = page.locator("section.attempt").first();
      await attempt.waitFor({ timeout: 20_000 });
      // The target got the secret's value in the URL, the header and the body.
      expect(echo.got).toHaveLength(1);
      expect(echo.got[0].url).toBe(`/charge?key=${value}`);
      expect(echo.got[0].authorization).toBe(`Bearer ${value}`);
      expect(JSON.parse(echo.got[0].body)).toEqual({ order: 42, token: value });

      const req = attempt.locator("section", { has: page.locator("h4", { hasText: "Request" }) });
      const res = attempt.locator("section", { has: page.locator("h4", { hasText: "Response" }) });
      await expect(req.locator("p.line").textContent()).resolves.toBe(`POST ${echo.url}/charge?key=${PH}`);
      const reqHeaders = await req.locator("dl.headers").textContent();
      expect(reqHeaders).toContain(`authorizationBearer ${PH}`);
      expect(reqHeaders).toContain("x-teambilling");
      expect(reqHeaders).toContain("x-api-key(hidden, 15 characters)");
      expect(reqHeaders).toContain(`webhook-id${triggerId}`);
      expect(JSON.parse((await req.locator("pre").textContent())!)).toEqual({
        order: 42,
        token: PH,
      });
      await expect(res.locator("p.line").textContent()).resolves.toBe("201");
      await expect(res.locator("dl.headers").textContent()).resolves.toContain(`x-receiptrcpt-${triggerId}`);
      // The target echoed the value back: the executor stored it redacted.
      const body = JSON.parse((await res.locator("pre.response").textContent())!);
      expect(body.received).toBe(true);
      expect(body.sawAuthorization).not.toContain(value);
      const status = await page.locator("section", { has: page.locator("#trg-h") }).textContent();
      expect(status).toContain("Triggered bymanual");
      await expect(attempt.textContent()).resolves.toMatch(/Attempt 1\s*success/);
      expect(await page.content()).not.toContain(value);
      expect(await page.content()).not.toContain("literal-key-123");
      await shot(page, "attempt-detail");

      await page.goto(`${server.url}/dashboard/admin/t/acme/secrets`);
      const secretRow = page.locator("tr", { hasText: "API_TOKEN" });
      await expect(secretRow.locator("td").first().textContent()).resolves.toBe("API_TOKEN");
      expect(await page.content()).not.toContain(value);
      await shot(page, "tenant-secrets");

      // The same through a portal session, at phone width: readable without sideways scrolling.
      const link = await admin.tenants.portalLink("acme");
      const phone = await openBrowser({ width: 390, height: 844 });
      try {
        const p = await phone.context.newPage();
        await p.goto(link.url);
        const base = new URL(p.url()).pathname.replace(/\/jobs$/, "");
        for (const path of [`/triggers/${triggerId}`, "/secrets", "/usage", "/dead-letters"]) {
          await p.goto(`${server.url}${base}${path}`);
          expect(await p.content()).not.toContain(value);
          expect(await overflowsX(p), path).toBe(false);
          expect(await unlabelledControls(p), path).toEqual([]);
        }
        await p.goto(`${server.url}${base}/triggers/${triggerId}`);
        await shot(p, "attempt-phone");
      } finally {
        await phone.close();
      }
    } finally {
      await echo.close();
    }
  });

  it("the operator's new views fit a phone's width and label every control", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const path of ["/dashboard/admin/pools", "/dashboard/admin/executors", "/dashboard/admin/t/acme/secrets"]) {
        await page.goto(`${server.url}${path}`);
        expect(await overflowsX(page), path).toBe(false);
        expect(await unlabelledControls(page), path).toEqual([]);
      }
      await page.goto(`${server.url}/dashboard/admin/pools`);
      await shot(page, "pools-phone");
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
  it("notification channels: added with the API's refusals, tested by keyboard, a dead letter listed, deleted", async () => {
    const events = `${receiver.url}/fairway-events`;
    const other = await globex.notificationChannels.create({ type: "webhook", url: `${receiver.url}/globex-events` });
    await page.goto(`${server.url}/dashboard/admin/t/acme/notifications`);
    await expect(page.locator("main").textContent()).resolves.toContain("No channels");
    const add = page.getByRole("button", { name: "Add channel" });

    // Refused with the API's own words: the same body through the API gets the same message.
    await page.getByLabel("URL (webhook or Slack)").fill("not a url");
    await page.getByLabel("Fold window (seconds)").fill("60");
    await add.click();
    const badUrl = await refusal(
      acme.notificationChannels.create({ type: "webhook", url: "not a url", windowSeconds: 60 }),
    );
    await expect(page.locator("section.card [role=alert]").textContent()).resolves.toBe(badUrl.message);
    await expect(page.getByLabel("URL (webhook or Slack)").inputValue()).resolves.toBe("not a url");
    await page.getByLabel("Fold window (seconds)").fill("0");
    await page.getByLabel("URL (webhook or Slack)").fill(events);
    await add.click();
    const badWindow = await refusal(
      acme.notificationChannels.create({ type: "webhook", url: events, windowSeconds: 0 }),
    );
    await expect(page.locator("section.card [role=alert]").textContent()).resolves.toBe(badWindow.message);
    expect(badWindow.message).toMatch(/^windowSeconds: /);
    // This server has no SMTP: an email channel is refused, as through the API.
    await page.getByLabel("Type").selectOption("email");
    await page.getByLabel("Email address (email)").fill("ops@example.com");
    await page.getByLabel("Fold window (seconds)").fill("");
    await add.click();
    const noSmtp = await refusal(acme.notificationChannels.create({ type: "email", to: "ops@example.com" }));
    expect(noSmtp.code).toBe("email_unavailable");
    await expect(page.locator("section.card [role=alert]").textContent()).resolves.toBe(noSmtp.message);
    expect((await acme.notificationChannels.list()).data).toEqual([]);

    await page.getByLabel("Type").selectOption("webhook");
    await page.getByLabel("URL (webhook or Slack)").fill(events);
    await page.getByLabel("trigger.dead").check();
    await page.getByLabel("job.paused").check();
    await page.getByLabel("Fold window (seconds)").fill("120");
    await add.click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Channel added");
    const [channel] = (await acme.notificationChannels.list()).data;
    expect(channel).toMatchObject({
      type: "webhook",
      url: events,
      events: ["trigger.dead", "job.paused"],
      windowSeconds: 120,
    });
    const row = page.locator("table[aria-labelledby=channels-h] tbody tr");
    await expect(row.count()).resolves.toBe(1);
    expect(await row.locator("td").allTextContents()).toEqual([
      "webhook",
      events,
      "trigger.dead, job.paused",
      "2 min",
      channel.id,
      "Send testDelete",
    ]);

    // Send test, by keyboard: Tab to the channel's button, then Enter.
    let reached = false;
    for (let i = 0; i < 60 && !reached; i++) {
      await page.keyboard.press("Tab");
      reached = await page.evaluate(
        (id) => document.activeElement?.getAttribute("aria-label") === `Send a test notification to ${id}`,
        channel.id,
      );
    }
    expect(reached).toBe(true);
    await Promise.all([page.waitForURL(/done=tested/), page.keyboard.press("Enter")]);
    await expect(page.getByRole("status").textContent()).resolves.toContain("Test notification queued");
    const atChannel = (type: string) =>
      receiver.deliveries.filter((d) => d.path === "/fairway-events" && (d.body as { type?: string }).type === type);
    await receiver.waitFor(() => atChannel("notification.test").length === 1, 20_000);
    expect(atChannel("notification.test")[0]).toMatchObject({ verified: true });
    const sent = page.locator("table[aria-labelledby=sent-h] tbody tr");
    // The live region refreshes until the notification is sent.
    await sent.filter({ hasText: "notification.test" }).filter({ hasText: "sent" }).waitFor({ timeout: 20_000 });

    // A job whose target refuses with 400: one dead letter, one trigger.dead at the channel.
    const job = await acme.jobs.create({
      name: "notify-refused",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/status/400` },
    });
    await receiver.waitFor(() => atChannel("trigger.dead").length === 1, 20_000);
    const dead = atChannel("trigger.dead")[0];
    expect(dead.verified).toBe(true);
    expect((dead.body as { data: { job: { id: string } } }).data.job.id).toBe(job.id);
    await until(
      () => acme.notifications(),
      (p) => p.data.length === 2 && p.data.every((n) => n.status === "sent"),
    );
    await page.goto(`${server.url}/dashboard/admin/t/acme/notifications`);
    await expect(sent.count()).resolves.toBe(2);
    const cells = async (i: number) => (await sent.nth(i).locator("td").allTextContents()).slice(1);
    expect(await cells(0)).toEqual(["trigger.dead", "notify-refused", `webhook ${channel.id}`, "sent", "1", "0"]);
    expect(await cells(1)).toEqual(["notification.test", "—", `webhook ${channel.id}`, "sent", "1", "0"]);
    await expect(sent.first().getByRole("link", { name: "notify-refused" }).getAttribute("href")).resolves.toBe(
      `/dashboard/admin/t/acme/jobs/${job.id}`,
    );
    await shot(page, "tenant-notifications");

    // A Slack incoming-webhook URL is a credential: the page shows its origin only, as the API does.
    const slack = await acme.notificationChannels.create({
      type: "slack",
      url: `${receiver.url}/services/T000/B000/slack-credential-xyz`,
      events: ["job.recovered"],
    });
    await page.reload();
    await expect(
      page.locator("table[aria-labelledby=channels-h] tr", { hasText: slack.id }).locator("td").nth(1).textContent(),
    ).resolves.toBe(`${receiver.url}/…`);
    expect(await page.content()).not.toContain("slack-credential-xyz");

    // Through acme's portal at phone width: acme's channels and notifications, nothing of globex's; the
    // webhook channel deleted there, with the portal session's own CSRF token.
    const link = await admin.tenants.portalLink("acme");
    const phone = await openBrowser({ width: 390, height: 844 });
    try {
      const p = await phone.context.newPage();
      await p.goto(link.url);
      await p.getByRole("link", { name: "Notifications" }).click();
      await p.getByRole("heading", { name: "Notifications", level: 1 }).waitFor();
      const text = await p.locator("main").textContent();
      expect(text).toContain(channel.id);
      expect(text).toContain("trigger.dead");
      expect(text).not.toContain(other.id);
      expect(text).not.toContain("Operator view");
      expect(await p.content()).not.toContain("slack-credential-xyz");
      expect(await overflowsX(p)).toBe(false);
      expect(await unlabelledControls(p)).toEqual([]);
      await shot(p, "notifications-phone");
      await p.getByRole("button", { name: `Delete channel ${channel.id}` }).click();
      await expect(p.getByRole("status").textContent()).resolves.toContain("Channel deleted");
      await expect(p.locator("table[aria-labelledby=channels-h] tbody tr").count()).resolves.toBe(1);
      // What was sent stays listed.
      await expect(p.locator("table[aria-labelledby=sent-h] tbody tr").count()).resolves.toBe(2);
      expect(await overflowsX(p)).toBe(false);
    } finally {
      await phone.close();
    }
    expect((await acme.notificationChannels.list()).data.map((c) => c.id)).toEqual([slack.id]);

    await page.reload();
    await page.getByRole("button", { name: `Delete channel ${slack.id}` }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Channel deleted");
    await expect(row.count()).resolves.toBe(0);
    await expect(page.locator("main").textContent()).resolves.toContain("No channels");
    expect((await acme.notificationChannels.list()).data).toEqual([]);
    await expect(sent.count()).resolves.toBe(2);
    // A channel id of another tenant is not found here, and is left alone.
    const res = await page.request.post(
      `${server.url}/dashboard/admin/t/acme/notifications/channels/${other.id}/delete`,
      { form: { csrf: await page.locator("input[name=csrf]").first().inputValue() } },
    );
    expect(res.status()).toBe(404);
    expect((await globex.notificationChannels.list()).data.map((c) => c.id)).toEqual([other.id]);
  }, 90_000);
});
