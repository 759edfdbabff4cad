// Backfill (docs/flow-control.md): a cron job's fires over a past range as triggers behind the tenant's
// live work, cancellable as one. The API over HTTP on real Postgres, a real executor and receiver;
// orders and counts at the receiver, never times.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { startApi, type ApiHarness } from "../api/harness.ts";
import { seedPool } from "../support/seed.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";
import { startExecutor } from "./executor.ts";

const MINUTE = 60_000;

describe("backfill", () => {
  let api: ApiHarness;
  let receiver: Receiver;
  const stops: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    api = await startApi();
    receiver = await startReceiver();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });
  afterAll(async () => {
    await receiver.close();
    await api.close();
  });

  /** A minutely cron job and the last `n` whole minutes before now as [from, to). */
  async function cronJob(key: string, type: string, path: string, n: number) {
    const job = await api.call(key, "POST", "/v1/jobs", {
      name: "hourly-report",
      type,
      schedule: { cron: "* * * * *" },
      target: { url: `${receiver.url}${path}` },
    });
    expect(job.status).toBe(201);
    const to = Math.floor(Date.now() / MINUTE) * MINUTE;
    return { id: job.json.id as string, from: new Date(to - n * MINUTE), to: new Date(to) };
  }

  /** The backfill's deliveries at `path`: fires before `to` (the job's live fires come after it). */
  const backfilled = (path: string, to: Date) =>
    receiver.deliveries.filter(
      (d) => d.path === path && Date.parse((d.body as { scheduledFor: string }).scheduledFor) < to.getTime(),
    );

  it("refuses what it cannot do and writes nothing; overlap skip and allow; lists, reads and cancels", async () => {
    const key = await api.tenant("bf-api");
    const { id, from, to } = await cronJob(key, "bf-api", "/ok/bf-api", 10);
    const oneTime = await api.call(key, "POST", "/v1/jobs", {
      name: "once",
      schedule: { delayMs: 3_600_000 },
      target: { url: `${receiver.url}/ok` },
    });
    const refused: Array<[string, unknown, number, string]> = [
      [oneTime.json.id, { from, to }, 400, "backfill_not_cron"],
      [id, { from, to: new Date(Date.now() + 3_600_000) }, 400, "backfill_in_future"],
      [id, { from: to, to: from }, 400, "validation_error"],
      [id, { from, to, overlap: "maybe" }, 400, "validation_error"],
      [id, { from: "yesterday", to }, 400, "validation_error"],
      [id, { from: new Date(to.getTime() - 1001 * MINUTE), to }, 400, "backfill_too_large"],
      ["job_nope", { from, to }, 404, "not_found"],
    ];
    for (const [jobId, body, status, code] of refused) {
      const r = await api.call(key, "POST", `/v1/jobs/${jobId}/backfill`, body);
      expect([r.status, r.json.error.code], JSON.stringify(body)).toEqual([status, code]);
    }
    const tooLarge = await api.call(key, "POST", `/v1/jobs/${id}/backfill`, {
      from: new Date(to.getTime() - 5000 * MINUTE),
      to,
    });
    expect(tooLarge.json.error.message).toContain("holds 5000 fires");
    expect(tooLarge.json.error.message).toContain("at most 1000");
    const nothing = async () =>
      (
        await query<{ n: number }>(
          api.db,
          sql`SELECT (SELECT count(*)::int FROM backfills) + (SELECT count(*)::int FROM triggers WHERE kind = 'backfill') AS n`,
        )
      )[0].n;
    expect(await nothing()).toBe(0);

    // skip (default): the second backfill finds every fire already pending.
    const first = await api.call(key, "POST", `/v1/jobs/${id}/backfill`, { from, to });
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ jobId: id, fires: 10, skipped: 0, overlap: "skip", counts: { pending: 10 } });
    const again = await api.call(key, "POST", `/v1/jobs/${id}/backfill`, { from, to });
    expect(again.json).toMatchObject({ fires: 10, skipped: 10, counts: {} });
    const allowed = await api.call(key, "POST", `/v1/jobs/${id}/backfill`, { from, to, overlap: "allow" });
    expect(allowed.json).toMatchObject({ fires: 10, skipped: 0, counts: { pending: 10 } });

    const listed = await api.call(key, "GET", `/v1/jobs/${id}/backfills?limit=2`);
    expect(listed.json.data.map((b: { id: string }) => b.id)).toEqual([allowed.json.id, again.json.id]);
    const rest = await api.call(key, "GET", `/v1/jobs/${id}/backfills?limit=2&cursor=${listed.json.nextCursor}`);
    expect(rest.json.data.map((b: { id: string }) => b.id)).toEqual([first.json.id]);
    const triggers = await api.call(key, "GET", `/v1/jobs/${id}/triggers?limit=200`);
    const mine = triggers.json.data.filter((t: { backfillId: string | null }) => t.backfillId === first.json.id);
    expect(mine).toHaveLength(10);
    expect(
      mine.every((t: { kind: string; triggeredBy: string }) => t.kind === "backfill" && t.triggeredBy === "backfill"),
    ).toBe(true);

    const cancelled = await api.call(key, "DELETE", `/v1/backfills/${first.json.id}`);
    expect(cancelled.json).toMatchObject({ cancelled: 10, counts: { cancelled: 10 } });
    expect(cancelled.json.cancelledAt).not.toBeNull();
    const twice = await api.call(key, "DELETE", `/v1/backfills/${first.json.id}`);
    expect(twice.json).toMatchObject({ cancelled: 0, counts: { cancelled: 10 } });
    expect((await api.call(key, "GET", `/v1/backfills/${allowed.json.id}`)).json.counts).toEqual({ pending: 10 });
    // Another tenant sees none of it.
    const other = await api.tenant("bf-other");
    expect((await api.call(other, "GET", `/v1/backfills/${first.json.id}`)).status).toBe(404);
    expect((await api.call(other, "DELETE", `/v1/backfills/${first.json.id}`)).status).toBe(404);
    expect((await api.call(other, "POST", `/v1/jobs/${id}/backfill`, { from, to })).status).toBe(404);

    // A paused job is refused; a pause cancels a backfill's pending triggers.
    expect((await api.call(key, "POST", `/v1/jobs/${id}/pause`)).status).toBe(200);
    const paused = await api.call(key, "POST", `/v1/jobs/${id}/backfill`, { from, to });
    expect([paused.status, paused.json.error.code]).toEqual([409, "job_paused"]);
    expect((await api.call(key, "GET", `/v1/backfills/${allowed.json.id}`)).json.counts).toEqual({ cancelled: 10 });
  });

  it("1,000 backfill fires run behind the same tenant's live work", { timeout: 120_000 }, async () => {
    const type = "bf-live";
    await seedPool(api.db, type, 10);
    const key = await api.tenant("bf-live", { maxInFlight: 1000 });
    const bfPath = "/slow/20/bf-live/backfill";
    const livePath = "/slow/20/bf-live/live";
    const { id, from, to } = await cronJob(key, type, bfPath, 1000);
    const b = await api.call(key, "POST", `/v1/jobs/${id}/backfill`, { from, to });
    expect(b.json).toMatchObject({ fires: 1000, skipped: 0, counts: { pending: 1000 } });
    const live = (n: number) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          api.call(key, "POST", "/v1/jobs", {
            name: `live-${i}`,
            type,
            schedule: { delayMs: 0 },
            target: { url: `${receiver.url}${livePath}` },
          }),
        ),
      );
    // Due after the backfill's fires were written (so first in, first out would run them last).
    await live(50);
    stops.push(startExecutor(api.db));
    const seq = () => receiver.deliveries.filter((d) => d.path === bfPath || d.path === livePath).map((d) => d.path);
    await until(seq, (s) => s.filter((p) => p === bfPath).length >= 300, 60_000, "300 backfill deliveries");

    // Midway, 20 more live jobs: they overtake the ~700 backfill fires still queued.
    const before = seq().length;
    await live(20);
    const all = await until(seq, (s) => s.filter((p) => p === livePath).length >= 70, 60_000, "70 live deliveries");
    const firstLive = all.map((p, i) => (p === livePath ? i : -1)).filter((i) => i >= 0);
    // The first 50 starts are the live jobs; deliveries started together reach the receiver in any
    // order, so backfill started beside the last live ones may land among them: a pool's worth (10)
    // in flight, and as many again claimed ahead with them in one claim.
    const lastOfFirst = firstLive[49];
    const lastOfSecond = firstLive[69];
    const backfillBeforeSecond = all.slice(before, lastOfSecond).filter((p) => p === bfPath).length;
    console.info(
      `backfill beside live work: the first 50 live done by delivery ${lastOfFirst + 1}; ` +
        `${backfillBeforeSecond} backfill deliveries before the last of 20 live jobs created midway (${1000 - 300} were queued)`,
    );
    expect(lastOfFirst + 1).toBeLessThanOrEqual(70);
    // What the executor had claimed ahead (its queue) and in flight still runs first; everything else
    // of the backfill waits. First in, first out would put all ~700 queued fires first.
    expect(backfillBeforeSecond).toBeLessThanOrEqual(150);

    const done = await until(
      () => api.call(key, "GET", `/v1/backfills/${b.json.id}`),
      (r) => r.json.counts.succeeded === 1000,
      60_000,
      "the backfill done",
    );
    expect(done.json.counts).toEqual({ succeeded: 1000 });
    // Each fire once, at its own instant.
    const fires = new Set(backfilled(bfPath, to).map((d) => (d.body as { scheduledFor: string }).scheduledFor));
    expect(fires.size).toBe(1000);
    expect(backfilled(bfPath, to)).toHaveLength(1000);
  });

  it("counts running only what runs: a capped tenant's standby claims count as standby", {
    timeout: 120_000,
  }, async () => {
    const type = "bf-capped";
    await seedPool(api.db, type, 50);
    const key = await api.tenant("bf-capped", { maxInFlight: 10 });
    const path = "/slow/150/bf-capped/backfill";
    const { id, from, to } = await cronJob(key, type, path, 100);
    const b = await api.call(key, "POST", `/v1/jobs/${id}/backfill`, { from, to });
    expect(b.json.fires).toBe(100);
    stops.push(startExecutor(api.db));
    const seen: Array<Record<string, number>> = [];
    let open = 0;
    await until(
      async () => {
        open = Math.max(open, receiver.open.get(path) ?? 0);
        const counts = (await api.call(key, "GET", `/v1/backfills/${b.json.id}`)).json.counts as Record<string, number>;
        seen.push(counts);
        return counts;
      },
      (c) => c.succeeded === 100,
      90_000,
      "the capped backfill done",
    );
    const most = (k: string) => Math.max(...seen.map((c) => c[k] ?? 0));
    console.info(
      `capped backfill: running at most ${most("running")}, standby at most ${most("standby")}, receiver ${open}`,
    );
    expect(most("running")).toBeGreaterThan(0);
    expect(most("running")).toBeLessThanOrEqual(10);
    expect(open).toBeLessThanOrEqual(10);
    for (const c of seen) expect(Object.values(c).reduce((x, y) => x + y, 0)).toBe(100);
  });

  it("a cancel midway: its queued fires are cancelled, and nothing more of it is delivered", {
    timeout: 120_000,
  }, async () => {
    const type = "bf-cancel";
    await seedPool(api.db, type, 5);
    const key = await api.tenant("bf-cancel", { maxInFlight: 1000 });
    const path = "/slow/40/bf-cancel/backfill";
    const { id, from, to } = await cronJob(key, type, path, 1000);
    const b = await api.call(key, "POST", `/v1/jobs/${id}/backfill`, { from, to });
    expect(b.json.fires).toBe(1000);
    stops.push(startExecutor(api.db));
    await until(
      () => backfilled(path, to).length,
      (n) => n >= 100,
      60_000,
      "100 backfill deliveries",
    );
    const cancelled = await api.call(key, "DELETE", `/v1/backfills/${b.json.id}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json.cancelled).toBeGreaterThan(500);
    // What was claimed before the cancel finishes; then nothing of it is pending or running.
    const settled = await until(
      () => api.call(key, "GET", `/v1/backfills/${b.json.id}`),
      (r) => !r.json.counts.pending && !r.json.counts.running,
      30_000,
      "the backfill's claimed fires finished",
    );
    const { succeeded, cancelled: n } = settled.json.counts;
    console.info(`backfill cancel: ${succeeded} delivered, ${n} cancelled`);
    expect(n).toBe(cancelled.json.cancelled);
    expect(succeeded + n).toBe(1000);
    expect(receiver.open.get(path) ?? 0).toBe(0);
    expect(backfilled(path, to)).toHaveLength(succeeded);
  });
});
