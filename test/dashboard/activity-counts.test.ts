// The Activity figures against the attempt records they summarize: over real deliveries (a real
// executor and receiver), every bucket's attempts, failures and dead letters add up to the `attempts`
// view and the dead triggers of the triggers created in the range; and a burst bigger than a bucket's
// sample (many run-nows in one second) is scaled by the bucket's counted size, exact when every
// trigger made one attempt.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMemoryCoordinator } from "@fairway/coord";
import { activitySeries, query, sql } from "@fairway/store";
import { startApi, type ApiHarness } from "../api/harness.ts";
import { startExecutor } from "../flow/executor.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";

let api: ApiHarness;
let rx: Receiver;
let stop: () => Promise<void>;
beforeAll(async () => {
  rx = await startReceiver();
  const coordinator = createMemoryCoordinator();
  api = await startApi({ coordinator });
  stop = startExecutor(api.db, coordinator);
});
afterAll(async () => {
  await stop?.();
  await api?.close();
  await rx?.close();
});

const HOUR = { bucketMs: 60_000, count: 60 };
const sum = (a: Awaited<ReturnType<typeof activitySeries>>, k: "deliveries" | "failures" | "dead") =>
  a.buckets.reduce((s, b) => s + b[k], 0);

async function records(tenantId: string) {
  const [r] = await query<{ attempts: number; failed: number; dead: number }>(
    api.db,
    sql`SELECT (SELECT count(*)::int FROM attempts WHERE tenant_id = ${tenantId}) AS attempts,
               (SELECT count(*)::int FROM attempts WHERE tenant_id = ${tenantId} AND outcome <> 'success') AS failed,
               (SELECT count(*)::int FROM triggers WHERE tenant_id = ${tenantId} AND status = 'dead') AS dead`,
  );
  return r!;
}

async function settled(key: string, jobIds: string[], triggers: number) {
  await until(
    async () => {
      const all = await Promise.all(jobIds.map((id) => api.call(key, "GET", `/v1/jobs/${id}/triggers?limit=200`)));
      return all.flatMap((r) => r.json.data as Array<{ status: string }>);
    },
    (ts) => ts.length === triggers && ts.every((t) => t.status === "succeeded" || t.status === "dead"),
    60_000,
    "every trigger settled",
  );
}

describe("Activity figures", () => {
  it("add up to the attempts and dead letters of the range, retries and replays included", async () => {
    const key = await api.tenant("counts");
    const job = (name: string, path: string, maxAttempts: number) =>
      api.call(key, "POST", "/v1/jobs", {
        name,
        schedule: { cron: "0 0 1 1 *" },
        target: { url: `${rx.url}${path}` },
        retry: { maxAttempts, initialDelayMs: 100, maxDelayMs: 100 },
      });
    const ok = (await job("ok", "/ok", 1)).json.id as string;
    const refused = (await job("refused", "/status/400", 3)).json.id as string;
    const flaky = (await job("flaky", "/status/503", 3)).json.id as string;
    for (const id of [ok, ok, refused, refused, refused, flaky]) await api.call(key, "POST", `/v1/jobs/${id}/run`);
    await settled(key, [ok, refused, flaky], 6);
    // A replay adds attempts to a trigger created earlier: they count with it.
    const dead = (await api.call(key, "GET", `/v1/dead-letters?jobId=${refused}`)).json.data[0].id as string;
    await api.call(key, "POST", `/v1/triggers/${dead}/replay`);
    await settled(key, [ok, refused, flaky], 6);

    const want = await records("counts");
    expect(want).toEqual({ attempts: 2 + 3 + 1 + 3, failed: 3 + 1 + 3, dead: 4 });
    const a = await activitySeries(api.db, { nowMs: Date.now(), ...HOUR, perBucket: 200, tenantId: "counts" });
    expect([sum(a, "deliveries"), sum(a, "failures"), sum(a, "dead")]).toEqual([want.attempts, want.failed, want.dead]);
    expect(a.buckets.some((b) => b.estimated)).toBe(false);
    const fleet = await activitySeries(api.db, { nowMs: Date.now(), ...HOUR, perBucket: 200 });
    expect(fleet.groups.find((g) => g.name === "counts")).toMatchObject({
      deliveries: want.attempts,
      failures: want.failed,
      dead: want.dead,
    });
  });

  it("scale a burst bigger than the sample by the bucket's counted size, exact at one attempt each", async () => {
    // A database of its own: the burst's buckets hold nothing else.
    const coordinator = createMemoryCoordinator();
    const own = await startApi({ coordinator });
    const stopOwn = startExecutor(own.db, coordinator);
    try {
      const key = await own.tenant("burst", { maxInFlight: 50, consecutiveFailureLimit: 0 });
      const id = (
        await own.call(key, "POST", "/v1/jobs", {
          name: "burst",
          schedule: { cron: "0 0 1 1 *" },
          target: { url: `${rx.url}/status/400` },
          retry: { maxAttempts: 1 },
        })
      ).json.id as string;
      const runs = await Promise.all(Array.from({ length: 60 }, () => own.call(key, "POST", `/v1/jobs/${id}/run`)));
      expect(runs.filter((r) => r.status >= 300).map((r) => r.text)).toEqual([]);
      await until(
        () => own.call(key, "GET", `/v1/jobs/${id}/triggers?limit=200`),
        (r) => r.json.data.length === 60 && r.json.data.every((t: { status: string }) => t.status === "dead"),
        60_000,
        "the burst settled",
      );
      // A sample of 10 a bucket: 60 triggers created within a second, each with one failed attempt.
      const a = await activitySeries(own.db, { nowMs: Date.now(), ...HOUR, perBucket: 10 });
      expect(a.buckets.some((b) => b.estimated)).toBe(true);
      expect([sum(a, "deliveries"), sum(a, "failures"), sum(a, "dead")]).toEqual([60, 60, 60]);
      expect(a.groups).toMatchObject([{ name: "burst", deliveries: 60, failures: 60, dead: 60 }]);
    } finally {
      await stopOwn();
      await own.close();
    }
  });
});
