// Postgres faults an operator's staging drill would try, on a private PostgreSQL 15 cluster, against the
// real server (`npm start` with DATABASE_URL) while clients create jobs through the API at a steady rate:
// - `pg_ctl restart` in fast and in immediate mode, five times in a row: deliveries resume within 5 s
//   of Postgres answering again each time;
// - each of Fairway's backends killed with pg_terminate_backend, one after another: deliveries go on;
// - Postgres stopped for a few seconds: /readyz answers 503 with the reason, and 200 once it is back;
// - every connection slot taken by another client while Fairway's connections are cut: a clear error
//   (503 database_unavailable, a log line naming the cause), and recovery once the slots free.
// Every acknowledged job is delivered; duplicates are only of runs open at a fault (the caps bound
// them); no loop is left stalled and the server logs no deadlock.
import { rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import postgres from "postgres";
import type { FairwayProcess } from "../support/fairway-process.ts";
import { until } from "../support/until.ts";
import { fleet } from "./support/fleet.ts";
import { ownedTempDir, startCluster, useCleanups, type Cluster } from "./support/processes.ts";

const TENANTS = ["r1", "r2", "r3"];
const CAP = 20;

/** Records each delivery's webhook-id and when it came; answers at once. */
function receiver() {
  const hits: Array<{ id: string; at: number }> = [];
  const server: Server = createServer((req, res) => {
    hits.push({ id: String(req.headers["webhook-id"]), at: Date.now() });
    req.resume();
    req.on("end", () => res.writeHead(200).end("ok"));
  });
  return {
    hits,
    listen: () =>
      new Promise<string>((r) =>
        server.listen(0, "127.0.0.1", () => r(`http://127.0.0.1:${(server.address() as { port: number }).port}`)),
      ),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const cleanups = useCleanups();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let pg: Cluster;
let url: string;
let server: FairwayProcess;
let hookUrl: string;
let hook: ReturnType<typeof receiver>;
let db: postgres.Sql;
const keys: string[] = [];

beforeAll(async () => {
  const dir = ownedTempDir("fairway-restarts-");
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  pg = await startCluster(dir);
  cleanups.push(() => pg.stop());
  const admin = postgres(pg.url("postgres"), { max: 1, onnotice: () => {} });
  await admin.unsafe("CREATE DATABASE fairway");
  await admin.end();
  url = pg.url("fairway");
  hook = receiver();
  hookUrl = await hook.listen();
  cleanups.push(() => hook.close());
  const f = fleet({ DATABASE_URL: url, FAIRWAY_DB_WAIT_MS: "1500" });
  cleanups.push(() => f.stop());
  server = await f.start("all");
  for (const t of TENANTS) {
    await f.tenant(server.url, t, CAP);
    const r = await fetch(`${server.url}/v1/admin/tenants/${t}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${f.adminToken}`, "content-type": "application/json" },
      body: "{}",
    });
    keys.push(((await r.json()) as { key: string }).key);
  }
  db = postgres(url, { max: 1, onnotice: () => {} });
  cleanups.push(() => db.end({ timeout: 1 }));
});

/** One client per tenant, a create every 50 ms each (60/s in all), open loop, until stop(). */
function load() {
  const acked: string[] = [];
  const refused = new Map<string, number>();
  let loading = true;
  const count = (what: string) => refused.set(what, (refused.get(what) ?? 0) + 1);
  const create = async (key: string) => {
    const inFlight: Array<Promise<void>> = [];
    while (loading) {
      inFlight.push(
        (async () => {
          try {
            const r = await fetch(`${server.url}/v1/jobs`, {
              method: "POST",
              headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
              body: JSON.stringify({ name: "drill", schedule: { delayMs: 0 }, target: { url: `${hookUrl}/hook` } }),
              signal: AbortSignal.timeout(30_000),
            });
            const body = (await r.json().catch(() => ({}))) as { id?: string; error?: { code?: string } };
            if (r.status === 201) acked.push(body.id!);
            else count(`${r.status} ${body.error?.code}`);
          } catch (err) {
            count(String(err));
          }
        })(),
      );
      await sleep(50);
    }
    await Promise.all(inFlight);
  };
  const loaders = keys.map(create);
  return {
    acked,
    refused,
    async stop() {
      loading = false;
      await Promise.all(loaders);
    },
  };
}

const dump = () => console.log(`--- server\n${server.output().slice(-8000)}`);

/** Deliveries past `n`: the flow goes on. */
const flowing = (n: number, what: string) =>
  until(
    () => hook.hits.length,
    (m) => m >= n,
    30_000,
    what,
  ).catch((err) => {
    dump();
    throw err;
  });

/** Every acknowledged job's trigger succeeded; what was lost and run twice. */
async function settled(acked: string[]) {
  const rows = await until(
    () => db<{ id: string; status: string }[]>`SELECT id, status FROM triggers WHERE job_id IN ${db(acked)}`,
    (r) => r.length >= acked.length && r.every((t) => t.status === "succeeded"),
    // A run whose settle was lost at a fault waits for its lease (60 s) and is re-run.
    90_000,
    "every acknowledged job's trigger succeeded",
  ).catch(async (err) => {
    const stuck = await db`SELECT id, status, lease_expires_at, attempt_count FROM triggers
                            WHERE job_id IN ${db(acked)} AND status <> 'succeeded' LIMIT 20`;
    console.log(JSON.stringify({ acked: acked.length, stuck }, null, 1));
    dump();
    throw err;
  });
  const ids = new Set(rows.map((r) => r.id));
  const delivered = new Set(hook.hits.filter((h) => ids.has(h.id)).map((h) => h.id));
  return {
    lost: rows.filter((t) => !delivered.has(t.id)).length,
    duplicates: hook.hits.filter((h) => ids.has(h.id)).length - delivered.size,
  };
}

async function stalls(): Promise<string[]> {
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  return [...metrics.matchAll(/^fairway_executor_loop_stalls_total\{loop="(\w+)"\} (\d+)/gm)]
    .filter((m) => m[2] !== "0")
    .map((m) => `${m[1]}=${m[2]}`);
}

const readyz = async () => {
  const r = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { status: r.status, body: (await r.json()) as { status: string; database: string; reason?: string } };
};

describe("Postgres faults under a steady create rate", () => {
  afterAll(() => {
    expect(server.output()).not.toMatch(/deadlock detected/);
  });

  it("five restarts (fast and immediate): deliveries resume within 5 s each, nothing acknowledged lost", {
    timeout: 240_000,
  }, async () => {
    const l = load();
    await flowing(hook.hits.length + 100, "deliveries flowing");
    const resumes: Array<{ mode: string; resumeMs: number }> = [];
    for (const mode of ["fast", "immediate", "fast", "immediate", "fast"] as const) {
      pg.restart(mode);
      const answeredAt = Date.now();
      const first = await until(
        () => hook.hits.find((h) => h.at > answeredAt),
        (h) => h !== undefined,
        30_000,
        `a delivery after the ${mode} restart`,
      ).catch((err) => {
        dump();
        throw err;
      });
      resumes.push({ mode, resumeMs: first!.at - answeredAt });
      await flowing(hook.hits.length + 100, `deliveries flowing after the ${mode} restart`);
    }
    await l.stop();
    const r = await settled(l.acked);
    console.log(
      JSON.stringify({
        drill: "postgres-restarts",
        acked: l.acked.length,
        ...r,
        resumes,
        refused: Object.fromEntries(l.refused),
        stalls: await stalls(),
      }),
    );
    expect(r.lost).toBe(0);
    for (const x of resumes) expect(x.resumeMs, `${x.mode} restart`).toBeLessThan(5_000);
    // Only runs open at a restart can run twice: at most the three tenants' caps, five times.
    expect(r.duplicates).toBeLessThanOrEqual(5 * TENANTS.length * CAP);
    expect((await readyz()).status).toBe(200);
  });

  it("each of Fairway's backends terminated in turn: deliveries go on, nothing acknowledged lost", {
    timeout: 180_000,
  }, async () => {
    const l = load();
    await flowing(hook.hits.length + 50, "deliveries flowing");
    const before = hook.hits.length;
    let killed = 0;
    const until10s = Date.now() + 10_000;
    while (Date.now() < until10s) {
      const [b] = await db<{ pid: number }[]>`
        SELECT pid FROM pg_stat_activity
         WHERE datname = 'fairway' AND pid <> pg_backend_pid() AND backend_type = 'client backend'
         ORDER BY backend_start LIMIT 1`;
      if (b) {
        await db`SELECT pg_terminate_backend(${b.pid})`;
        killed++;
      }
      await sleep(200);
    }
    await flowing(hook.hits.length + 50, "deliveries flowing after the kills");
    await l.stop();
    const r = await settled(l.acked);
    console.log(
      JSON.stringify({
        drill: "backend-kills",
        killed,
        deliveredDuring: hook.hits.length - before,
        acked: l.acked.length,
        ...r,
        stalls: await stalls(),
      }),
    );
    expect(killed).toBeGreaterThan(20);
    expect(r.lost).toBe(0);
    expect(r.duplicates).toBeLessThanOrEqual(killed * CAP);
    expect(await stalls()).toEqual([]);
    expect((await readyz()).status).toBe(200);
  });

  it("Postgres stopped: /readyz answers 503 with the reason, and 200 again once it is back", {
    timeout: 120_000,
  }, async () => {
    expect((await readyz()).status).toBe(200);
    pg.stop();
    try {
      const down = await until(readyz, (r) => r.status === 503, 20_000, "/readyz 503 while Postgres is down");
      expect(down.body).toMatchObject({ status: "not_ready", database: "unreachable" });
      expect(down.body.reason).toMatch(/database/);
    } finally {
      pg.start();
    }
    const startedAt = Date.now();
    await until(readyz, (r) => r.status === 200, 20_000, "/readyz 200 once Postgres is back");
    const readyMs = Date.now() - startedAt;
    // And it delivers again.
    const l = load();
    await flowing(hook.hits.length + 30, "deliveries after Postgres came back");
    await l.stop();
    const r = await settled(l.acked);
    console.log(JSON.stringify({ drill: "readiness", readyMs, ...r }));
    expect(r.lost).toBe(0);
    expect(readyMs).toBeLessThan(10_000);
  });

  it("max_connections exhausted by another client: a clear error while it lasts, recovery once it frees", {
    timeout: 120_000,
  }, async () => {
    // Another client (on another database) takes every free connection slot, and Fairway's own
    // connections are cut until it holds none: it cannot open new ones.
    await db`SELECT 1`; // the drill's own connection, opened first
    const hogs: postgres.Sql[] = [];
    const fill = async () => {
      for (let i = 0; i < 200; i++) {
        const c = postgres(pg.url("postgres"), { max: 1, onnotice: () => {}, connect_timeout: 5 });
        try {
          await c`SELECT 1`;
          hogs.push(c);
        } catch (err) {
          await c.end({ timeout: 1 });
          expect(String((err as { code?: string }).code)).toBe("53300");
          return;
        }
      }
    };
    try {
      await fill();
      for (let round = 0; round < 20; round++) {
        const [{ n }] = await db<{ n: number }[]>`
          SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
           WHERE datname = 'fairway' AND pid <> pg_backend_pid() AND backend_type = 'client backend'`;
        if (n === 0) break;
        await fill();
      }
      const before = server.output().length;
      const key = keys[0]!;
      const refused = await until(
        async () => {
          const r = await fetch(`${server.url}/v1/jobs`, {
            method: "POST",
            headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
            body: JSON.stringify({ name: "full", schedule: { delayMs: 0 }, target: { url: `${hookUrl}/hook` } }),
            signal: AbortSignal.timeout(20_000),
          });
          return { status: r.status, body: (await r.json()) as { error?: { code: string } } };
        },
        (r) => r.status === 503,
        30_000,
        "the API refusing while every slot is taken",
      );
      expect(refused.body.error?.code).toBe("database_unavailable");
      expect((await readyz()).status).toBe(503);
      await until(
        async () => server.output().slice(before),
        (out) => /too many clients/.test(out),
        20_000,
        "a log line naming the cause",
      );
    } finally {
      await Promise.all(hogs.map((h) => h.end({ timeout: 1 })));
    }
    const freedAt = Date.now();
    await until(readyz, (r) => r.status === 200, 20_000, "/readyz 200 once the slots are free");
    const l = load();
    await flowing(hook.hits.length + 30, "deliveries once the slots are free");
    await l.stop();
    const r = await settled(l.acked);
    console.log(JSON.stringify({ drill: "max-connections", hogs: hogs.length, readyMs: Date.now() - freedAt, ...r }));
    expect(r.lost).toBe(0);
  });
});
