// One trigger, not the whole job, on the embedded default and on a real Postgres, through the SDK
// against the server process and a real receiver: a cancelled pending trigger is never delivered; a
// cancelled running one is cut at the receiver, its attempt recorded `cancelled` and never retried; a
// re-run of a succeeded trigger with an edited payload (or a request target's body) is delivered once
// with it while the job keeps its own; and the 409s. "Never" and "once" are read after a later job's
// delivery, never from a wall-clock wait.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, FairwayError, type FairwayClient, type Trigger } from "@fairway/sdk";
import { jsonApi, serverBackends } from "../support/backends.ts";
import { startFairway, type FairwayProcess } from "../support/fairway-process.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";

const ADMIN = `fwadmin_trigger_verbs_${Date.now()}`;
const HOLD_MS = 40_000;

describe.each(serverBackends)("cancel and re-run one trigger on %s", (_name, backend) => {
  let server: FairwayProcess;
  let rx: Receiver;
  let done: () => Promise<void>;
  let client: FairwayClient;
  let key: string;
  const api = jsonApi(() => server.url);
  const bodiesAt = (path: string) => rx.deliveries.filter((d) => d.path === path);
  const triggerOf = async (jobId: string) => (await client.jobs.triggers(jobId)).data[0]!;
  /** A job due now at `path`; waits for its delivery: whatever was due before it has been decided. */
  const marker = async (path: string) => {
    await client.jobs.create({ name: "marker", schedule: { delayMs: 0 }, target: { url: `${rx.url}${path}` } });
    await rx.waitFor(() => bodiesAt(path).length === 1, 30_000);
  };
  const refused = async (p: Promise<unknown>) => {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FairwayError);
    const e = err as FairwayError;
    return [e.status, e.code];
  };

  beforeAll(async () => {
    const b = await backend();
    done = b.done;
    rx = await startReceiver();
    server = await startFairway({ ...b.env, FAIRWAY_ADMIN_TOKEN: ADMIN });
    const tenant = await api(ADMIN, "POST", "/v1/admin/tenants", { id: "acme", name: "Acme" });
    rx.secrets = [tenant.json.signingSecret];
    key = (await api(ADMIN, "POST", "/v1/admin/tenants/acme/keys")).json.key;
    client = createClient({ baseUrl: server.url, apiKey: key });
    // Long enough that the slow request is cut by the cancel, not by its timeout.
    const pool = await api(ADMIN, "PUT", "/v1/admin/pools/webhook", {
      concurrency: 10,
      timeoutMs: HOLD_MS + 10_000,
      leaseMs: HOLD_MS + 20_000,
    });
    expect(pool.status, JSON.stringify(pool.json)).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rx?.close();
    await done?.();
  });

  it("a cancelled pending trigger is never delivered; its one-time job ends cancelled; a second cancel is 409", async () => {
    const job = await client.jobs.create({
      name: "later",
      schedule: { delayMs: 1500 },
      target: { url: `${rx.url}/ok/cancelled-pending` },
    });
    const pending = await triggerOf(job.id);
    expect(pending.status).toBe("pending");
    const cancelled = await client.triggers.cancel(pending.id);
    expect([cancelled.status, cancelled.reason, cancelled.finishedAt !== null]).toEqual([
      "cancelled",
      "cancelled_by_user",
      true,
    ]);
    expect((await client.jobs.get(job.id)).status).toBe("cancelled");
    expect(await refused(client.triggers.cancel(pending.id))).toEqual([409, "trigger_finished"]);
    expect(await refused(client.triggers.cancel("trg_01JD0000000000000000000000"))).toEqual([404, "not_found"]);

    // A job due after the cancelled one would have been is delivered: the cancelled one never was.
    await until(
      () => Date.now(),
      (now) => now > Date.parse(pending.scheduledFor),
      10_000,
    );
    await marker("/ok/after-pending");
    expect(bodiesAt("/ok/cancelled-pending")).toEqual([]);
    expect((await client.triggers.get(pending.id)).attempts).toEqual([]);
  });

  it("a cancelled running trigger is cut at the receiver, its attempt recorded cancelled, never retried", async () => {
    const path = `/slow/${HOLD_MS}`;
    const job = await client.jobs.create({
      name: "slow",
      schedule: { delayMs: 0 },
      target: { url: `${rx.url}${path}` },
      retry: { maxAttempts: 5, initialDelayMs: 10, maxDelayMs: 100 },
    });
    await until(
      () => rx.open.get(path) ?? 0,
      (n) => n === 1,
      30_000,
      "the slow request in flight",
    );
    const running = await triggerOf(job.id);
    expect(running.status).toBe("running");
    const cancelled = await client.triggers.cancel(running.id);
    expect([cancelled.status, cancelled.reason]).toEqual(["cancelled", "cancelled_by_user"]);
    await until(
      () => rx.cut,
      (cut) => cut.includes(path),
      30_000,
      "the request cut at the receiver",
    );

    await marker("/ok/after-running");
    const after = await client.triggers.get(running.id);
    expect([after.status, after.reason, after.attemptCount]).toEqual(["cancelled", "cancelled_by_user", 1]);
    expect(after.attempts!.map((a) => a.outcome)).toEqual(["cancelled"]);
    expect(bodiesAt(path)).toHaveLength(1);
    expect((await client.jobs.get(job.id)).status).toBe("cancelled");
    // The tenant's running count left with it: once the marker is settled, nothing is running.
    await until(
      () => client.quota(),
      (q) => q.usage.running === 0,
      30_000,
      "nothing running",
    );
  });

  it("re-runs a succeeded trigger with an edited payload, delivered once with it, the job keeping its own", async () => {
    const job = await client.jobs.create({
      name: "report",
      schedule: { delayMs: 0 },
      target: { url: `${rx.url}/ok/rerun` },
      payload: { version: 1 },
    });
    await rx.waitFor(() => bodiesAt("/ok/rerun").length === 1, 30_000);
    const first = await until(
      () => triggerOf(job.id),
      (t) => t.status === "succeeded",
      30_000,
    );
    expect(await refused(client.triggers.rerun(first.id, { body: { x: 1 } }))).toEqual([400, "body_not_allowed"]);

    const rerun = await client.triggers.rerun(first.id, { payload: { version: 2 } });
    expect([rerun.triggeredBy, rerun.kind, rerun.rerunOf, rerun.jobId]).toEqual(["rerun", "rerun", first.id, job.id]);
    expect(rerun.id).not.toBe(first.id);
    const ended = await until(
      () => client.triggers.get(rerun.id),
      (t: Trigger) => t.status === "succeeded",
      30_000,
    );
    expect(ended.attempts!.map((a) => a.outcome)).toEqual(["success"]);
    await marker("/ok/after-rerun");
    const got = bodiesAt("/ok/rerun");
    expect(got.map((d) => [d.id, (d.body as { payload: unknown }).payload, d.verified])).toEqual([
      [first.id, { version: 1 }, true],
      [rerun.id, { version: 2 }, true],
    ]);
    expect((await client.jobs.get(job.id)).payload).toEqual({ version: 1 });

    // Without an override, the job's payload; a pending or running trigger cannot be re-run.
    const plain = await client.triggers.rerun(first.id);
    await rx.waitFor(() => bodiesAt("/ok/rerun").length === 3, 30_000);
    expect((bodiesAt("/ok/rerun")[2]!.body as { payload: unknown }).payload).toEqual({ version: 1 });
    expect(bodiesAt("/ok/rerun")[2]!.id).toBe(plain.id);
    const later = await client.jobs.create({
      name: "later",
      schedule: { delayMs: 60_000 },
      target: { url: `${rx.url}/ok/never` },
    });
    expect(await refused(client.triggers.rerun((await triggerOf(later.id)).id))).toEqual([409, "trigger_not_finished"]);
    await client.jobs.delete(later.id);
  });

  it("re-runs a request target's trigger with another body", async () => {
    const job = await client.jobs.create({
      name: "request",
      schedule: { delayMs: 0 },
      target: { url: `${rx.url}/ok/request`, method: "PUT", body: { n: 1 } },
    });
    const first = await until(
      () => triggerOf(job.id),
      (t) => t.status === "succeeded",
      30_000,
    );
    await client.triggers.rerun(first.id, { body: { n: 2 } });
    await rx.waitFor(() => bodiesAt("/ok/request").length === 2, 30_000);
    expect(bodiesAt("/ok/request").map((d) => d.body)).toEqual([{ n: 1 }, { n: 2 }]);
    expect((await client.jobs.get(job.id)).target?.body).toEqual({ n: 1 });
  });
});
