// Debounce (docs/flow-control.md): creates with one debounce key fold into one pending job. Against the
// API over HTTP with an injected clock (fire times exact), a real executor and receiver; and 50
// concurrent creates through two real server processes on one database, on the PostgreSQL server and
// on the embedded default: one job, one delivery, the last fold's payload, no lost update; and leading
// mode, which delivers at the first create and folds the burst into it.
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMemoryCoordinator } from "@fairway/coord";
import { createAdminClient, createClient, type FairwayClient, type Job } from "@fairway/sdk";
import { query, sql } from "@fairway/store";
import { startApi, type ApiHarness } from "../api/harness.ts";
import { postgresOn, startFairway, type FairwayProcess } from "../support/fairway-process.ts";
import { createTestDb, type TestDb } from "../support/pg.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";
import { until } from "../support/until.ts";
import { startExecutor } from "./executor.ts";

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
});

const deliveriesOf = (jobId: string) =>
  receiver.deliveries.filter((d) => (d.body as { jobId?: string }).jobId === jobId);

describe("debounce through the API (injected clock)", () => {
  let api: ApiHarness;
  let clock = 0;
  // Shared by the API and the executor: a create's announcement reaches the executor at once.
  const coordinator = createMemoryCoordinator();
  const stops: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    api = await startApi({ now: () => clock, coordinator });
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
  });
  afterAll(async () => {
    await api.close();
  });

  const create = (key: string, n: number, extra: Record<string, unknown> = {}) =>
    api.call(key, "POST", "/v1/jobs", {
      name: "sync",
      schedule: { delayMs: 0 },
      target: { url: `${receiver.url}/ok/debounce/${n}` },
      payload: { n },
      debounce: { key: "account-7", periodMs: 1000, maxWaitMs: 2500 },
      ...extra,
    });

  it("folds payload and target, pushes the fire time by periodMs up to maxWaitMs, then a claimed job's key starts anew", async () => {
    const key = await api.tenant("deb");
    // The first create 10 s ago (the app's clock), so the capped fire time is already due in real time.
    const t0 = Date.now() - 10_000;
    const at = async (offset: number, n: number) => {
      clock = t0 + offset;
      return create(key, n);
    };
    const first = await at(0, 1);
    expect(first.status).toBe(201);
    expect(first.json.debounced).toEqual({ joined: null, folded: 0 });
    expect(first.json.debounce).toEqual({
      key: "account-7",
      periodMs: 1000,
      maxWaitMs: 2500,
      mode: "trailing",
      folded: 0,
    });
    expect(Date.parse(first.json.schedule.at)).toBe(t0 + 1000);
    // While pending, its next fire is its schedule's instant, as for any one-time job.
    expect(Date.parse(first.json.nextFireAt)).toBe(t0 + 1000);
    const id = first.json.id as string;

    const second = await at(800, 2);
    expect(second.status).toBe(200);
    expect(second.json).toMatchObject({ id, debounced: { joined: id, folded: 1 }, payload: { n: 2 } });
    expect(Date.parse(second.json.schedule.at)).toBe(t0 + 1800);
    // Pushed to now + periodMs = t0 + 2600, but never past maxWaitMs from the first: t0 + 2500.
    const third = await at(1600, 3);
    expect(Date.parse(third.json.schedule.at)).toBe(t0 + 2500);
    const fourth = await at(2400, 4);
    expect(fourth.json).toMatchObject({ id, debounced: { joined: id, folded: 3 }, payload: { n: 4 } });
    expect(fourth.json.target.url).toBe(`${receiver.url}/ok/debounce/4`);
    expect(Date.parse(fourth.json.schedule.at)).toBe(t0 + 2500);
    expect(Date.parse((await api.call(key, "GET", `/v1/jobs/${id}`)).json.nextFireAt)).toBe(t0 + 2500);

    // Another type under the same key: refused, and nothing changes.
    const clash = await create(key, 5, { type: "other-pool" });
    expect(clash.status).toBe(409);
    expect(clash.json.error.code).toBe("debounce_type_mismatch");
    const [trigger] = await query<{ at: Date; n: number }>(
      api.db,
      sql`SELECT extract(epoch FROM next_attempt_at) * 1000 AS at, (SELECT count(*)::int FROM triggers) AS n
            FROM triggers WHERE job_id = ${id}`,
    );
    expect([Number(trigger.at), trigger.n]).toEqual([t0 + 2500, 1]);

    // One delivery, of the last fold.
    stops.push(startExecutor(api.db, coordinator));
    await until(
      () => api.call(key, "GET", `/v1/jobs/${id}`),
      (r) => r.json.status === "completed",
      30_000,
      "the debounced job completed",
    );
    expect(deliveriesOf(id).map((d) => [d.path, (d.body as { payload: unknown }).payload])).toEqual([
      ["/ok/debounce/4", { n: 4 }],
    ]);
    expect(((await api.call(key, "GET", `/v1/jobs/${id}`)).json.debounce as { folded: number }).folded).toBe(3);

    // Its trigger was claimed: the next create with the key is a new debounced job.
    clock = Date.now();
    const next = await create(key, 6);
    expect(next.status).toBe(201);
    expect(next.json.debounced).toEqual({ joined: null, folded: 0 });
    expect(next.json.id).not.toBe(id);
  });

  it("folds racing the claim: every job delivers the payload of the last create it folded", {
    timeout: 60_000,
  }, async () => {
    const key = await api.tenant("deb-race");
    stops.push(startExecutor(api.db, coordinator));
    // Three streams of creates, a 100 ms period capped at 300 ms, on the real clock: jobs fire and are claimed while
    // creates keep folding into them, so folds and claims race on the same triggers.
    const answers: Array<{ id: string; folded: number; n: number }> = [];
    await Promise.all(
      [0, 1, 2].map(async (stream) => {
        for (let i = 0; i < 30; i++) {
          const n = stream * 100 + i;
          clock = Date.now();
          const r = await api.call(key, "POST", "/v1/jobs", {
            name: "race",
            schedule: { delayMs: 0 },
            target: { url: `${receiver.url}/ok/race` },
            payload: { n },
            debounce: { key: "hot", periodMs: 100, maxWaitMs: 300 },
          });
          expect(r.status, r.text).toBeLessThan(300);
          answers.push({ id: r.json.id, folded: r.json.debounced.folded, n });
        }
      }),
    );
    const ids = [...new Set(answers.map((a) => a.id))];
    await until(
      async () => Promise.all(ids.map(async (id) => (await api.call(key, "GET", `/v1/jobs/${id}`)).json.status)),
      (st) => st.every((s) => s === "completed"),
      30_000,
      "every debounced job completed",
    );
    for (const id of ids) {
      const mine = answers.filter((a) => a.id === id);
      const last = mine.reduce((x, y) => (y.folded > x.folded ? y : x));
      // Each fold counted once, and the delivery carries the last one.
      expect(mine.map((a) => a.folded).sort((x, y) => x - y)).toEqual(mine.map((_, i) => i));
      expect(deliveriesOf(id).map((d) => (d.body as { payload: { n: number } }).payload.n)).toEqual([last.n]);
    }
    console.info(`debounce race: 90 creates became ${ids.length} jobs, each delivered once with its last payload`);
  });

  it("leading: 20 creates deliver once, at the first; the other 19 fold in; a create after the quiet period fires again", async () => {
    const key = await api.tenant("deb-leading");
    stops.push(startExecutor(api.db, coordinator));
    const lead = (n: number, extra: Record<string, unknown> = {}) =>
      create(key, n, {
        target: { url: `${receiver.url}/ok/leading/${n}` },
        debounce: { key: "burst", periodMs: 1000, mode: "leading", ...extra },
      });
    const t0 = Date.now();
    const answers = [];
    // 20 creates 100 ms apart on the app's clock: each within the quiet period of the one before.
    for (let n = 1; n <= 20; n++) {
      clock = t0 + (n - 1) * 100;
      answers.push(await lead(n));
    }
    const first = answers[0]!;
    expect(first.status).toBe(201);
    expect(first.json.debounce).toEqual({ key: "burst", periodMs: 1000, maxWaitMs: null, mode: "leading", folded: 0 });
    expect(Date.parse(first.json.schedule.at)).toBe(t0);
    expect(answers.slice(1).map((a) => [a.status, a.json.debounced.joined, a.json.debounced.folded])).toEqual(
      Array.from({ length: 19 }, (_, i) => [200, first.json.id, i + 1]),
    );

    // After the quiet period, a create is the first of a new one: it fires.
    clock = t0 + 19 * 100 + 1000;
    const next = await lead(21);
    expect([next.status, next.json.debounced.joined]).toEqual([201, null]);
    await receiver.waitFor((ds) => ds.some((d) => d.path === "/ok/leading/21"), 30_000);
    const leading = receiver.deliveries.filter((d) => d.path.startsWith("/ok/leading/"));
    expect(leading.map((d) => [d.path, (d.body as { payload: unknown }).payload])).toEqual([
      ["/ok/leading/1", { n: 1 }],
      ["/ok/leading/21", { n: 21 }],
    ]);
    const job = await api.call(key, "GET", `/v1/jobs/${first.json.id}`);
    expect([job.json.status, job.json.payload, job.json.debounce.folded]).toEqual(["completed", { n: 1 }, 19]);
    const [counts] = await query<{ jobs: number; triggers: number }>(
      api.db,
      sql`SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = 'deb-leading') AS jobs,
                 (SELECT count(*)::int FROM triggers WHERE tenant_id = 'deb-leading') AS triggers`,
    );
    expect(counts).toEqual({ jobs: 2, triggers: 2 });
  });

  it("refuses a cron schedule, an Idempotency-Key, bounds and a maxWaitMs below periodMs, writing nothing", async () => {
    const key = await api.tenant("deb-refused");
    clock = Date.now();
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ schedule: { cron: "*/5 * * * *" } }, 400, "debounce_not_one_time"],
      [{ debounce: { key: "k", periodMs: 50 } }, 400, "validation_error"],
      [{ debounce: { key: "k", periodMs: 1000, maxWaitMs: 500 } }, 400, "validation_error"],
      [{ debounce: { key: "", periodMs: 1000 } }, 400, "validation_error"],
      [{ debounce: { key: "k", periodMs: 8 * 86_400_000 } }, 400, "validation_error"],
      [{ debounce: { key: "k", periodMs: 1000, extra: 1 } }, 400, "validation_error"],
      [{ debounce: { key: "k", periodMs: 1000, mode: "middle" } }, 400, "validation_error"],
    ];
    for (const [extra, status, code] of cases) {
      const r = await create(key, 0, extra);
      expect([r.status, r.json.error.code], JSON.stringify(extra)).toEqual([status, code]);
      expect(r.json.error.message.length).toBeGreaterThan(10);
    }
    const withKey = await fetch(`${api.url}/v1/jobs`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": "once" },
      body: JSON.stringify({
        name: "x",
        schedule: { delayMs: 0 },
        target: { url: `${receiver.url}/ok` },
        debounce: { key: "k", periodMs: 1000 },
      }),
    });
    expect(withKey.status).toBe(400);
    expect(((await withKey.json()) as { error: { code: string } }).error.code).toBe("debounce_idempotency_key");
    const [counts] = await query<{ jobs: number; debounces: number }>(
      api.db,
      sql`SELECT (SELECT count(*)::int FROM jobs WHERE tenant_id = 'deb-refused') AS jobs,
                 (SELECT count(*)::int FROM debounces WHERE tenant_id = 'deb-refused') AS debounces`,
    );
    expect(counts).toEqual({ jobs: 0, debounces: 0 });
  });
});

/** Two server processes on one database: `a` runs everything, `b` only the API. */
interface Pair {
  a: FairwayProcess;
  b: FairwayProcess;
  close(): Promise<void>;
}

const ADMIN_TOKEN = `fwadmin_test_${randomBytes(12).toString("hex")}`;

async function pair(embedded: boolean): Promise<Pair> {
  const dirs = [mkdtempSync(join(tmpdir(), "fairway-debounce-")), mkdtempSync(join(tmpdir(), "fairway-debounce-"))];
  const common = { FAIRWAY_ADMIN_TOKEN: ADMIN_TOKEN, FAIRWAY_POLL_MS: "50", FAIRWAY_ALLOW_PRIVATE_TARGETS: "true" };
  let tdb: TestDb | null = null;
  let url: string;
  let a: FairwayProcess;
  if (embedded) {
    a = await startFairway({ ...common, FAIRWAY_DATA_DIR: dirs[0] });
    url = readFileSync(join(dirs[0], "database-url"), "utf8").trim();
  } else {
    tdb = await createTestDb();
    url = tdb.url;
    a = await startFairway({ ...common, FAIRWAY_DATA_DIR: dirs[0], DATABASE_URL: url });
  }
  const b = await startFairway({ ...common, FAIRWAY_DATA_DIR: dirs[1], DATABASE_URL: url, FAIRWAY_ROLE: "api" });
  return {
    a,
    b,
    async close() {
      await b.stop();
      await a.stop();
      await tdb?.drop();
      for (const d of dirs) {
        await until(
          () => postgresOn(d),
          (pids) => pids.length === 0,
          30_000,
        ).catch(() => {});
        rmSync(d, { recursive: true, force: true });
      }
    },
  };
}

describe.each([
  ["the PostgreSQL server", false],
  ["the embedded PostgreSQL", true],
])("debounce across two API processes on %s", (_, embedded) => {
  let p: Pair;
  beforeAll(async () => {
    p = await pair(embedded);
  }, 120_000);
  afterAll(async () => {
    await p?.close();
  });

  it("50 concurrent creates with one key: one job, one delivery, the last fold's payload", {
    timeout: 120_000,
  }, async () => {
    const tenant = `deb-two-${embedded ? "e" : "s"}`;
    const admin = createAdminClient({ baseUrl: p.a.url, adminToken: ADMIN_TOKEN });
    const t = await admin.tenants.create({ id: tenant, name: tenant });
    receiver.secrets.push(t.signingSecret);
    const apiKey = (await admin.tenants.createKey(tenant)).key;
    const clients: FairwayClient[] = [p.a.url, p.b.url].map((baseUrl) => createClient({ baseUrl, apiKey }));
    const answers: Job[] = await Promise.all(
      Array.from({ length: 50 }, (_, n) =>
        clients[n % 2].jobs.create({
          name: "sync",
          schedule: { delayMs: 0 },
          target: { url: `${receiver.url}/ok/${tenant}` },
          payload: { n },
          // Long enough that all 50 land before it fires on a loaded machine.
          debounce: { key: "account-1", periodMs: 6000 },
        }),
      ),
    );
    const made = answers.filter((j) => j.debounced?.joined === null);
    expect(made).toHaveLength(1);
    const id = made[0].id;
    expect(answers.every((j) => j.id === id)).toBe(true);
    // Every fold counted once, in the order the key's lock served them: no lost update.
    expect(answers.map((j) => j.debounced!.folded).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 50 }, (_, i) => i),
    );
    const last = answers.find((j) => j.debounced!.folded === 49)!;

    await until(
      () => clients[0].jobs.get(id),
      (j) => j.status === "completed",
      60_000,
      "the debounced job completed",
    );
    const got = deliveriesOf(id);
    expect(got).toHaveLength(1);
    expect(got[0].verified).toBe(true);
    expect((got[0].body as { payload: unknown }).payload).toEqual(last.payload);
    const page = await clients[1].jobs.list({ limit: 10 });
    expect(page.data.map((j) => j.id)).toEqual([id]);
    expect((await clients[1].jobs.triggers(id)).data).toHaveLength(1);
  });

  it("leading: 30 concurrent creates with one key: one job, delivered once with the first create's payload", {
    timeout: 120_000,
  }, async () => {
    const tenant = `deb-lead-${embedded ? "e" : "s"}`;
    const admin = createAdminClient({ baseUrl: p.a.url, adminToken: ADMIN_TOKEN });
    const t = await admin.tenants.create({ id: tenant, name: tenant });
    receiver.secrets.push(t.signingSecret);
    const apiKey = (await admin.tenants.createKey(tenant)).key;
    const clients: FairwayClient[] = [p.a.url, p.b.url].map((baseUrl) => createClient({ baseUrl, apiKey }));
    const answers: Job[] = await Promise.all(
      Array.from({ length: 30 }, (_, n) =>
        clients[n % 2].jobs.create({
          name: "sync",
          schedule: { delayMs: 0 },
          target: { url: `${receiver.url}/ok/${tenant}` },
          payload: { n },
          // Long enough that all 30 land within it on a loaded machine.
          debounce: { key: "account-1", periodMs: 60_000, mode: "leading" },
        }),
      ),
    );
    const made = answers.filter((j) => j.debounced?.joined === null);
    expect(made).toHaveLength(1);
    const id = made[0].id;
    expect(answers.every((j) => j.id === id)).toBe(true);
    expect(answers.map((j) => j.debounced!.folded).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 30 }, (_, i) => i),
    );
    await until(
      () => clients[0].jobs.get(id),
      (j) => j.status === "completed",
      60_000,
      "the leading job completed",
    );
    const got = deliveriesOf(id);
    expect(got).toHaveLength(1);
    expect((got[0].body as { payload: unknown }).payload).toEqual(made[0].payload);
    expect((await clients[1].jobs.triggers(id)).data).toHaveLength(1);
  });
});
