// postgres.js fetches the array types on each new connection with a query of its own that nothing
// awaits. When that query fails (cancelled, or its connection destroyed by a pool the store replaced),
// the unpatched driver leaves the failure as an unhandled rejection, which ends a Node process
// (porsager/postgres#1192). Patched (patches/postgres+3.4.9.patch), the failure ends that connection:
// the caller's statement fails or is retried on a new one, and nothing escapes.
import { afterAll, beforeAll, expect, it } from "vitest";
import postgres from "postgres";
import { createTestDb, type TestDb } from "../../../test/support/pg.ts";

let t: TestDb;
const escaped: unknown[] = [];
const note = (err: unknown) => escaped.push(err);

beforeAll(async () => {
  t = await createTestDb();
  process.on("unhandledRejection", note);
});

afterAll(async () => {
  process.off("unhandledRejection", note);
  await t?.drop();
});

it("a type fetch cancelled by statement_timeout fails the caller's statement and escapes nowhere", async () => {
  // 1 ms: the driver's catalog query on connect is cancelled before it answers.
  const sql = postgres(t.url, { max: 1, connection: { statement_timeout: 1 }, onnotice: () => {} });
  try {
    const outcome = await sql`SELECT 1 AS one`.then(
      () => "answered",
      (err: { code?: string }) => err.code ?? "failed",
    );
    // An unhandled rejection is reported once the turn that left it ends: two turns are enough.
    for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
    expect(escaped).toEqual([]);
    expect(["57014", "answered"]).toContain(outcome);
  } finally {
    await sql.end({ timeout: 1 });
  }
});
