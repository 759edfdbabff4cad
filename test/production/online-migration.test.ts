// Online migration: a migration that alters the hot tables (triggers, jobs, tenants), applied by the
// migrator (as `npm run db:migrate` runs it) to a database at the latest schema while two executors
// deliver a steady stream of due work, with a transaction holding a lock on those tables meanwhile (a
// long report, a slow settle). The migrator's lock_timeout gives up its lock wait instead of queueing
// every claim behind it, and retries: no claim-side statement waits much more than the timeout, the
// migration lands, and every trigger is delivered. The migration is the drill's own, after the real
// ones: the executors run this code, which needs every real migration applied first (a deploy
// migrates, then starts the code that needs it).
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { expect, it } from "vitest";
import { connectPostgres, query, sql } from "@fairway/store";
import { migrate, migrationsFolder } from "@fairway/store/node";
import { killAll, startExecutorChild } from "../faults/support/children.ts";
import { startReceiver } from "../support/receiver.ts";
import { urlFor, withAdmin } from "../support/pg.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { until } from "../support/until.ts";
import { useCleanups } from "./support/processes.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const cleanups = useCleanups();

it("the latest migration, applied under load with a lock held on the queue, stalls no claim past its lock timeout", async () => {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, "meta/_journal.json"), "utf8")) as {
    entries: Array<{ tag: string }>;
  };
  const withProbe = mkdtempSync(join(tmpdir(), "fairway-migrations-"));
  cleanups.push(() => rmSync(withProbe, { recursive: true, force: true }));
  cpSync(migrationsFolder, withProbe, { recursive: true });
  const last = journal.entries.at(-1)!;
  const probeTag = "9999_online_probe";
  writeFileSync(
    join(withProbe, "meta/_journal.json"),
    JSON.stringify({
      ...journal,
      entries: [...journal.entries, { ...last, idx: journal.entries.length, tag: probeTag, when: Date.now() }],
    }),
  );
  writeFileSync(
    join(withProbe, `${probeTag}.sql`),
    [
      'ALTER TABLE "triggers" ADD COLUMN "online_probe" integer;',
      'ALTER TABLE "jobs" ADD COLUMN "online_probe" integer;',
      'ALTER TABLE "tenants" ADD COLUMN "online_probe" integer;',
    ].join("--> statement-breakpoint\n"),
  );

  const name = `fairway_t_mig_${Date.now().toString(36)}`;
  await withAdmin((a) => a.unsafe(`CREATE DATABASE ${name}`));
  cleanups.push(() => withAdmin((a) => a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)));
  const url = urlFor(name);
  const store = connectPostgres(url, { max: 4 });
  cleanups.push(() => store.close());
  await migrate(store);

  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  await seedTenant(store.db, "a", { maxInFlight: 1000 });
  await seedPool(store.db, "work", 50);
  cleanups.push(() => killAll());
  await startExecutorChild({ DATABASE_URL: url, OWNER: "e1" });
  await startExecutorChild({ DATABASE_URL: url, OWNER: "e2" });

  // The stream of due work, and a probe that reads the queue as the claim does (it needs the same
  // table locks), timing each read. The load seeds its next batch once the previous ones are
  // delivered but for one batch, so the queue holds work throughout without piling up on a slow machine.
  const BATCH = 20;
  const seeded: string[] = [];
  const probes: number[] = [];
  let running = true;
  const load = (async () => {
    while (running) {
      seeded.push(...(await seedDue(store.db, "a", BATCH, { target: { url: `${receiver.url}/ok` } })).triggerIds);
      await until(
        () => receiver.deliveries.length,
        (n) => !running || n >= seeded.length - BATCH,
        120_000,
        "the load's previous batches delivered",
      );
    }
  })();
  // The probe's pause only paces it (a few reads a second per hot table); nothing is asserted after it.
  const probe = (async () => {
    while (running) {
      const t0 = performance.now();
      await query(store.db, sql`SELECT count(*) FROM trigger_queue WHERE tenant_id = 'none'`);
      await query(store.db, sql`SELECT count(*) FROM triggers WHERE id = 'none'`);
      await query(store.db, sql`SELECT count(*) FROM tenants WHERE id = 'none'`);
      await query(store.db, sql`SELECT count(*) FROM jobs WHERE id = 'none'`);
      probes.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await receiver.waitFor((d) => d.length >= 100, 30_000);

  // A transaction holding a share lock on the hot tables (triggers, tenants, jobs) until the migrator
  // has given up a lock wait once: the migration's ALTER of any of them must wait for it.
  const blocker = postgres(url, { max: 1, onnotice: () => {} });
  cleanups.push(() => blocker.end({ timeout: 1 }));
  let out = "";
  let retried: () => void = () => {};
  const sawRetry = new Promise<void>((r) => (retried = r));
  let locked: () => void = () => {};
  const holds = new Promise<void>((r) => (locked = r));
  const holding = blocker.begin(async (tx) => {
    await tx`SELECT 1 FROM triggers LIMIT 1`;
    await tx`SELECT 1 FROM tenants LIMIT 1`;
    await tx`SELECT 1 FROM jobs LIMIT 1`;
    locked();
    // Held until the migrator gave up a lock wait; the cap only ends a run where it never does.
    await Promise.race([sawRetry, new Promise((r) => setTimeout(r, 60_000))]);
  });
  await Promise.race([holds, holding]);
  const probesBefore = probes.length;
  const child = spawn(process.execPath, ["--import", "tsx", "test/production/support/migrate-folder.ts", withProbe], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const onData = (d: Buffer) => {
    out += d;
    if (/retrying/.test(out)) retried();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  const migrated = { code, out };
  await holding;
  const during = probes.slice(probesBefore);
  running = false;
  await Promise.all([load, probe]);

  const applied = await query<{ n: number }>(
    store.db,
    sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`,
  );
  const done = await until(
    () =>
      query<{ n: number }>(
        store.db,
        sql`SELECT count(*)::int AS n FROM triggers WHERE status = 'succeeded' AND id IN (SELECT jsonb_array_elements_text(${JSON.stringify(seeded)}::jsonb))`,
      ),
    (r) => r[0]!.n === seeded.length,
    60_000,
    "every seeded trigger delivered",
  );
  const delivered = new Set(receiver.deliveries.map((d) => d.id));
  const maxProbeMs = Math.round(Math.max(...during));
  console.log(
    JSON.stringify({
      drill: "online-migration",
      migration: probeTag,
      seeded: seeded.length,
      retries: (migrated.out.match(/retrying/g) ?? []).length,
      maxProbeMs,
      probes: during.length,
    }),
  );
  expect(migrated.code, migrated.out).toBe(0);
  expect(migrated.out).toMatch(/a running transaction holds a lock it needs; retrying/);
  expect(applied[0]!.n).toBe(journal.entries.length + 1);
  expect(done[0]!.n).toBe(seeded.length);
  for (const id of seeded) expect(delivered.has(id)).toBe(true);
  // lock_timeout is 1 s; the rest is margin for a loaded 2-core machine. Without the timeout every
  // read queued behind the ALTER for as long as the blocker held its lock.
  expect(maxProbeMs).toBeLessThan(2_500);
}, 180_000);
