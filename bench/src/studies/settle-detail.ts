// Design study (npx tsx bench/src/studies/settle-detail.ts): Postgres time of settling 1000
// first-attempt successes with and without the attempt detail a webhook records (request as sent,
// response headers), in alternated pairs. The detail is the size a bench delivery records. Then how
// many of the triggers' updates (claims and settles) were HOT, and the size of the tables written.
import { claim, settle, sql, type Settlement } from "@fairway/store";
import { benchDb } from "../lib/db.ts";
import { seedTenants, seedTriggers, setPool } from "../lib/seed.ts";

const detailFor = (id: string) => ({
  request: {
    method: "POST",
    url: "http://127.0.0.1:40000/hook",
    headers: {
      "user-agent": "Fairway-Webhooks/1",
      "webhook-id": id,
      "webhook-timestamp": "1764180000",
      "webhook-signature": "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
      "fairway-attempt": "1",
      "content-type": "application/json",
    },
    body: JSON.stringify({
      id,
      jobId: "job_01KB0000000000000000000000",
      jobName: "bench",
      scheduledFor: new Date().toISOString(),
      attempt: 1,
      payload: { hello: "world" },
    }),
  },
  responseHeaders: {
    "content-type": "text/plain",
    "content-length": "2",
    date: new Date().toUTCString(),
    connection: "keep-alive",
    "keep-alive": "timeout=5",
  },
  responseTruncated: false,
});

const tdb = await benchDb(4);
const db = tdb.store.db;
const tenants = await seedTenants(db, { prefix: "sd", count: 50, maxInFlight: 100000 }, "webhook");
await setPool(db, "webhook", 2000);
const ROUNDS = 8,
  N = 1000;
await seedTriggers(db, tenants, (ROUNDS * 2 * N + 2 * N) / 50, "webhook");
await db.execute(sql`VACUUM ANALYZE`);
const times: Record<string, number[]> = { plain: [], detail: [] };
for (let r = 0; r < ROUNDS * 2 + 2; r++) {
  const arm = r % 2 === 0 ? "plain" : "detail";
  const got = await claim(db, { type: "webhook", budget: N, owner: "s", leaseMs: 60_000 });
  const items: Settlement[] = got.map((t) => ({
    id: t.id,
    leaseToken: t.leaseToken,
    attempt: t.attempt,
    status: "succeeded",
    startedAt: new Date(),
    durationMs: 1.2,
    outcome: "success",
    httpStatus: 200,
    responseBody: "ok",
    detail: arm === "detail" ? detailFor(t.id) : null,
  }));
  const t0 = performance.now();
  await settle(db, items);
  const ms = performance.now() - t0;
  if (r >= 2) times[arm].push(ms); // the first pair warms up
  console.log(arm, got.length, ms.toFixed(1));
}
const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
// Backends report their table statistics when idle for a while.
await new Promise((r) => setTimeout(r, 11_000));
const [stats] = (await db.execute(sql`
  SELECT n_tup_upd::int AS updates, n_tup_hot_upd::int AS hot, pg_relation_size('triggers')::int AS triggers_bytes,
         coalesce(pg_relation_size(to_regclass('success_detail')), 0)::int AS success_detail_bytes
    FROM pg_stat_user_tables WHERE relname = 'triggers'`)) as unknown as Record<string, number>[];
console.log(JSON.stringify({ plainMedianMs: med(times.plain), detailMedianMs: med(times.detail), ...stats }));
await tdb.drop();
