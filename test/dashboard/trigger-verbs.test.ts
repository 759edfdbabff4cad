// One trigger from its dashboard page, in a real browser against the real server process: Cancel on
// a pending trigger (it never runs), and Re-run of a succeeded one with the payload editor prefilled
// with the job's payload, edited: delivered once with the edit, the job unchanged. And jobs' tags,
// shown on the list and the job's page and filtered by the list's Tag field.
import { beforeAll, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { useDashboard, type Dashboard } from "./support.ts";

describe("dashboard: cancel and re-run one trigger", () => {
  const dashboard = useDashboard({ signedIn: true });
  let d: Dashboard;
  beforeAll(() => {
    d = dashboard;
  });

  it("cancels a pending trigger from its page", async () => {
    const job = await d.acme.jobs.create({
      name: "later",
      schedule: { delayMs: 3_600_000 },
      target: { url: `${d.receiver.url}/ok/dash-later` },
    });
    const [t] = (await d.acme.jobs.triggers(job.id)).data;
    await d.page.goto(`${d.server.url}/dashboard/admin/t/acme/triggers/${t!.id}`);
    await Promise.all([
      d.page.waitForURL(/done=trigger_cancelled/),
      d.page.getByRole("button", { name: "Cancel" }).click(),
    ]);
    await expect(d.page.getByRole("status").first().textContent()).resolves.toContain("Trigger cancelled");
    const after = await d.acme.triggers.get(t!.id);
    expect([after.status, after.reason]).toEqual(["cancelled", "cancelled_by_user"]);
    await expect(d.page.getByRole("button", { name: "Cancel" }).count()).resolves.toBe(0);
  });

  it("re-runs a succeeded trigger with an edited payload from its page", async () => {
    const job = await d.acme.jobs.create({
      name: "report",
      schedule: { delayMs: 0 },
      target: { url: `${d.receiver.url}/ok/dash-rerun` },
      payload: { version: 1 },
    });
    const [first] = (
      await until(
        () => d.acme.jobs.triggers(job.id),
        (p) => p.data[0]?.status === "succeeded",
        30_000,
      )
    ).data;
    await d.page.goto(`${d.server.url}/dashboard/admin/t/acme/triggers/${first!.id}`);
    const editor = d.page.getByLabel("Payload (JSON)");
    expect(JSON.parse(await editor.inputValue())).toEqual({ version: 1 });
    await editor.fill('{"version": 2}');
    await Promise.all([d.page.waitForURL(/done=rerun/), d.page.getByRole("button", { name: "Re-run" }).click()]);
    const rerunId = new URL(d.page.url()).pathname.split("/").pop()!;
    expect(rerunId).not.toBe(first!.id);
    await d.receiver.waitFor((ds) => ds.some((x) => x.id === rerunId), 30_000);
    const got = d.receiver.deliveries.filter((x) => x.path === "/ok/dash-rerun");
    expect(got.map((x) => (x.body as { payload: unknown }).payload)).toEqual([{ version: 1 }, { version: 2 }]);
    expect((await d.acme.triggers.get(rerunId)).rerunOf).toBe(first!.id);
    expect((await d.acme.jobs.get(job.id)).payload).toEqual({ version: 1 });

    // Not JSON: refused with a message, nothing queued.
    await d.page.goto(`${d.server.url}/dashboard/admin/t/acme/triggers/${first!.id}`);
    await d.page.getByLabel("Payload (JSON)").fill("{not json");
    await d.page.getByRole("button", { name: "Re-run" }).click();
    await expect(d.page.locator("main").textContent()).resolves.toContain("not valid JSON");
    expect((await d.acme.jobs.triggers(job.id)).data).toHaveLength(2);
  });

  it("shows jobs' tags and filters the list by one", async () => {
    const tagged = await d.acme.jobs.create({
      name: "tagged-job",
      schedule: { delayMs: 3_600_000 },
      target: { url: `${d.receiver.url}/ok` },
      tags: { env: "prod", team: "ops" },
    });
    await d.acme.jobs.create({
      name: "untagged-job",
      schedule: { delayMs: 3_600_000 },
      target: { url: `${d.receiver.url}/ok` },
    });
    await d.page.goto(`${d.server.url}/dashboard/admin/t/acme/jobs`);
    await d.page.getByLabel("Tag").fill("team:ops");
    await Promise.all([d.page.waitForURL(/tag=team%3Aops/), d.page.getByRole("button", { name: "Filter" }).click()]);
    const listed = await d.page.locator("main table").textContent();
    expect(listed).toContain("tagged-job");
    expect(listed).toContain("env:prod team:ops");
    expect(listed).not.toContain("untagged-job");
    await d.page.goto(`${d.server.url}/dashboard/admin/t/acme/jobs/${tagged.id}`);
    await expect(d.page.locator("main").textContent()).resolves.toContain("env:prod team:ops");
    await d.page.goto(`${d.server.url}/dashboard/admin/t/acme/jobs?tag=nocolon`);
    await expect(d.page.locator("main").textContent()).resolves.toContain("name:value");
  });
});
