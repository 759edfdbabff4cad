// Making and changing jobs in the dashboard, in Chromium against the real server on real Postgres with a
// real receiver: a cron job and a one-time job created from the form (the latter keyboard only) and
// delivered, a refused form showing the API's message at its field and writing nothing, an edited
// target receiving the next delivery with a hidden credential kept, and a cancel.
import { beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { KEPT } from "../../packages/dashboard/src/job-form-body.ts";
import { until } from "../support/until.ts";
import { refusal, shot, unlabelledControls, useDashboard, type Dashboard } from "./support.ts";

/** Tabs until the focused element matches `selector` (keyboard only), checking focus is visible. */
async function tabTo(page: Page, selector: string, max = 80): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press("Tab");
    const at = await page.evaluate((s) => {
      const el = document.activeElement as HTMLElement | null;
      if (!el?.matches(s)) return null;
      const st = getComputedStyle(el);
      return { outline: st.outlineStyle !== "none" && st.outlineWidth !== "0px" };
    }, selector);
    if (at) {
      expect(at.outline, `focus on ${selector} is visible`).toBe(true);
      return;
    }
  }
  throw new Error(`${selector} not reached with Tab`);
}

describe("dashboard job forms: create, edit, cancel", () => {
  const dashboard = useDashboard({ signedIn: true });
  let d: Dashboard;
  let base: string;
  beforeAll(() => {
    d = dashboard;
    base = `${d.server.url}/dashboard/admin/t/acme`;
  });
  const jobNamed = async (name: string) =>
    (await d.acme.jobs.list({ status: "cancelled" })).data
      .concat((await d.acme.jobs.list()).data)
      .find((j) => j.name === name);

  it("creates a cron job from the form, previewing the schedule as it is typed, and it is delivered", async () => {
    const { page } = d;
    await page.goto(`${base}/jobs`);
    await Promise.all([page.waitForURL(/\/jobs\/new$/), page.getByRole("link", { name: "New job" }).click()]);
    expect(await unlabelledControls(page)).toEqual([]);
    await page.getByLabel("Name", { exact: true }).fill("form-cron");
    await page.getByLabel("Cron expression").fill("*/2 * * * * *");
    await page.getByLabel("Time zone").fill("Europe/Berlin");
    const preview = page.locator("#schedule-preview");
    await until(
      () => preview.textContent(),
      (t) => (t ?? "").includes("Every 2 seconds (Europe/Berlin)"),
      10_000,
      "preview",
    );
    await expect(preview.locator("ol.fires time").count()).resolves.toBe(5);
    await expect(preview.locator("time").first().getAttribute("datetime")).resolves.toMatch(/Z$/);
    await page.getByLabel("URL").fill(`${d.receiver.url}/status/201`);
    await page.getByLabel("Headers").fill("x-team: ops");
    await page.getByLabel("Payload (JSON)").fill('{"report":"daily"}');
    await page.getByLabel("Attempts").fill("2");
    await page.getByLabel("Fairness key").fill("customer-42");
    await shot(page, "job-new");
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole("button", { name: "Create job" }).click()]);
    await expect(page.getByRole("status").textContent()).resolves.toContain("Job created");
    const job = (await jobNamed("form-cron"))!;
    expect(job).toMatchObject({ key: "customer-42", payload: { report: "daily" }, retry: { maxAttempts: 2 } });
    const got = await d.receiver.waitFor((ds) => ds.some((x) => x.path === "/status/201"));
    const first = got.find((x) => x.path === "/status/201")!;
    expect(first.verified).toBe(true);
    expect(first.headers["x-team"]).toBe("ops");
    expect(first.body).toMatchObject({ jobId: job.id, payload: { report: "daily" } });
  });

  it("refuses a bad cron with the API's message next to the field, and writes nothing", async () => {
    const { page } = d;
    const before = (await d.acme.jobs.list()).data.length;
    await page.goto(`${base}/jobs/new`);
    await page.getByLabel("Name", { exact: true }).fill("form-bad");
    await page.getByLabel("Cron expression").fill("61 * * * *");
    // The live preview gives the reason a submit would, before any submit.
    await until(
      () => page.locator("#schedule-preview").textContent(),
      (t) => (t ?? "").includes("Not a schedule yet: minute value 61 is out of range 0-59."),
      10_000,
      "the preview's reason",
    );
    await page.getByLabel("URL").fill(`${d.receiver.url}/ok`);
    await page.getByRole("button", { name: "Create job" }).click();
    const shown = await page.locator("#cron-error").textContent();
    const api = await refusal(
      d.acme.jobs.create({
        name: "form-bad",
        schedule: { cron: "61 * * * *", timezone: "UTC" },
        target: { url: `${d.receiver.url}/ok`, method: "POST" },
      }),
    );
    expect(shown).toBe(api.message);
    await expect(page.getByLabel("Cron expression").getAttribute("aria-invalid")).resolves.toBe("true");
    await expect(page.getByLabel("Name", { exact: true }).inputValue()).resolves.toBe("form-bad");
    expect((await d.acme.jobs.list()).data.length).toBe(before);
    // A secret the tenant does not have: the API's unknown_secret, at the headers.
    await page.getByLabel("Cron expression").fill("0 3 * * *");
    await page.getByLabel("Headers").fill("authorization: Bearer ${secrets.NOPE}");
    await page.getByRole("button", { name: "Create job" }).click();
    await expect(page.locator("#headers-error").textContent()).resolves.toContain("NOPE");
    await shot(page, "job-form-refused");
    expect((await d.acme.jobs.list()).data.length).toBe(before);
  });

  it("creates a one-time job with the keyboard only, and it is delivered", async () => {
    const { page } = d;
    await page.goto(`${base}/jobs`);
    await tabTo(page, "a[href$='/jobs/new']");
    await Promise.all([page.waitForURL(/\/jobs\/new$/), page.keyboard.press("Enter")]);
    await tabTo(page, "#name");
    await page.keyboard.type("form-once");
    await tabTo(page, "input[name=kind][value=cron]");
    await page.keyboard.press("ArrowDown"); // the radio group: Once
    await tabTo(page, "#url");
    await page.keyboard.type(`${d.receiver.url}/status/202`);
    await tabTo(page, "button[type=submit]:not(header button)");
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.keyboard.press("Enter")]);
    const job = (await jobNamed("form-once"))!;
    expect(job.schedule).toHaveProperty("at");
    const got = await d.receiver.waitFor((ds) => ds.some((x) => x.path === "/status/202"));
    expect(got.find((x) => x.path === "/status/202")!.body).toMatchObject({ jobId: job.id });
  });

  it("a portal user creates a job for their own tenant", async () => {
    const portal = await d.browser.context.newPage();
    try {
      await portal.goto((await d.admin.tenants.portalLink("globex")).url);
      await Promise.all([portal.waitForURL(/\/jobs\/new$/), portal.getByRole("link", { name: "New job" }).click()]);
      await portal.getByLabel("Name", { exact: true }).fill("portal-made");
      await portal.getByLabel("Cron expression").fill("0 4 * * *");
      await portal.getByLabel("URL").fill(`${d.receiver.url}/ok`);
      await Promise.all([
        portal.waitForURL(/\/jobs\/job_/),
        portal.getByRole("button", { name: "Create job" }).click(),
      ]);
      expect((await d.globex.jobs.list()).data.map((j) => j.name)).toContain("portal-made");
      expect((await d.acme.jobs.list()).data.map((j) => j.name)).not.toContain("portal-made");
    } finally {
      await portal.close();
    }
  });

  it("edits a job's target: the next delivery goes to the new one, a hidden credential is kept", async () => {
    const { page } = d;
    const job = await d.acme.jobs.create({
      name: "form-edit",
      schedule: { cron: "*/2 * * * * *", timezone: "UTC" },
      target: { url: `${d.receiver.url}/status/203`, headers: { authorization: "Bearer sk_literal_canary" } },
    });
    await d.receiver.waitFor((ds) => ds.some((x) => x.path === "/status/203"));
    // By keyboard: to the form, the URL field, and Save.
    await page.goto(`${base}/jobs/${job.id}`);
    await tabTo(page, "a[href$='/edit']");
    await Promise.all([page.waitForURL(/\/edit$/), page.keyboard.press("Enter")]);
    expect(await page.content()).not.toContain("sk_literal_canary");
    await expect(page.getByLabel("Headers").inputValue()).resolves.toBe(`authorization: ${KEPT}`);
    await tabTo(page, "#url");
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.type(`${d.receiver.url}/status/204`);
    await shot(page, "job-edit");
    await tabTo(page, "button[type=submit]:not(header button)");
    await Promise.all([page.waitForURL(/done=edited/), page.keyboard.press("Enter")]);
    expect((await d.acme.jobs.get(job.id)).target).toMatchObject({
      url: `${d.receiver.url}/status/204`,
      headers: { authorization: "Bearer sk_literal_canary" },
    });
    const got = await d.receiver.waitFor((ds) => ds.some((x) => x.path === "/status/204"));
    expect(got.find((x) => x.path === "/status/204")!.headers.authorization).toBe("Bearer sk_literal_canary");
  });

  it("sets spread, overlap, misfire and onBusy from the form; the job page shows them with key and payload; edits them back", async () => {
    const { page } = d;
    await page.goto(`${base}/jobs/new`);
    await page.getByLabel("Name", { exact: true }).fill("form-policies");
    await page.getByLabel("Cron expression").fill("* * * * *");
    await page.getByLabel("Spread (cron)").fill("PT30S");
    await page.getByLabel("Overlap (cron)").selectOption("skip");
    await page.getByLabel("Misfire (cron)").selectOption("fire_all");
    await page.getByLabel("URL").fill(`${d.receiver.url}/ok/policies`);
    await page.getByLabel("Payload (JSON)").fill('{"account":"a-7"}');
    await page.getByLabel("Fairness key").fill("acct-7");
    await page.getByLabel("While the key is busy (onBusy)").selectOption("cancel_running");
    expect(await unlabelledControls(page)).toEqual([]);
    await shot(page, "job-form-policies");
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole("button", { name: "Create job" }).click()]);
    const job = (await jobNamed("form-policies"))!;
    expect(job).toMatchObject({
      key: "acct-7",
      payload: { account: "a-7" },
      overlap: "skip",
      misfire: "fire_all",
      onBusy: "cancel_running",
      schedule: { cron: "* * * * *", spread: "PT30S" },
    });
    // The job's page: what the API says, in words.
    const facts = await page.locator("#sched-h + dl").textContent();
    for (const text of ["acct-7", '"account": "a-7"', "cancel_running", "PT30S", "skip / fire_all"])
      expect(facts).toContain(text);
    await shot(page, "tenant-job-policies");

    // Edit: back to the defaults, no spread.
    await page.goto(`${base}/jobs/${job.id}/edit`);
    await expect(page.getByLabel("Spread (cron)").inputValue()).resolves.toBe("PT30S");
    await expect(page.getByLabel("While the key is busy (onBusy)").inputValue()).resolves.toBe("cancel_running");
    await page.getByLabel("Spread (cron)").fill("");
    await page.getByLabel("Overlap (cron)").selectOption("allow");
    await page.getByLabel("While the key is busy (onBusy)").selectOption("queue");
    await Promise.all([page.waitForURL(/done=edited/), page.getByRole("button", { name: "Save job" }).click()]);
    const edited = await d.acme.jobs.get(job.id);
    expect(edited).toMatchObject({ overlap: "allow", misfire: "fire_all", onBusy: "queue" });
    expect(edited.schedule).not.toHaveProperty("spread");

    // onBusy other than queue without a key: the API's refusal at the field, nothing saved.
    await page.goto(`${base}/jobs/${job.id}/edit`);
    await page.getByLabel("Fairness key").fill("");
    await page.getByLabel("While the key is busy (onBusy)").selectOption("skip");
    await page.getByRole("button", { name: "Save job" }).click();
    await expect(page.locator("#onBusy-error").textContent()).resolves.toContain("this job has no key");
    expect((await d.acme.jobs.get(job.id)).key).toBe("acct-7");
  });

  it("backfills a cron job from its page, and shows the API's refusal of a range in the future", async () => {
    const { page } = d;
    const job = await d.acme.jobs.create({
      name: "form-backfill",
      schedule: { cron: "* * * * *" },
      target: { url: `${d.receiver.url}/ok/backfill` },
    });
    const minute = 60_000;
    const to = new Date(Math.floor(Date.now() / minute) * minute);
    const from = new Date(to.getTime() - 3 * minute);
    await page.goto(`${base}/jobs/${job.id}`);
    const form = page.getByRole("form", { name: "Backfill" });
    await form.getByLabel("From (inclusive)").fill(from.toISOString());
    await form.getByLabel("To (exclusive)").fill(new Date(Date.now() + 3_600_000).toISOString());
    await form.getByRole("button", { name: "Start backfill" }).click();
    const api = await refusal(
      d.acme.jobs.backfill(job.id, { from: from.toISOString(), to: new Date(Date.now() + 3_600_000).toISOString() }),
    );
    // The API's words (its message names the instant it checked against: read apart).
    const now = (m: string | null) => (m ?? "").replace(/\(now is [^)]*\)/, "(now is …)");
    expect(now(await page.locator("#backfill-error").textContent())).toBe(now(api.message));
    expect((await d.acme.jobs.backfills(job.id)).data).toEqual([]);

    await form.getByLabel("To (exclusive)").fill(to.toISOString());
    await Promise.all([
      page.waitForURL(/done=backfill_started/),
      form.getByRole("button", { name: "Start backfill" }).click(),
    ]);
    const [b] = (await d.acme.jobs.backfills(job.id)).data;
    expect(b).toMatchObject({ fires: 3, skipped: 0 });
    await until(
      () => d.acme.backfills.get(b!.id),
      (x) => x.counts.succeeded === 3,
      30_000,
      "the backfill delivered",
    );
    await page.reload();
    await expect(page.locator("td[data-label=Triggers]").first().textContent()).resolves.toBe("3 succeeded");
    await shot(page, "job-backfill");
  });

  it("creates a debounced one-time job from the form", async () => {
    const { page } = d;
    await page.goto(`${base}/jobs/new`);
    await page.getByLabel("Name", { exact: true }).fill("form-debounced");
    await page.getByRole("radio", { name: "Once" }).check();
    await page.getByLabel("Run once at").fill(new Date(Date.now() + 3_600_000).toISOString());
    await page.getByLabel("URL").fill(`${d.receiver.url}/ok/debounced`);
    await page.getByLabel("Debounce key (once)").fill("account-42");
    await page.getByLabel("Quiet period (ms)").fill("30000");
    await page.getByLabel("Longest wait (ms)").fill("300000");
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole("button", { name: "Create job" }).click()]);
    const job = (await jobNamed("form-debounced"))!;
    expect(job.debounce).toEqual({
      key: "account-42",
      periodMs: 30000,
      maxWaitMs: 300000,
      mode: "trailing",
      folded: 0,
    });
    await expect(page.locator("#debounce-h + dl").textContent()).resolves.toContain("account-42");
  });

  it("cancels a job from its page", async () => {
    const { page } = d;
    const job = (await jobNamed("form-cron"))!;
    await page.goto(`${base}/jobs/${job.id}`);
    await Promise.all([page.waitForURL(/done=cancelled/), page.getByRole("button", { name: "Cancel job" }).click()]);
    await expect(page.getByRole("status").textContent()).resolves.toContain("Job cancelled");
    expect((await d.acme.jobs.get(job.id)).status).toBe("cancelled");
    // The every-2-seconds job of the edit test stops firing for the files after this one.
    await d.acme.jobs.delete((await jobNamed("form-edit"))!.id);
  });
});
