// The SDK against the real server: 429s retried after the Retry-After the API sends (and surfaced as
// FairwayRateLimitError when retries are off), typed error classes, and the page iterator walking
// every page; verifyWebhook from @fairway/sdk/webhooks accepts what the server signs (pack-install
// and the e2e slice cover deliveries) and refuses tampering.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createAdminClient,
  createClient,
  FairwayConflictError,
  FairwayNotFoundError,
  FairwayRateLimitError,
  FairwayValidationError,
  type FairwayClient,
} from "@fairway/sdk";
import { verifyWebhook } from "@fairway/sdk/webhooks";
import { signWebhook } from "@fairway/core";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";

let server: ServerProcess;
let key: string;
const statuses: number[] = [];
const counting: typeof fetch = async (input, init) => {
  const res = await fetch(input, init);
  statuses.push(res.status);
  return res;
};

beforeAll(async () => {
  server = await startServerProcess({ FAIRWAY_API_RATE_PER_SECOND: "1" });
  const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
  await admin.tenants.create({ id: "acme", name: "Acme" });
  key = (await admin.tenants.createKey("acme")).key;
}, 60_000);

afterAll(async () => {
  await server?.stop();
});

describe("@fairway/sdk", () => {
  it("retries a 429 after the API's Retry-After, and reports it typed when retries are off", async () => {
    const noRetry = createClient({ baseUrl: server.url, apiKey: key, maxRetries: 0, fetch: counting });
    await noRetry.quota().catch(() => {}); // spend this second's one request (if not already spent)
    const err = await noRetry.quota().catch((e) => e);
    expect(err).toBeInstanceOf(FairwayRateLimitError);
    expect(err.code).toBe("rate_limited");
    expect(err.retryAfterMs).toBeGreaterThanOrEqual(1000);

    // Back to back, a call lands in a window another already spent (a slow machine may cross a window
    // boundary between two calls, hence a few tries): its 429 is retried, not returned.
    const retrying = createClient({ baseUrl: server.url, apiKey: key, fetch: counting });
    for (let i = 0; i < 5; i++) {
      statuses.length = 0;
      const quota = await retrying.quota();
      expect(quota.limits.maxInFlight).toBeGreaterThan(0);
      if (statuses.length > 1) break;
    }
    expect(statuses[0]).toBe(429); // the first try was refused …
    expect(statuses.at(-1)).toBe(200); // … and a retry after Retry-After succeeded
  }, 30_000);

  it("retries a 503 (a server briefly unable) honouring Retry-After as an HTTP date too", async () => {
    // A real HTTP server in front of nothing: two 503s (delta-seconds, then an HTTP date), then an answer.
    let n = 0;
    const http = createServer((_req, res) => {
      n++;
      if (n === 1) return res.writeHead(503, { "retry-after": "0" }).end();
      if (n === 2) return res.writeHead(503, { "retry-after": new Date(Date.now() - 1000).toUTCString() }).end();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [], nextCursor: null }));
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    const client = createClient({
      baseUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      apiKey: "fw_x",
    });
    expect(await client.jobs.list()).toEqual({ data: [], nextCursor: null });
    expect(n).toBe(3);
    n = 0;
    const once = createClient({
      baseUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      apiKey: "fw_x",
      maxRetries: 1,
    });
    expect((await once.jobs.list().catch((e) => e)).status).toBe(503);
    http.close();
  });

  it("throws typed errors and iterates every page", async () => {
    const client: FairwayClient = createClient({ baseUrl: server.url, apiKey: key });
    expect(await client.jobs.get("job_nope").catch((e) => e)).toBeInstanceOf(FairwayNotFoundError);
    expect(await client.jobs.create({ name: "", schedule: { delayMs: 0 } }).catch((e) => e)).toBeInstanceOf(
      FairwayValidationError,
    );
    const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
    expect(await admin.tenants.create({ id: "acme", name: "again" }).catch((e) => e)).toBeInstanceOf(
      FairwayConflictError,
    );

    const created: string[] = [];
    for (let i = 0; i < 5; i++) {
      created.push(
        (
          await client.jobs.create({
            name: `j${i}`,
            schedule: { cron: "0 3 * * *" },
            target: { url: "https://example.com/h" },
          })
        ).id,
      );
    }
    statuses.length = 0;
    const seen: string[] = [];
    for await (const job of createClient({ baseUrl: server.url, apiKey: key, fetch: counting }).jobs.all({ limit: 2 }))
      seen.push(job.id);
    expect(seen.sort()).toEqual(created.sort());
    expect(statuses.filter((s) => s === 200)).toHaveLength(3); // pages of 2, 2 and 1
  }, 60_000);

  it("fairness keys: a keyed job, an override, the defaults, and the admin's view of the same tenant", async () => {
    const client = createClient({ baseUrl: server.url, apiKey: key });
    const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken });
    const k = "team/a b"; // a slash and a space: sent URL-encoded
    const job = await client.jobs.create({
      name: "keyed",
      key: k,
      schedule: { cron: "0 3 * * *" },
      target: { url: "https://example.com/h" },
    });
    expect(job.key).toBe(k);
    expect((await client.jobs.list({ key: k })).data.map((j) => j.id)).toEqual([job.id]);
    const put = await client.keys.put(k, { maxInFlight: 2, weight: 3 });
    expect(put).toMatchObject({
      key: k,
      override: { maxInFlight: 2, weight: 3 },
      policy: { maxInFlight: 2, weight: 3 },
    });
    expect(await client.keyDefaults.update({ ratePerSecond: 5 })).toEqual({
      maxInFlight: null,
      ratePerSecond: 5,
      weight: 1,
    });
    const fair = admin.tenants.fairness("acme");
    expect((await fair.keys.get(k)).policy).toEqual({ maxInFlight: 2, ratePerSecond: 5, weight: 3 });
    expect((await fair.keys.list()).data.map((i) => i.key)).toContain(k);
    expect((await client.keys.delete(k)).override).toBeNull();
    expect(await fair.keyDefaults.update({ ratePerSecond: null })).toEqual(await client.keyDefaults.get());
    expect(await client.keys.put(k, { weight: 0 }).catch((e) => e)).toBeInstanceOf(FairwayValidationError);
  }, 60_000);

  it("verifyWebhook accepts the server's signature scheme and refuses a tampered body or an old timestamp", async () => {
    const secret = "whsec_" + Buffer.from("k".repeat(32)).toString("base64");
    const body = JSON.stringify({ id: "trg_1", payload: { a: 1 } });
    const ts = Math.floor(Date.now() / 1000);
    const headers = {
      "webhook-id": "trg_1",
      "webhook-timestamp": String(ts),
      "webhook-signature": await signWebhook({ secrets: [secret], id: "trg_1", timestampSec: ts, body }),
    };
    expect(await verifyWebhook({ secret, headers, body })).toEqual({ id: "trg_1", timestampSec: ts });
    expect(
      await verifyWebhook({
        secret: ["whsec_" + btoa("other".repeat(7)), secret],
        headers: new Headers(headers),
        body,
      }),
    ).toEqual({ id: "trg_1", timestampSec: ts });
    expect((await verifyWebhook({ secret, headers, body: body + " " }).catch((e) => e)).code).toBe("invalid_signature");
    expect((await verifyWebhook({ secret, headers, body, nowSec: ts + 301 }).catch((e) => e)).code).toBe(
      "timestamp_out_of_tolerance",
    );
    expect((await verifyWebhook({ secret, headers: {}, body }).catch((e) => e)).code).toBe("missing_headers");
  });
});
