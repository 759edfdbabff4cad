// A job's flow control on its dashboard page, in a real browser against the real server process: how
// many creates a debounced job folded, and a cron job's backfills with their counts and a cancel that
// goes through the API's command (nothing of the backfill left pending after it).
import { beforeAll, describe, expect, it } from "vitest";
import { unlabelledControls, useDashboard, type Dashboard } from "./support.ts";

describe("dashboard in a real browser: debounce and backfills", () => {
  const dashboard = useDashboard({ signedIn: true });
  let d: Dashboard;
  beforeAll(() => {
    d = dashboard;
  });

  it("shows folded creates, lists a job's backfills and cancels one", async () => {
    const { acme, admin, receiver, server, page } = d;
    const create = () =>
      acme.jobs.create({
        name: "sync-account",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/ok` },
        debounce: { key: "account-9", periodMs: 600_000 },
      });
    const first = await create();
    await create();
    await create();
    await page.goto(`${server.url}/dashboard/admin/t/acme/jobs/${first.id}`);
    const debounce = page.locator('section[aria-labelledby="debounce-h"]');
    await expect(debounce.textContent()).resolves.toContain("2 later creates folded into this job");

    // One run at a time for acme, each held open: the backfill's fires stay queued behind the first.
    await admin.tenants.update("acme", { maxInFlight: 1 });
    const cron = await acme.jobs.create({
      name: "nightly",
      schedule: { cron: "* * * * *" },
      target: { url: `${receiver.url}/slow/60000` },
    });
    const to = Math.floor(Date.now() / 60_000) * 60_000;
    const b = await acme.jobs.backfill(cron.id, { from: new Date(to - 20 * 60_000), to: new Date(to) });
    expect(b.fires).toBe(20);
    const jobUrl = `${server.url}/dashboard/admin/t/acme/jobs/${cron.id}`;
    await page.goto(jobUrl);
    const row = page.locator("tr", { hasText: b.id });
    await expect(row.locator('td[data-label="Fires"]').textContent()).resolves.toBe("20");
    await expect(row.locator('td[data-label="Triggers"]').textContent()).resolves.toMatch(/pending/);
    expect(await unlabelledControls(page)).toEqual([]);
    await Promise.all([
      page.waitForURL(/done=backfill_cancelled/),
      row.getByRole("button", { name: "Cancel" }).click(),
    ]);
    await expect(page.getByRole("status").textContent()).resolves.toContain("Backfill cancelled");
    const after = await acme.backfills.get(b.id);
    expect(after.counts.pending ?? 0).toBe(0);
    // What the executor had claimed (the run in the cap's slot, one on standby) still runs.
    expect(after.counts.cancelled).toBeGreaterThanOrEqual(15);
    expect(Object.values(after.counts).reduce((x, y) => x + y, 0)).toBe(20);
    expect(after.cancelledAt).not.toBeNull();
    await expect(
      page.locator("tr", { hasText: b.id }).locator('td[data-label="Triggers"]').textContent(),
    ).resolves.toMatch(/cancelled/);

    // Without the page's CSRF token, nothing is cancelled.
    const again = await acme.jobs.backfill(cron.id, {
      from: new Date(to - 5 * 60_000),
      to: new Date(to),
      overlap: "allow",
    });
    const forged = await page.request.post(`${jobUrl}/backfills/${again.id}/cancel`, { form: {} });
    expect(forged.status()).toBe(403);
    expect((await acme.backfills.get(again.id)).cancelledAt).toBeNull();
  }, 120_000);
});
