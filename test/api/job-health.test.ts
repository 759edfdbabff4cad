// Failure where people look: GET /v1/jobs carries each job's last outcome and failure streak and
// filters failing jobs (?failing=true); POST /v1/dead-letters/replay replays a job's dead letters in
// bounded batches and says how many remain. Real API over HTTP, a real executor, a real receiver.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFetchTransport, Executor } from "@fairway/executor";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";
import { startApi, type ApiHarness } from "./harness.ts";

let h: ApiHarness;
let rx: Receiver;
let key: string;
let ex: Executor;
beforeAll(async () => {
  h = await startApi();
  rx = await startReceiver();
  // No auto-pause: the job below collects more dead letters in a row than the default limit.
  key = await h.tenant("health", { consecutiveFailureLimit: 0 });
  ex = new Executor({ db: h.db, transport: createFetchTransport(), pollMs: 10, allowPrivateTargets: true });
  ex.start();
});
afterAll(async () => {
  await ex?.stop(1000);
  await h?.close();
  await rx?.close();
});

type Listed = { id: string; status: string; failureStreak: number; lastRun?: { outcome: string; at: string } | null };
const list = async (q = "") => {
  const r = await h.call(key, "GET", `/v1/jobs?limit=200${q}`);
  expect(r.status, r.text).toBe(200);
  return r.json.data as Listed[];
};
const job = async (id: string) => (await list()).find((j) => j.id === id)!;
const create = async (body: Record<string, unknown>) => {
  const r = await h.call(key, "POST", "/v1/jobs", { type: "health-q", ...body });
  expect(r.status, r.text).toBe(201);
  return r.json.id as string;
};

describe("job lists show failure", () => {
  it("last outcome, failure streak, ?failing=true, and a bounded replay of all of a job's dead letters", async () => {
    const fine = await create({ name: "fine", schedule: { delayMs: 0 }, target: { url: `${rx.url}/ok` } });
    const rejected = await create({
      name: "rejected",
      schedule: { delayMs: 0 },
      target: { url: `${rx.url}/status/400` },
      retry: { maxAttempts: 1 },
    });
    // Retrying: its first attempt failed and the next is an hour away.
    const retrying = await create({
      name: "retrying",
      schedule: { delayMs: 0 },
      target: { url: `${rx.url}/status/503` },
      retry: { maxAttempts: 3, initialDelayMs: 3_600_000, maxDelayMs: 3_600_000, jitter: "none" },
    });
    // A cron job that never fires on its own here; its runs fail 105 times, then succeed.
    const flaky = await create({
      name: "flaky",
      schedule: { cron: "0 0 1 1 *" },
      target: { url: `${rx.url}/flaky/105/health` },
      retry: { maxAttempts: 1 },
    });
    expect((await job(flaky)).lastRun).toBeNull();
    for (let i = 0; i < 105; i++) expect((await h.call(key, "POST", `/v1/jobs/${flaky}/run`)).status).toBe(201);

    await until(
      () => list(),
      (js) =>
        js.find((j) => j.id === fine)?.lastRun?.outcome === "succeeded" &&
        js.find((j) => j.id === rejected)?.lastRun?.outcome === "dead_lettered" &&
        js.find((j) => j.id === retrying)?.lastRun?.outcome === "failed" &&
        js.find((j) => j.id === flaky)?.failureStreak === 105,
      60_000,
      "every job's first outcome",
    );
    const all = await list();
    const by = (id: string) => all.find((j) => j.id === id)!;
    expect(by(rejected)).toMatchObject({ status: "failed", failureStreak: 1 });
    expect(by(fine)).toMatchObject({ status: "completed", failureStreak: 0 });
    expect(by(retrying)).toMatchObject({ status: "active", failureStreak: 0 });
    expect(by(flaky)).toMatchObject({ status: "active", lastRun: { outcome: "dead_lettered" } });
    expect(Date.parse(by(flaky).lastRun!.at)).not.toBeNaN();
    // GET /v1/jobs/:id says the same.
    expect((await h.call(key, "GET", `/v1/jobs/${rejected}`)).json).toMatchObject({
      failureStreak: 1,
      lastRun: { outcome: "dead_lettered" },
    });

    expect((await list("&failing=true")).map((j) => j.id).sort()).toEqual([rejected, flaky].sort());
    expect((await list("&failing=false")).map((j) => j.id).sort()).toEqual([fine, retrying].sort());
    const bad = await h.call(key, "GET", "/v1/jobs?failing=yes");
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("validation_error");

    // Replay all: 100 in the first call, the other 5 in the next; then none.
    const first = await h.call(key, "POST", "/v1/dead-letters/replay", { jobId: flaky });
    expect(first.status, first.text).toBe(200);
    expect(first.json).toMatchObject({ jobId: flaky, replayed: 100, remaining: 5 });
    expect(first.json.triggerIds).toHaveLength(100);
    const second = await h.call(key, "POST", "/v1/dead-letters/replay", { jobId: flaky });
    expect(second.json).toMatchObject({ replayed: 5, remaining: 0 });
    expect(new Set([...first.json.triggerIds, ...second.json.triggerIds]).size).toBe(105);
    expect((await h.call(key, "POST", "/v1/dead-letters/replay", { jobId: flaky })).json).toMatchObject({
      replayed: 0,
      remaining: 0,
    });

    // Every replayed trigger is delivered again, now successfully: the streak ends.
    await until(
      async () => (await h.call(key, "GET", `/v1/jobs/${flaky}/triggers?limit=200`)).json.data as { status: string }[],
      (ts) => ts.length === 105 && ts.every((t) => t.status === "succeeded"),
      60_000,
      "the replayed dead letters delivered",
    );
    expect(rx.deliveries.filter((d) => d.path === "/flaky/105/health")).toHaveLength(210);
    expect(await job(flaky)).toMatchObject({ failureStreak: 0, lastRun: { outcome: "succeeded" } });
    expect((await h.call(key, "GET", `/v1/dead-letters?jobId=${flaky}`)).json.data).toEqual([]);
    expect((await list("&failing=true")).map((j) => j.id)).toEqual([rejected]);

    // Two replays of the same job at once: its one dead letter is replayed once (the rows are locked,
    // another call skips them), and the failed one-time job is revived once, counted live once.
    const live = async () => (await h.call(key, "GET", "/v1/quota")).json.usage.jobs as number;
    const liveBefore = await live();
    const race = await Promise.all(
      [1, 2, 3].map(() => h.call(key, "POST", "/v1/dead-letters/replay", { jobId: rejected })),
    );
    expect(race.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(race.map((r) => r.json.replayed as number).sort()).toEqual([0, 0, 1]);
    expect(await live()).toBe(liveBefore + 1);
    expect((await h.call(key, "GET", `/v1/jobs/${rejected}`)).json.status).not.toBe("failed");
    // The replay is refused again (HTTP 400): the same fire dead twice is still one dead fire in a row.
    const again = await until(
      () => h.call(key, "GET", `/v1/jobs/${rejected}`),
      (r) => r.json.status === "failed",
      30_000,
      "the replayed one-time job dead again",
    );
    expect(again.json).toMatchObject({ failureStreak: 1, lastRun: { outcome: "dead_lettered" } });
  });

  it("refuses a missing job id (400) and a job the tenant does not have (404)", async () => {
    const missing = await h.call(key, "POST", "/v1/dead-letters/replay", {});
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe("validation_error");
    const other = await h.call(key, "POST", "/v1/dead-letters/replay", { jobId: "job_nope" });
    expect(other.status).toBe(404);
    expect(other.json.error.code).toBe("not_found");
  });
});
