// The vertical slice, end to end: the real server process, driven by the SDK, delivering to a real
// receiver that verifies signatures with the official `standardwebhooks` library.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdminClient, createClient, FairwayError, type FairwayClient } from "@fairway/sdk";
import { createContract } from "../support/contract.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { startServerProcess, type ServerProcess } from "../support/server-process.ts";
import { until } from "../support/until.ts";

const fast = { maxAttempts: 3, initialDelayMs: 20, maxDelayMs: 100 };

async function expectError(p: Promise<unknown>, status: number, code: string) {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(FairwayError);
  expect({ status: (err as FairwayError).status, code: (err as FairwayError).code }).toEqual({ status, code });
  expect((err as FairwayError).message.length).toBeGreaterThan(5);
}

export function verticalSlice(
  name: string,
  env: () => Promise<{ env: Record<string, string>; cleanup(): Promise<void> }>,
) {
  describe(`vertical slice: ${name}`, () => {
    let server: ServerProcess;
    let receiver: Receiver;
    let client: FairwayClient;
    let other: FairwayClient;
    let cleanup: () => Promise<void>;
    // Every response the slice sees is checked against /openapi.json (test/support/contract.ts).
    const contract = createContract();

    beforeAll(async () => {
      const e = await env();
      cleanup = e.cleanup;
      receiver = await startReceiver();
      server = await startServerProcess(e.env);
      const admin = createAdminClient({ baseUrl: server.url, adminToken: server.adminToken, fetch: contract.fetch });
      const tenant = await admin.tenants.create({ id: "acme", name: "Acme" });
      expect(tenant.signingSecret).toMatch(/^whsec_/);
      receiver.secrets = [tenant.signingSecret];
      client = createClient({
        baseUrl: server.url,
        apiKey: (await admin.tenants.createKey("acme")).key,
        fetch: contract.fetch,
      });
      await admin.tenants.create({ id: "globex", name: "Globex" });
      other = createClient({
        baseUrl: server.url,
        apiKey: (await admin.tenants.createKey("globex")).key,
        fetch: contract.fetch,
      });
    }, 90_000);

    afterAll(async () => {
      await server?.stop();
      await receiver?.close();
      await cleanup?.();
      expect(contract.failures).toEqual([]);
    });

    it("fires a one-time job as a verified webhook and records the attempt", async () => {
      const job = await client.jobs.create({
        name: "welcome-email",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/ok` },
        payload: { userId: 42 },
      });
      expect(job).toMatchObject({ status: "active", type: "webhook" });
      const [d] = await receiver.waitFor((ds) => ds.some((x) => x.path === "/ok"));
      expect(d.verified).toBe(true);
      expect(d.body).toMatchObject({ jobId: job.id, payload: { userId: 42 }, attempt: 1 });
      const page = await until(
        () => client.jobs.triggers(job.id),
        (p) => p.data[0]?.status === "succeeded",
      );
      const trigger = await client.triggers.get(page.data[0].id);
      expect(d.id).toBe(trigger.id);
      expect(trigger.attempts).toHaveLength(1);
      expect(trigger.attempts![0]).toMatchObject({
        attempt: 1,
        outcome: "success",
        httpStatus: 200,
        responseBody: "ok",
      });
      expect((await client.jobs.get(job.id)).status).toBe("completed");
    });

    it("retries a receiver that fails twice: 3 attempts, one webhook-id", async () => {
      const job = await client.jobs.create({
        name: "flaky",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/flaky/2/${name}` },
        retry: fast,
      });
      const [t] = (
        await until(
          () => client.jobs.triggers(job.id),
          (p) => p.data[0]?.status === "succeeded",
        )
      ).data;
      const full = await client.triggers.get(t.id);
      expect(full.attempts!.map((a) => [a.attempt, a.outcome, a.httpStatus])).toEqual([
        [1, "http_error", 500],
        [2, "http_error", 500],
        [3, "success", 200],
      ]);
      const ids = receiver.deliveries.filter((d) => d.path.startsWith("/flaky/2/")).map((d) => d.id);
      expect(new Set(ids)).toEqual(new Set([t.id]));
      expect(ids).toHaveLength(3);
    });

    it("dead-letters a 400 after one attempt, and replays it with the same webhook-id", async () => {
      const job = await client.jobs.create({
        name: "bad",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/status/400` },
        retry: fast,
      });
      const [t] = (
        await until(
          () => client.jobs.triggers(job.id),
          (p) => p.data[0]?.status === "dead",
        )
      ).data;
      expect(t.attemptCount).toBe(1);
      expect(t.reason).toBe("http_400");
      const dead = await client.deadLetters({ jobId: job.id });
      expect(dead.data.map((x) => x.id)).toEqual([t.id]);
      const replayed = await client.triggers.replay(t.id);
      expect(replayed.status).toBe("pending");
      const after = await until(
        () => client.triggers.get(t.id),
        (x) => x.status === "dead" && x.attemptCount === 2,
      );
      expect(after.attempts!.map((a) => a.attempt)).toEqual([1, 2]);
      expect(new Set(receiver.deliveries.filter((d) => d.path === "/status/400").map((d) => d.id))).toEqual(
        new Set([t.id]),
      );
    });

    it("dead-letters a 503-forever target after maxAttempts", async () => {
      const job = await client.jobs.create({
        name: "down",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/status/503` },
        retry: fast,
      });
      const [t] = (
        await until(
          () => client.jobs.triggers(job.id),
          (p) => p.data[0]?.status === "dead",
        )
      ).data;
      expect(t.attemptCount).toBe(3);
      expect(t.reason).toBe("attempts_exhausted");
    });

    it("fires a 6-field every-second cron job repeatedly, one trigger per instant", async () => {
      const job = await client.jobs.create({
        name: "tick",
        schedule: { cron: "* * * * * *", timezone: "Europe/Berlin" },
        target: { url: `${receiver.url}/ok?cron=tick` },
      });
      expect(job.nextFireAt).not.toBeNull();
      const got = await receiver.waitFor((ds) => ds.filter((d) => d.path === `/ok?cron=tick`).length >= 3);
      const mine = got.filter((d) => d.path === `/ok?cron=tick`);
      expect(mine.every((d) => d.verified)).toBe(true);
      const instants = mine.map((d) => (d.body as { scheduledFor: string }).scheduledFor);
      expect(new Set(instants).size).toBe(instants.length);
      expect(instants.every((i) => i.endsWith(".000Z"))).toBe(true);
      const full = await client.jobs.get(job.id);
      expect(full.nextFires).toHaveLength(5);
      await client.jobs.delete(job.id);
    });

    it("refuses bad input with a stable code and writes nothing", async () => {
      const before = (await client.jobs.list({ limit: 200 })).data.length;
      const target = { url: `${receiver.url}/ok` };
      await expectError(client.jobs.create({ name: "x", schedule: { cron: "" }, target }), 400, "invalid_cron");
      await expectError(client.jobs.create({ name: "x", schedule: { cron: "* * * *" }, target }), 400, "invalid_cron");
      await expectError(
        client.jobs.create({ name: "x", schedule: { cron: "0 0 30 2 *" }, target }),
        400,
        "invalid_cron",
      );
      await expectError(
        client.jobs.create({ name: "x", schedule: { cron: "0 9 * * *", timezone: "Mars/Olympus" }, target }),
        400,
        "invalid_timezone",
      );
      await expectError(
        client.jobs.create({ name: "x", schedule: { delayMs: 0 }, target: { url: "not a url" } }),
        400,
        "invalid_url",
      );
      await expectError(
        client.jobs.create({ name: "x", schedule: { delayMs: 0 }, target: { url: "ftp://example.com/x" } }),
        400,
        "forbidden_scheme",
      );
      await expectError(client.jobs.create({ schedule: { delayMs: 0 }, target } as never), 400, "validation_error");
      await expectError(client.jobs.create({ name: "x", schedule: { delayMs: 0 } }), 400, "validation_error");
      await expectError(
        client.jobs.create({ name: "x", schedule: { delayMs: 0 }, target, bogus: 1 } as never),
        400,
        "validation_error",
      );
      const wrongKey = createClient({ baseUrl: server.url, apiKey: "fw_not-a-real-key", fetch: contract.fetch });
      await expectError(wrongKey.jobs.list(), 401, "unauthorized");
      const adminAsTenant = createClient({ baseUrl: server.url, apiKey: server.adminToken, fetch: contract.fetch });
      await expectError(adminAsTenant.jobs.list(), 403, "forbidden");
      expect((await client.jobs.list({ limit: 200 })).data.length).toBe(before);
    });

    it("hides another tenant's jobs and triggers (404)", async () => {
      const job = await client.jobs.create({
        name: "private",
        schedule: { delayMs: 3_600_000 },
        target: { url: `${receiver.url}/ok` },
      });
      const [t] = (await client.jobs.triggers(job.id)).data;
      await expectError(other.jobs.get(job.id), 404, "not_found");
      await expectError(other.jobs.pause(job.id), 404, "not_found");
      await expectError(other.jobs.delete(job.id), 404, "not_found");
      await expectError(other.triggers.get(t.id), 404, "not_found");
      await expectError(other.triggers.replay(t.id), 404, "not_found");
      expect((await client.jobs.get(job.id)).status).toBe("active");
    });
  });
}
