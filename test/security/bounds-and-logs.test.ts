// Bounds and logs: payload over the tenant's maxPayloadBytes is a 413; header count and
// size, name and URL lengths and page sizes are capped; stored response bodies are truncated. Logs are
// JSON lines carrying request, tenant, job and trigger ids — and never a key, a signing secret, or a
// failed statement's parameters, even when the database itself fails.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createLogger } from "@fairway/core";
import { createMemoryCoordinator } from "@fairway/coord";
import { createApp } from "@fairway/api";
import { createUndiciTransport } from "@fairway/executor/node";
import { MAX_RESPONSE_BYTES } from "../../packages/executor/src/transport.ts";
import { connectPostgres } from "@fairway/store";
import { ADMIN_TOKEN, createHarness, type Harness } from "./harness.ts";

let h: Harness;
let t: Awaited<ReturnType<Harness["tenant"]>>;
beforeAll(async () => {
  h = await createHarness();
  t = await h.tenant("bounds");
});
afterAll(async () => {
  await h.tdb.drop();
});

const job = (extra: Record<string, unknown> = {}) => ({
  name: "b",
  schedule: { delayMs: 60_000 },
  target: { url: "https://example.com/" },
  ...extra,
});
const code = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

describe("bounds: refused, and nothing written", () => {
  test("each limit", async () => {
    await h.call("PATCH", "/v1/admin/tenants/bounds", { body: { maxPayloadBytes: 1000 } });
    const before = await h.counts();
    const post = (body: unknown) => h.call("POST", "/v1/jobs", { token: t.key, body });
    const cases: Array<[string, Promise<Response>, number, string]> = [
      ["payload over maxPayloadBytes", post(job({ payload: "x".repeat(1001) })), 413, "payload_too_large"],
      [
        "body over the global cap",
        h.call("POST", "/v1/jobs", {
          token: t.key,
          raw: JSON.stringify(job({ payload: "x".repeat(12 * 1024 * 1024) })),
        }),
        413,
        "payload_too_large",
      ],
      ["name over 200", post(job({ name: "n".repeat(201) })), 400, "validation_error"],
      [
        "url over 2048",
        post(job({ target: { url: `https://example.com/${"u".repeat(2040)}` } })),
        400,
        "validation_error",
      ],
      [
        "21 headers",
        post(
          job({
            target: {
              url: "https://example.com/",
              headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`x-h${i}`, "v"])),
            },
          }),
        ),
        400,
        "validation_error",
      ],
      [
        "header value over 1000",
        post(job({ target: { url: "https://example.com/", headers: { "x-a": "v".repeat(1001) } } })),
        400,
        "validation_error",
      ],
      [
        "header value with a control character",
        post(job({ target: { url: "https://example.com/", headers: { "x-a": "a\u0007b" } } })),
        400,
        "validation_error",
      ],
      [
        "header injection",
        post(job({ target: { url: "https://example.com/", headers: { "x-a": "a\r\nhost: evil" } } })),
        400,
        "validation_error",
      ],
      [
        "overriding a signature header",
        post(job({ target: { url: "https://example.com/", headers: { "Webhook-Signature": "v1,forged" } } })),
        400,
        "validation_error",
      ],
      [
        "Idempotency-Key over 200",
        h.call("POST", "/v1/jobs", { token: t.key, body: job(), headers: { "idempotency-key": "k".repeat(201) } }),
        400,
        "validation_error",
      ],
      ["page size over 200", h.call("GET", "/v1/jobs?limit=201", { token: t.key }), 400, "validation_error"],
      ["page size 0", h.call("GET", "/v1/admin/tenants?limit=0"), 400, "validation_error"],
      [
        "tenant name over 200",
        h.call("POST", "/v1/admin/tenants", { body: { name: "n".repeat(201) } }),
        400,
        "validation_error",
      ],
      [
        "tenant id not a slug",
        h.call("POST", "/v1/admin/tenants", { body: { id: "../admin", name: "x" } }),
        400,
        "validation_error",
      ],
    ];
    for (const [what, res, status, errCode] of cases) {
      const r = await res;
      expect(r.status, what).toBe(status);
      expect(await code(r), what).toBe(errCode);
    }
    expect(await h.counts()).toEqual(before);
    // At the limit exactly, it is accepted (the bound is the documented one, not lower).
    expect((await post(job({ payload: "x".repeat(998) }))).status).toBe(201);
  });

  test("response bodies are kept truncated", async () => {
    const big = createServer((_req, res) => res.end("r".repeat(1024 * 1024)));
    await new Promise<void>((r) => big.listen(0, "127.0.0.1", () => r()));
    const transport = createUndiciTransport({ allowPrivate: true });
    try {
      const res = await transport({
        url: `http://127.0.0.1:${(big.address() as AddressInfo).port}/`,
        method: "POST",
        headers: {},
        body: "{}",
        signal: AbortSignal.timeout(5000),
      });
      expect(res.status).toBe(200);
      expect(res.body.length).toBe(MAX_RESPONSE_BYTES);
    } finally {
      await transport.close();
      await new Promise((r) => big.close(r));
    }
  });
});

describe("logs", () => {
  test("JSON lines with request, tenant, job and trigger ids", async () => {
    h.logs.length = 0;
    const created = await h.call("POST", "/v1/jobs", {
      token: t.key,
      body: job(),
      headers: { "x-request-id": "req-sec-1" },
    });
    const jobId = ((await created.json()) as { id: string }).id;
    const run = await h.call("POST", `/v1/jobs/${jobId}/run`, {
      token: t.key,
      headers: { "x-request-id": "req-sec-2" },
    });
    const triggerId = ((await run.json()) as { id: string }).id;
    await h.call("GET", `/v1/triggers/${triggerId}`, { token: t.key, headers: { "x-request-id": "req-sec-3" } });
    const lines = h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.requestId === "req-sec-1" && l.msg === "job created")).toMatchObject({
      tenantId: "bounds",
      jobId,
    });
    expect(lines.find((l) => l.requestId === "req-sec-2" && l.msg === "request")).toMatchObject({
      tenantId: "bounds",
      jobId,
      status: 201,
      method: "POST",
    });
    expect(lines.find((l) => l.requestId === "req-sec-3" && l.msg === "request")).toMatchObject({
      tenantId: "bounds",
      triggerId,
      status: 200,
    });
    for (const l of lines) expect(l).toHaveProperty("time");
  });

  test("an admin token pasted into a path, and a portal link split at its MAC, are not logged", async () => {
    h.logs.length = 0;
    const admin = "fwadmin_pasted_0123456789abcdef";
    const mac = "Qk9Hd3Vz1M2bQ8kR3n0pT5xYzA7cE9fG1hJ2kL3mN4o";
    await h.call("GET", `/v1/jobs/${admin}`, { token: t.key });
    await h.call("GET", `/v1/admin/tenants/${admin}`);
    await h.call("GET", `/dashboard/open/eyJ0IjoidGVuYW50In0/${mac}`, { token: null });
    const text = h.logs.join("\n");
    expect(h.logs.filter((l) => (JSON.parse(l) as { msg: string }).msg === "request")).toHaveLength(3);
    expect(text).not.toContain("pasted_0123456789");
    expect(text).not.toContain(mac);
    expect(text).toContain("/dashboard/open/[token]/[token]");
  });

  test("a failing database never puts a statement's parameters (a new secret) in the logs", async () => {
    const logs: string[] = [];
    const dead = connectPostgres(h.tdb.url, { max: 1 });
    await dead.close(); // every statement now fails inside drizzle, which wraps it with its parameters
    const app = createApp({
      db: dead.db,
      coordinator: createMemoryCoordinator(),
      adminToken: ADMIN_TOKEN,
      allowPrivateTargets: false,
      apiRatePerSecond: 0,
      log: createLogger({ write: (l) => logs.push(l) }),
    });
    const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const create = await app.request("/v1/admin/tenants", {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ id: "dbdown", name: "DB Down Co" }),
    });
    const rotate = await app.request("/v1/admin/tenants/bounds/signing-secret/rotate", {
      method: "POST",
      headers: auth,
    });
    // A closed connection is a database that is unavailable: 503 database_unavailable, logged as such.
    expect(create.status).toBe(503);
    expect(rotate.status).toBe(503);
    expect(await create.text()).not.toContain("whsec_");
    const errors = logs.filter((l) => l.includes('"msg":"database unavailable"'));
    expect(errors.length).toBe(2);
    for (const l of errors) {
      expect(l).not.toContain("whsec_");
      expect(l).not.toContain("DB Down Co"); // no parameter at all, not only the secret
      expect(JSON.parse(l)).toMatchObject({ level: "warn", query: expect.stringMatching(/tenants/) });
    }
  });
});
