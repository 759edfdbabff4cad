// A model-based test of the trigger state machine at the store level, on real
// Postgres. fast-check generates sequences of create, claim, settle, fail, expire (+reap), stale
// writes, renew, release, cancel, pause and crash; after every step Postgres must agree with a tiny
// model. Invariants: one state per trigger, terminal states are final, attempt rows only grow and are
// exactly 1..n, a write under a lost lease changes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  ALL_TENANTS,
  LAYOUT_NAMES,
  cancelJob,
  claim,
  pauseJob,
  query,
  releaseLeases,
  renewLeases,
  settle,
  sql,
  type Settlement,
} from "@fairway/store";
import { reapExpired } from "../../packages/executor/src/reaper.ts";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { NO_DRIFT, queueDrift } from "../support/queue.ts";
import { seedDue, seedPool, seedTenant } from "../support/seed.ts";

const MAX_ATTEMPTS = 3;
const TERMINAL = new Set(["succeeded", "dead", "cancelled"]);
let db: TestDb;

interface T {
  status: string;
  attempts: number;
  token: string | null;
  /** Attempt rows written so far (settle and reap write one; release none). */
  rows: number;
}
interface Model {
  triggers: Map<string, T>;
  jobs: Map<string, string>; // job id → status
  jobOf: Map<string, string>;
  stale: Array<{ id: string; leaseToken: string; attempt: number }>;
}
type Real = { history: Map<string, string[]> };
type Cmd = fc.AsyncCommand<Model, Real>;

const running = (m: Model) => [...m.triggers].filter(([, t]) => t.status === "running");
const pick = <X>(xs: X[], i: number) => xs[i % xs.length];

class Create implements Cmd {
  constructor(readonly n: number) {}
  check = () => true;
  async run(m: Model) {
    const { jobId, triggerIds } = await seedDue(db.store.db, "m", this.n, {
      type: "m",
      maxAttempts: MAX_ATTEMPTS,
      initialDelayMs: 0,
    });
    m.jobs.set(jobId, "active");
    for (const id of triggerIds) {
      m.triggers.set(id, { status: "pending", attempts: 0, token: null, rows: 0 });
      m.jobOf.set(id, jobId);
    }
  }
  toString = () => `create(${this.n})`;
}

class Claim implements Cmd {
  constructor(readonly budget: number) {}
  check = () => true;
  async run(m: Model) {
    const got = await claim(db.store.db, { type: "m", budget: this.budget, owner: "model", leaseMs: 60_000 });
    const pending = [...m.triggers.values()].filter((t) => t.status === "pending").length;
    expect(got.length).toBe(Math.min(this.budget, pending)); // work-conserving, never over budget
    for (const c of got) {
      const t = m.triggers.get(c.id)!;
      expect(t.status).toBe("pending");
      t.status = "running";
      t.attempts += 1;
      t.token = c.leaseToken;
      expect(c.attempt).toBe(t.attempts);
    }
  }
  toString = () => `claim(${this.budget})`;
}

/** Settle one running trigger: success, a retryable failure, or a dead letter. */
class Settle implements Cmd {
  constructor(
    readonly i: number,
    readonly outcome: "success" | "fail" | "dead",
  ) {}
  check = (m: Readonly<Model>) => running(m as Model).length > 0;
  async run(m: Model) {
    const [id, t] = pick(running(m), this.i);
    const status =
      this.outcome === "success"
        ? "succeeded"
        : this.outcome === "dead" || t.attempts >= MAX_ATTEMPTS
          ? "dead"
          : "pending";
    const s: Settlement = {
      id,
      leaseToken: t.token!,
      attempt: t.attempts,
      status,
      startedAt: new Date(),
      durationMs: 1,
      outcome: this.outcome === "success" ? "success" : "http_error",
      httpStatus: this.outcome === "success" ? 200 : 500,
      nextAttemptAt: status === "pending" ? new Date(Date.now() - 1000) : null,
    };
    expect(await settle(db.store.db, [s])).toHaveLength(1);
    m.stale.push({ id, leaseToken: t.token!, attempt: t.attempts });
    Object.assign(t, { status, token: null, rows: t.rows + 1 });
  }
  toString = () => `settle(${this.i}, ${this.outcome})`;
}

/** The lease of one running trigger (or, on crash, of all) runs out and the reaper takes it. */
class Expire implements Cmd {
  constructor(
    readonly i: number,
    readonly all: boolean,
  ) {}
  check = (m: Readonly<Model>) => running(m as Model).length > 0;
  async run(m: Model) {
    const victims = this.all ? running(m) : [pick(running(m), this.i)];
    const ids = JSON.stringify(victims.map(([id]) => id));
    await db.store.db.execute(
      sql`UPDATE triggers SET lease_expires_at = now() - interval '1 second' WHERE id IN (SELECT jsonb_array_elements_text(${ids}::jsonb))`,
    );
    // Their claims' lease rows too: the reaper looks only into claims whose lease ran out.
    await db.store.db.execute(sql`UPDATE leases SET expires_at = now() - interval '1 second'
      WHERE trigger_ids && ARRAY(SELECT jsonb_array_elements_text(${ids}::jsonb))`);
    expect(await reapExpired(db.store.db, Date.now())).toHaveLength(victims.length);
    for (const [id, t] of victims) {
      m.stale.push({ id, leaseToken: t.token!, attempt: t.attempts });
      Object.assign(t, { status: t.attempts >= MAX_ATTEMPTS ? "dead" : "pending", token: null, rows: t.rows + 1 });
    }
  }
  toString = () => (this.all ? "crash()" : `expire(${this.i})`);
}

/** A late worker writes with a lease it lost: settle, renew and release all change 0 rows. */
class StaleWrite implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => m.stale.length > 0;
  async run(m: Model) {
    const s = pick(m.stale, this.i);
    const late: Settlement = { ...s, status: "succeeded", startedAt: new Date(), durationMs: 1, outcome: "success" };
    expect(await settle(db.store.db, [late])).toEqual([]);
    expect((await renewLeases(db.store.db, [s], 60_000, ALL_TENANTS)).size).toBe(0);
    expect(await releaseLeases(db.store.db, [s], ALL_TENANTS)).toBe(0);
  }
  toString = () => `stale(${this.i})`;
}

class Renew implements Cmd {
  check = () => true;
  async run(m: Model) {
    const held = running(m).map(([id, t]) => ({ id, leaseToken: t.token! }));
    expect((await renewLeases(db.store.db, held, 60_000, ALL_TENANTS)).size).toBe(held.length);
  }
  toString = () => "renew()";
}

/** Graceful stop: unstarted work goes back, attempt number given back, no attempt row. */
class Release implements Cmd {
  constructor(readonly i: number) {}
  check = (m: Readonly<Model>) => running(m as Model).length > 0;
  async run(m: Model) {
    const [id, t] = pick(running(m), this.i);
    expect(await releaseLeases(db.store.db, [{ id, leaseToken: t.token! }], ALL_TENANTS)).toBe(1);
    m.stale.push({ id, leaseToken: t.token!, attempt: t.attempts });
    Object.assign(t, { status: "pending", token: null, attempts: t.attempts - 1 });
  }
  toString = () => `release(${this.i})`;
}

/** Cancel or pause a job: its pending triggers are cancelled; running ones finish. */
class JobAction implements Cmd {
  constructor(
    readonly i: number,
    readonly action: "cancel" | "pause",
  ) {}
  check = (m: Readonly<Model>) => m.jobs.size > 0;
  async run(m: Model) {
    const jobId = pick([...m.jobs.keys()], this.i);
    const before = m.jobs.get(jobId)!;
    const r =
      this.action === "cancel" ? await cancelJob(db.store.db, "m", jobId) : await pauseJob(db.store.db, "m", jobId);
    const applies = this.action === "cancel" ? before !== "cancelled" : before === "active" || before === "paused";
    expect(r !== null).toBe(applies);
    if (!applies) return;
    m.jobs.set(jobId, this.action === "cancel" ? "cancelled" : "paused");
    for (const [id, t] of m.triggers) if (m.jobOf.get(id) === jobId && t.status === "pending") t.status = "cancelled";
  }
  toString = () => `${this.action}(${this.i})`;
}

/** After every step: Postgres agrees with the model, terminal states never changed, rows only grew. */
async function agree(m: Model, real: Real) {
  const rows = await query<{ id: string; status: string; attempt_count: number; rows: number[] }>(
    db.store.db,
    sql`SELECT t.id, t.status, t.attempt_count,
               coalesce(array_agg(a.attempt ORDER BY a.attempt) FILTER (WHERE a.attempt IS NOT NULL), '{}') AS rows
          FROM triggers t LEFT JOIN attempts a ON a.trigger_id = t.id GROUP BY t.id`,
  );
  expect(rows.length).toBe(m.triggers.size);
  // The claim's queue holds exactly the pending triggers, and the pools count exactly the running ones.
  expect(await queueDrift(db.store.db)).toEqual(NO_DRIFT);
  for (const r of rows) {
    const t = m.triggers.get(r.id)!;
    expect({ id: r.id, status: r.status, attempts: r.attempt_count, rows: r.rows }).toEqual({
      id: r.id,
      status: t.status,
      attempts: t.attempts,
      rows: Array.from({ length: t.rows }, (_, k) => k + 1),
    });
    const h = real.history.get(r.id) ?? [];
    if (h.length && TERMINAL.has(h[h.length - 1])) expect(r.status).toBe(h[h.length - 1]);
    h.push(r.status);
    real.history.set(r.id, h);
  }
}

const withCheck = (c: Cmd): Cmd => ({
  check: (m) => c.check(m),
  run: async (m, r) => {
    await c.run(m, r);
    await agree(m, r);
  },
  toString: () => c.toString(),
});

const commands = [
  fc.integer({ min: 1, max: 4 }).map((n) => new Create(n)),
  fc.integer({ min: 1, max: 5 }).map((b) => new Claim(b)),
  fc
    .tuple(fc.nat(), fc.constantFrom("success" as const, "fail" as const, "dead" as const))
    .map(([i, o]) => new Settle(i, o)),
  fc.nat().map((i) => new Expire(i, false)),
  fc.constant(new Expire(0, true)),
  fc.nat().map((i) => new StaleWrite(i)),
  fc.constant(new Renew()),
  fc.nat().map((i) => new Release(i)),
  fc.tuple(fc.nat(), fc.constantFrom("cancel" as const, "pause" as const)).map(([i, a]) => new JobAction(i, a)),
].map((arb) => arb.map(withCheck));

// Both layouts, on plain PostgreSQL (packages/store/test/store.pg.test.ts): the commands run
// against a store connected with each.
describe.each(LAYOUT_NAMES)("%s layout", (layout) => {
  beforeAll(async () => {
    db = await createTestDb({ layout });
    await seedTenant(db.store.db, "m", { maxInFlight: 100 });
    await seedPool(db.store.db, "m", 10, { leaseMs: 60_000, timeoutMs: 30_000 });
  });

  afterAll(async () => {
    await db?.drop();
  });

  it("trigger state machine: Postgres agrees with the model after every step", { timeout: 60_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 40, size: "max" }), async (cmds) => {
        await db.store.db.execute(
          sql`TRUNCATE attempt_log, triggers, trigger_queue, dead_letters, leases, jobs CASCADE`,
        );
        await db.store.db.execute(sql`UPDATE tenant_pools SET running = 0`);
        const model: Model = { triggers: new Map(), jobs: new Map(), jobOf: new Map(), stale: [] };
        await fc.asyncModelRun(() => ({ model, real: { history: new Map() } }), cmds);
      }),
      { numRuns: 40, seed: Number(process.env.FAULTS_SEED ?? 8) },
    );
  });
});
