// /metrics on a real server process, scraped and parsed as Prometheus text: it needs the admin token
// or the metrics token; attempt-duration buckets match a receiver that answers after a known delay,
// fire-lag buckets a pool paused for a known time; per-tenant series are bounded; a tenant reads only
// its own series at /v1/metrics; every finished attempt is one `attempt_finished` log line; a dead letter
// is counted where it was made and kept fleet-wide; every metric docs/operations.md names is served,
// and every one served is named there.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { histogram, parsePrometheus, samples } from "../support/prometheus.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

const METRICS_TOKEN = "metrics-token-0123456789abcdef";
const SLOW_MS = 300;
const PAUSED_MS = 1500;
let db: TestDb;
let server: ServerProcess;
let receiver: Receiver;

beforeAll(async () => {
  db = await createTestDb();
  receiver = await startReceiver();
  server = await startServerProcess({
    DATABASE_URL: db.url,
    FAIRWAY_POLL_MS: "20",
    FAIRWAY_LOG_LEVEL: "info",
    FAIRWAY_METRICS_TOKEN: METRICS_TOKEN,
    FAIRWAY_METRICS_TOP_TENANTS: "2",
    FAIRWAY_HEARTBEAT_MS: "200",
  });
});
afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  await db?.drop();
});

const call = async (token: string | null, method: string, path: string, body?: unknown) => {
  const res = await fetch(server.url + path, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    text,
    json: res.headers.get("content-type")?.includes("json") ? JSON.parse(text) : null,
  };
};
const admin = (method: string, path: string, body?: unknown) => call(server.adminToken, method, path, body);
async function tenant(id: string): Promise<string> {
  expect((await admin("POST", "/v1/admin/tenants", { id, name: id, maxInFlight: 50 })).status).toBe(201);
  return (await admin("POST", `/v1/admin/tenants/${id}/keys`)).json.key;
}
const job = (key: string, type: string, path: string, extra: Record<string, unknown> = {}) =>
  call(key, "POST", "/v1/jobs", {
    name: "m",
    type,
    schedule: { delayMs: 0 },
    target: { url: `${receiver.url}${path}` },
    ...extra,
  });

/** The metric names docs/operations.md's Metrics section lists (its tables' first column). */
function documentedMetrics(): string[] {
  const doc = readFileSync(new URL("../../docs/operations.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf("## Metrics"), doc.indexOf("\n## ", doc.indexOf("## Metrics") + 1));
  return [...section.matchAll(/^\| `(fairway_[a-z_]+)`/gm)].map((m) => m[1]);
}

it("scrapes with a token only; buckets, counters, gauges, tenant view and the attempt log line", async () => {
  const a = await tenant("alpha");
  const b = await tenant("beta");
  await tenant("gamma");

  expect((await call(null, "GET", "/metrics")).status).toBe(401);
  expect((await call(a, "GET", "/metrics")).status).toBe(401);
  expect((await call(METRICS_TOKEN, "GET", "/metrics")).status).toBe(200);

  // Three deliveries that take SLOW_MS, two that answer at once.
  for (let i = 0; i < 3; i++) expect((await job(a, "slow", `/slow/${SLOW_MS}`)).status).toBe(201);
  for (let i = 0; i < 2; i++) expect((await job(b, "fast", "/ok")).status).toBe(201);
  // One that fails once with no retry left: a dead letter.
  expect((await job(b, "failing", "/status/500", { retry: { maxAttempts: 1 } })).status).toBe(201);
  // Two triggers that wait PAUSED_MS behind a paused pool: their first attempts start at least that late.
  await admin("POST", "/v1/admin/pools/lagged/pause");
  for (let i = 0; i < 2; i++) expect((await job(b, "lagged", "/ok")).status).toBe(201);
  await new Promise((r) => setTimeout(r, PAUSED_MS));
  const pausedScrape = parsePrometheus((await admin("GET", "/metrics")).text);
  expect(samples(pausedScrape, "fairway_pool_paused", { pool: "lagged" })[0].value).toBe("1");
  expect(samples(pausedScrape, "fairway_triggers_due", { pool: "lagged" })[0].value).toBe("2");
  await admin("POST", "/v1/admin/pools/lagged/resume");
  await receiver.waitFor((d) => d.length === 8);

  const m = await until(
    async () => parsePrometheus((await call(METRICS_TOKEN, "GET", "/metrics")).text),
    (m) =>
      histogram(m, "fairway_attempt_duration_seconds").count === 8 &&
      samples(m, "fairway_executor_settled_total")[0]?.value === "8", // settles are batched after the attempts
  );
  const slow = histogram(m, "fairway_attempt_duration_seconds", { pool: "slow", outcome: "success" });
  expect(slow.type).toBe("HISTOGRAM");
  expect(slow.count).toBe(3);
  expect(slow.buckets["0.25"]).toBe(0); // each took at least SLOW_MS
  expect(slow.buckets["10"]).toBe(3);
  expect(slow.sum).toBeGreaterThanOrEqual((3 * SLOW_MS) / 1000);
  expect(histogram(m, "fairway_attempt_duration_seconds", { pool: "fast", outcome: "success" }).count).toBe(2);

  const lag = histogram(m, "fairway_fire_lag_seconds", { pool: "lagged" });
  expect(lag.count).toBe(2);
  expect(lag.buckets["1"]).toBe(0); // started at least PAUSED_MS after they were due
  expect(lag.buckets["+Inf"]).toBe(2);

  expect(samples(m, "fairway_attempts_total", { pool: "slow", outcome: "success" })[0].value).toBe("3");
  // The dead letter: counted by the process whose settle made it, and kept fleet-wide and per tenant.
  expect(samples(m, "fairway_attempts_total", { pool: "failing", outcome: "http_error" })[0].value).toBe("1");
  expect(m.get("fairway_dead_letters_total")?.type).toBe("COUNTER");
  expect(samples(m, "fairway_dead_letters_total").map((s) => [s.labels?.pool, s.value])).toEqual([["failing", "1"]]);
  expect(samples(m, "fairway_dead_letters")[0].value).toBe("1");
  expect(samples(m, "fairway_tenant_dead", { tenant: "beta" })[0].value).toBe("1");
  expect(m.get("fairway_reaped_total")?.type).toBe("COUNTER");
  expect(samples(m, "fairway_reaped_total")).toEqual([]); // nothing was reaped
  expect(m.get("fairway_lease_renewal_failures_total")?.type).toBe("COUNTER");
  expect(samples(m, "fairway_lease_renewal_failures_total")[0].value).toBe("0");
  // The executor's totals: 8 claimed and settled (each attempt once), nothing released, no loop errors.
  expect(samples(m, "fairway_executor_claimed_total")[0].value).toBe("8");
  expect(samples(m, "fairway_executor_settled_total")[0].value).toBe("8");
  expect(samples(m, "fairway_executor_released_total")[0].value).toBe("0");
  expect(samples(m, "fairway_executor_loop_errors_total")[0].value).toBe("0");
  expect(m.get("fairway_notifications_total")?.type).toBe("COUNTER");
  expect(histogram(m, "fairway_claim_duration_seconds").count).toBeGreaterThan(0);
  expect(samples(m, "fairway_executors")[0].value).toBe("1");
  // One PostgreSQL: no cluster, no per-node series.
  expect([...m.keys()].filter((name) => name.startsWith("fairway_cluster_"))).toEqual([]);
  expect(samples(m, "fairway_pool_paused", { pool: "lagged" })[0].value).toBe("0");
  expect(Number(samples(m, "fairway_pool_capacity", { pool: "slow" })[0].value)).toBeGreaterThan(0);
  expect(samples(m, "fairway_pool_saturation", { pool: "slow" })[0].value).toBe("0"); // nothing running
  expect(samples(m, "fairway_triggers_running", { pool: "slow" })[0].value).toBe("0");
  expect(samples(m, "fairway_triggers_due", { pool: "slow" })[0].value).toBe("0");
  // Per-tenant series for the busiest two tenants only, and no label but pool, outcome, tenant, le.
  expect(samples(m, "fairway_tenant_max_in_flight")).toHaveLength(2);
  expect(samples(m, "fairway_tenant_max_in_flight", { tenant: "beta" })[0].value).toBe("50");
  expect(samples(m, "fairway_tenant_running")).toHaveLength(2);
  expect(samples(m, "fairway_tenant_due")).toHaveLength(2);
  for (const f of m.values())
    for (const s of f.metrics)
      for (const k of Object.keys(s.labels ?? {}))
        expect([
          "pool",
          "outcome",
          "status",
          "loop",
          "tenant",
          "le",
          "kind",
          "event",
          "channel_type",
          "status",
          "version",
          "type",
          "space",
          "major",
          "minor",
          "patch",
        ]).toContain(k);

  // A tenant sees its own series, with its key, and nothing of another tenant's.
  const own = await call(b, "GET", "/v1/metrics");
  expect(own.status).toBe(200);
  const t = parsePrometheus(own.text);
  expect(
    samples(t, "fairway_triggers_due")
      .map((s) => s.labels?.pool)
      .sort(),
  ).toEqual(expect.arrayContaining(["fast", "lagged"]));
  expect(own.text).not.toMatch(/alpha|gamma|fairway_executors|fairway_attempt_duration|fairway_dead_letters/);
  expect((await call(server.adminToken, "GET", "/v1/metrics")).status).toBe(403);

  // One attempt_finished line per attempt, with the fields an operator filters by.
  const lines = server
    .output()
    .split("\n")
    .filter((l) => l.includes('"attempt_finished"'))
    .map((l) => JSON.parse(l));
  expect(lines).toHaveLength(8);
  const first = lines.find((l) => l.type === "slow");
  expect(first).toMatchObject({ event: "attempt_finished", tenantId: "alpha", attempt: 1, outcome: "success" });
  for (const k of ["jobId", "triggerId", "scheduledFor", "durationMs", "executor"]) expect(first[k]).toBeDefined();
  expect(first.durationMs).toBeGreaterThanOrEqual(SLOW_MS);

  // The docs and the scrape name the same metrics (prom-client's process metrics aside), admission's
  // included: it is on by default.
  const documented = documentedMetrics();
  const served = [...m.keys()].filter((n) => n.startsWith("fairway_") && !/^fairway_(process|nodejs)_/.test(n));
  const families = served.filter(
    (n) => !/_(bucket|sum|count)$/.test(n) || !served.includes(n.replace(/_(bucket|sum|count)$/, "")),
  );
  expect(documented.length).toBeGreaterThan(15);
  expect(families.sort()).toEqual([...documented].sort());
});
