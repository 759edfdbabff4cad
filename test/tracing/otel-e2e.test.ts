// One trace from the create call to the receiver (docs/observability.md), against the real server
// process, the real OpenTelemetry SDK and exporters, a real OTLP/HTTP receiver that decodes what the
// exporter sent (protobuf and JSON), and a real webhook endpoint: the delivery's traceparent continues
// the create's trace and names the attempt's exported span; the spans carry the attributes of the
// mapping; retries are sibling attempt spans; no secret value, reference or query value is exported;
// with tracing off no OpenTelemetry module is loaded and the create's context is forwarded as it came.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminClient, createClient, type FairwayClient, type Trigger } from "@fairway/sdk";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../support/otlp-receiver.ts";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

const CANARY = `canary${Math.random().toString(36).slice(2)}secret`;
const QUERY_VALUE = `q${Math.random().toString(36).slice(2)}value`;
const RECORD_IMPORTS = fileURLToPath(new URL("../support/record-imports.mjs", import.meta.url));
const CLIENT = 3;
const SERVER = 2;
const PRODUCER = 4;

interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
}

/** A webhook endpoint that records each request's path and headers. /flaky/N/KEY answers 500 to the
 *  first N requests of KEY, then 200; anything else 200. */
async function startEndpoint(): Promise<{ url: string; hits: Hit[]; close(): Promise<void> }> {
  const hits: Hit[] = [];
  const seen = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      hits.push({ path: req.url!, headers: req.headers });
      const m = /^\/flaky\/(\d+)\/([^/?]+)/.exec(req.url!);
      if (m) {
        const n = (seen.get(m[2]) ?? 0) + 1;
        seen.set(m[2], n);
        if (n <= Number(m[1])) return void res.writeHead(500).end("not yet");
      }
      res.writeHead(200).end("ok");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return { url: `http://127.0.0.1:${port}`, hits, close: () => new Promise((r) => server.close(() => r())) };
}

function randomHex(bytes: number): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

interface Setup {
  db: TestDb;
  server: ServerProcess;
  client: FairwayClient;
  signingSecret: string;
  importLog: string;
}

async function setup(env: Record<string, string>): Promise<Setup> {
  const db = await createTestDb({ max: 2 });
  const dir = mkdtempSync(join(tmpdir(), "fairway-imports-"));
  const importLog = join(dir, "imports.log");
  const server = await startServerProcess({
    DATABASE_URL: db.url,
    FAIRWAY_POLL_MS: "50",
    NODE_OPTIONS: `--import ${RECORD_IMPORTS}`,
    FAIRWAY_IMPORT_LOG: importLog,
    ...env,
  });
  const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
  const tenant = await admin.tenants.create({ id: "acme", name: "Acme" });
  const client = createClient({ baseUrl: server.url, apiKey: (await admin.tenants.createKey("acme")).key });
  return { db, server, client, signingSecret: tenant.signingSecret, importLog };
}

async function teardown(s: Setup | undefined): Promise<void> {
  await s?.server.stop();
  await s?.db.drop();
}

async function finished(client: FairwayClient, jobId: string): Promise<Trigger> {
  const [t] = (
    await until(
      () => client.jobs.triggers(jobId),
      (p) => ["succeeded", "dead"].includes(p.data[0]?.status ?? ""),
      20_000,
    )
  ).data;
  return client.triggers.get(t.id);
}

function imported(log: string): string[] {
  try {
    return readFileSync(log, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

const otelSdk = (urls: string[]) =>
  urls.filter((u) => /@opentelemetry\/(sdk-trace|exporter-|otlp-|resources)|apps\/server\/src\/otel\.ts/.test(u));

async function spansFor(otlp: OtlpReceiver, pred: (s: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  return until(
    async () => otlp.spans,
    (s) => pred(s),
    20_000,
  );
}

describe("tracing on, http/protobuf", () => {
  let s: Setup;
  let otlp: OtlpReceiver;
  let rx: Awaited<ReturnType<typeof startEndpoint>>;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    rx = await startEndpoint();
    s = await setup({
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_SERVICE_NAME: "fairway-under-test",
    });
    await s.client.secrets.put("API_KEY", CANARY);
  }, 120_000);

  afterAll(async () => {
    await teardown(s);
    await otlp?.close();
    await rx?.close();
  });

  it("continues the create's trace into the delivery, whose traceparent names its exported attempt span", async () => {
    const traceId = randomHex(16);
    const callerSpan = randomHex(8);
    const job = await s.client.jobs.create(
      { name: "traced", schedule: { delayMs: 0 }, target: { url: `${rx.url}/ok?plain=${QUERY_VALUE}` } },
      { traceparent: `00-${traceId}-${callerSpan}-01`, tracestate: "vendor=abc" },
    );
    const t = await finished(s.client, job.id);
    expect(t.status).toBe("succeeded");
    const hit = rx.hits.find((h) => h.path.startsWith("/ok"))!;
    const [, gotTrace, gotSpan, flags] = String(hit.headers.traceparent).split("-");
    expect(gotTrace).toBe(traceId);
    expect(flags).toBe("01");
    expect(hit.headers.tracestate).toBe("vendor=abc");

    const spans = await spansFor(otlp, (all) => all.some((x) => x.spanId === gotSpan));
    const attempt = spans.find((x) => x.spanId === gotSpan)!;
    expect(attempt.traceId).toBe(traceId);
    expect(attempt.kind).toBe(CLIENT);
    expect(attempt.name).toBe("POST");
    expect(attempt.service).toBe("fairway-under-test");
    expect(attempt.encoding).toBe("protobuf");
    expect(attempt.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.response.status_code": 200,
      "url.full": `${rx.url}/ok?plain=REDACTED`,
      "messaging.system": "fairway",
      "messaging.operation.type": "process",
      "messaging.destination.name": "webhook",
      "fairway.tenant.id": "acme",
      "fairway.job.id": job.id,
      "fairway.trigger.id": t.id,
      "fairway.attempt": 1,
      "fairway.pool": "webhook",
    });
    expect(typeof attempt.attributes["fairway.trigger.lag_ms"]).toBe("number");

    // The create: the API's server span (a child of the caller's), its producer span, whose context the
    // job kept and the attempt is a child of.
    const producer = spans.find((x) => x.spanId === attempt.parentSpanId)!;
    expect(producer).toMatchObject({ kind: PRODUCER, name: "create webhook", traceId });
    expect(producer.attributes).toMatchObject({
      "messaging.operation.type": "send",
      "fairway.job.id": job.id,
      "fairway.tenant.id": "acme",
    });
    const request = spans.find((x) => x.spanId === producer.parentSpanId)!;
    expect(request).toMatchObject({ kind: SERVER, name: "POST /v1/jobs", parentSpanId: callerSpan, traceId });
    expect(request.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/jobs",
      "http.response.status_code": 201,
      "fairway.tenant.id": "acme",
    });
    // The settle, a child of the attempt, once it landed.
    const settle = await spansFor(otlp, (all) => all.some((x) => x.name === "settle" && x.parentSpanId === gotSpan));
    expect(settle.find((x) => x.parentSpanId === gotSpan)!.attributes).toMatchObject({
      "fairway.settle.status": "succeeded",
      "fairway.settle.landed": true,
      "fairway.trigger.id": t.id,
    });
  });

  it("makes retries sibling attempt spans under the same parent, each with its own traceparent", async () => {
    const traceId = randomHex(16);
    const job = await s.client.jobs.create(
      {
        name: "retried",
        schedule: { delayMs: 0 },
        target: { url: `${rx.url}/flaky/2/r1` },
        retry: { maxAttempts: 3, initialDelayMs: 50, maxDelayMs: 100 },
      },
      { traceparent: `00-${traceId}-${randomHex(8)}-01` },
    );
    const t = await finished(s.client, job.id);
    expect(t.attempts!.map((a) => a.httpStatus)).toEqual([500, 500, 200]);
    const sent = rx.hits.filter((h) => h.path.startsWith("/flaky/2/r1")).map((h) => String(h.headers.traceparent));
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((p) => p.split("-")[1]))).toEqual(new Set([traceId]));
    const ids = sent.map((p) => p.split("-")[2]);
    expect(new Set(ids).size).toBe(3);
    // The attempts' traceparents are in the sent request the history keeps, as sent.
    expect(t.attempts!.map((a) => a.request?.headers.traceparent)).toEqual(sent);
    const spans = await spansFor(otlp, (all) => ids.every((id) => all.some((x) => x.spanId === id)));
    const attempts = ids.map((id) => spans.find((x) => x.spanId === id)!);
    expect(new Set(attempts.map((a) => a.parentSpanId)).size).toBe(1);
    expect(attempts.map((a) => a.attributes["fairway.attempt"])).toEqual([1, 2, 3]);
    expect(attempts.map((a) => a.attributes["error.type"] ?? null)).toEqual(["500", "500", null]);
    expect(attempts.map((a) => a.status)).toEqual([2, 2, 0]);
  });

  it("starts a cron fire's own trace, linked to the create's", async () => {
    const traceId = randomHex(16);
    const job = await s.client.jobs.create(
      { name: "cron", schedule: { cron: "* * * * * *", timezone: "UTC" }, target: { url: `${rx.url}/cron` } },
      { traceparent: `00-${traceId}-${randomHex(8)}-01` },
    );
    await until(
      async () => rx.hits.filter((h) => h.path === "/cron").length,
      (n) => n >= 1,
      20_000,
    );
    await s.client.jobs.pause(job.id);
    const hit = rx.hits.find((h) => h.path === "/cron")!;
    const [, fireTrace, fireSpan] = String(hit.headers.traceparent).split("-");
    expect(fireTrace).not.toBe(traceId);
    const spans = await spansFor(otlp, (all) => all.some((x) => x.spanId === fireSpan));
    const attempt = spans.find((x) => x.spanId === fireSpan)!;
    const producer = spans.find((x) => x.kind === PRODUCER && x.attributes["fairway.job.id"] === job.id)!;
    expect(attempt.links).toEqual([{ traceId, spanId: producer.spanId }]);
  });

  it("exports no secret value, secret reference, signing secret or query value", async () => {
    const job = await s.client.jobs.create({
      name: "secretive",
      schedule: { delayMs: 0 },
      target: {
        url: `${rx.url}/s/\${secrets.API_KEY}?key=\${secrets.API_KEY}&other=${QUERY_VALUE}`,
        headers: { authorization: "Bearer ${secrets.API_KEY}" },
      },
    });
    const t = await finished(s.client, job.id);
    expect(t.status).toBe("succeeded");
    const sentTo = rx.hits.find((h) => h.path.startsWith("/s/"))!;
    expect(sentTo.path).toContain(CANARY); // the value went on the wire, and nowhere else
    const traceSpan = String(sentTo.headers.traceparent).split("-")[2];
    const spans = await spansFor(otlp, (all) => all.some((x) => x.spanId === traceSpan));
    expect(spans.find((x) => x.spanId === traceSpan)!.attributes["url.full"]).toBe(
      `${rx.url}/s/REDACTED?key=REDACTED&other=REDACTED`,
    );
    // Every byte the exporter sent, both decoded and raw.
    const everything = [...otlp.bodies.map((b) => b.toString("latin1")), JSON.stringify(otlp.spans)].join("\n");
    const signingKey = s.signingSecret.replace(/^whsec_/, "");
    for (const needle of [CANARY, QUERY_VALUE, "secrets.API_KEY", signingKey, signingKey.slice(0, 12), "Bearer"])
      expect(everything).not.toContain(needle);
  });

  it("loads the SDK and the exporter (the control for the tracing-off check below)", () => {
    expect(otelSdk(imported(s.importLog)).length).toBeGreaterThan(0);
  });
});

describe("tracing on, http/json", () => {
  let s: Setup;
  let otlp: OtlpReceiver;
  let rx: Awaited<ReturnType<typeof startEndpoint>>;

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    rx = await startEndpoint();
    s = await setup({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${otlp.url}/v1/traces`,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
  }, 120_000);

  afterAll(async () => {
    await teardown(s);
    await otlp?.close();
    await rx?.close();
  });

  it("exports the same spans in OTLP's JSON encoding", async () => {
    const traceId = randomHex(16);
    const job = await s.client.jobs.create(
      { name: "json", schedule: { delayMs: 0 }, target: { url: `${rx.url}/ok` } },
      { traceparent: `00-${traceId}-${randomHex(8)}-01` },
    );
    await finished(s.client, job.id);
    const span = String(rx.hits[0].headers.traceparent).split("-")[2];
    const spans = await spansFor(otlp, (all) => all.some((x) => x.spanId === span));
    const attempt = spans.find((x) => x.spanId === span)!;
    expect(attempt).toMatchObject({ traceId, kind: CLIENT, encoding: "json", service: "fairway" });
    expect(attempt.attributes).toMatchObject({ "fairway.job.id": job.id, "http.response.status_code": 200 });
  });
});

describe("tracing off", () => {
  let s: Setup;
  let rx: Awaited<ReturnType<typeof startEndpoint>>;

  beforeAll(async () => {
    rx = await startEndpoint();
    s = await setup({});
  }, 120_000);

  afterAll(async () => {
    await teardown(s);
    await rx?.close();
    rmSync(join(s.importLog, ".."), { recursive: true, force: true });
  });

  it("forwards the create's traceparent as it came, and loads no OpenTelemetry SDK or exporter", async () => {
    const parent = `00-${randomHex(16)}-${randomHex(8)}-01`;
    const job = await s.client.jobs.create(
      { name: "untraced", schedule: { delayMs: 0 }, target: { url: `${rx.url}/ok` } },
      { traceparent: parent, tracestate: "k=v" },
    );
    await finished(s.client, job.id);
    expect(rx.hits[0].headers.traceparent).toBe(parent);
    expect(rx.hits[0].headers.tracestate).toBe("k=v");
    const urls = imported(s.importLog);
    expect(urls.some((u) => u.includes("apps/server/src/server.ts"))).toBe(true); // the log works
    expect(otelSdk(urls)).toEqual([]);
  });

  it("keeps a batch create's traceparent with every job of the batch", async () => {
    const parent = `00-${randomHex(16)}-${randomHex(8)}-01`;
    const { results } = await s.client.jobs.createMany(
      [1, 2].map((n) => ({ name: `batch-${n}`, schedule: { delayMs: 0 }, target: { url: `${rx.url}/batch/${n}` } })),
      { traceparent: parent },
    );
    for (const r of results) if ("job" in r) await finished(s.client, r.job.id);
    expect(results.every((r) => "job" in r)).toBe(true);
    const hits = rx.hits.filter((h) => h.path.startsWith("/batch/"));
    expect(hits.map((h) => h.headers.traceparent)).toEqual([parent, parent]);
  });

  it("sends no traceparent for a job created without one, and ignores a malformed one", async () => {
    const job = await s.client.jobs.create(
      { name: "plain", schedule: { delayMs: 0 }, target: { url: `${rx.url}/plain` } },
      { traceparent: "00-not-a-trace-01" },
    );
    await finished(s.client, job.id);
    const hit = rx.hits.find((h) => h.path === "/plain")!;
    expect(hit.headers.traceparent).toBeUndefined();
  });
});
