// The OpenAPI contract over a broad flow: the real app on real Postgres, with an executor delivering to
// a real receiver, driven through the SDK, and every response validated against /openapi.json
// (test/support/contract.ts) — successes and errors. Every documented /v1 operation must be seen.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "@fairway/api";
import { openApiDocument } from "../../packages/api/src/route-table.ts";
import { generateSecretsKey, loadSecretsKeyring } from "@fairway/core";
import { createMemoryCoordinator } from "@fairway/coord";
import { createFetchTransport, Executor } from "@fairway/executor";
import { touchHandlerPools } from "@fairway/store";
import { createAdminClient, createClient, type FairwayError } from "@fairway/sdk";
import { createContract } from "../support/contract.ts";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";

const ADMIN = "fwadmin_contract_test_token";
const base = "http://fairway.test";
let db: TestDb;
let receiver: Receiver;
let executor: Executor;
const contract = createContract(async (input, init) => app().fetch(new Request(input, init)));
let appInstance: ReturnType<typeof createApp>;
const app = () => appInstance;

beforeAll(async () => {
  [db, receiver] = await Promise.all([createTestDb(), startReceiver()]);
  const coordinator = createMemoryCoordinator();
  const secretsKey = await loadSecretsKeyring(generateSecretsKey());
  appInstance = createApp({
    db: db.store.db,
    coordinator,
    adminToken: ADMIN,
    allowPrivateTargets: true,
    secretsKey,
    emailUnavailable: "no SMTP in this test",
  });
  executor = new Executor({
    db: db.store.db,
    transport: createFetchTransport(),
    allowPrivateTargets: true,
    pollMs: 20,
    wake: coordinator,
  }).start();
});

afterAll(async () => {
  await executor?.stop(1000);
  await receiver?.close();
  await db?.drop();
});

const fails = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as FairwayError,
  );

describe("OpenAPI contract", () => {
  it("is OpenAPI 3.1 with a response schema for every operation", () => {
    const doc = openApiDocument();
    expect(doc.openapi).toBe("3.1.0");
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(
        ops as Record<string, { responses: Record<string, { content?: object }> }>,
      )) {
        const ok = Object.entries(op.responses).find(([code]) => code.startsWith("2"));
        if (ok?.[0] === "204") continue; // No Content: nothing to describe
        expect(ok?.[1].content, `${method} ${path}`).toBeDefined();
      }
    }
  });

  it("serves /openapi.json and an interactive /docs that loads nothing from elsewhere", async () => {
    const docRes = await app().request("/openapi.json");
    expect(await docRes.json()).toEqual(JSON.parse(JSON.stringify(openApiDocument())));
    const docs = await app().request("/docs");
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toMatch(/text\/html/);
    const html = await docs.text();
    expect(html).toContain('fetch("openapi.json")');
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=/); // everything inline: no CDN
  });

  it("every response of a broad flow matches the document", async () => {
    const admin = createAdminClient({ baseUrl: base, adminToken: ADMIN, fetch: contract.fetch, maxRetries: 0 });
    const tenant = await admin.tenants.create({ id: "acme", name: "Acme" });
    receiver.secrets = [tenant.signingSecret];
    expect((await fails(admin.tenants.create({ id: "acme", name: "Again" })))?.code).toBe("tenant_exists");
    expect((await fails(admin.tenants.create({ name: "" })))?.code).toBe("validation_error");
    await admin.tenants.list();
    await admin.tenants.get("acme");
    await fails(admin.tenants.get("nope"));
    await admin.tenants.update("acme", { maxInFlight: 20 });
    // Quota plans: made, listed, changed, refused while in use, deleted.
    await admin.plans.create({ id: "pro", maxInFlight: 30, keyDefaults: { weight: 2 } });
    expect((await fails(admin.plans.create({ id: "pro" })))?.code).toBe("plan_exists");
    await admin.plans.list();
    await admin.plans.get("pro");
    await fails(admin.plans.get("nope"));
    await admin.tenants.update("acme", { plan: "pro" });
    await admin.plans.update("pro", { weight: 2, keyDefaults: null });
    expect((await fails(admin.plans.delete("pro")))?.code).toBe("plan_in_use");
    await admin.tenants.update("acme", { plan: null });
    await admin.plans.delete("pro");
    const key = await admin.tenants.createKey("acme");
    const spare = await admin.tenants.createKey("acme");
    await admin.tenants.revokeKey("acme", spare.id);
    await fails(admin.tenants.revokeKey("acme", spare.id + "x"));
    await admin.tenants.rotateSigningSecret("acme").then((r) => receiver.secrets.push(r.signingSecret));
    await admin.pools.put("webhook", { concurrency: 10, timeoutMs: 5000 });
    await fails(admin.pools.put("webhook", { concurrency: 0, timeoutMs: 5000 }));
    await admin.pools.get("webhook");
    await admin.pools.list();
    await admin.pools.patch("webhook", { timeoutMs: 6000 });
    await admin.pools.pause("paused.type");
    await admin.pools.resume("paused.type");
    await admin.tenants.signingSecret("acme");
    await admin.tenants.portalLink("acme");
    await admin.tenants.revokePortalSessions("acme");
    await admin.executors();
    await admin.reencryptSecrets();
    await touchHandlerPools(db.store.db, ["email.send"]);
    await admin.stats();
    await fails(
      createAdminClient({ baseUrl: base, adminToken: "wrong-token-xxxxxxxx", fetch: contract.fetch }).stats(),
    );

    const client = createClient({ baseUrl: base, apiKey: key.key, fetch: contract.fetch, maxRetries: 0 });
    await fails(createClient({ baseUrl: base, apiKey: "fw_nope", fetch: contract.fetch }).quota());
    const ok = await client.jobs.create(
      {
        name: "ok",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/ok`, headers: { "x-a": "1" } },
        payload: { a: 1 },
      },
      { idempotencyKey: "k1" },
    );
    await client.jobs.create(
      {
        name: "ok",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/ok`, headers: { "x-a": "1" } },
        payload: { a: 1 },
      },
      { idempotencyKey: "k1" },
    );
    expect(
      (
        await fails(
          client.jobs.create(
            { name: "other", schedule: { delayMs: 0 }, target: { url: `${receiver.url}/ok` } },
            { idempotencyKey: "k1" },
          ),
        )
      )?.code,
    ).toBe("idempotency_conflict");
    expect(
      (
        await fails(
          client.jobs.create({ name: "bad", schedule: { cron: "61 * * * *" }, target: { url: `${receiver.url}/ok` } }),
        )
      )?.code,
    ).toBe("invalid_cron");
    const dead = await client.jobs.create({
      name: "dead",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/status/500` },
      retry: { maxAttempts: 1 },
    });
    const cron = await client.jobs.create({
      name: "cron",
      schedule: { cron: "0 3 * * *", timezone: "Europe/Berlin" },
      target: { url: `${receiver.url}/ok` },
    });
    const mail = await client.jobs.create({
      name: "mail",
      type: "email.send",
      schedule: { at: new Date(Date.now() + 3_600_000) },
      payload: { to: "x" },
    });

    await until(
      () => client.jobs.triggers(ok.id),
      (p) => p.data[0]?.status === "succeeded",
    );
    const deadPage = await until(
      () => client.deadLetters(),
      (p) => p.data.length === 1,
    );
    await client.deadLetters({ jobId: dead.id });
    await client.triggers.get(deadPage.data[0].id);
    await client.triggers.replay(deadPage.data[0].id);
    expect((await fails(client.triggers.replay((await client.jobs.triggers(ok.id)).data[0].id)))?.code).toBe(
      "not_dead",
    );
    await fails(client.triggers.get("trg_nope"));
    // One trigger: a re-run of the succeeded one with another payload, a cancel of a pending one, and
    // each verb's 409.
    const okTrigger = (await client.jobs.triggers(ok.id)).data[0]!;
    expect((await client.triggers.rerun(okTrigger.id, { payload: { edited: true } })).rerunOf).toBe(okTrigger.id);
    const soon = await client.jobs.create({
      name: "soon",
      schedule: { at: new Date(Date.now() + 3_600_000) },
      target: { url: `${receiver.url}/ok` },
    });
    const pending = (await client.jobs.triggers(soon.id)).data[0]!;
    const batch = await client.jobs.createMany([
      { name: "b1", schedule: { delayMs: 3_600_000 }, target: { url: `${receiver.url}/ok` }, idempotencyKey: "b1" },
      { name: "", schedule: { delayMs: 3_600_000 }, target: { url: `${receiver.url}/ok` } },
    ]);
    expect(batch.results.map((r) => r.status)).toEqual([201, 400]);
    await client.jobs.delete((batch.results[0] as { job: { id: string } }).job.id);
    expect((await fails(client.triggers.rerun(pending.id)))?.code).toBe("trigger_not_finished");
    expect((await client.triggers.cancel(pending.id)).status).toBe("cancelled");
    expect((await fails(client.triggers.cancel(pending.id)))?.code).toBe("trigger_finished");
    // Its one dead letter (replayed above, and maybe dead again by now): none is left after this.
    expect(await client.replayDeadLetters(dead.id)).toMatchObject({ jobId: dead.id, remaining: 0 });
    await fails(client.replayDeadLetters("job_nope"));
    await client.jobs.list({ failing: true });

    await client.jobs.list({ limit: 2 });
    for await (const _ of client.jobs.all({ limit: 2 })) void _;
    await client.jobs.get(cron.id);
    await fails(client.jobs.get("job_nope"));
    await client.jobs.update(cron.id, { name: "cron2" });
    await fails(client.jobs.update(cron.id, { timeoutMs: 1 }));
    await client.jobs.pause(cron.id);
    await client.jobs.resume(cron.id);
    const manual = await client.jobs.run(cron.id);
    await until(
      () => client.triggers.get(manual.id),
      (t) => t.status === "succeeded",
    );
    await client.jobs.triggers(cron.id);
    await client.quota();
    const channel = await client.notificationChannels.create({
      type: "webhook",
      url: `${receiver.url}/ok`,
      events: ["trigger.dead"],
    });
    expect((await fails(client.notificationChannels.create({ type: "email", to: "ops@example.com" })))?.code).toBe(
      "email_unavailable",
    );
    await client.notificationChannels.list();
    await client.notificationChannels.test(channel.id);
    await until(
      () => client.notifications(),
      (p) => p.data[0]?.status === "sent",
    );
    await client.notifications({ event: "notification.test", limit: 5 });
    await client.notificationChannels.delete(channel.id);
    await fails(client.notificationChannels.test(channel.id));
    await client.secrets.put("API_KEY", "canary-value");
    await client.secrets.list();
    await client.secrets.delete("API_KEY");
    await fails(client.secrets.delete("API_KEY"));
    // Fairness keys: the tenant's routes and the admin's.
    await client.jobs.create({
      name: "keyed",
      key: "customer/42",
      schedule: { cron: "0 3 * * *" },
      target: { url: `${receiver.url}/ok` },
    });
    await client.jobs.list({ key: "customer/42" });
    await client.keys.put("customer/42", { maxInFlight: 2, weight: 3 });
    expect((await fails(client.keys.put("customer/42", { maxInFlight: 0 })))?.code).toBe("validation_error");
    await client.keys.get("customer/42");
    await client.keys.list({ limit: 10 });
    await client.keys.delete("customer/42");
    await client.keyDefaults.update({ ratePerSecond: 5 });
    expect((await fails(client.keyDefaults.update({ weight: 0 })))?.code).toBe("validation_error");
    await client.keyDefaults.get();
    const fair = admin.tenants.fairness("acme");
    await fair.keys.put("customer/7", { ratePerSecond: null });
    await fair.keys.get("customer/7");
    await fair.keys.list();
    await fair.keys.delete("customer/7");
    await fair.keyDefaults.update({ ratePerSecond: null });
    await fair.keyDefaults.get();
    await fails(admin.tenants.fairness("nope").keyDefaults.get());
    // Flow control: a debounced create and its fold (201, then 200), a backfill listed, read, cancelled.
    const debounce = { key: "account-1", periodMs: 600_000 };
    const target = { url: `${receiver.url}/ok` };
    await client.jobs.create({ name: "deb", schedule: { delayMs: 0 }, target, debounce });
    await client.jobs.create({ name: "deb", schedule: { delayMs: 0 }, target, debounce });
    const hour = Math.floor(Date.now() / 3_600_000) * 3_600_000;
    const range = { from: new Date(hour - 3 * 86_400_000), to: new Date(hour) };
    const backfill = await client.jobs.backfill(cron.id, range);
    expect((await fails(client.jobs.backfill(mail.id, range)))?.code).toBe("backfill_not_cron");
    await client.jobs.backfills(cron.id);
    await client.backfills.get(backfill.id);
    await client.backfills.cancel(backfill.id);
    await fails(client.backfills.get("bf_nope"));
    await contract.fetch(`${base}/v1/metrics`, { headers: { authorization: `Bearer ${key.key}` } });
    await client.jobs.delete(cron.id);
    await fails(client.jobs.pause("job_nope"));

    expect(contract.failures).toEqual([]);
    const seenOps = new Set([...contract.seen].map((s) => s.split(" ").slice(0, 2).join(" ")));
    expect(contract.operations().filter((op) => !seenOps.has(op))).toEqual([]);
    // Errors were validated too, not only successes.
    for (const status of [400, 401, 404, 409])
      expect(
        [...contract.seen].some((s) => s.endsWith(` ${status}`)),
        String(status),
      ).toBe(true);
  }, 60_000);
});
