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

  /** The job's fires after the last one delivered before the stop, in order, with how many times each
   *  reached the receiver. */
  async function outageRows(misfire: string) {
    const before = delivered(misfire, 0, downFrom).map((d) =>
      Date.parse((d.body as { scheduledFor: string }).scheduledFor),
    );
    const rows = await query<{ id: string; at: Date | string; status: string; reason: string | null }>(
      db.store.db,
      sql`
      SELECT id, scheduled_for AS at, status, reason FROM triggers
       WHERE job_id = ${jobs[misfire]} AND scheduled_for > ${new Date(Math.max(...before)).toISOString()}::timestamptz
       ORDER BY scheduled_for`,
    );
    return rows.map((r) => ({
      ...r,
      at: new Date(r.at).getTime(),
      deliveries: rx.deliveries.filter((d) => d.id === r.id).length,
    }));
  }
  const FIRES_DOWN = DOWN_MS / 5000; // fires due while the server was down (16), give or take one

  it("fire_once: every fire of the outage skipped (misfire) but one catch-up, delivered once", async () => {
    const rows = await outageRows("fire_once");
    const k = rows.findIndex((r) => !(r.status === "skipped" && r.reason === "misfire"));
    expect(k).toBeGreaterThanOrEqual(FIRES_DOWN - 2); // not just those older than the 60 s grace
    expect(rows.slice(0, k).every((r) => r.deliveries === 0)).toBe(true);
    const catchUp = rows[k];
    expect(catchUp.at).toBeLessThan(Date.now());
    expect(catchUp.deliveries).toBe(1);
    expect(rx.deliveries.find((d) => d.id === catchUp.id)!.verified).toBe(true);
  });

  it("skip: every fire of the outage skipped (misfire), none delivered", async () => {
    const rows = await outageRows("skip");
    const k = rows.findIndex((r) => !(r.status === "skipped" && r.reason === "misfire"));
    expect(k).toBeGreaterThanOrEqual(FIRES_DOWN - 1);
    expect(rows.slice(0, k).every((r) => r.deliveries === 0)).toBe(true);
    expect(rows.filter((r) => r.at <= upAt).every((r) => r.deliveries === 0)).toBe(true);
  });

  it("fire_all: fires older than catchupWindowMs skipped (misfire_outside_window), every later one delivered once", async () => {
    const rows = await outageRows("fire_all");
    const k = rows.findIndex((r) => !(r.status === "skipped" && r.reason === "misfire_outside_window"));
    expect(k).toBeGreaterThanOrEqual((DOWN_MS - WINDOW_MS) / 5000 - 2);
    expect(rows.slice(0, k).every((r) => r.deliveries === 0)).toBe(true);
    const caughtUp = rows.slice(k).filter((r) => r.at <= upAt);
    expect(caughtUp.length).toBeGreaterThanOrEqual(1);
    expect(caughtUp.every((r) => r.deliveries === 1)).toBe(true);
    expect(rows.slice(k).every((r) => r.status !== "skipped")).toBe(true);
  });
});
