// Spread crons end to end, on the embedded default and on a real Postgres: a job's offset within its
// window comes from its id, so it survives a restart of the server and edits of the job (its name, its
// cron), the materializer fires at cron time + offset, and the offsets of many jobs fill the window
// evenly. Counts and instants the API and the receiver report, never wall-clock timing.
import { afterAll, describe, expect, it } from "vitest";
import { serverBackends, jsonApi } from "../support/backends.ts";
import { startFairway, type FairwayProcess } from "../support/fairway-process.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";

const ADMIN = `fwadmin_spread_${Date.now()}`;
const WINDOW = 600_000; // PT10M
const MANY = 200;

describe.each(serverBackends)("spread crons on %s", (_name, backend) => {
  let server: FairwayProcess | null = null;
  let rx: Receiver | null = null;
  let done: (() => Promise<void>) | null = null;
  afterAll(async () => {
    await server?.stop();
    await rx?.close();
    await done?.();
  });

  it("offsets are stable across a restart and edits, fires land on them, and fill the window evenly", async () => {
    const b = await backend();
    done = b.done;
    rx = await startReceiver();
    const start = () => startFairway({ ...b.env, FAIRWAY_ADMIN_TOKEN: ADMIN });
    server = await start();
    const api = jsonApi(() => server!.url);
    const tenant = await api(ADMIN, "POST", "/v1/admin/tenants", { id: "acme", name: "Acme", maxJobs: 10_000 });
    rx.secrets = [tenant.json.signingSecret];
    const key = (await api(ADMIN, "POST", "/v1/admin/tenants/acme/keys")).json.key;
    const target = { url: `${rx.url}/ok` };

    // MANY daily jobs at midnight, spread over ten minutes: the offset is each fire minus midnight.
    const ids: string[] = [];
    const offsets: number[] = [];
    for (let i = 0; i < MANY; i += 20) {
      const batch = await Promise.all(
        Array.from({ length: 20 }, (_, k) =>
          api(key, "POST", "/v1/jobs", {
            name: `nightly-${i + k}`,
            schedule: { cron: "0 0 * * *", spread: "PT10M" },
            target,
          }),
        ),
      );
      for (const r of batch) {
        expect(r.status).toBe(201);
        expect(r.json.schedule).toEqual({ cron: "0 0 * * *", timezone: "UTC", spread: "PT10M" });
        ids.push(r.json.id);
        offsets.push(Date.parse(r.json.nextFireAt) % 86_400_000);
      }
    }
    // The next 5 fires of a sample of them, as offsets from midnight.
    const offsetsOf = async () => {
      const out = new Map<string, number[]>();
      for (const id of ids.slice(0, 10)) {
        const j = (await api(key, "GET", `/v1/jobs/${id}`)).json;
        out.set(
          id,
          (j.nextFires as string[]).map((f) => {
            const t = Date.parse(f);
            return t % 86_400_000;
          }),
        );
      }
      return out;
    };
    const before = await offsetsOf();
    for (const [id, o] of before) {
      expect(new Set(o).size).toBe(1); // every one of the next 5 fires: midnight + the same offset
      expect(o[0]).toBe(offsets[ids.indexOf(id)]);
    }
    for (const o of offsets) expect(o).toBeLessThan(WINDOW);
    // Even: 5 two-minute buckets of 40 expected each (a bucket outside 15–65 has p < 1e-6 for a uniform
    // offset).
    const buckets = [0, 0, 0, 0, 0];
    for (const o of offsets) buckets[Math.floor(o / 120_000)]++;
    for (const n of buckets) expect(n).toBeGreaterThanOrEqual(15);
    for (const n of buckets) expect(n).toBeLessThanOrEqual(65);

    // One job that fires now: every 5 s, spread over 5 s. Its deliveries carry cron time + offset.
    const fast = await api(key, "POST", "/v1/jobs", {
      name: "fast",
      schedule: { cron: "*/5 * * * * *", spread: "PT5S" },
      target,
    });
    expect(fast.status).toBe(201);
    const fastOffset = Date.parse(fast.json.nextFireAt) % 5_000;
    const firesOf = (id: string, after = 0) =>
      rx!.deliveries
        .map((d) => d.body as { jobId: string; scheduledFor: string })
        .filter((d) => d.jobId === id)
        .map((d) => Date.parse(d.scheduledFor))
        .filter((t) => t > after);
    await rx.waitFor(() => firesOf(fast.json.id).length >= 1, 30_000);
    for (const t of firesOf(fast.json.id)) expect(t % 5_000).toBe(fastOffset);

    // Restart: the same offsets, and the fast job keeps firing on its own.
    await server.stop();
    const lastBefore = Math.max(...firesOf(fast.json.id));
    server = await start();
    expect(await offsetsOf()).toEqual(before);
    await rx.waitFor(() => firesOf(fast.json.id, lastBefore).length >= 1, 30_000);
    for (const t of firesOf(fast.json.id)) expect(t % 5_000).toBe(fastOffset);

    // Edits keep the id, so the offset: a rename, then a new cron (06:00) under the same window.
    const [first, second] = ids;
    expect((await api(key, "PATCH", `/v1/jobs/${first}`, { name: "renamed" })).status).toBe(200);
    expect((await api(key, "PATCH", `/v1/jobs/${second}`, { schedule: { cron: "0 6 * * *" } })).status).toBe(200);
    const edited = await offsetsOf();
    expect(edited.get(first)).toEqual(before.get(first));
    const moved = (await api(key, "GET", `/v1/jobs/${second}`)).json;
    expect(moved.schedule.spread).toBe("PT10M");
    for (const f of moved.nextFires as string[]) {
      expect((Date.parse(f) - 6 * 3_600_000) % 86_400_000).toBe(before.get(second)![0]);
    }
    // The fast job moved to every 10 s keeps its offset: its new fires are on it.
    const patched = await api(key, "PATCH", `/v1/jobs/${fast.json.id}`, { schedule: { cron: "*/10 * * * * *" } });
    expect(patched.status).toBe(200);
    const patchedAt = Date.parse(patched.json.nextFireAt);
    expect(patchedAt % 10_000).toBe(fastOffset);
    await rx.waitFor(() => firesOf(fast.json.id, patchedAt - 1).length >= 1, 30_000);
    for (const t of firesOf(fast.json.id, patchedAt - 1)) expect(t % 10_000).toBe(fastOffset);
  }, 240_000);
});
