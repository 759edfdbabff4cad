// A hostile or broken target answers with a NUL character in its body. No Postgres text can hold one:
// stored as is, it would fail the settle of the whole batch it was in, on every retry. The NUL is
// stored as U+FFFD (settle.ts, storable()), and every trigger is settled once.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { query, sql } from "@fairway/store";
import { useTestDb } from "../support/use-db.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { statusCounts, until } from "./support/ledger.ts";

const pg = useTestDb();
const hits = new Map<string, number>(); // webhook-id → deliveries
let server: Server;
let base = "";

beforeAll(async () => {
  server = createServer((req, res) => {
    const id = String(req.headers["webhook-id"]);
    hits.set(id, (hits.get(id) ?? 0) + 1);
    req.resume();
    req.on("end", () => {
      if (req.url === "/nul-ok") res.writeHead(200).end("ok\u0000fine");
      else if (req.url === "/nul-500") res.writeHead(500).end("no\u0000pe");
      else res.writeHead(200).end("plain");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

it("a response body with a NUL is stored, and its batch settles once", { timeout: 30_000 }, async () => {
  await seedTenant(pg.db, "nul", { maxInFlight: 100 });
  await seedPool(pg.db, "work", 10, { leaseMs: 60_000 });
  const ok = await seedDue(pg.db, "nul", 20, { target: { url: `${base}/nul-ok` } });
  const failing = await seedDue(pg.db, "nul", 20, { target: { url: `${base}/nul-500` }, maxAttempts: 1 });
  const plain = await seedDue(pg.db, "nul", 20, { target: { url: `${base}/plain` } });

  const transport = createUndiciTransport({ allowPrivate: true });
  const ex = new Executor({ db: pg.db, transport, allowPrivateTargets: true, pollMs: 20 }).start();
  try {
    // Long leases: a trigger settles here only by its own result, never by the reaper.
    const counts = await until(
      () => statusCounts(pg.db),
      (c) => (c.succeeded ?? 0) + (c.dead ?? 0) === 60,
      20_000,
      "every trigger settled",
    );
    expect(counts).toMatchObject({ succeeded: 40, dead: 20 });
  } finally {
    await ex.stop(2000);
    await transport.close();
  }
  // Each delivered once.
  expect(hits.size).toBe(60);
  expect([...hits.values()].every((n) => n === 1)).toBe(true);
  const bodies = await query<{ trigger_id: string; response_body: string }>(
    pg.db,
    sql`SELECT trigger_id, response_body FROM attempts`,
  );
  const bodyOf = new Map(bodies.map((b) => [b.trigger_id, b.response_body]));
  for (const id of ok.triggerIds) expect(bodyOf.get(id)).toBe("ok\uFFFDfine");
  for (const id of failing.triggerIds) expect(bodyOf.get(id)).toBe("no\uFFFDpe");
  for (const id of plain.triggerIds) expect(bodyOf.get(id)).toBe("plain");
});
