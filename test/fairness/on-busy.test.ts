// onBusy against a busy key, on the embedded default and on a real Postgres: a slow request holds the
// key's cap (maxInFlight 1) while triggers of jobs with each policy become due. queue: all run, one at a
// time, after it; skip: recorded skipped (reason busy), never delivered, their one-time jobs completed;
// replace_queued: only the newest waits and runs, the older ones cancelled (reason replaced);
// cancel_running: the slow request is cut (the receiver sees its connection closed), its attempt is
// `cancelled` and never retried, and the new trigger runs — also when the server running the slow
// request is killed (kill -9) before the cancel reaches it. Counts and outcomes from the API and the
// receiver, never wall-clock timing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverBackends, jsonApi } from "../support/backends.ts";
import { startFairway, type FairwayProcess } from "../support/fairway-process.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";

const ADMIN = `fwadmin_onbusy_${Date.now()}`;
const HOLD_MS = 12_000;
const LEASE_MS = 20_000; // the slow request that holds the key's cap (long enough for every decision)

describe.each(serverBackends)("onBusy on %s", (name, backend) => {
  let server: FairwayProcess | null = null;
  let rx: Receiver;
  let env: Record<string, string>;
  let done: (() => Promise<void>) | null = null;
  let key: string;
  const start = async () => (server = await startFairway({ ...env, FAIRWAY_ADMIN_TOKEN: ADMIN }));
  const api = jsonApi(() => server!.url);
  const create = async (
    name: string,
    path: string,
    onBusy?: string,
    fairnessKey = "acct",
  ): Promise<{ id: string; onBusy: string }> => {
    const r = await api(key, "POST", "/v1/jobs", {
      name,
      key: fairnessKey,
      schedule: { delayMs: 0 },
      target: { url: `${rx.url}${path}` },
      payload: { name },
      ...(onBusy ? { onBusy } : {}),
    });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    return r.json;
  };
  const triggerOf = async (id: string) => (await api(key, "GET", `/v1/jobs/${id}/triggers`)).json.data[0];
  const delivered = (path: string) => rx.deliveries.filter((d) => d.path === path);

  beforeAll(async () => {
    const b = await backend();
    env = b.env;
    done = b.done;
    rx = await startReceiver();
    await start();
    const tenant = await api(ADMIN, "POST", "/v1/admin/tenants", { id: "acme", name: "Acme" });
    rx.secrets = [tenant.json.signingSecret];
    key = (await api(ADMIN, "POST", "/v1/admin/tenants/acme/keys")).json.key;
    // A lease that outlives a restart of the server but is reaped within the test.
    const pool = await api(ADMIN, "PUT", "/v1/admin/pools/webhook", {
      concurrency: 50,
      timeoutMs: LEASE_MS - 2000,
      leaseMs: LEASE_MS,
    });
    expect(pool.status, JSON.stringify(pool.json)).toBe(200);
    for (const k of ["acct", "cut", "killed"]) {
      expect((await api(key, "PUT", `/v1/keys/${k}`, { maxInFlight: 1 })).status).toBe(200);
    }
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rx?.close();
    await done?.();
  });

  it("queue waits, skip is skipped, replace_queued keeps only the newest, while a slow run holds the key", async () => {
    // Refused: onBusy other than queue on a job without a key; nothing written.
    const refused = await api(key, "POST", "/v1/jobs", {
      name: "nokey",
      schedule: { delayMs: 0 },
      target: { url: `${rx.url}/ok` },
      onBusy: "skip",
    });
    expect([refused.status, refused.json.error.code]).toEqual([400, "validation_error"]);
    expect(refused.json.error.message).toContain("onBusy");
    expect((await api(key, "GET", "/v1/jobs")).json.data).toEqual([]);

    // The holder: one slow request, the key at its cap.
    const holder = await create("holder", `/slow/${HOLD_MS}`);
    await until(
      () => rx.open.get(`/slow/${HOLD_MS}`) ?? 0,
      (n) => n === 1,
      30_000,
      "the holder in flight",
    );

    const skipped = [await create("skip-1", "/ok/skip", "skip"), await create("skip-2", "/ok/skip", "skip")];
    const replaced: Array<{ id: string; onBusy: string }> = [];
    for (let i = 1; i <= 3; i++) replaced.push(await create(`replace-${i}`, "/ok/replace", "replace_queued"));
    const queued = [await create("queue-1", "/ok/queue", "queue"), await create("queue-2", "/ok/queue")];
    expect(skipped[0].onBusy).toBe("skip");
    expect(queued[1].onBusy).toBe("queue");

    // Decided while the holder still runs.
    const decided = await until(
      async () => Promise.all([...skipped, ...replaced.slice(0, 2)].map((j) => triggerOf(j.id))),
      (ts) => ts.every((t) => t.status !== "pending"),
      30_000,
      "skip and replace_queued decided",
    );
    expect(rx.open.get(`/slow/${HOLD_MS}`)).toBe(1);
    expect(decided.map((t) => [t.status, t.reason])).toEqual([
      ["skipped", "busy"],
      ["skipped", "busy"],
      ["cancelled", "replaced"],
      ["cancelled", "replaced"],
    ]);

    // After the holder: the queued ones and the newest replace_queued one run, once each; nothing else.
    await rx.waitFor(() => delivered("/ok/queue").length === 2 && delivered("/ok/replace").length === 1, 60_000);
    await until(
      () => triggerOf(holder.id),
      (t) => t.status === "succeeded",
      30_000,
      "holder settled",
    );
    expect(delivered("/ok/skip")).toEqual([]);
    expect((delivered("/ok/replace")[0].body as { payload: { name: string } }).payload.name).toBe("replace-3");
    expect((await triggerOf(replaced[2].id)).status).toBe("succeeded");
    // Each one-time job decided so has ended: skipped → completed, replaced → cancelled.
    const statuses = await Promise.all(
      [...skipped, ...replaced].map(async (j) => (await api(key, "GET", `/v1/jobs/${j.id}`)).json.status),
    );
    await until(
      async () => Promise.all(queued.map((j) => triggerOf(j.id))),
      (ts) => ts.every((t) => t.status === "succeeded"),
      30_000,
      "queued settled",
    );
    expect(statuses).toEqual(["completed", "completed", "cancelled", "cancelled", expect.any(String)]);
  }, 180_000);

  it("cancel_running cuts the running request, records it cancelled, never retries it, and runs the new one", async () => {
    const old = await create("old", "/slow/17000", "cancel_running", "cut");
    await until(
      () => rx.open.get("/slow/17000") ?? 0,
      (n) => n === 1,
      30_000,
      "the old run in flight",
    );
    const fresh = await create("new", "/ok/cut", "cancel_running", "cut");
    await rx.waitFor(() => delivered("/ok/cut").length === 1, 30_000);
    expect(rx.cut).toContain("/slow/17000");
    const t = await until(
      () => triggerOf(old.id),
      (x) => x.status !== "running",
      30_000,
      "old recorded",
    );
    expect([t.status, t.reason]).toEqual(["cancelled", "cancel_running"]);
    const attempts = (await api(key, "GET", `/v1/triggers/${t.id}`)).json.attempts;
    expect(attempts.map((a: { outcome: string }) => a.outcome)).toEqual(["cancelled"]);
    // Its run was cut: it did run, and says so.
    expect((await api(key, "GET", `/v1/jobs/${old.id}`)).json).toMatchObject({
      status: "cancelled",
      lastRun: { outcome: "cancelled" },
    });
    await until(
      () => triggerOf(fresh.id),
      (x) => x.status === "succeeded",
      30_000,
      "new settled",
    );
    // Never retried: one delivery of the old one, whatever happens after.
    expect(delivered("/slow/17000")).toHaveLength(1);
    expect(delivered("/ok/cut")).toHaveLength(1);
  }, 120_000);

  it.runIf(name === "Postgres")(
    "cancel_running with the server killed under the old run loses nothing: the old one ends cancelled, the new one runs once",
    async () => {
      const old = await create("old-killed", "/slow/17001", "cancel_running", "killed");
      await until(
        () => rx.open.get("/slow/17001") ?? 0,
        (n) => n === 1,
        30_000,
        "the old run in flight",
      );
      await server!.stop("SIGKILL");
      await start();
      // Its lease (LEASE_MS) outlives the restart: the old run still counts as running, the key is busy.
      expect((await triggerOf(old.id)).status).toBe("running");
      const fresh = await create("new-killed", "/ok/killed", "cancel_running", "killed");
      await until(
        () => triggerOf(fresh.id),
        (x) => x.status === "succeeded",
        60_000,
        "new settled",
      );
      const t = await until(
        () => triggerOf(old.id),
        (x) => x.status === "cancelled",
        30_000,
        "old cancelled",
      );
      expect(t.reason).toBe("cancel_running");
      expect(delivered("/ok/killed")).toHaveLength(1);
      expect(delivered("/slow/17001")).toHaveLength(1);
    },
    150_000,
  );
});
