// A handler's ctx.log lines come back on its attempt (GET /v1/triggers/{id}), each attempt its own,
// cut at the 64 KiB bound with the cut said; the handler runs inside the attempt's trace context
// (ctx.traceparent, and the OpenTelemetry API's active context), which continues the create's trace.
// The real server process, a real handler worker (@fairway/worker) in this process, real Postgres.
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { context, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminClient, createClient, type FairwayClient, type Trigger } from "@fairway/sdk";
import { createWorker, type Worker } from "@fairway/worker";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

const BOUND = 65_536;
const seen: Array<{ attempt: number; traceparent: string | null; activeTraceId: string | null }> = [];

let db: TestDb;
let server: ServerProcess;
let worker: Worker;
let client: FairwayClient;

beforeAll(async () => {
  // What an app with an OpenTelemetry SDK has registered: a context manager that follows async calls.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  db = await createTestDb({ max: 2 });
  server = await startServerProcess({ DATABASE_URL: db.url, FAIRWAY_POLL_MS: "50" });
  worker = await createWorker({
    databaseUrl: db.url,
    pollMs: 50,
    logLevel: "error",
    handlers: {
      "logs.task": async (ctx) => {
        seen.push({
          attempt: ctx.attempt,
          traceparent: ctx.traceparent,
          activeTraceId: trace.getSpanContext(context.active())?.traceId ?? null,
        });
        const mode = (ctx.payload as { mode: string }).mode;
        ctx.log("attempt", ctx.attempt, { mode });
        if (mode === "flaky" && ctx.attempt === 1) {
          ctx.log("giving up on this one");
          throw new Error("first attempt fails");
        }
        if (mode === "flood") for (let i = 0; i < 2000; i++) ctx.log(`line ${i} ${"é".repeat(40)}`);
      },
    },
  }).start();
  const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
  await admin.tenants.create({ id: "acme", name: "Acme" });
  client = createClient({ baseUrl: server.url, apiKey: (await admin.tenants.createKey("acme")).key });
}, 120_000);

afterAll(async () => {
  await worker?.stop(0);
  await server?.stop();
  await db?.drop();
  context.disable();
});

async function run(mode: string, traceparent?: string): Promise<Trigger> {
  const job = await client.jobs.create(
    {
      name: mode,
      type: "logs.task",
      schedule: { delayMs: 0 },
      payload: { mode },
      retry: { maxAttempts: 2, initialDelayMs: 50, maxDelayMs: 100 },
    },
    traceparent ? { traceparent } : {},
  );
  const [t] = (
    await until(
      () => client.jobs.triggers(job.id),
      (p) => ["succeeded", "dead"].includes(p.data[0]?.status ?? ""),
    )
  ).data;
  return client.triggers.get(t.id);
}

describe("handler logs", () => {
  it("keeps each attempt's lines with that attempt", async () => {
    const t = await run("flaky");
    expect(t.status).toBe("succeeded");
    expect(t.attempts!.map((a) => a.logs)).toEqual([
      { lines: ['attempt 1 {"mode":"flaky"}', "giving up on this one"], truncated: false },
      { lines: ['attempt 2 {"mode":"flaky"}'], truncated: false },
    ]);
  });

  it("cuts an attempt's logs at 64 KiB of UTF-8 and says so", async () => {
    const t = await run("flood");
    const logs = t.attempts![0].logs!;
    expect(logs.truncated).toBe(true);
    const bytes = logs.lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    expect(bytes).toBeLessThanOrEqual(BOUND);
    expect(bytes).toBeGreaterThan(BOUND - 200);
    expect(logs.lines[0]).toBe('attempt 1 {"mode":"flood"}');
    expect(logs.lines.at(-1)).not.toContain("\uFFFD");
  });
});

describe("handler trace context", () => {
  it("runs the handler inside the create's trace", async () => {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
    const parent = `00-${traceId}-00f067aa0ba902b7-01`;
    const before = seen.length;
    await run("traced", parent);
    const mine = seen.slice(before);
    expect(mine).toHaveLength(1);
    // Tracing is off in this server: the handler gets the create's context as it came.
    expect(mine[0].traceparent).toBe(parent);
    expect(mine[0].activeTraceId).toBe(traceId);
  });

  it("gives a handler of a job created without one no trace context", async () => {
    const before = seen.length;
    await run("untraced");
    expect(seen.slice(before)).toEqual([{ attempt: 1, traceparent: null, activeTraceId: null }]);
  });
});
