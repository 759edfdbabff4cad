// The dashboard in a real browser (Chromium through playwright-core) against the real server process
// on real Postgres, with the SDK creating the data and a real receiver answering the webhooks: signing
// in, a tenant's jobs and their actions, dead letters, quotas, and portal links for a tenant's own users.
import { beforeAll, describe, expect, it } from "vitest";
import { signToken } from "@fairway/core";
import { openBrowser } from "../support/browser.ts";
import { until } from "../support/until.ts";
import { shot, useDashboard, type Dashboard } from "./support.ts";

describe("dashboard in a real browser: jobs, quotas and portal links", () => {
  const dashboard = useDashboard();
  let server: Dashboard["server"];
  let receiver: Dashboard["receiver"];
  let embedder: Dashboard["embedder"];
  let admin: Dashboard["admin"];
  let acme: Dashboard["acme"];
  let globex: Dashboard["globex"];
  let browser: Dashboard["browser"];
  let page: Dashboard["page"];
  beforeAll(() => {
    ({ server, receiver, embedder, admin, acme, globex, browser, page } = dashboard);
  });

  it("refuses a wrong token and signs in with the admin token", async () => {
    await page.goto(`${server.url}/dashboard`);
    expect(new URL(page.url()).pathname).toBe("/dashboard/login");
    await page.getByLabel("Admin token").fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("not the admin token");
    await page.getByLabel("Admin token").fill(server.adminToken);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Tenants", level: 1 }).waitFor();
    const cookie = (await browser.context.cookies()).find((c) => c.name === "fairway_dashboard");
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/dashboard" });
    await expect(page.locator("table").textContent()).resolves.toContain("Acme Corp");
  });

  it("shows a job created with the SDK, its schedule in words and next 5 fires in its time zone", async () => {
    const job = await acme.jobs.create({
      name: "weekday-report",
      schedule: { cron: "0 9 * * 1-5", timezone: "Europe/Berlin" },
      target: { url: `${receiver.url}/ok` },
    });
    await globex.jobs.create({
      name: "globex-secret-job",
      schedule: { cron: "0 3 * * *", timezone: "UTC" },
      target: { url: `${receiver.url}/ok` },
    });
    await page.goto(`${server.url}/dashboard/admin/t/acme/jobs`);
    const row = page.locator("tr", { hasText: "weekday-report" });
    await expect(row.textContent()).resolves.toContain("At 09:00, Monday through Friday (Europe/Berlin)");
    await page.getByLabel("Search").fill("weekday");
    await page.getByLabel("Status").selectOption("paused");
    await Promise.all([page.waitForURL(/status=paused/), page.getByRole("button", { name: "Filter" }).click()]);
    await expect(page.locator("main").textContent()).resolves.toContain("No jobs match");
    await page.getByLabel("Status").selectOption("active");
    await Promise.all([page.waitForURL(/status=active/), page.getByRole("button", { name: "Filter" }).click()]);
    await shot(page, "tenant-jobs");
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole("link", { name: "weekday-report" }).click()]);
    // Shown in the viewer's zone; the exact instant is 09:00 in Berlin (08:00Z in winter, 07:00Z in summer).
    const fires = await page.locator("ol.fires time").evaluateAll((ts) => ts.map((t) => t.getAttribute("datetime")!));
    expect(fires).toHaveLength(5);
    const berlin = new Intl.DateTimeFormat("en-GB", {
      timeZone: "Europe/Berlin",
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
    });
    expect(
      fires.every(
        (f) => /^\w{3} 09:00:00$/.test(berlin.format(new Date(f))) && !/Sat|Sun/.test(berlin.format(new Date(f))),
      ),
    ).toBe(true);
    await shot(page, "tenant-job");
    expect(job.id).toMatch(/^job_/);
  });

  it("shows a job's spread (window, offset, shifted next fires) and its onBusy policy", async () => {
    const job = await acme.jobs.create({
      name: "spread-sync",
      key: "acct-7",
      onBusy: "cancel_running",
      schedule: { cron: "0 0 * * *", spread: "PT10M" },
      target: { url: `${receiver.url}/ok` },
    });
    await page.goto(`${server.url}/dashboard/admin/t/acme/jobs/${job.id}`);
    const main = (await page.locator("main").textContent()) ?? "";
    expect(main).toContain("spread over PT10M");
    expect(main).toContain("cancel_running: cancel the running trigger for the new one");
    const got = await acme.jobs.get(job.id);
    const offsetMs = Date.parse(got.nextFires![0]) % 86_400_000;
    expect(offsetMs).toBeLessThan(600_000);
    // The page's next fires are the API's: midnight plus the job's offset.
    const shown = await page.locator("ol.fires time").evaluateAll((els) => els.map((e) => e.getAttribute("datetime")));
    expect(shown).toEqual(got.nextFires);
  });

  it("edits a job's schedule (refusing a bad one), pauses and resumes it", async () => {
    const job = (await acme.jobs.list()).data.find((j) => j.name === "weekday-report")!;
    await page.goto(`${server.url}/dashboard/admin/t/acme/jobs/${job.id}`);
    await page.getByLabel("Cron expression").fill("61 * * * *");
    await page.getByRole("button", { name: "Save schedule" }).click();
    await expect(page.locator(".card [role=alert]").textContent()).resolves.toContain("cron:");
    expect((await acme.jobs.get(job.id)).schedule).toMatchObject({ cron: "0 9 * * 1-5", timezone: "Europe/Berlin" });
    await page.getByLabel("Cron expression").fill("30 7 * * *");
    await page.getByLabel("Time zone").fill("America/New_York");
    await page.getByRole("button", { name: "Save schedule" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Schedule saved");
    await expect(page.locator("main").textContent()).resolves.toContain("At 07:30 (America/New_York)");
    expect((await acme.jobs.get(job.id)).schedule).toMatchObject({ cron: "30 7 * * *", timezone: "America/New_York" });
    await page.getByRole("button", { name: "Pause" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Job paused");
    expect((await acme.jobs.get(job.id)).status).toBe("paused");
    await page.getByRole("button", { name: "Resume" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Job resumed");
    expect((await acme.jobs.get(job.id)).status).toBe("active");
  });

  it("runs a job now and shows the attempt with its response", async () => {
    const job = await acme.jobs.create({
      name: "ping-now",
      schedule: { cron: "0 0 1 1 *", timezone: "UTC" },
      target: { url: `${receiver.url}/ok` },
      payload: { hello: "dashboard" },
    });
    await page.goto(`${server.url}/dashboard/admin/t/acme/jobs/${job.id}`);
    await page.getByRole("button", { name: "Run now" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Run queued");
    // The page refreshes its live region until the attempt is in.
    const attempt = page.locator("section.attempt").first();
    await attempt.waitFor({ timeout: 20_000 });
    await expect(attempt.textContent()).resolves.toMatch(/Attempt 1\s*success/);
    await expect(attempt.locator("pre.response").textContent()).resolves.toBe("ok");
    await expect(page.locator("pre").last().textContent()).resolves.toContain('"hello": "dashboard"');
    const triggerId = new URL(page.url()).pathname.split("/").pop()!;
    const t = await acme.triggers.get(triggerId);
    expect(t).toMatchObject({ status: "succeeded", kind: "manual", jobId: job.id });
  });

  it("replays a dead letter", async () => {
    const job = await acme.jobs.create({
      name: "refused",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/status/400` },
    });
    const [dead] = (
      await until(
        () => acme.jobs.triggers(job.id),
        (p) => p.data[0]?.status === "dead",
      )
    ).data;
    // A one-time job whose only trigger is dead reads failed, not completed: in the SDK, the filtered
    // job list and the job's page, with the dead letters' red chip.
    expect((await acme.jobs.get(job.id)).status).toBe("failed");
    await page.goto(`${server.url}/dashboard/admin/t/acme/jobs?status=failed`);
    await expect(page.locator("tr", { hasText: "refused" }).locator(".chip.s-failed").textContent()).resolves.toBe(
      "failed",
    );
    await page.goto(`${server.url}/dashboard/admin/t/acme/jobs/${job.id}`);
    await expect(page.locator("h1 .chip.s-failed").textContent()).resolves.toBe("failed");
    await page.goto(`${server.url}/dashboard/admin/dead-letters`);
    await expect(page.locator("main").textContent()).resolves.toContain(dead.id);
    await page.goto(`${server.url}/dashboard/admin/t/acme/dead-letters`);
    await page.getByRole("button", { name: `Replay ${dead.id}` }).click();
    await expect(page.getByRole("status").first().textContent()).resolves.toContain("Dead letter replayed");
    const after = await until(
      () => acme.triggers.get(dead.id),
      (x) => x.status === "dead" && x.attemptCount === 2,
    );
    expect(after.attempts!.map((a) => a.httpStatus)).toEqual([400, 400]);
    // Active while the replay ran, failed again once it ended dead again.
    expect((await acme.jobs.get(job.id)).status).toBe("failed");
    expect(new Set(receiver.deliveries.filter((d) => d.path === "/status/400").map((d) => d.id))).toEqual(
      new Set([dead.id]),
    );
  });

  it("edits a quota, and refuses an invalid one without changing anything", async () => {
    await page.goto(`${server.url}/dashboard/admin/tenants/acme`);
    await page.getByLabel("In-flight cap").fill("0");
    await page.getByRole("button", { name: "Save quotas" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("maxInFlight");
    expect((await admin.tenants.get("acme")).maxInFlight).toBe(10);
    await page.getByLabel("In-flight cap").fill("7");
    await page.getByLabel("Weight").fill("2.5");
    await page.getByLabel("Rate per second").fill("");
    await page.getByRole("button", { name: "Save quotas" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Quotas saved");
    expect(await admin.tenants.get("acme")).toMatchObject({ maxInFlight: 7, weight: 2.5, ratePerSecond: null });
    await shot(page, "admin-tenant");
    await page.goto(`${server.url}/dashboard/admin`);
    await expect(page.locator("tr", { hasText: "Acme Corp" }).textContent()).resolves.toContain("/ 7");
    // acme so far: one run-now success, and a 400 delivered twice (the second by the replay, a retry).
    const attempts = page
      .locator("table", { has: page.locator("th", { hasText: "Retries" }) })
      .locator("tr", { hasText: "acme" });
    expect((await attempts.locator("td").allTextContents()).slice(0, 4)).toEqual(["acme", "3", "2", "1"]);
    await shot(page, "admin-tenants");
  });

  it("a form without the session's CSRF token changes nothing", async () => {
    const res = await page.request.post(`${server.url}/dashboard/admin/tenants/acme/status`, {
      form: { status: "suspended", csrf: "forged" },
    });
    expect(res.status()).toBe(403);
    expect((await admin.tenants.get("acme")).status).toBe("active");
  });

  it("a portal link opens that tenant's view and nothing else, at phone width", async () => {
    const link = await admin.tenants.portalLink("acme");
    expect(Date.parse(link.expiresAt) - Date.now()).toBeGreaterThan(14 * 60_000);
    const phone = await openBrowser({ width: 390, height: 844 });
    try {
      const p = await phone.context.newPage();
      await p.goto(link.url);
      await p.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
      const text = await p.locator("main").textContent();
      expect(text).toContain("weekday-report");
      expect(text).not.toContain("globex-secret-job");
      expect(text).not.toContain("Operator view");
      await shot(p, "portal-phone");
      const base = new URL(p.url()).pathname.replace(/\/jobs$/, "");
      // The link's and the session's tokens are bearer credentials: never in the server's log.
      const linkToken = link.url.split("/dashboard/open/")[1];
      const sessionToken = base.split("/dashboard/portal/")[1];
      expect(server.output()).toContain("/dashboard/portal/[token]/jobs");
      expect(server.output()).not.toContain(linkToken.split(".")[1]);
      expect(server.output()).not.toContain(sessionToken.split(".")[1]);
      // Another tenant's job through this portal: not found, and nothing of it shown.
      const other = (await globex.jobs.list()).data[0];
      const res = await p.goto(`${server.url}${base}/jobs/${other.id}`);
      expect(res!.status()).toBe(404);
      expect(await p.locator("main").textContent()).not.toContain("globex-secret-job");
      // The operator's pages are not reachable from a portal session.
      await p.goto(`${server.url}/dashboard/admin`);
      expect(new URL(p.url()).pathname).toBe("/dashboard/login");
      // Embedded in an allowed origin's iframe, it renders.
      embedder.src = link.url;
      await p.goto(embedder.url);
      const frame = p.frameLocator("#portal");
      await frame.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    } finally {
      await phone.close();
    }
  });

  it("refuses a tampered and an expired link with a clear page", async () => {
    const { url } = await admin.tenants.portalLink("acme", { ttlSeconds: 60 });
    const [payload, sig] = url.split("/dashboard/open/")[1].split(".");
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), t: "globex" }),
    ).toString("base64url");
    const p = await browser.context.newPage();
    let res = await p.goto(`${server.url}/dashboard/open/${forged}.${sig}`);
    expect(res!.status()).toBe(403);
    await expect(p.getByRole("alert").textContent()).resolves.toContain("This link is not valid");
    res = await p.goto(`${server.url}/dashboard/open/${payload}.${sig.slice(0, -2)}AA`);
    expect(res!.status()).toBe(403);
    // Signed with the server's key, but its time is up.
    const expired = await signToken(server.adminToken, "portal-link", { t: "acme", exp: Date.now() - 1000, n: "x" });
    res = await p.goto(`${server.url}/dashboard/open/${expired}`);
    expect(res!.status()).toBe(410);
    await expect(p.getByRole("alert").textContent()).resolves.toContain("This link has expired");
    await p.close();
  });

  it("a suspended tenant's portal is closed", async () => {
    const { url } = await admin.tenants.portalLink("globex");
    await admin.tenants.update("globex", { status: "suspended" });
    try {
      const p = await browser.context.newPage();
      const res = await p.goto(url);
      expect(res!.status()).toBe(403);
      await expect(p.getByRole("alert").textContent()).resolves.toContain("suspended");
      await p.close();
    } finally {
      await admin.tenants.update("globex", { status: "active" });
    }
  });

  it("the operator's pages cannot be framed; portal pages only by the allowed origins", async () => {
    const adminRes = await page.request.get(`${server.url}/dashboard/login`);
    expect(adminRes.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    const { url } = await admin.tenants.portalLink("acme");
    const portal = await page.request.get(url);
    expect(portal.headers()["content-security-policy"]).toContain(`frame-ancestors ${embedder.url}`);
    expect(
      await page.request
        .post(`${server.url}/v1/admin/tenants/acme/portal-link`, {
          headers: { authorization: `Bearer ${server.adminToken}` },
          data: { ttlSeconds: 10 ** 9 },
        })
        .then((r) => r.status()),
    ).toBe(400);
  });
});
