// Upgrading a live database to migration 0009 (the split queue): triggers already pending, running
// under a lease, and dead before the upgrade must come out of it queued, counted and leased, so that
// none is stranded (a pending trigger with no queue row would never be claimed).
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { claim, findExpiredLeases, listDeadLetters, query, settle, sql, type Db } from "@fairway/store";
import { migrationsFolder } from "@fairway/store/node";
import { urlFor, withAdmin } from "../../../test/support/pg.ts";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { succeeded } from "../../../test/support/seed.ts";

/** The migrations folder as it was before 0009. */
function foldersUpTo(last: number): string {
  const dir = mkdtempSync(join(tmpdir(), "fairway-migrations-"));
  cpSync(migrationsFolder, dir, { recursive: true });
  const journalPath = join(dir, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8"));
  journal.entries = journal.entries.filter((e: { idx: number }) => e.idx <= last);
  writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

it("pending, running and dead triggers written before 0009 are queued, counted and leased after it", async () => {
  const name = `fairway_up_${process.pid}_${Date.now()}`;
  await withAdmin((a) => a.unsafe(`CREATE DATABASE ${name}`));
  const client = postgres(urlFor(name), { max: 2, onnotice: () => {} });
  const db = drizzle(client) as unknown as Db;
  const old = foldersUpTo(8);
  try {
    await migrate(drizzle(client), { migrationsFolder: old });
    await db.execute(sql`
      INSERT INTO tenants (id, name, max_in_flight, signing_secret) VALUES ('up', 'up', 10, 'whsec_x');
      INSERT INTO pools (type) VALUES ('up');
      INSERT INTO tenant_pools (tenant_id, type, vtime, cost_ms) VALUES ('up', 'up', 5, 100);
      INSERT INTO jobs (id, tenant_id, name, type, run_at, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at)
      VALUES ('job_up', 'up', 'up', 'up', now(), 3, 10, 1000, now());
      INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts, status,
                            attempt_count, lease_owner, lease_token, lease_expires_at, reason)
      VALUES ('trg_p1', 'up', 'job_up', 'up', 'manual', now(), now() - interval '1 s', 3, 'pending', 0, NULL, NULL, NULL, NULL),
             ('trg_p2', 'up', 'job_up', 'up', 'manual', now(), now() - interval '1 s', 3, 'pending', 0, NULL, NULL, NULL, NULL),
             ('trg_r1', 'up', 'job_up', 'up', 'manual', now(), now(), 3, 'running', 1, 'exe', 'tok_a', now() - interval '1 s', NULL),
             ('trg_r2', 'up', 'job_up', 'up', 'manual', now(), now(), 3, 'running', 1, 'exe', 'tok_b', now() + interval '1 h', NULL),
             ('trg_d1', 'up', 'job_up', 'up', 'manual', now(), now(), 3, 'dead', 3, NULL, NULL, NULL, 'http 500')`);

    await migrate(drizzle(client), { migrationsFolder });

    expect(await queueDrift(db)).toEqual(NO_DRIFT);
    const [{ running }] = await query<{ running: number }>(
      db,
      sql`SELECT running FROM tenant_pools WHERE tenant_id = 'up' AND type = 'up'`,
    );
    expect(running).toBe(2);
    // The expired lease is found by the reaper; the live one is not.
    expect((await findExpiredLeases(db)).map((e) => e.id)).toEqual(["trg_r1"]);
    expect((await listDeadLetters(db, "up", { after: null, limit: 10 })).map((t) => t.id)).toEqual(["trg_d1"]);
    // The pending ones are claimable, under the cap that counts the two running.
    const got = await claim(db, { type: "up", budget: 10, owner: "after", leaseMs: 60_000 });
    expect(got.map((g) => g.id).sort()).toEqual(["trg_p1", "trg_p2"]);
    await settle(
      db,
      got.map((g) => succeeded(g)),
    );
    expect(await queueDrift(db)).toEqual(NO_DRIFT);
  } finally {
    await client.end();
    rmSync(old, { recursive: true, force: true });
    await withAdmin((a) => a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
});
