// Each misfire policy across a real restart of the server process (as `npm start` runs it) on real
// Postgres: an every-5-s job per policy, the server stopped for longer than the 60 s grace, then
// started again. What reaches the receiver for the fires due while it was down: fire_once exactly one
// catch-up, skip none, fire_all those inside catchupWindowMs. Deliveries are counted by the fire
// they carry (scheduledFor), never by wall-clock timing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { query, sql } from "@fairway/store";

const ADMIN = `fwadmin_misfire_restart_${Date.now()}`;
const DOWN_MS = 80_000; // longer than the grace (MISFIRE_GRACE_MS, 60 s)
const WINDOW_MS = 20_000;

describe("misfire policies across a real restart", () => {
  let db: TestDb;
  let rx: Receiver;
  let server: ServerProcess | null = null;
  const jobs: Record<string, string> = {};
  let downFrom = 0;
  let upAt = 0;

  const start = () => startServerProcess({ DATABASE_URL: db.url, FAIRWAY_ADMIN_TOKEN: ADMIN });
  const api = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(server!.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as any };
  };
  /** Deliveries of a job's fires scheduled inside [from, to]. */
  const delivered = (misfire: string, from: number, to: number) =>
    rx.deliveries.filter((d) => {
      const b = d.body as { jobId: string; scheduledFor: string };
      const at = Date.parse(b.scheduledFor);
      return b.jobId === jobs[misfire] && at >= from && at <= to;
    });

  beforeAll(async () => {
    db = await createTestDb();
    rx = await startReceiver();
    server = await start();
    const tenant = await api(ADMIN, "POST", "/v1/admin/tenants", { id: "acme", name: "Acme" });
    rx.secrets = [tenant.json.signingSecret];
    const key = (await api(ADMIN, "POST", "/v1/admin/tenants/acme/keys")).json.key;
    for (const misfire of ["fire_once", "skip", "fire_all"]) {
      const r = await api(key, "POST", "/v1/jobs", {
        name: misfire,
        schedule: { cron: "*/5 * * * * *" },
        target: { url: `${rx.url}/ok` },
        misfire,
        catchupWindowMs: WINDOW_MS,
      });
      expect(r.status).toBe(201);
      jobs[misfire] = r.json.id;
    }
    // Running: each job delivered at least once.
    await rx.waitFor(() => Object.keys(jobs).every((m) => delivered(m, 0, Infinity).length > 0), 30_000);
    await server.stop(); // SIGTERM (tsx forwards it; a SIGKILL would leave its node child running)
    downFrom = Date.now();
    await new Promise((r) => setTimeout(r, DOWN_MS));
    upAt = Date.now();
    server = await start();
    // Up again: the fires after the restart arrive for every job (so the catch-up has had its chance).
    await rx.waitFor(() => Object.keys(jobs).every((m) => delivered(m, upAt + 5000, Infinity).length > 0), 30_000);
  }, 240_000);

  afterAll(async () => {
    await server?.stop();
    await rx?.close();
    await db?.drop();
  });

  // Fires due while the server was down: from the first one after the last delivery before the kill,
  // up to the restart.
  const outage = (misfire: string) => {
    const before = delivered(misfire, 0, downFrom).map((d) => Date.parse((d.body as { scheduledFor: string }).scheduledFor));
    return { from: Math.max(...before) + 1, to: upAt };
  };

  it("fire_once: exactly one catch-up delivery for the whole outage, the latest missed fire", async () => {
    const { from, to } = outage("fire_once");
    const got = delivered("fire_once", from, to);
    expect(got).toHaveLength(1);
    expect(got[0].verified).toBe(true);
    const skipped = await query<{ n: number }>(db.store.db, sql`
      SELECT count(*)::int AS n FROM triggers WHERE job_id = ${jobs.fire_once} AND status = 'skipped' AND reason = 'misfire'`);
    expect(skipped[0].n).toBeGreaterThanOrEqual(DOWN_MS / 5000 - 2);
  });

  it("skip: no delivery for any fire of the outage", async () => {
    const { from, to } = outage("skip");
    expect(delivered("skip", from, to)).toHaveLength(0);
  });

  it("fire_all: every fire inside catchupWindowMs of the restart, none older", async () => {
    const { from, to } = outage("fire_all");
    const got = delivered("fire_all", from, to).map((d) => Date.parse((d.body as { scheduledFor: string }).scheduledFor));
    expect(got.length).toBeGreaterThanOrEqual(WINDOW_MS / 5000 - 1);
    expect(got.length).toBeLessThanOrEqual(WINDOW_MS / 5000 + 2);
    expect(new Set(got).size).toBe(got.length); // each at most once
    // Nothing from the start of the outage (older than the window at any restart time).
    expect(got.every((at) => at > from + DOWN_MS - WINDOW_MS - 15_000)).toBe(true);
  });
});
