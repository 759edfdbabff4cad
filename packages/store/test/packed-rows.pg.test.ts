// Packed rows (sql/packed.ts): the claim and the settle send their rows back as text joined by two
// control characters. What must hold: every field and row comes back as Postgres wrote it (numbers and
// timestamps included, none rounded), no rows is an empty list, a row of the wrong width is refused
// rather than read shifted, and no key that a packed row carries can hold a control character — the
// schema refuses it even past the API.
import { beforeAll, expect, it } from "vitest";
import { newId } from "@fairway/core";
import { claim, query, settle, sql } from "@fairway/store";
import { packRows, unpackRows } from "../src/sql/packed.ts";
import { useTestDb } from "../../../test/support/use-db.ts";
import { seedDue, seedPool, seedTenant } from "../../../test/support/seed.ts";

const pg = useTestDb();

beforeAll(async () => {
  await seedTenant(pg.db, "tn_packed", { maxInFlight: 100 });
  await seedPool(pg.db, "packed");
});

it("round-trips every row and field through Postgres, and no rows as none", async () => {
  const [r] = await query<{ p: string }>(
    pg.db,
    sql`
    SELECT ${packRows(sql`v.id, v.n, v.f`)} AS p
      FROM (VALUES ('a-1', 7, 0.1::float8), ('b_2', -3, 1763700000123.456::float8)) AS v(id, n, f)`,
  );
  expect(unpackRows(r.p, 3)).toEqual([
    ["a-1", "7", "0.1"],
    ["b_2", "-3", "1763700000123.456"],
  ]);
  const [none] = await query<{ p: string }>(
    pg.db,
    sql`SELECT ${packRows(sql`v.id`)} AS p FROM (SELECT 'x' AS id WHERE false) v`,
  );
  expect(none.p).toBe("");
  expect(unpackRows(none.p, 1)).toEqual([]);
  expect(unpackRows(null, 1)).toEqual([]);
});

it("refuses a row of the wrong width instead of reading its fields shifted", () => {
  expect(() => unpackRows("a\u001fb\u001ec", 2)).toThrow(/1 fields, expected 2/);
  expect(() => unpackRows("a\u001fb\u001fc", 2)).toThrow(/3 fields, expected 2/);
});

it("claim and settle carry every trigger's fields through the packed rows", async () => {
  const at = new Date(Date.now() - 5_000);
  const { jobId, triggerIds } = await seedDue(pg.db, "tn_packed", 3, { type: "packed", at, priority: 4 });
  const got = await claim(pg.db, { type: "packed", budget: 10, owner: "o", leaseMs: 60_000 });
  expect(got.map((t) => t.id).sort()).toEqual([...triggerIds].sort());
  for (const t of got) {
    expect(t).toMatchObject({ tenantId: "tn_packed", jobId, type: "packed", priority: 4, attempt: 1, maxAttempts: 3 });
    expect(t.scheduledFor.getTime()).toBe(new Date(at.toISOString()).getTime());
  }
  const settled = await settle(
    pg.db,
    got.map((t, i) => ({
      id: t.id,
      leaseToken: t.leaseToken,
      attempt: t.attempt,
      status: i === 0 ? ("pending" as const) : ("succeeded" as const),
      nextAttemptAt: i === 0 ? new Date() : null,
      startedAt: new Date(),
      durationMs: 12.5 + i,
      outcome: i === 0 ? "failure" : "success",
    })),
  );
  expect(settled.map((s) => [s.id, s.tenantId, s.jobId, s.type, s.status, s.durationMs]).sort()).toEqual(
    got.map((t, i) => [t.id, "tn_packed", jobId, "packed", i === 0 ? "pending" : "succeeded", 12.5 + i]).sort(),
  );
});

/** The constraint a failed write broke (drizzle wraps the driver's error as its cause). */
const brokenConstraint = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { constraint_name?: string; cause?: { constraint_name?: string } }) =>
      e.cause?.constraint_name ?? e.constraint_name,
  );

it("refuses a tenant id, job id or job type holding a control character, and writes nothing", async () => {
  expect(await brokenConstraint(seedTenant(pg.db, "tn_bad\u001fx"))).toBe("tenants_id_printable");
  for (const [id, type, name] of [
    [`job_\u001e1`, "packed", "jobs_id_printable"],
    [newId("job"), "pack\u0007ed", "jobs_type_printable"],
  ]) {
    expect(
      await brokenConstraint(
        query(
          pg.db,
          sql`
      INSERT INTO jobs (id, tenant_id, name, type, run_at, max_attempts, initial_delay_ms, max_delay_ms, next_fire_at)
      VALUES (${id}, 'tn_packed', 'bad', ${type}, now(), 3, 10, 1000, now())`,
        ),
      ),
    ).toBe(name);
  }
  const [n] = await query<{ t: number; j: number }>(
    pg.db,
    sql`
    SELECT (SELECT count(*) FROM tenants WHERE id ~ '[[:cntrl:]]')::int AS t, (SELECT count(*) FROM jobs WHERE name = 'bad')::int AS j`,
  );
  expect(n).toEqual({ t: 0, j: 0 });
});
