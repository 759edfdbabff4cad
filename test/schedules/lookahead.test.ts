// Fires written ahead (the materializer's lookahead, default 10 s — here minutes, to make it plain) and
// every change to a cron job: a paused, deleted or PATCHed job must never fire a trigger written under
// its old state, and nothing written ahead may be lost when it comes back. Instants are real future
// minutes: "not yet due" is judged by the database's now(), as the claim judges it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Executor, createFetchTransport } from "@fairway/executor";
import { connectPostgres, materialize, query, sql, type Store } from "@fairway/store";
import { createHarness, iso, triggerRows, type Harness, type Row } from "./harness.ts";
import { until } from "../support/until.ts";

const MIN = 60_000;
const AHEAD = 10 * MIN;

describe("fires written ahead and the job lifecycle", () => {
  let h: Harness;
  let key: string;
  const stores: Store[] = [];

  beforeAll(async () => {
    h = await createHarness({ handlerTypes: ["tick"] });
    key = await h.tenant("ahead");
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await h?.close();
  });

  const create = async (body: Record<string, unknown>) => {
    h.clock.now = Date.now();
    const res = await h.call(key, "POST", "/v1/jobs", {
      name: "ahead",
      target: { url: "http://127.0.0.1:9/x" },
      ...body,
    });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    return res.json as { id: string; nextFireAt: string };
  };
  const call = (method: string, path: string, body?: unknown) => {
    h.clock.now = Date.now();
    return h.call(key, method, path, body);
  };
  const pending = async (jobId: string) => (await triggerRows(h.db, jobId)).filter((r) => r.status === "pending");
  const byAt = (rows: Row[]) => new Map(rows.map((r) => [r.at, r]));
  const minutes = (from: number, n: number, step = 1) =>
    Array.from({ length: n }, (_, k) => iso(from + k * step * MIN));
  // Every minute, at the second half a minute from now: the first fire (F1) is ~30 s away whatever
  // second a test starts at. With "* * * * *", a test started at :59 had F1 under a second away, and
  // F1 came due (or within the exclusive lookahead) while the test still treated it as ahead.
  const everyMinuteAwayFromNow = () => `${(new Date().getUTCSeconds() + 30) % 60} * * * * *`;

  it("pause cancels every fire written ahead; a resume before them fires each one, same id, and loses none", async () => {
    const job = await create({ schedule: { cron: everyMinuteAwayFromNow(), timezone: "UTC" } });
    const F1 = Date.parse(job.nextFireAt);
    await materialize(h.db, new Date(), AHEAD);
    const ahead = await pending(job.id);
    expect(ahead.map((r) => r.at)).toEqual(minutes(F1, ahead.length));
    expect(ahead.length).toBeGreaterThanOrEqual(9);

    expect((await call("POST", `/v1/jobs/${job.id}/pause`)).json).toMatchObject({ status: "paused", nextFireAt: null });
    expect(await pending(job.id)).toEqual([]);
    expect((await triggerRows(h.db, job.id)).every((r) => r.status === "cancelled" && r.reason === "paused")).toBe(
      true,
    );
    expect((await materialize(h.db, new Date(), AHEAD)).jobs).toBe(0); // paused: nothing written

    const resumed = await call("POST", `/v1/jobs/${job.id}/resume`);
    expect(resumed.json).toMatchObject({ status: "active", nextFireAt: new Date(F1).toISOString() });
    await materialize(h.db, new Date(), AHEAD);
    const again = await pending(job.id);
    // Every minute from F1 on, no gap; the instants written before the pause keep their ids.
    expect(again.map((r) => r.at)).toEqual(minutes(F1, again.length));
    const before = byAt(ahead);
    for (const r of again) if (before.has(r.at)) expect(r.id).toBe(before.get(r.at)!.id);
    expect((await triggerRows(h.db, job.id)).length).toBe(again.length); // nothing cancelled left over
  });

  it("a pause longer than the fires written ahead: on resume the gap goes through the misfire policy, like downtime", async () => {
    const job = await create({ schedule: { cron: everyMinuteAwayFromNow(), timezone: "UTC" }, misfire: "fire_once" });
    const F1 = Date.parse(job.nextFireAt);
    await materialize(h.db, new Date(), AHEAD);
    const ids = byAt(await pending(job.id));
    await call("POST", `/v1/jobs/${job.id}/pause`);
    await call("POST", `/v1/jobs/${job.id}/resume`);
    // The materializer runs again 5.5 minutes after F1 (its clock is an argument).
    await materialize(h.db, new Date(F1 + 5.5 * MIN), AHEAD);
    const rows = (await triggerRows(h.db, job.id)).filter((r) => Date.parse(r.at) <= F1 + 6 * MIN);
    expect(rows.map((r) => `${r.at} ${r.status}${r.reason ? ` ${r.reason}` : ""}`)).toEqual([
      `${iso(F1)} skipped misfire`,
      `${iso(F1 + MIN)} skipped misfire`,
      `${iso(F1 + 2 * MIN)} skipped misfire`,
      `${iso(F1 + 3 * MIN)} skipped misfire`,
      `${iso(F1 + 4 * MIN)} skipped misfire`,
      `${iso(F1 + 5 * MIN)} pending`, // the one catch-up: the latest overdue fire, though inside the grace
      `${iso(F1 + 6 * MIN)} pending`, // ahead: on time
    ]);
    for (const r of rows) expect(r.id).toBe(ids.get(r.at)!.id); // one row per instant, ever
  });

  it("PATCH of the cron: no fire written ahead under the old schedule stays pending; a shared instant keeps its id", async () => {
    const job = await create({ schedule: { cron: "*/2 * * * *", timezone: "UTC" } });
    await materialize(h.db, new Date(), AHEAD);
    const old = await pending(job.id);
    expect(old.length).toBeGreaterThanOrEqual(4);
    const patched = await call("PATCH", `/v1/jobs/${job.id}`, { schedule: { cron: "*/3 * * * *", timezone: "UTC" } });
    expect(patched.status).toBe(200);
    expect(await pending(job.id)).toEqual([]);
    await materialize(h.db, new Date(), AHEAD);
    const now = await pending(job.id);
    expect(now.length).toBeGreaterThanOrEqual(3);
    expect(now.every((r) => new Date(r.at).getUTCMinutes() % 3 === 0)).toBe(true);
    const before = byAt(old);
    const shared = now.filter((r) => before.has(r.at));
    expect(shared.length).toBeGreaterThanOrEqual(1); // every 6 minutes
    for (const r of shared) expect(r.id).toBe(before.get(r.at)!.id);
  });

  it("PATCH of the timezone: the old zone's instants written ahead never fire", async () => {
    const job = await create({ schedule: { cron: "30 * * * *", timezone: "UTC" } });
    await materialize(h.db, new Date(), 3 * 60 * MIN);
    expect((await pending(job.id)).every((r) => new Date(r.at).getUTCMinutes() === 30)).toBe(true);
    // :30 in Asia/Kolkata (+05:30) is :00 UTC.
    await call("PATCH", `/v1/jobs/${job.id}`, { schedule: { cron: "30 * * * *", timezone: "Asia/Kolkata" } });
    await materialize(h.db, new Date(), 3 * 60 * MIN);
    const now = await pending(job.id);
    expect(now.length).toBeGreaterThanOrEqual(2);
    expect(now.every((r) => new Date(r.at).getUTCMinutes() === 0)).toBe(true);
  });

  it("PATCH allow → skip: fires written ahead under allow are decided again under skip", async () => {
    const job = await create({ schedule: { cron: everyMinuteAwayFromNow(), timezone: "UTC" }, overlap: "allow" });
    const F1 = Date.parse(job.nextFireAt);
    await materialize(h.db, new Date(), AHEAD);
    const ids = byAt(await pending(job.id));
    expect(ids.size).toBeGreaterThanOrEqual(9);
    const patched = await call("PATCH", `/v1/jobs/${job.id}`, { overlap: "skip" });
    expect(patched.json).toMatchObject({ overlap: "skip", nextFireAt: new Date(F1).toISOString() });
    expect(await pending(job.id)).toEqual([]);
    // An exclusive job is planned only near its fire: a pass now writes nothing…
    expect((await materialize(h.db, new Date(), AHEAD)).fired).toBe(0);
    // …half a second before F1 it is planned (nothing running or waiting), exclusive, same id…
    await materialize(h.db, new Date(F1 - 500), AHEAD);
    const [first] = await query<{ id: string; status: string; exclusive: boolean }>(
      h.db,
      sql`SELECT id, status, exclusive FROM triggers WHERE job_id = ${job.id} AND scheduled_for = ${new Date(F1).toISOString()}::timestamptz`,
    );
    expect(first).toEqual({ id: ids.get(iso(F1))!.id, status: "pending", exclusive: true });
    // …and F2, while F1 still waits (nobody claims here), is skipped as overlap: skip is in force.
    await materialize(h.db, new Date(F1 + MIN - 500), AHEAD);
    const rows = byAt(await triggerRows(h.db, job.id));
    expect(rows.get(iso(F1 + MIN))).toMatchObject({ status: "skipped", reason: "overlap" });
    expect((await pending(job.id)).map((r) => r.at)).toEqual([iso(F1)]);
  });

  it("PATCH of retry.maxAttempts applies to fires written ahead", async () => {
    const job = await create({ schedule: { cron: "* * * * *", timezone: "UTC" }, retry: { maxAttempts: 3 } });
    await materialize(h.db, new Date(), AHEAD);
    await call("PATCH", `/v1/jobs/${job.id}`, { retry: { maxAttempts: 7 } });
    const limits = await query<{ m: number }>(
      h.db,
      sql`SELECT DISTINCT max_attempts AS m FROM triggers WHERE job_id = ${job.id}`,
    );
    expect(limits).toEqual([{ m: 7 }]);
  });

  it("DELETE cancels every fire written ahead; nothing is written afterwards", async () => {
    const job = await create({ schedule: { cron: "* * * * *", timezone: "UTC" } });
    await materialize(h.db, new Date(), AHEAD);
    expect((await pending(job.id)).length).toBeGreaterThanOrEqual(9);
    await call("DELETE", `/v1/jobs/${job.id}`);
    await materialize(h.db, new Date(), AHEAD);
    const rows = await triggerRows(h.db, job.id);
    expect(rows.every((r) => r.status === "cancelled" && r.reason === "job_cancelled")).toBe(true);
    expect((await call("POST", `/v1/jobs/${job.id}/resume`)).status).toBe(409); // exists, cancelled
  });

  it("run now next to fires written ahead: its own trigger, the scheduled ones untouched", async () => {
    const job = await create({ schedule: { cron: "* * * * *", timezone: "UTC" } });
    await materialize(h.db, new Date(), AHEAD);
    const before = (await pending(job.id)).map((r) => r.id);
    const run = await call("POST", `/v1/jobs/${job.id}/run`);
    expect(run.json).toMatchObject({ kind: "manual", status: "pending" });
    const after = await pending(job.id);
    expect(after.filter((r) => r.kind === "scheduled").map((r) => r.id)).toEqual(before);
    expect(after.filter((r) => r.kind === "manual").map((r) => r.id)).toEqual([run.json.id]);
  });

  it("pause and PATCH racing three materializers: no old-state fire stays pending, and a resume loses no instant", async () => {
    const paused: string[] = [];
    const moved: string[] = [];
    for (let i = 0; i < 8; i++) paused.push((await create({ schedule: { cron: "* * * * *", timezone: "UTC" } })).id);
    for (let i = 0; i < 8; i++) moved.push((await create({ schedule: { cron: "* * * * *", timezone: "UTC" } })).id);
    const executors = [0, 1, 2].map(() => {
      const s = connectPostgres(h.tdb.url, { max: 2 });
      stores.push(s);
      return s;
    });
    let racing = true;
    let passes = 0;
    const loops = executors.map(async (s) => {
      while (racing) {
        await materialize(s.db, new Date(), AHEAD, 5); // small batches: many passes, many interleavings
        passes++;
      }
    });
    try {
      await Promise.all([
        ...paused.map((id) => call("POST", `/v1/jobs/${id}/pause`)),
        ...moved.map((id) => call("PATCH", `/v1/jobs/${id}`, { schedule: { cron: "*/7 * * * *", timezone: "UTC" } })),
      ]);
      // The loops go on racing for a few passes past the last change (counted, not timed: a loaded
      // machine runs fewer passes in a given time).
      const after = passes;
      await until(
        () => passes,
        (n) => n >= after + 3,
        20_000,
        "three passes after the changes",
      );
    } finally {
      racing = false;
      await Promise.all(loops);
    }
    expect(passes).toBeGreaterThan(3);
    await materialize(h.db, new Date(), AHEAD);
    for (const id of paused) expect(await pending(id)).toEqual([]);
    for (const id of moved) {
      const live = await pending(id);
      expect(
        live.every((r) => new Date(r.at).getUTCMinutes() % 7 === 0),
        JSON.stringify(live),
      ).toBe(true);
    }

    await Promise.all(paused.map((id) => call("POST", `/v1/jobs/${id}/resume`)));
    const settle = [0, 1, 2].map((i) => materialize(executors[i].db, new Date(), AHEAD));
    await Promise.all(settle);
    await materialize(h.db, new Date(), AHEAD);
    const firstDue = Math.ceil((Date.now() + 1000) / MIN) * MIN; // the first minute surely not yet due
    for (const id of paused) {
      const at = (await pending(id)).map((r) => r.at).filter((a) => Date.parse(a) >= firstDue);
      expect(at).toEqual(minutes(firstDue, at.length));
      expect(at.length).toBeGreaterThanOrEqual(8);
    }
    const [{ dupes }] = await query<{ dupes: number }>(
      h.db,
      sql`SELECT count(*)::int AS dupes FROM (SELECT job_id, scheduled_for FROM triggers WHERE kind = 'scheduled'
           GROUP BY 1, 2 HAVING count(*) > 1) d`,
    );
    expect(dupes).toBe(0);
  });

  it("an executor wakes its claim loop at every instant it wrote ahead, not only the first", async () => {
    // A minute of fires is written at once, the idle poll is two minutes and there is no wake source:
    // only the materializer's wake-ups can start these fires. Waking at the earliest instant alone ran
    // the first fire and left the next ones to the following timer, a lookahead later.
    const starts: number[] = [];
    const job = await create({ type: "tick", schedule: { cron: "* * * * * *", timezone: "UTC" }, target: undefined });
    const store = connectPostgres(h.tdb.url, { max: 3 });
    stores.push(store);
    const executor = new Executor({
      db: store.db,
      transport: createFetchTransport(),
      handlers: { tick: () => void starts.push(Date.now()) },
      lookaheadMs: 60_000,
      pollMs: 120_000,
    }).start();
    try {
      await until(
        () => starts.length,
        (n) => n >= 5,
        30_000,
        "five starts",
      );
    } finally {
      await call("DELETE", `/v1/jobs/${job.id}`);
      await executor.stop(5000);
    }
  });
});
