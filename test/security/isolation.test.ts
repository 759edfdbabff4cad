// Tenant isolation: a route × foreign-tenant matrix. Tenant B holds a job, a pending trigger
// and a dead trigger; tenant A calls every tenant route with B's ids. Every call is a 404 (never a
// 403 or 409 that would confirm the id exists), and afterwards B's rows are byte-for-byte unchanged.
import { afterAll, beforeAll, expect, test } from "vitest";
import { query, sql } from "@fairway/store";
import { createHarness, type Harness } from "./harness.ts";

let h: Harness;
let a: Awaited<ReturnType<Harness["tenant"]>>;
let b: Awaited<ReturnType<Harness["tenant"]>>;
const ids = { job: "", pending: "", dead: "" };

beforeAll(async () => {
  h = await createHarness();
  a = await h.tenant("iso-a");
  b = await h.tenant("iso-b");
  const job = await h.call("POST", "/v1/jobs", {
    token: b.key,
    body: {
      name: "b-job",
      schedule: { cron: "0 9 * * *", timezone: "UTC" },
      target: { url: "https://example.com/hook" },
      payload: { secret: "b-data" },
    },
  });
  ids.job = ((await job.json()) as { id: string }).id;
  const run = await h.call("POST", `/v1/jobs/${ids.job}/run`, { token: b.key });
  ids.pending = ((await run.json()) as { id: string }).id;
  const dead = await h.call("POST", `/v1/jobs/${ids.job}/run`, { token: b.key });
  ids.dead = ((await dead.json()) as { id: string }).id;
  await h.db.execute(
    sql`UPDATE triggers SET status = 'dead', reason = 'test', finished_at = now() WHERE id = ${ids.dead}`,
  );
  // A's own job, so A's lists are not trivially empty.
  await h.call("POST", "/v1/jobs", {
    token: a.key,
    body: { name: "a-job", schedule: { delayMs: 60_000 }, target: { url: "https://example.com/a" } },
  });
});
afterAll(async () => {
  await h.tdb.drop();
});

async function snapshotOfB() {
  const jobs = await query(h.db, sql`SELECT * FROM jobs WHERE tenant_id = 'iso-b' ORDER BY id`);
  const triggers = await query(h.db, sql`SELECT * FROM triggers WHERE tenant_id = 'iso-b' ORDER BY id`);
  const attempts = await query(
    h.db,
    sql`SELECT * FROM attempts WHERE tenant_id = 'iso-b' ORDER BY trigger_id, attempt`,
  );
  return JSON.stringify({ jobs, triggers, attempts });
}

test("another tenant's job and trigger ids are a 404 on every route, and nothing of theirs changes", async () => {
  const job = {
    name: "hijack",
    schedule: { delayMs: 1 },
    target: { url: "https://evil.example.com/" },
    payload: { x: 1 },
  };
  const matrix: Array<[string, string, unknown?]> = [
    ["GET", `/v1/jobs/${ids.job}`],
    ["PATCH", `/v1/jobs/${ids.job}`, { name: "hijacked", target: { url: "https://evil.example.com/" } }],
    ["PATCH", `/v1/jobs/${ids.job}`, { schedule: { delayMs: 0 } }],
    ["DELETE", `/v1/jobs/${ids.job}`],
    ["POST", `/v1/jobs/${ids.job}/pause`],
    ["POST", `/v1/jobs/${ids.job}/resume`],
    ["POST", `/v1/jobs/${ids.job}/run`],
    ["GET", `/v1/jobs/${ids.job}/triggers`],
    ["GET", `/v1/triggers/${ids.pending}`],
    ["GET", `/v1/triggers/${ids.dead}`],
    ["POST", `/v1/triggers/${ids.dead}/replay`],
    ["POST", `/v1/triggers/${ids.pending}/replay`],
  ];
  const before = await snapshotOfB();
  const countsBefore = await h.counts();
  for (const [method, path, body] of matrix) {
    const r = await h.call(method, path, { token: a.key, body });
    const text = await r.text();
    expect(r.status, `${method} ${path}: ${text}`).toBe(404);
    expect(JSON.parse(text).error.code).toBe("not_found");
    expect(text).not.toContain("b-data");
  }
  expect(await snapshotOfB()).toBe(before);
  expect(await h.counts()).toEqual(countsBefore);

  // The same calls by B succeed: the ids are real, so the 404s above were isolation, not typos.
  expect((await h.call("GET", `/v1/jobs/${ids.job}`, { token: b.key })).status).toBe(200);
  expect((await h.call("GET", `/v1/triggers/${ids.dead}`, { token: b.key })).status).toBe(200);
  expect((await h.call("GET", `/v1/jobs/${ids.job}/triggers`, { token: b.key })).status).toBe(200);

  // Idempotency keys are per tenant too: A reusing B's key neither replays B's job nor conflicts.
  const k = { "idempotency-key": "shared-key" };
  const rb = await h.call("POST", "/v1/jobs", { token: b.key, body: job, headers: k });
  const ra = await h.call("POST", "/v1/jobs", { token: a.key, body: { ...job, name: "other" }, headers: k });
  expect(rb.status).toBe(201);
  expect(ra.status).toBe(201);
  expect(((await ra.json()) as { id: string }).id).not.toBe(((await rb.json()) as { id: string }).id);
});

test("lists, dead letters, quota and cursors show only the caller's own rows", async () => {
  const seen: string[] = [];
  for (const path of [
    "/v1/jobs",
    "/v1/jobs?limit=200",
    `/v1/jobs?cursor=${ids.job.slice(0, 5)}`,
    "/v1/dead-letters",
    `/v1/dead-letters?jobId=${ids.job}`,
    "/v1/quota",
  ]) {
    const r = await h.call("GET", path, { token: a.key });
    expect(r.status, path).toBe(200);
    seen.push(await r.text());
  }
  const all = seen.join("\n");
  for (const id of Object.values(ids)) expect(all).not.toContain(id);
  expect(all).not.toContain("b-job");
  expect(all).toContain("a-job"); // A does see its own job
  const quota = JSON.parse(seen[5]) as { usage: { dead: number; jobs: number } };
  expect(quota.usage).toMatchObject({ dead: 0, jobs: 2 });
  // B's dead letter is visible to B.
  const bd = await h.call("GET", "/v1/dead-letters", { token: b.key });
  expect(await bd.text()).toContain(ids.dead);
});
