// Quota plans from the operator's dashboard, in a real browser against the real server process: a plan
// made on the Plans page, a tenant put on it from the tenant's page (its own values stay its own), a
// plan's change moving its tenant, and a delete refused while the plan is in use; the tenant list shows
// each tenant's plan.
import { beforeAll, describe, expect, it } from "vitest";
import { useDashboard, type Dashboard } from "./support.ts";

describe("dashboard: quota plans", () => {
  const dashboard = useDashboard({ signedIn: true });
  let d: Dashboard;
  beforeAll(() => {
    d = dashboard;
  });

  it("creates a plan, puts a tenant on it, changes it, and refuses its delete while in use", async () => {
    const { page } = d;
    await page.goto(`${d.server.url}/dashboard/admin/plans`);
    await page.getByLabel("Id", { exact: true }).fill("gold");
    await page.getByLabel("Name", { exact: true }).fill("Gold");
    await page.getByLabel("In-flight cap", { exact: true }).fill("0");
    await page.getByRole("button", { name: "Create plan" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("maxInFlight");
    await expect(d.admin.plans.get("gold")).rejects.toMatchObject({ status: 404 });
    await page.getByLabel("In-flight cap", { exact: true }).fill("30");
    await page.getByLabel("Weight", { exact: true }).fill("3");
    await Promise.all([page.waitForURL(/done=created/), page.getByRole("button", { name: "Create plan" }).click()]);
    expect(await d.admin.plans.get("gold")).toMatchObject({ name: "Gold", maxInFlight: 30, weight: 3, maxJobs: null });

    // globex keeps a weight of its own; the rest comes from the plan.
    await d.admin.tenants.update("globex", { weight: 7 });
    await page.goto(`${d.server.url}/dashboard/admin/tenants/globex`);
    await page.getByLabel("Plan", { exact: true }).selectOption("gold");
    await page.getByRole("button", { name: "Save quotas" }).click();
    await expect(page.getByRole("status").textContent()).resolves.toContain("Quotas saved");
    expect(await d.admin.tenants.get("globex")).toMatchObject({
      plan: "gold",
      maxInFlight: 30,
      weight: 7,
      overrides: { weight: 7 },
    });
    await expect(page.getByLabel("In-flight cap", { exact: true }).inputValue()).resolves.toBe("");
    await expect(page.getByLabel("In-flight cap", { exact: true }).getAttribute("placeholder")).resolves.toBe("30");

    await page.goto(`${d.server.url}/dashboard/admin/plans/gold`);
    await page.getByLabel("In-flight cap", { exact: true }).fill("12");
    await Promise.all([page.waitForURL(/done=saved/), page.getByRole("button", { name: "Save plan" }).click()]);
    expect(await d.admin.tenants.get("globex")).toMatchObject({ maxInFlight: 12, weight: 7 });

    await page.getByRole("button", { name: "Delete plan" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toContain("1 tenant");
    expect((await d.admin.plans.get("gold")).tenants).toBe(1);

    await page.goto(`${d.server.url}/dashboard/admin`);
    await expect(page.locator("tr", { hasText: "Globex" }).textContent()).resolves.toContain("gold");
  });
});
