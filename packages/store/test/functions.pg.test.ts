// One source for every plpgsql function (src/sql/delegated.ts, src/sql/queue-functions.ts): the
// migrations' text is the modules', and what a migrated database holds is what the modules' text makes. And a tenant's settle as one
// call leaves what the settle across tenants leaves.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { ALL_TENANTS, claimReport, oneTenant, query, settleIn, sql, type ClaimedTrigger } from "@fairway/store";
import { delegatedFunctions } from "../src/sql/delegated.ts";
import { QUEUE_FUNCTIONS } from "../src/sql/queue-functions.ts";
import { useTestDb } from "../../../test/support/use-db.ts";
import { NO_DRIFT, queueDrift } from "../../../test/support/queue.ts";
import { seedDue, seedPool, seedTenant, succeeded } from "../../../test/support/seed.ts";

const pg = useTestDb();

const DRIZZLE = join(import.meta.dirname, "../../../drizzle");
const functions = [...delegatedFunctions(), ...QUEUE_FUNCTIONS];

it("the latest migration that defines each function holds its text as the module makes it", () => {
  // In migration order: a statement changed in claim.ts or settle.ts changes its function, and a new
  // migration carries the new text (delegatedFunctions(), QUEUE_FUNCTIONS).
  const statements = readdirSync(DRIZZLE)
    .filter((f) => f.endsWith(".sql"))
    .sort()
    .flatMap((f) => readFileSync(join(DRIZZLE, f), "utf8").split("--> statement-breakpoint"))
    .map((s) =>
      s
        .trim()
        .replace(/^(--.*\n)+/, "")
        .trim(),
    );
  for (const f of functions) {
    const defining = statements.filter((s) => new RegExp(`^CREATE (OR REPLACE )?FUNCTION "?${f.name}"?\\(`).test(s));
    expect(defining.length, f.name).toBeGreaterThan(0);
    expect(defining.at(-1), f.name).toBe(`${f.text};`);
  }
});

it("each installed function is the module's, as pg_get_functiondef reads it", async () => {
  await query(pg.db, sql`CREATE SCHEMA fn_expect`);
  for (const f of functions) {
    await query(pg.db, sql.raw(f.text.replace(/FUNCTION "?(\w+)"?\(/, "FUNCTION fn_expect.$1(")));
    const [installed] = await query<{ def: string }>(
      pg.db,
      sql`SELECT pg_get_functiondef(${`public.${f.signature}`}::regprocedure) AS def`,
    );
    const [expected] = await query<{ def: string }>(
      pg.db,
      sql`SELECT pg_get_functiondef(${`fn_expect.${f.signature}`}::regprocedure) AS def`,
    );
    expect(installed!.def, f.name).toBe(expected!.def.replace(`fn_expect.${f.name}(`, `public.${f.name}(`));
  }
  await query(pg.db, sql`DROP SCHEMA fn_expect CASCADE`);
});

const input = (type: string) => ({ type, budget: 10, owner: "exec_f", leaseMs: 60_000 });

/** What a settle left of the tenant's triggers, their attempts and its ledger, without ids. */
async function leftOf(tenantId: string) {
  return {
    triggers: await query(
      pg.db,
      sql`SELECT status, attempt_count, reason, ok_http_status, lease_token IS NULL AS unleased
            FROM triggers WHERE tenant_id = ${tenantId} ORDER BY status, attempt_count, reason`,
    ),
    attempts: await query(
      pg.db,
      sql`SELECT attempt, outcome, http_status, error FROM attempts a JOIN triggers t ON t.id = a.trigger_id
           WHERE t.tenant_id = ${tenantId} ORDER BY outcome, attempt`,
    ),
    details: await query(
      pg.db,
      sql`SELECT detail FROM success_detail s JOIN triggers t ON t.id = s.trigger_id WHERE t.tenant_id = ${tenantId}`,
    ),
    pools: await query(pg.db, sql`SELECT running, cost_ms FROM tenant_pools WHERE tenant_id = ${tenantId}`),
  };
}

/** A batch with a plain success, a success with its detail, a retry and a second attempt that failed. */
function batch(c: ClaimedTrigger[]) {
  const detail = { request: null, responseHeaders: { a: "b" }, responseTruncated: false };
  return [
    succeeded(c[0]!, { durationMs: 40 }),
    succeeded(c[1]!, { durationMs: 60, detail, httpStatus: 200 }),
    {
      ...succeeded(c[2]!),
      status: "pending" as const,
      outcome: "http_error",
      httpStatus: 503,
      error: "it's down",
      nextAttemptAt: new Date(Date.now() + 60_000),
    },
  ];
}

it("settles one tenant's batch as one call, as the settle across tenants does", async () => {
  const left = [];
  for (const [tenantId, type] of [
    ["fn_across", "fna"],
    ["fn_alone", "fnb"],
  ] as const) {
    await seedPool(pg.db, type);
    await seedTenant(pg.db, tenantId, { maxInFlight: 10 });
    await seedDue(pg.db, tenantId, 4, { type });
    const got = await claimReport(pg.db, { ...input(type), tenantId });
    expect(got.claimed).toHaveLength(4);
    const done = await settleIn(pg.db, batch(got.claimed), tenantId === "fn_alone" ? oneTenant(tenantId) : ALL_TENANTS);
    expect(done.map((d) => [d.tenantId, d.status, d.type]).sort()).toEqual(
      [
        [tenantId, "pending", type],
        [tenantId, "succeeded", type],
        [tenantId, "succeeded", type],
      ].sort(),
    );
    // Settled again (a late duplicate): fenced, nothing changes.
    expect(
      await settleIn(pg.db, batch(got.claimed), tenantId === "fn_alone" ? oneTenant(tenantId) : ALL_TENANTS),
    ).toEqual([]);
    left.push(await leftOf(tenantId));
  }
  expect(left[1]).toEqual(left[0]);
  expect(left[1]!.attempts).toHaveLength(3);
  expect(left[1]!.details).toHaveLength(1);
  expect(await queueDrift(pg.db)).toEqual(NO_DRIFT);
});
