// Overlap policies with a slow job: real executors (two, on separate connections) run a cron job that
// fires every second into an in-process handler that blocks until the test releases it. `skip` records
// fires while one runs as skipped (reason overlap); `buffer_one` lets exactly one wait; `allow` runs
// them side by side (the control: it shows the counters below can see overlap).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Executor, createFetchTransport, type Handler } from "@fairway/executor";
import { claim, connectPostgres, query, sql, type Store } from "@fairway/store";
import { createHarness, triggerRows, until, type Harness } from "./harness.ts";

const TYPES = ["slow-skip", "slow-buffer", "slow-allow", "slow-manual"];

/** A handler that blocks until released, counting how many run at once. */
function slowHandler() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const s = { entered: 0, active: 0, maxActive: 0, release, handler: null as unknown as Handler };
  s.handler = async ({ signal }) => {
    s.entered++;
    s.maxActive = Math.max(s.maxActive, ++s.active);
    try {
      await Promise.race([gate, new Promise((r) => signal.addEventListener("abort", r))]);
    } finally {
      s.active--;
    }
  };
  return s;
}

describe("overlap policies with a slow handler", () => {
  let h: Harness;
  let key: string;
  const stores: Store[] = [];

  beforeAll(async () => {
    h = await createHarness({ handlerTypes: TYPES });
    key = await h.tenant("ovl");
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await h?.close();
  });

  async function runWith(
    type: string,
    overlap: string,
    s: ReturnType<typeof slowHandler>,
    body: (jobId: string) => Promise<void>,
  ) {
    h.clock.now = Date.now();
    const res = await h.call(key, "POST", "/v1/jobs", {
      name: overlap,
      type,
      schedule: { cron: "* * * * * *", timezone: "UTC" },
      overlap,
    });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    const executors = [0, 1].map(() => {
      const store = connectPostgres(h.tdb.url, { max: 3 });
      stores.push(store);
      return new Executor({
        db: store.db,
        transport: createFetchTransport(),
        handlers: { [type]: s.handler },
        pollMs: 50,
      }).start();
    });
    try {
      await body(res.json.id);
    } finally {
      s.release();
      await h.call(key, "DELETE", `/v1/jobs/${res.json.id}`);
      await Promise.all(executors.map((e) => e.stop(5000)));
    }
    return res.json.id as string;
  }

  /** Every fire from the first to the last left exactly one row: no second without a decision. */
  async function expectContiguous(jobId: string) {
    const rows = (await triggerRows(h.db, jobId)).filter((r) => r.kind === "scheduled");
    const secs = rows.map((r) => Date.parse(r.at) / 1000);
    expect(secs).toEqual(secs.map((_, i) => secs[0] + i));
  }

  it("skip: fires while one runs are recorded skipped (overlap); never two at once", async () => {
    const s = slowHandler();
    const jobId = await runWith("slow-skip", "skip", s, async (jobId) => {
      await until(
        () => triggerRows(h.db, jobId),
        (rows) => rows.filter((r) => r.reason === "overlap").length >= 3,
        20_000,
      );
      const rows = await triggerRows(h.db, jobId);
      expect(rows.filter((r) => r.status === "running")).toHaveLength(1);
      expect(rows.filter((r) => r.status === "skipped").every((r) => r.reason === "overlap")).toBe(true);
      expect(s.entered).toBe(1);
    });
    expect(s.maxActive).toBe(1);
    await expectContiguous(jobId);
  });

  it("buffer_one: exactly one fire waits while one runs, the rest are skipped; the waiting one runs after", async () => {
    const s = slowHandler();
    const jobId = await runWith("slow-buffer", "buffer_one", s, async (jobId) => {
      const rows = await until(
        () => triggerRows(h.db, jobId),
        (rows) => rows.filter((r) => r.reason === "overlap").length >= 3,
        20_000,
      );
      expect(rows.filter((r) => r.status === "running")).toHaveLength(1);
      const waiting = rows.filter((r) => r.status === "pending");
      expect(waiting).toHaveLength(1);
      expect(s.entered).toBe(1);
      s.release();
      await until(
        () => triggerRows(h.db, jobId),
        (rs) => rs.find((r) => r.id === waiting[0].id)?.status === "succeeded",
        20_000,
      );
    });
    expect(s.maxActive).toBe(1);
    await expectContiguous(jobId);
  });

  it("allow (control): fires run side by side", async () => {
    const s = slowHandler();
    await runWith("slow-allow", "allow", s, async () => {
      await until(
        async () => s.entered,
        (n) => n >= 3,
        20_000,
      );
    });
    expect(s.maxActive).toBeGreaterThanOrEqual(3);
  });

  // Two due triggers of one exclusive job (a run-now next to a waiting fire, or a replayed dead letter)
  // must not start together, even inside ONE claim statement whose "none running" check cannot see
  // what the same statement picks: the claim takes only a job's first due exclusive trigger.
  it("the claim honours exclusive: a run-now next to a waiting scheduled fire still runs one at a time", async () => {
    h.clock.now = Date.now() - 10_000;
    const res = await h.call(key, "POST", "/v1/jobs", {
      name: "manual",
      type: "slow-manual",
      schedule: { at: new Date(h.clock.now).toISOString() },
      overlap: "skip",
    });
    await h.call(key, "POST", `/v1/jobs/${res.json.id}/run`);
    const c = () => claim(h.db, { type: "slow-manual", budget: 10, owner: "t", leaseMs: 60_000 });
    const [first, second] = await Promise.all([c(), c()]);
    expect(first.length + second.length).toBe(1);
    expect(await c()).toHaveLength(0);
    const [{ n }] = await query<{ n: number }>(
      h.db,
      sql`SELECT count(*)::int AS n FROM triggers WHERE job_id = ${res.json.id} AND status = 'running'`,
    );
    expect(n).toBe(1);
  });
});
