// A batch of tagged jobs on the embedded default and on a real Postgres, through the SDK against the
// server process and a real receiver: one request creates them (a bad item refused in its result),
// the list filters them by tag, and each delivery's envelope carries its job's tags. And a leading
// debounce: of 20 creates in one quiet period the first fires at once and the rest join it, delivered
// once ("once" read after a later job's delivery, never from a wall-clock wait).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, type FairwayClient } from "@fairway/sdk";
import { jsonApi, serverBackends } from "../support/backends.ts";
import { startFairway, type FairwayProcess } from "../support/fairway-process.ts";
import { startReceiver, type Receiver } from "../support/receiver.ts";

const ADMIN = `fwadmin_batch_tags_${Date.now()}`;

describe.each(serverBackends)("a batch of tagged jobs on %s", (_name, backend) => {
  let server: FairwayProcess;
  let rx: Receiver;
  let done: () => Promise<void>;
  let client: FairwayClient;
  let key: string;
  const api = jsonApi(() => server.url);

  beforeAll(async () => {
    const b = await backend();
    done = b.done;
    rx = await startReceiver();
    server = await startFairway({ ...b.env, FAIRWAY_ADMIN_TOKEN: ADMIN });
    const tenant = await api(ADMIN, "POST", "/v1/admin/tenants", { id: "acme", name: "Acme" });
    rx.secrets = [tenant.json.signingSecret];
    key = (await api(ADMIN, "POST", "/v1/admin/tenants/acme/keys")).json.key;
    client = createClient({ baseUrl: server.url, apiKey: key });
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
    await rx?.close();
    await done?.();
  });

  it("creates them in one request, lists them by tag, and delivers each with its tags", async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({
      name: `reminder-${i}`,
      schedule: { delayMs: 0 },
      target: { url: `${rx.url}/ok/reminder/${i}` },
      payload: { i },
      tags: { customer: i % 2 === 0 ? "even" : "odd", import: "2026-12" },
      idempotencyKey: `reminder-${i}`,
    }));
    const { results } = await client.jobs.createMany([
      ...items,
      { ...items[0]!, name: "x", idempotencyKey: "bad", tags: { BAD: "x" } },
    ]);
    expect(results.map((r) => r.status)).toEqual([...items.map(() => 201), 400]);
    const even = await client.jobs.list({ tags: { customer: "even", import: "2026-12" }, limit: 100 });
    const all = await client.jobs.list({ tags: { import: "2026-12" }, limit: 100 });
    expect(all.data).toHaveLength(40);
    expect(even.data.map((j) => j.name).sort()).toEqual(
      items
        .filter((_, i) => i % 2 === 0)
        .map((j) => j.name)
        .sort(),
    );

    await rx.waitFor((ds) => ds.filter((d) => d.path.startsWith("/ok/reminder/")).length === 40, 60_000);
    const got = rx.deliveries.filter((d) => d.path.startsWith("/ok/reminder/"));
    expect(got.every((d) => d.verified)).toBe(true);
    const tagsByPayload = new Map(
      got.map((d) => {
        const b = d.body as { payload: { i: number }; tags: Record<string, string> };
        return [b.payload.i, b.tags];
      }),
    );
    expect(tagsByPayload.get(3)).toEqual({ customer: "odd", import: "2026-12" });
    expect(tagsByPayload.get(4)).toEqual({ customer: "even", import: "2026-12" });
    expect(tagsByPayload.size).toBe(40);
  });

  it("a leading debounce of 20 creates delivers once, at the first", async () => {
    const create = (n: number) =>
      api(key, "POST", "/v1/jobs", {
        name: "lead",
        schedule: { delayMs: 0 },
        target: { url: `${rx.url}/ok/lead` },
        payload: { n },
        debounce: { key: "burst", periodMs: 600_000, mode: "leading" },
      });
    const answers = [];
    for (let n = 1; n <= 20; n++) answers.push(await create(n));
    const first = answers[0]!;
    expect(first.status, JSON.stringify(first.json)).toBe(201);
    expect(answers.slice(1).map((a) => [a.status, a.json.debounced?.joined])).toEqual(
      Array.from({ length: 19 }, () => [200, first.json.id]),
    );
    await rx.waitFor((ds) => ds.some((d) => d.path === "/ok/lead"), 30_000);
    // A later job's delivery: whatever the burst could have fired has been decided by then.
    await client.jobs.create({ name: "marker", schedule: { delayMs: 0 }, target: { url: `${rx.url}/ok/lead-marker` } });
    await rx.waitFor((ds) => ds.some((d) => d.path === "/ok/lead-marker"), 30_000);
    const got = rx.deliveries.filter((d) => d.path === "/ok/lead");
    expect(got.map((d) => (d.body as { payload: unknown }).payload)).toEqual([{ n: 1 }]);
    expect((await client.jobs.get(first.json.id)).debounce?.folded).toBe(19);
  });
});
