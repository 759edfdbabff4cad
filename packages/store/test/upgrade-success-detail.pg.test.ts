// Upgrading a live database past the migrations that move a first success's detail out of its
// trigger row (success_detail): a detail written before the upgrade reads back the same through the
// attempts view after it, and a success without one still has none.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { getTrigger, query, sql, type Db } from "@fairway/store";
import { migrationsFolder } from "@fairway/store/node";
import { urlFor, withAdmin } from "../../../test/support/pg.ts";

/** The migrations folder as it was before the one tagged `*_<tag>` (numbers change at merges). */
function foldersBefore(tag: string): string {
  const dir = mkdtempSync(join(tmpdir(), "fairway-migrations-"));
  cpSync(migrationsFolder, dir, { recursive: true });
  const journalPath = join(dir, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8"));
  const at = journal.entries.findIndex((e: { tag: string }) => e.tag.endsWith(`_${tag}`));
  expect(at).toBeGreaterThan(0);
  journal.entries = journal.entries.slice(0, at);
  writeFileSync(journalPath, JSON.stringify(journal));
  return dir;
}

it("a first success's detail kept in its trigger row before the upgrade is read the same after it", async () => {
  const name = `fairway_upd_${process.pid}_${Date.now()}`;
  await withAdmin((a) => a.unsafe(`CREATE DATABASE ${name}`));
  const client = postgres(urlFor(name), { max: 2, onnotice: () => {} });
  const db = drizzle(client) as unknown as Db;
  const old = foldersBefore("success_detail");
  const detail = {
    request: { method: "POST", url: "https://example.com/hook", headers: { "webhook-id": "trg_a" }, body: "{}" },
    responseHeaders: { "content-type": "text/plain" },
    responseTruncated: false,
  };
  try {
    await migrate(drizzle(client), { migrationsFolder: old });
    await db.execute(sql`
      INSERT INTO tenants (id, name, max_in_flight, signing_secret) VALUES ('up', 'up', 10, 'whsec_x');
      INSERT INTO jobs (id, tenant_id, name, type, run_at, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at)
      VALUES ('job_up', 'up', 'up', 'up', now(), 3, 10, 1000, now())`);
    await db.execute(sql`
      INSERT INTO triggers (id, tenant_id, job_id, type, kind, scheduled_for, next_attempt_at, max_attempts, status,
                            attempt_count, finished_at, ok_started_at, ok_duration_ms, ok_http_status, ok_response_body, ok_detail)
      VALUES ('trg_a', 'up', 'job_up', 'up', 'manual', now(), now(), 3, 'succeeded', 1, now(), now(), 12, 200, 'thanks',
              ${JSON.stringify(detail)}::jsonb),
             ('trg_b', 'up', 'job_up', 'up', 'manual', now(), now(), 3, 'succeeded', 1, now(), now(), 3, NULL, NULL, NULL)`);

    await migrate(drizzle(client), { migrationsFolder });

    const a = await getTrigger(db, "up", "trg_a");
    expect(a?.attempts).toMatchObject([
      { attempt: 1, outcome: "success", httpStatus: 200, responseBody: "thanks", durationMs: 12, detail },
    ]);
    const b = await getTrigger(db, "up", "trg_b");
    expect(b?.attempts).toMatchObject([{ attempt: 1, outcome: "success", detail: null }]);
    expect(await query(db, sql`SELECT trigger_id FROM success_detail`)).toEqual([{ trigger_id: "trg_a" }]);
  } finally {
    await client.end();
    rmSync(old, { recursive: true, force: true });
    await withAdmin((a) => a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  }
});
