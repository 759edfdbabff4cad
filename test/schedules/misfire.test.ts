// Restart after an hour down, for each misfire policy: next_fire_at is persisted, a fresh executor
// (a new connection) picks up where the last one stopped, and every missed fire leaves a row — one
// catch-up (fire_once), none (skip), or every fire inside catchupWindowMs (fire_all), which the fair
// claim then interleaves with other tenants' work instead of running the backlog first. The fire
// written ahead before the outage (M0, pending, never claimed) is decided with the missed ones.
// (test/schedules/misfire-restart.test.ts does the same with the real server process.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claim, connectPostgres, materialize } from "@fairway/store";
import { createHarness, iso, triggerRows, type Harness } from "./harness.ts";

const MIN = 60_000;
const STEP = 5 * MIN;

describe("misfire policies across a restart", () => {
  let h: Harness;
  // Fire instants are real past times, so the claim (which uses the database's now()) can take them.
  const M0 = Math.floor((Date.now() - 62 * MIN) / STEP) * STEP;
  const m = (k: number) => iso(M0 + k * MIN);
  const jobs: Record<string, string> = {};
  const keys: Record<string, string> = {};

  beforeAll(async () => {
    h = await createHarness({ start: M0 - 1000 });
    for (const misfire of ["fire_once", "skip", "fire_all"]) {
      const key = await h.tenant(misfire.replace("_", ""));
      const res = await h.call(key, "POST", "/v1/jobs", {
        name: misfire,
        schedule: { cron: "*/5 * * * *", timezone: "UTC" },
        target: { url: "http://127.0.0.1:9/x" },
        misfire,
        catchupWindowMs: 30 * MIN,
      });
      expect(res.json).toMatchObject({ misfire, nextFireAt: new Date(M0).toISOString() });
      jobs[misfire] = res.json.id;
      keys[misfire] = key;
    }
    // Before the outage: the executor materializes M0 on time …
    expect((await materialize(h.db, new Date(M0 - 500), 1000)).fired).toBe(3);
    // … then is down for an hour. A new process (new connection) comes back 61.5 minutes later.
    const restarted = connectPostgres(h.tdb.url, { max: 2 });
    try {
      const r = await materialize(restarted.db, new Date(M0 + 61.5 * MIN), 1000);
      expect(r).toMatchObject({ jobs: 3, fired: 1 + 0 + 6, skipped: 11 + 12 + 6 });
      expect((await materialize(restarted.db, new Date(M0 + 61.5 * MIN), 1000)).jobs).toBe(0); // nothing twice
    } finally {
      await restarted.close();
    }
  });
  afterAll(async () => h?.close());

  const rows = async (misfire: string) =>
    (await triggerRows(h.db, jobs[misfire])).map((r) => `${r.at} ${r.status}${r.reason ? ` ${r.reason}` : ""}`);
  const range = (from: number, to: number, suffix: string) => {
    const out: string[] = [];
    for (let k = from; k <= to; k += 5) out.push(`${m(k)} ${suffix}`);
    return out;
  };

  it("fire_once: one catch-up trigger for the latest missed fire; the others recorded as skipped (misfire)", async () => {
    expect(await rows("fire_once")).toEqual([...range(0, 55, "skipped misfire"), `${m(60)} pending`]);
  });

  it("skip: the missed fires are recorded as skipped, nothing runs", async () => {
    expect(await rows("skip")).toEqual(range(0, 60, "skipped misfire"));
  });

  it("fire_all: every missed fire within catchupWindowMs; older ones skipped (misfire_outside_window)", async () => {
    expect(await rows("fire_all")).toEqual([
      ...range(0, 30, "skipped misfire_outside_window"),
      ...range(35, 60, "pending"),
    ]);
  });

  it("next_fire_at was persisted: GET /v1/jobs/:id shows it and the next 5 fires", async () => {
    for (const misfire of Object.keys(jobs)) {
      const got = await h.call(keys[misfire], "GET", `/v1/jobs/${jobs[misfire]}`);
      expect(got.json.nextFireAt).toBe(new Date(M0 + 65 * MIN).toISOString());
      expect(got.json.nextFires).toEqual([65, 70, 75, 80, 85].map((k) => new Date(M0 + k * MIN).toISOString()));
    }
    expect((await h.call(keys.skip, "GET", `/v1/jobs/${jobs.fire_all}`)).status).toBe(404); // another tenant's job
  });

  it("the catch-up backlog runs oldest first, fairly interleaved with other tenants", async () => {
    const order: Array<{ tenant: string; at: string }> = [];
    for (let i = 0; i < 12; i++) {
      const [c] = await claim(h.db, { type: "webhook", budget: 1, owner: "t", leaseMs: 60_000 });
      if (!c) break;
      order.push({ tenant: c.tenantId, at: iso(c.scheduledFor) });
    }
    expect(order).toHaveLength(1 + 0 + 6);
    // fire_once's catch-up is claimed before fire_all's backlog gets its second.
    expect(new Set(order.slice(0, 2).map((o) => o.tenant))).toEqual(new Set(["fireonce", "fireall"]));
    expect(order.filter((o) => o.tenant === "fireall").map((o) => o.at)).toEqual([
      m(35),
      m(40),
      m(45),
      m(50),
      m(55),
      m(60),
    ]);
  });
});
