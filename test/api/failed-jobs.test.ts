// A one-time job whose trigger ended dead reads `failed`, not `completed`: in GET /v1/jobs/:id, in the
// ?status= filter and in the live-jobs count; a replay of that trigger makes it active again until the
// trigger ends again. Real API over HTTP, a real executor, a real receiver, real Postgres.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFetchTransport, Executor } from "@fairway/executor";
import { claim, markSending, query, sql } from "@fairway/store";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";
import { startApi, type ApiHarness } from "./harness.ts";

let h: ApiHarness;
let rx: Receiver;
let key: string;
beforeAll(async () => {
  h = await startApi();
  rx = await startReceiver();
  key = await h.tenant("acme");
});
afterAll(async () => {
  await h?.close();
  await rx?.close();
});

const once = async (name: string, path: string, extra: Record<string, unknown> = {}) => {
  const r = await h.call(key, "POST", "/v1/jobs", {
    name,
    type: "once-q",
    ...extra,
    schedule: { delayMs: 0 },
    target: { url: rx.url + path },
    retry: { maxAttempts: 1 },
  });
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
};
const statusOf = async (id: string) => (await h.call(key, "GET", `/v1/jobs/${id}`)).json.status as string;
const listed = async (status: string) =>
  ((await h.call(key, "GET", `/v1/jobs?status=${status}`)).json.data as { id: string }[]).map((j) => j.id).sort();
/** The maxJobs counter (tenant_counters), checked against the live jobs GET /v1/quota counts. */
const liveJobs = async () => {
  const [c] = await query<{ n: number }>(
    h.db,
    sql`SELECT live_jobs AS n FROM tenant_counters WHERE tenant_id = 'acme'`,
  );
  expect((await h.call(key, "GET", "/v1/quota")).json.usage.jobs).toBe(c.n);
  return c.n;
};

async function runUntilSettled(ids: string[], done: (statuses: string[]) => boolean) {
  const ex = new Executor({
    db: h.db,
    transport: createFetchTransport(),
    pollMs: 10,
    reapEveryMs: 10,
    allowPrivateTargets: true,
  });
  ex.start();
  try {
    return await until(() => Promise.all(ids.map(statusOf)), done, 20_000, "the one-time jobs ended");
  } finally {
    await ex.stop(1000);
  }
}

describe("a one-time job whose trigger ended dead", () => {
  it("reads failed (a success reads completed); replaying its trigger makes it active, then completed", async () => {
    const rejected = await once("rejected", "/status/400"); // 4xx: not retried, dead at once
    const flaky = await once("flaky", "/flaky/1/failed-jobs"); // 500 once (its only attempt), then 200
    const fine = await once("fine", "/ok");
    expect(await liveJobs()).toBe(3);

    const ended = await runUntilSettled([rejected, flaky, fine], (s) => s.every((x) => x !== "active"));
    expect(ended).toEqual(["failed", "failed", "completed"]);
    expect(await listed("failed")).toEqual([rejected, flaky].sort());
    expect(await listed("completed")).toEqual([fine]);
    expect(await listed("active")).toEqual([]);
    // Not live any more, like a completed job: none counts against maxJobs.
    expect(await liveJobs()).toBe(0);
    // Lifecycle actions answer 409 with a code that says why, as for a completed job.
    for (const path of [`/v1/jobs/${rejected}/run`, `/v1/jobs/${rejected}/pause`, `/v1/jobs/${rejected}/resume`]) {
      const r = await h.call(key, "POST", path);
      expect([path, r.status, r.json.error.code]).toEqual([path, 409, "job_failed"]);
    }

    // Replay the flaky job's dead trigger: the job is active (and live) again until the trigger ends.
    const [dead] = (await h.call(key, "GET", `/v1/dead-letters?jobId=${flaky}`)).json.data;
    expect(dead.status).toBe("dead");
    expect((await h.call(key, "POST", `/v1/triggers/${dead.id}/replay`)).status).toBe(200);
    expect(await statusOf(flaky)).toBe("active");
    expect(await liveJobs()).toBe(1);

    const after = await runUntilSettled([flaky], ([s]) => s !== "active");
    expect(after).toEqual(["completed"]);
    expect(await listed("failed")).toEqual([rejected]);
    expect(await listed("completed")).toEqual([fine, flaky].sort());
    expect(await liveJobs()).toBe(0);

    // A failed job may still be deleted (cancelled, kept for history); the live count stays put.
    expect((await h.call(key, "DELETE", `/v1/jobs/${rejected}`)).json.status).toBe("cancelled");
    expect(await liveJobs()).toBe(0);
  });
});

describe("a one-time job whose trigger the reaper ends", () => {
  it("is failed when its lease expired with attempts exhausted, and when an at-most-once run was lost in flight", async () => {
    const expired = await once("expired", "/ok");
    const lost = await once("lost", "/ok", { delivery: "at_most_once" });
    const before = await liveJobs();
    // An executor that claimed both and died: the at-most-once one after it recorded sending.
    const claimed = await claim(h.db, { type: "once-q", budget: 10, owner: "gone", leaseMs: 60_000 });
    expect(claimed.map((c) => c.jobId).sort()).toEqual([expired, lost].sort());
    const sent = claimed.find((c) => c.jobId === lost)!;
    expect(await markSending(h.db, sent)).toBe(true);
    const past = sql`now() - interval '1 second'`;
    await query(h.db, sql`UPDATE triggers SET lease_expires_at = ${past} WHERE status = 'running'`);
    await query(h.db, sql`UPDATE leases SET expires_at = ${past}`);

    const ended = await runUntilSettled([expired, lost], (s) => s.every((x) => x !== "active"));
    expect(ended).toEqual(["failed", "failed"]);
    const outcomes = await query<{ job_id: string; status: string; reason: string | null }>(
      h.db,
      sql`SELECT job_id, status, reason FROM triggers WHERE job_id IN (${expired}, ${lost}) ORDER BY job_id = ${lost}`,
    );
    expect(outcomes.map((t) => [t.status, t.reason])).toEqual([
      ["dead", "attempts_exhausted"],
      ["unknown", "lost_in_flight"],
    ]);
    expect(await liveJobs()).toBe(before - 2);
  });
});
