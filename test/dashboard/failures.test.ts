// Failure where people look, in a real browser (Chromium) against the real server process: a one-time
// job that dead-lettered reads failed in the job list with its last outcome and streak; the dead
// letters grouped by job, and "Replay all" delivering them to a real receiver; the portal's configured
// title, accent and session end; the root redirect, the favicon and the startup banner.
import { beforeAll, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { shot, useDashboard, type Dashboard } from "./support.ts";

describe("dashboard: failures at a glance, replay all, portal branding", () => {
  const dashboard = useDashboard({
    signedIn: true,
    env: { FAIRWAY_PORTAL_TITLE: "Acme Scheduler", FAIRWAY_PORTAL_ACCENT: "#0b6e4f" },
  });
  let d: Dashboard;
  beforeAll(() => {
    d = dashboard;
  });

  it("a dead-lettered one-time job shows as failed, with its last run and streak, under Failing only", async () => {
    const job = await d.acme.jobs.create({
      name: "refused-once",
      schedule: { delayMs: 0 },
      target: { url: `${d.receiver.url}/status/400` },
    });
    await d.acme.jobs.create({ name: "healthy", schedule: { delayMs: 0 }, target: { url: `${d.receiver.url}/ok` } });
    await until(
      () => d.acme.jobs.list(),
      (p) => p.data.length === 2 && p.data.every((j) => j.lastRun?.outcome === "succeeded" || j.status === "failed"),
      30_000,
      "both jobs ran",
    );
    const page = d.page;
    await page.goto(`${d.server.url}/dashboard/admin/t/acme/jobs`);
    const row = page.locator("tr", { hasText: "refused-once" });
    await expect(row.locator(".chip.s-failed").textContent()).resolves.toBe("failed");
    await expect(row.locator(".chip.s-dead_lettered").textContent()).resolves.toBe("dead lettered");
    await expect(row.textContent()).resolves.toContain("1 dead fire in a row");
    await page.getByLabel("Failing only").check();
    await Promise.all([page.waitForURL(/failing=true/), page.getByRole("button", { name: "Filter" }).click()]);
    const text = await page.locator("main table").textContent();
    expect(text).toContain("refused-once");
    expect(text).not.toContain("healthy");
    await shot(page, "tenant-jobs-failing");
    expect((await d.acme.jobs.get(job.id)).status).toBe("failed");
  });

  it("groups dead letters by job and replays all of one job's, delivered by the receiver", async () => {
    const job = await d.acme.jobs.create({
      name: "flaky-sync",
      schedule: { cron: "0 0 1 1 *" },
      target: { url: `${d.receiver.url}/flaky/3/sync` },
      retry: { maxAttempts: 1 },
    });
    for (let i = 0; i < 3; i++) await d.acme.jobs.run(job.id);
    await until(
      () => d.acme.deadLetters({ jobId: job.id }),
      (p) => p.data.length === 3,
      30_000,
      "three dead letters",
    );
    const page = d.page;
    await page.goto(`${d.server.url}/dashboard/admin/dead-letters`);
    const group = page.locator("tr", { hasText: "flaky-sync" }).first();
    await expect(group.locator("td[data-label='Dead letters']").textContent()).resolves.toBe("3");
    await expect(group.textContent()).resolves.toContain("HTTP 500");
    // Newest first: the job that failed last heads the list, above the older refused-once.
    await expect(page.locator("tbody tr").first().textContent()).resolves.toContain("flaky-sync");
    await shot(page, "admin-dead-letters");
    await Promise.all([
      page.waitForURL(/replayed=3/),
      page.getByRole("button", { name: "Replay all dead letters of flaky-sync" }).click(),
    ]);
    await expect(page.getByRole("status").textContent()).resolves.toContain("Replayed 3 dead letters");
    await until(
      () => d.acme.jobs.triggers(job.id),
      (p) => p.data.length === 3 && p.data.every((t) => t.status === "succeeded"),
      30_000,
      "the replayed letters delivered",
    );
    expect(d.receiver.deliveries.filter((x) => x.path === "/flaky/3/sync" && x.verified)).toHaveLength(6);
    expect(await d.acme.jobs.get(job.id)).toMatchObject({ failureStreak: 0, lastRun: { outcome: "succeeded" } });
    expect((await d.acme.deadLetters({ jobId: job.id })).data).toEqual([]);
  });

  it("the portal carries the configured title and accent and says when its session ends", async () => {
    const link = await d.admin.tenants.portalLink("acme", { ttlSeconds: 600 });
    const p = await d.browser.context.newPage();
    try {
      await p.goto(link.url);
      await p.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
      await expect(p.title()).resolves.toBe("Jobs · Acme Scheduler");
      await expect(p.locator("header .brand").textContent()).resolves.toBe("Acme Scheduler");
      const ends = await p.locator("header .expires time").getAttribute("datetime");
      // The session outlives the link (portal-link.ts): it ends after the link's own expiry.
      expect(Date.parse(ends!)).toBeGreaterThan(Date.now());
      const accent = await p.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--accent"));
      expect(accent.trim()).toBe("#0b6e4f");
      await shot(p, "portal-branded");
    } finally {
      await p.close();
    }
    // The operator's own pages keep Fairway's name.
    await d.page.goto(`${d.server.url}/dashboard/admin`);
    await expect(d.page.title()).resolves.toContain("· Fairway");
  });

  it("/ goes to the dashboard, the favicon is served, and the banner names the dashboard and the docs", async () => {
    const root = await fetch(`${d.server.url}/`, { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/dashboard");
    await root.body?.cancel();
    const icon = await fetch(`${d.server.url}/favicon.ico`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toContain("image/svg+xml");
    expect(await icon.text()).toContain("<svg");
    await d.page.goto(`${d.server.url}/dashboard/admin`);
    await expect(d.page.locator("link[rel=icon]").getAttribute("href")).resolves.toBe("/dashboard/assets/favicon.svg");
    expect(d.server.output()).toContain(`Dashboard: ${d.server.url}/dashboard`);
    expect(d.server.output()).toContain(`API docs:  ${d.server.url}/docs`);
  });

  it("/docs renders the API's description with its code as code, no raw backticks", async () => {
    await d.page.goto(`${d.server.url}/docs`);
    await d.page.locator("#desc code").first().waitFor();
    const desc = d.page.locator("#desc");
    expect(await desc.textContent()).not.toContain("`");
    expect(await desc.locator("code").first().textContent()).toContain('"error"');
    await d.page.locator("details.op").first().waitFor();
    expect(await d.page.locator("details.op summary").allTextContents()).not.toContainEqual(
      expect.stringContaining("`"),
    );
    await shot(d.page, "api-docs", false);
  });

  it("after a SIGTERM drain, the server's last line says it stopped", async () => {
    // With the dashboard still open in the browser, its kept-alive connections do not hold the drain.
    await d.page.goto(`${d.server.url}/dashboard/admin/t/acme/jobs`);
    expect(await d.server.stop("SIGTERM")).toBe(0);
    // stdout and stderr arrive through separate pipes: their lines' order is the process's only within each.
    const out = d.server.output();
    expect(out).toContain("SIGTERM: draining");
    expect(out.indexOf("Fairway stopped.")).toBeGreaterThan(out.indexOf("SIGTERM: draining"));
  }, 60_000);
});
