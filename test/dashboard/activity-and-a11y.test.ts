// The Activity page at each range (with real deliveries, failures and dead letters from a real
// receiver), one time format, and axe-core on every dashboard page — operator, tenant and portal views,
// the job form included — in Chromium: no serious or critical violation.
import axe from "axe-core";
import { beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { TimeSeriesChart } from "../../packages/dashboard/src/activity-charts.tsx";
import { fmtMs, TIME_FORMAT } from "../../packages/dashboard/src/format.ts";
import { until } from "../support/until.ts";
import { shot, useDashboard, type Dashboard } from "./support.ts";

const AXE = axe.source;

/** axe-core's serious and critical violations on the loaded page (rule id, a target, the summary). */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated, not a script tag: the dashboard's CSP allows no inline script.
  await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const r = await (
      window as unknown as {
        axe: {
          run(o: unknown): Promise<{
            passes: unknown[];
            violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>;
          }>;
        };
      }
    ).axe.run({ resultTypes: ["violations"] });
    // A page axe checked nothing on would pass for the wrong reason.
    if (r.passes.length < 10) return [`axe passed only ${r.passes.length} rules`];
    return r.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
  return found;
}

describe("dashboard activity page and accessibility", () => {
  const dashboard = useDashboard({ signedIn: true });
  let d: Dashboard;
  let jobId: string;
  let deadTrigger: string;
  beforeAll(async () => {
    d = dashboard;
    const ok = await d.acme.jobs.create({
      name: "keyed-ok",
      key: "customer-1",
      schedule: { delayMs: 0 },
      target: { url: `${d.receiver.url}/ok` },
    });
    const bad = await d.acme.jobs.create({
      name: "keyed-dead",
      key: "customer-2",
      schedule: { delayMs: 0 },
      target: { url: `${d.receiver.url}/status/500` },
      retry: { maxAttempts: 1 },
    });
    await d.globex.jobs.create({
      name: "globex-ok",
      schedule: { delayMs: 0 },
      target: { url: `${d.receiver.url}/ok` },
    });
    await until(
      async () => [(await d.acme.jobs.triggers(ok.id)).data[0]?.status, (await d.acme.jobs.triggers(bad.id)).data[0]],
      ([a, b]) => a === "succeeded" && (b as { status?: string } | undefined)?.status === "dead",
    );
    jobId = ok.id;
    deadTrigger = (await d.acme.jobs.triggers(bad.id)).data[0].id;
  });

  it("shows titled charts with axes at each range, by tenant and by key", async () => {
    const { page } = d;
    for (const range of ["1 hour", "24 hours", "7 days"]) {
      await page.goto(`${d.server.url}/dashboard/admin/activity`);
      await Promise.all([page.waitForURL(/activity/), page.getByRole("link", { name: range }).click()]);
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe(`Activity, last ${range}`);
      await expect(page.locator("figure h3").allTextContents()).resolves.toEqual([
        "Deliveries",
        "Fire lag",
        "Worker time",
        "Dead letters",
      ]);
      await expect(page.locator("nav.range [aria-current=page]").textContent()).resolves.toBe(range);
      // A y axis with round ticks from 0, and a titled time axis.
      const ticks = await page.locator("#deliveries-t + svg text[text-anchor=end]").allTextContents();
      expect(ticks[0]).toBe("0");
      expect(ticks.length).toBeGreaterThanOrEqual(2);
      await expect(page.locator("#deliveries-t + svg").textContent()).resolves.toContain("Time (UTC)");
      // No tick label overlaps its axis's title (the worker-time chart's "1.5 min" labels are long).
      const overlaps = await page.evaluate(() =>
        Array.from(document.querySelectorAll("figure.chart svg")).flatMap((svg) => {
          const title = svg.querySelector("text[transform]")!.getBoundingClientRect();
          return Array.from(svg.querySelectorAll("text[text-anchor=end]"))
            .filter((t) => t.getBoundingClientRect().left < title.right)
            .map((t) => `${svg.parentElement!.querySelector("h3")!.textContent}: "${t.textContent}"`);
        }),
      );
      expect(overlaps).toEqual([]);
      const acme = page.locator("tr", { hasText: "acme" });
      // keyed-ok's delivery and keyed-dead's failed one, which is a dead letter.
      await expect(acme.locator("td[data-label=Deliveries]").textContent()).resolves.toBe("2");
      await expect(acme.locator("td[data-label=Failed]").textContent()).resolves.toBe("1");
      await expect(acme.locator("td[data-label=Dead]").textContent()).resolves.toBe("1");
      await expect(
        page.locator("tr", { hasText: "globex" }).locator("td[data-label=Dead]").textContent(),
      ).resolves.toBe("0");
      if (range === "1 hour") await shot(page, "admin-activity");
    }
    // One tenant: its keys.
    await page.getByRole("link", { name: "acme" }).click();
    await page.getByRole("heading", { name: "By fairness key" }).waitFor();
    const keys = await page.locator("tbody td[data-label=Key]").allTextContents();
    expect(keys.sort()).toEqual(["customer-1", "customer-2"]);
    await page.getByRole("link", { name: "customer-2" }).click();
    await expect(page.locator("p.sub").first().textContent()).resolves.toContain("tenant acme, key customer-2");
    await expect(page.locator(".table-wrap tbody tr").count()).resolves.toBe(1);
    await shot(page, "admin-activity-key");
  });

  it("keeps long tick labels (minutes of worker time) clear of the axis title", async () => {
    const chart = TimeSeriesChart({
      id: "worker",
      title: "Worker time",
      yTitle: "Attempt time per 2 h",
      times: [0, 7_200_000, 14_400_000],
      series: [{ label: "Worker time", values: [95_000, 1_450_000, 400_000] }],
      kind: "stacked",
      format: fmtMs,
      timeLabel: () => "00:00",
      xTitle: "Time (UTC)",
      caption: "Sum of attempt durations.",
    });
    const page = await d.browser.context.newPage();
    await page.setContent(`<!doctype html><body style="width:640px">${await chart!.toString()}</body>`);
    const found = await page.evaluate(() => {
      const title = document.querySelector("svg text[transform]")!.getBoundingClientRect();
      const ticks = Array.from(document.querySelectorAll("svg text[text-anchor=end]"));
      return {
        labels: ticks.map((t) => t.textContent),
        clash: ticks.filter((t) => t.getBoundingClientRect().left < title.right).map((t) => t.textContent),
      };
    });
    await page.close();
    expect(found.labels).toContain("25 min 0 s");
    expect(found.clash).toEqual([]);
  });

  it("shows instants in the viewer's zone with the exact instant on hover", async () => {
    const page = await d.browser.context.newPage();
    // The viewer is in Tokyo; the server writes UTC.
    await (await d.browser.context.newCDPSession(page)).send("Emulation.setTimezoneOverride", {
      timezoneId: "Asia/Tokyo",
    });
    await page.goto(`${d.server.url}/dashboard/admin/t/acme/triggers/${deadTrigger}`);
    const t = page.locator("main time").first();
    const iso = await t.getAttribute("datetime");
    expect(await t.getAttribute("title")).toBe(iso);
    // The browser's own rendering in its zone, with the dashboard's format.
    const expected = await page.evaluate(([s, f]) => new Intl.DateTimeFormat("en-GB", f).format(new Date(s!)), [
      iso,
      TIME_FORMAT,
    ] as const);
    expect(expected).not.toContain("UTC");
    await expect(t.textContent()).resolves.toBe(expected);
    await page.close();
  });

  it("has no serious or critical axe-core violation on any page", async () => {
    const { page } = d;
    const admin = `${d.server.url}/dashboard/admin`;
    const tenant = `${admin}/t/acme`;
    const link = await d.admin.tenants.portalLink("acme");
    const portalPage = await d.browser.context.newPage();
    await portalPage.goto(link.url);
    const portal = portalPage.url().replace(/\/jobs$/, "");
    await portalPage.close();
    const tenantPaths = [
      "/jobs",
      `/jobs/${jobId}`,
      "/jobs/new",
      `/jobs/${jobId}/edit`,
      `/triggers/${deadTrigger}`,
      "/dead-letters",
      "/keys",
      "/secrets",
      "/notifications",
      "/usage",
    ];
    const urls = [
      admin,
      `${admin}/tenants/acme`,
      `${admin}/pools`,
      `${admin}/executors`,
      `${admin}/dead-letters`,
      `${admin}/activity`,
      `${admin}/activity?range=7d&tenant=acme`,
      ...tenantPaths.map((p) => tenant + p),
      ...tenantPaths.map((p) => portal + p),
    ];
    const found: string[] = [];
    for (const url of urls) {
      const res = await page.goto(url);
      expect(res?.status(), url).toBe(200);
      for (const v of await axeViolations(page)) found.push(`${url.replace(d.server.url, "")}: ${v}`);
    }
    // A refused form, with its messages on the fields.
    await page.goto(`${tenant}/jobs/new`);
    await page.getByRole("button", { name: "Create job" }).click();
    for (const v of await axeViolations(page)) found.push(`refused form: ${v}`);
    // Signed out: the sign-in page.
    const fresh = await d.browser.context.newPage();
    await d.browser.context.clearCookies();
    await fresh.goto(`${d.server.url}/dashboard/login`);
    for (const v of await axeViolations(fresh)) found.push(`login: ${v}`);
    await fresh.close();
    expect(found).toEqual([]);
    // About 30 pages, each loaded and checked: minutes on a loaded 2-core machine.
  }, 180_000);
});
