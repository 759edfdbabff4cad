// Backup and restore: pg_dump of a running Fairway (an every-second cron job delivering), the server
// then lost (kill -9), the dump restored into a new database with pg_restore, and a server started on
// it. The schedule resumes: no trigger that had succeeded at the dump is delivered again, and every
// instant from the first fire to the present has its trigger (what fell due while Fairway was down is
// less than the misfire grace late, so it fires). What the restore repeats is what happened after the
// dump's snapshot: deliveries the dump did not see are made again, under the same webhook-id.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { connectPostgres, query, sql } from "@fairway/store";
import { createTestDb, urlFor, withAdmin } from "../support/pg.ts";
import { startReceiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";
import { fleet } from "./support/fleet.ts";
import { PG_BIN, useCleanups } from "./support/processes.ts";

const cleanups = useCleanups();

it("a pg_dump of a running Fairway, restored, resumes its cron schedule: nothing fired twice, nothing due lost", async () => {
  const db = await createTestDb();
  await db.store.close();
  cleanups.push(() => withAdmin((a) => a.unsafe(`DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`)));
  const receiver = await startReceiver();
  cleanups.push(() => receiver.close());
  const f = fleet({});
  cleanups.push(() => f.stop());
  const before = await f.start("all", { DATABASE_URL: db.url });
  const { client } = await f.tenant(before.url, "acme");
  const job = await client.jobs.create({
    name: "tick",
    schedule: { cron: "* * * * * *" },
    target: { url: `${receiver.url}/ok` },
  });
  await receiver.waitFor((d) => d.length >= 3, 30_000);

  const dir = mkdtempSync(join(tmpdir(), "fairway-dump-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const dump = join(dir, "fairway.dump");
  execFileSync(join(PG_BIN, "pg_dump"), ["-Fc", "-f", dump, db.url]);
  await before.stop("SIGKILL");
  const lostAt = Date.now();

  const name = `${db.name}_restored`;
  await withAdmin((a) => a.unsafe(`CREATE DATABASE ${name}`));
  cleanups.push(() => withAdmin((a) => a.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)));
  execFileSync(join(PG_BIN, "pg_restore"), ["--no-owner", "--exit-on-error", "-d", urlFor(name), dump]);
  const restored = connectPostgres(urlFor(name), { max: 2 });
  cleanups.push(() => restored.close());
  const atDump = await query<{ id: string; status: string }>(
    restored.db,
    sql`SELECT id, status FROM triggers WHERE job_id = ${job.id}`,
  );
  const succeededAtDump = new Set(atDump.filter((t) => t.status === "succeeded").map((t) => t.id));
  expect(succeededAtDump.size).toBeGreaterThan(0);

  const after = await f.start("all", { DATABASE_URL: urlFor(name) });
  const resumedAt = Date.now();
  await receiver.waitFor((d) => d.filter((x) => x.at > resumedAt).length >= 3, 30_000);
  await after.stop();

  const again = receiver.deliveries.filter((d) => d.at > lostAt && succeededAtDump.has(d.id));
  expect(again).toEqual([]);
  // One trigger per instant, and no instant missing from the first fire to the last.
  const instants = await until(
    () =>
      query<{ n: number; distinct: number; span: number }>(
        restored.db,
        sql`SELECT count(*)::int AS n, count(DISTINCT scheduled_for)::int AS distinct,
                   (extract(epoch FROM max(scheduled_for) - min(scheduled_for)))::int + 1 AS span
              FROM triggers WHERE job_id = ${job.id}`,
      ),
    (r) => r[0]!.n > atDump.length,
    10_000,
    "fires after the restore",
  );
  console.log(
    JSON.stringify({
      drill: "restore",
      atDump: atDump.length,
      succeededAtDump: succeededAtDump.size,
      downMs: resumedAt - lostAt,
      ...instants[0],
    }),
  );
  expect(instants[0]!.distinct).toBe(instants[0]!.n);
  expect(instants[0]!.n).toBe(instants[0]!.span);
  const skipped = await query<{ n: number }>(
    restored.db,
    sql`SELECT count(*)::int AS n FROM triggers WHERE job_id = ${job.id} AND status = 'skipped'`,
  );
  expect(skipped[0]!.n).toBe(0);
}, 180_000);
