// At-most-once: `kill -9` an executor with 100 at-most-once deliveries in flight (and 50 claimed ahead,
// never started). Each in-flight one was recorded as sending before its request left, so none is sent
// again: it ends `unknown` (lost_in_flight). The never-started ones are re-run normally. Receiver count
// by webhook-id: 0 sent twice; every trigger `succeeded` or `unknown`.
import { expect, it } from "vitest";
import { query, sql } from "@fairway/store";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";
import { startExecutorChild } from "./support/children.ts";
import { statusCounts, until } from "./support/ledger.ts";
import { db, receiver, startSurvivor, useDrill } from "./support/drill.ts";

const TOTAL = 300;
const IN_FLIGHT = 100;

useDrill();

it("kill -9 with 100 at-most-once deliveries in flight: none sent twice; each succeeded or unknown", async () => {
  await seedTenant(db.store.db, "a", { maxInFlight: 1000 });
  await seedPool(db.store.db, "work", IN_FLIGHT, { leaseMs: 600_000, timeoutMs: 30_000 });
  const { triggerIds } = await seedDue(db.store.db, "a", TOTAL, {
    target: { url: `${receiver.url}/t/a` },
    maxAttempts: 5,
    delivery: "at_most_once",
  });

  receiver.mode = { kind: "hold" };
  const victim = await startExecutorChild({
    DATABASE_URL: db.url,
    OWNER: "victim",
    HEARTBEAT_MS: "200",
    HEARTBEAT_TIMEOUT_MS: "1500",
  });
  await receiver.waitFor(() => receiver.held === IN_FLIGHT, 20_000, "victim holding a full pool");
  const inFlight = new Set(receiver.hits.map((h) => h.id));
  victim.signal("SIGKILL");
  expect(await victim.exited).toBe(null);

  receiver.mode = { kind: "ok" };
  const survivor = startSurvivor({ heartbeat: { everyMs: 200, timeoutMs: 1500 } });
  try {
    await until(
      () => statusCounts(db.store.db),
      (c) => (c.succeeded ?? 0) + (c.unknown ?? 0) === TOTAL,
      30_000,
      "every trigger finished",
    );
    const counts = await statusCounts(db.store.db);
    const sent = new Map<string, number>();
    for (const h of receiver.hits) sent.set(h.id, (sent.get(h.id) ?? 0) + 1);
    console.log(
      JSON.stringify({
        drill: "kill9-at-most-once",
        counts,
        deliveries: receiver.hits.length,
        inFlightAtKill: inFlight.size,
      }),
    );
    expect([...sent.values()].filter((n) => n > 1)).toEqual([]);
    expect(counts).toEqual({ succeeded: TOTAL - IN_FLIGHT, unknown: IN_FLIGHT });
    const unknown = await query<{ id: string; reason: string }>(
      db.store.db,
      sql`SELECT id, reason FROM triggers WHERE status = 'unknown'`,
    );
    for (const u of unknown) expect([inFlight.has(u.id), u.reason]).toEqual([true, "lost_in_flight"]);
    for (const id of triggerIds) expect(sent.get(id)).toBe(1);

    // On record: the lost attempt's outcome (the API's attempts read this view).
    const [row] = await query<{ outcome: string }>(
      db.store.db,
      sql`SELECT outcome FROM attempts WHERE trigger_id = ${unknown[0].id}`,
    );
    expect(row.outcome).toBe("lost_in_flight");
  } finally {
    await survivor.stop(2000);
  }
});
