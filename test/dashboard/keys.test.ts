// The dashboard's Keys page in a real browser (Chromium through playwright-core) against the real
// server process on real Postgres with its executor and a real receiver: a tenant's top keys with
// running, due and the policy in force; a key's policy and the key defaults edited through the forms,
// refused with the API's own words and nothing saved; another tenant's keys not shown.
import { beforeAll, describe, expect, it } from "vitest";
import { until } from "../support/until.ts";
import { overflowsX, refusal, shot, unlabelledControls, useDashboard, type Dashboard } from "./support.ts";

describe("dashboard in a real browser: fairness keys", () => {
  const dashboard = useDashboard({ signedIn: true });
  let d: Dashboard;
  beforeAll(() => {
    d = dashboard;
  });

  it("shows the top keys with running, due and policy; edits a key and the defaults through the API's checks", async () => {
    const { acme, globex, receiver, server, page } = d;
    await acme.keys.put("customer-1", { maxInFlight: 1, weight: 2 });
    // A policy set before the key has any work: shown, so it can be seen and reset.
    await acme.keys.put("not-yet-busy", { maxInFlight: 3 });
    // The page lists keys by recent worker time: each key has one settled run first.
    const warm = await Promise.all(
      ["customer-1", "customer-2"].map((key) =>
        acme.jobs.create({ name: `${key}-warm`, key, schedule: { delayMs: 0 }, target: { url: `${receiver.url}/ok` } }),
      ),
    );
    for (const j of warm)
      await until(
        () => acme.jobs.triggers(j.id),
        (p) => p.data[0]?.status === "succeeded",
      );
    for (const [key, n] of [
      ["customer-1", 3],
      ["customer-2", 2],
    ] as const) {
      for (let i = 0; i < n; i++)
        await acme.jobs.create({
          name: `${key}-${i}`,
          key,
          schedule: { delayMs: 0 },
          target: { url: `${receiver.url}/slow/60000` },
        });
    }
    const theirs = await globex.jobs.create({
      name: "other-warm",
      key: "globex-secret-customer",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/ok` },
    });
    await until(
      () => globex.jobs.triggers(theirs.id),
      (p) => p.data[0]?.status === "succeeded",
    );
    await globex.jobs.create({
      name: "other",
      key: "globex-secret-customer",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/slow/60000` },
    });
    await until(
      async () => [await acme.keys.get("customer-1"), await acme.keys.get("customer-2")],
      ([a, b]) => a.running === 1 && a.due === 1 && b.running === 2,
      30_000,
      // customer-1 holds its next trigger on standby (leased, not due): one of its three is due.
      "customer-1 at its cap of 1 with one on standby, customer-2 running 2",
    );

    const url = `${server.url}/dashboard/admin/t/acme/keys`;
    await page.goto(url);
    await page.getByRole("heading", { name: "Fairness keys", level: 1 }).waitFor();
    const row = (key: string) => page.locator("tr", { hasText: key });
    /** A key's row as { column label: text }. */
    const cells = async (key: string): Promise<Record<string, string>> =>
      Object.fromEntries(
        await row(key)
          .locator("td")
          .evaluateAll((tds) => tds.map((td) => [td.getAttribute("data-label"), (td.textContent ?? "").trim()])),
      );
    expect(await cells("customer-1")).toMatchObject({ Running: "1", Due: "1", Cap: "1", Weight: "2", Policy: "own" });
    expect(await cells("customer-2")).toMatchObject({ Running: "2", Due: "0", Cap: "none", Policy: "defaults" });
    expect(await cells("not-yet-busy")).toMatchObject({ Running: "0", Due: "0", Cap: "3", Policy: "own" });
    expect(await page.locator("main").textContent()).not.toContain("globex-secret-customer");
    expect(await unlabelledControls(page)).toEqual([]);
    await shot(page, "tenant-keys");

    // A bad value: the API's message, word for word; nothing saved.
    const form = page.getByRole("form", { name: "A key's policy" });
    await form.getByLabel("Key").fill("customer-2");
    await form.getByLabel("Runs at once (maxInFlight)").fill("0");
    await form.getByRole("button", { name: "Save key policy" }).click();
    const api = await refusal(acme.keys.put("customer-2", { maxInFlight: 0 }));
    const keyAlert = page.locator('section[aria-labelledby="key-h"]').getByRole("alert");
    await expect(keyAlert.textContent()).resolves.toBe(api.message);
    expect((await acme.keys.get("customer-2")).override).toBeNull();
    // The form keeps what was typed.
    await expect(form.getByLabel("Runs at once (maxInFlight)").inputValue()).resolves.toBe("0");

    // A good one: saved; the table shows it.
    await form.getByLabel("Runs at once (maxInFlight)").fill("5");
    await form.getByLabel("Starts per second (ratePerSecond)").fill("none");
    await Promise.all([page.waitForURL(/done=saved/), form.getByRole("button", { name: "Save key policy" }).click()]);
    await expect(page.getByRole("status").textContent()).resolves.toContain("Key policy saved");
    expect((await acme.keys.get("customer-2")).override).toEqual({ maxInFlight: 5, ratePerSecond: null });
    expect((await cells("customer-2")).Cap).toBe("5");

    // Edit prefills the form from the key's override.
    await row("customer-1").getByRole("link", { name: "Edit" }).click();
    await expect(form.getByLabel("Key").inputValue()).resolves.toBe("customer-1");
    await expect(form.getByLabel("Weight").inputValue()).resolves.toBe("2");

    // Defaults: a bad weight refused with the API's words, then a good change saved.
    const defaults = page.getByRole("form", { name: "Key defaults" });
    await defaults.getByLabel("Weight").fill("1001");
    await defaults.getByRole("button", { name: "Save defaults" }).click();
    const apiWeight = await refusal(acme.keyDefaults.update({ weight: 1001 }));
    const defaultsAlert = page.locator('section[aria-labelledby="defaults-h"]').getByRole("alert");
    await expect(defaultsAlert.textContent()).resolves.toBe(apiWeight.message);
    expect(await acme.keyDefaults.get()).toEqual({ maxInFlight: null, ratePerSecond: null, weight: 1 });
    await defaults.getByLabel("Weight").fill("");
    await defaults.getByLabel("Starts per second (ratePerSecond)").fill("2.5");
    await Promise.all([
      page.waitForURL(/done=defaults/),
      defaults.getByRole("button", { name: "Save defaults" }).click(),
    ]);
    expect(await acme.keyDefaults.get()).toEqual({ maxInFlight: null, ratePerSecond: 2.5, weight: 1 });

    // Reset returns customer-1 to the defaults.
    await Promise.all([
      page.waitForURL(/done=reset/),
      page.getByRole("button", { name: "Reset customer-1 to the defaults" }).click(),
    ]);
    expect((await acme.keys.get("customer-1")).override).toBeNull();
    expect((await cells("customer-1")).Policy).toBe("defaults");

    // Without the page's CSRF token, nothing is saved.
    const forged = await page.request.post(`${url}/defaults`, { form: { weight: "3" } });
    expect(forged.status()).toBe(403);
    expect((await acme.keyDefaults.get()).weight).toBe(1);

    // Phone width: no horizontal scroll.
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(url);
    expect(await overflowsX(page)).toBe(false);
    await page.setViewportSize({ width: 1280, height: 800 });
  }, 120_000);
});
