// `npm start` with no services: Fairway starts its own PostgreSQL (npm-shipped binaries) under
// FAIRWAY_DATA_DIR, stops it with itself, survives kill -9 without losing an acknowledged job, and
// fails a bad start with one line. Real processes throughout; one cluster shared by the lifecycle tests
// (initdb is the slow part), each failure case on its own directory where it needs one.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminClient, createClient, type FairwayClient } from "@fairway/sdk";
import { postgresOn, runToExit, startFairway, type FairwayProcess } from "../support/fairway-process.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";
import { verticalSlice } from "./vertical-slice.ts";

const ADMIN = `fwadmin_test_${Math.random().toString(36).slice(2)}${Date.now()}`;
const dirs: string[] = [];
const running: FairwayProcess[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "fairway-embedded-"));
  dirs.push(d);
  return d;
}

async function start(dataDir: string, env: Record<string, string> = {}): Promise<FairwayProcess> {
  const p = await startFairway({ FAIRWAY_DATA_DIR: dataDir, FAIRWAY_ADMIN_TOKEN: ADMIN, ...env });
  running.push(p);
  return p;
}

function databaseUrl(dataDir: string): string {
  return readFileSync(join(dataDir, "database-url"), "utf8").trim();
}

async function tenantClient(url: string, id: string): Promise<FairwayClient> {
  const admin = createAdminClient({ baseUrl: url, adminToken: ADMIN });
  await admin.tenants.create({ id, name: id, maxJobs: 1_000_000 });
  return createClient({ baseUrl: url, apiKey: (await admin.tenants.createKey(id)).key });
}

const later = { name: "later", schedule: { delayMs: 3_600_000 }, target: { url: "http://127.0.0.1:9/hook" } };

afterAll(async () => {
  for (const p of running) await p.stop("SIGKILL");
  for (const d of dirs) {
    await until(
      async () => postgresOn(d),
      (pids) => pids.length === 0,
      30_000,
    ).catch(() => {});
    rmSync(d, { recursive: true, force: true });
  }
});

// The whole product on the default: the same slice the Postgres + Redis deployment runs.
const shared = tempDir();
verticalSlice("embedded PostgreSQL", async () => ({ env: { FAIRWAY_DATA_DIR: shared }, cleanup: async () => {} }));

// Each step starts real processes: generous limits for a loaded machine (no timing is asserted).
describe("embedded PostgreSQL lifecycle", { timeout: 180_000 }, () => {
  it("stops Postgres with the server, and keeps the data across a restart", async () => {
    const a = await start(shared);
    expect(a.output()).toMatch(/Database URL: postgres:\/\/fairway:\*\*\*@127\.0\.0\.1:\d+\/postgres/);
    expect(a.output()).not.toContain(new URL(databaseUrl(shared)).password);
    const client = await tenantClient(a.url, "keep");
    const job = await client.jobs.create(later);
    expect(postgresOn(shared).length).toBeGreaterThan(0);

    expect(await a.stop("SIGTERM")).toBe(0);
    expect(postgresOn(shared)).toEqual([]);
    expect(existsSync(join(shared, "postgres", "postmaster.pid"))).toBe(false);
    expect(existsSync(join(shared, "fairway.pid"))).toBe(false);

    const b = await start(shared);
    expect(b.output()).not.toMatch(/created in/); // no second initdb
    const rows = await withDb(shared, (sql) => sql`SELECT id FROM jobs WHERE id = ${job.id}`);
    expect(rows).toHaveLength(1);
    expect(await b.stop("SIGINT")).toBe(0);
    expect(postgresOn(shared)).toEqual([]);
  });

  it("loses no acknowledged job to a kill -9 under writes, and the next start is not blocked", async () => {
    const a = await start(shared);
    const client = await tenantClient(a.url, "kill9");
    const acked: string[] = [];
    let stop = false;
    const writers = Array.from({ length: 8 }, async () => {
      while (!stop) {
        try {
          acked.push((await client.jobs.create(later)).id);
        } catch {
          return; // the server is gone: this request was never acknowledged
        }
      }
    });
    await until(
      async () => acked.length,
      (n) => n >= 200,
      60_000,
    );
    a.child.kill("SIGKILL");
    await a.exited;
    stop = true;
    await Promise.all(writers);
    // The watcher stops Postgres once the server is gone: no orphan.
    await until(
      async () => postgresOn(shared),
      (pids) => pids.length === 0,
      30_000,
    );

    const b = await start(shared); // fairway.pid and postmaster.pid were left behind: neither blocks
    const rows = await withDb(shared, (sql) => sql`SELECT id FROM jobs WHERE id = ANY(${acked})`);
    expect(rows.length).toBe(acked.length);
    await b.stop();
  });

  it("stops a Postgres left running by a killed server and its watcher, and ignores a stale postmaster.pid", async () => {
    const a = await start(shared);
    const leftover = postgresOn(shared);
    const postmaster = Number(readFileSync(join(shared, "postgres", "postmaster.pid"), "utf8").split("\n")[0]);
    // Kill Fairway and the watcher at once: Postgres alone survives, an orphan.
    for (const pid of leftover.filter((p) => p !== postmaster)) process.kill(pid, "SIGKILL");
    a.child.kill("SIGKILL");
    await a.exited;
    expect(postgresOn(shared)).toEqual([postmaster]);

    const b = await start(shared);
    expect(postgresOn(shared)).not.toContain(postmaster);
    await b.stop();

    // A pid file naming a live process that is not this cluster's Postgres (here: the test runner).
    const pidFile = join(shared, "postgres", "postmaster.pid");
    writeFileSync(pidFile, `${process.pid}\n${join(shared, "postgres")}\n0\n5432\n\n127.0.0.1\n0 0\nready   \n`);
    const c = await start(shared);
    expect(await c.stop()).toBe(0);
    expect(postgresOn(shared)).toEqual([]);
  });

  it("lets a second process join through the database URL: an executor delivers a job the first created", async () => {
    const receiver: Receiver = await startReceiver();
    try {
      const api = await start(shared, { FAIRWAY_ROLE: "api" });
      const url = databaseUrl(shared);
      expect(api.output()).toContain(join(shared, "database-url"));
      const executor = await startFairway(
        { FAIRWAY_ROLE: "executor", DATABASE_URL: url, FAIRWAY_DATA_DIR: tempDir(), FAIRWAY_POLL_MS: "50" },
        /Fairway executor()/,
      );
      running.push(executor);
      const client = await tenantClient(api.url, "joined");
      const job = await client.jobs.create({
        name: "hello",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/ok` },
      });
      const [d] = await receiver.waitFor(
        (ds) => ds.some((x) => (x.body as { jobId?: string }).jobId === job.id),
        30_000,
      );
      expect(d.path).toBe("/ok");
      expect(await executor.stop()).toBe(0);
      expect(await api.stop()).toBe(0);
      expect(postgresOn(shared)).toEqual([]);
    } finally {
      await receiver.close();
    }
  });
});

describe("a start that cannot go on prints one line and exits non-zero", { timeout: 180_000 }, () => {
  let busy: Server;
  let busyPort: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", () => r()));
    busyPort = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => busy.close(() => r())));

  async function fails(env: Record<string, string>, message: RegExp): Promise<void> {
    const { code, output } = await runToExit({ FAIRWAY_ADMIN_TOKEN: ADMIN, FAIRWAY_DATA_DIR: tempDir(), ...env });
    expect(code).toBe(1);
    const lines = output.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^fairway: /);
    expect(lines[0]).toMatch(message);
  }

  // These three use directories of their own: run side by side.
  it.concurrent("bad configuration", async () => {
    await Promise.all([
      fails({ PORT: "eighty" }, /invalid configuration: PORT: .*\(got "eighty"\)/),
      fails({ FAIRWAY_ROLE: "scheduler" }, /invalid configuration: FAIRWAY_ROLE: .*all.*api.*executor/),
    ]);
  });

  it.concurrent("an unreachable DATABASE_URL, without echoing its password", async () => {
    const { output } = await runToExit({
      FAIRWAY_DATA_DIR: tempDir(),
      DATABASE_URL: "postgres://u:hunter2secret@127.0.0.1:1/x",
    });
    expect(output.trim().split("\n")).toHaveLength(1);
    expect(output).toMatch(
      /^fairway: cannot connect to Postgres at postgres:\/\/u:\*\*\*@127\.0\.0\.1:1\/x: .*ECONNREFUSED/,
    );
    expect(output).not.toContain("hunter2secret");
  });

  it.concurrent("a data directory left by the PGlite version", async () => {
    const d = tempDir();
    mkdirSync(join(d, "pgdata"));
    writeFileSync(join(d, "pgdata", "PG_VERSION"), "17\n");
    await fails({ FAIRWAY_DATA_DIR: d }, /pgdata is a PGlite database from an earlier Fairway.*move it away/);
    expect(existsSync(join(d, "postgres"))).toBe(false);
  });
  it("the HTTP port in use, and Postgres is stopped again", async () => {
    await fails(
      { FAIRWAY_DATA_DIR: shared, PORT: String(busyPort) },
      new RegExp(`port ${busyPort} on 127.0.0.1 is in use by another process; .*PORT`),
    );
    expect(postgresOn(shared)).toEqual([]);
  });

  it("the HTTP port in use on a first start: refused before a cluster is created", async () => {
    const d = tempDir();
    await fails({ FAIRWAY_DATA_DIR: d, PORT: String(busyPort) }, new RegExp(`port ${busyPort} on 127.0.0.1 is in use`));
    expect(existsSync(join(d, "postgres"))).toBe(false);
    expect(postgresOn(d)).toEqual([]);
  });

  it("the embedded Postgres port in use", async () => {
    await fails(
      { FAIRWAY_DATA_DIR: shared, FAIRWAY_EMBEDDED_PG_PORT: String(busyPort) },
      new RegExp(`FAIRWAY_EMBEDDED_PG_PORT=${busyPort} is in use`),
    );
    expect(postgresOn(shared)).toEqual([]);
  });

  it("the data directory in use by another running Fairway", async () => {
    const a = await start(shared);
    await fails(
      { FAIRWAY_DATA_DIR: shared },
      new RegExp(`data directory ${shared} is in use by another running Fairway \\(pid ${a.child.pid}\\)`),
    );
    expect(await a.stop()).toBe(0);
  });
});

async function withDb<T>(dataDir: string, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const sql = postgres(databaseUrl(dataDir), { max: 1, onnotice: () => {} });
  try {
    return await fn(sql);
  } finally {
    await sql.end();
  }
}
