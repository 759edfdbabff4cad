// 8. api — POST /v1/jobs requests/s over HTTP (auth, zod validation, SSRF check, one Postgres
// transaction with the maxJobs check) against a bare Hono route on the same server, both driven by a
// keep-alive undici loop with 50 requests in flight from this process. The embedded arm runs the same
// API process on Fairway's embedded PostgreSQL (the `npm start` default) instead of the machine's.
import { Agent, request } from "undici";
import { benchDb } from "../lib/db.ts";
import { embeddedDb } from "../lib/embedded.ts";
import { nextMessage, spawnWorker, stopChild } from "../lib/children.ts";
import type { BenchContext, Scenario } from "../lib/scenario.ts";

const IN_FLIGHT = 50;
const ADMIN = "bench-admin-token-0123456789abcdef";

async function load(
  agent: Agent,
  url: string,
  n: number,
  headers: Record<string, string>,
  body: string,
): Promise<number> {
  let next = 0;
  let failures = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < n) {
        const res = await request(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body,
          dispatcher: agent,
        });
        await res.body.text();
        if (res.statusCode !== 201) failures++;
      }
    }),
  );
  if (failures > 0) throw new Error(`${failures} of ${n} requests to ${url} failed`);
  return (n / (performance.now() - t0)) * 1000;
}

async function call(agent: Agent, url: string, token: string, body: object): Promise<Record<string, unknown>> {
  const res = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
    dispatcher: agent,
  });
  const json = (await res.body.json()) as Record<string, unknown>;
  if (res.statusCode !== 201) throw new Error(`${url}: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

export const api: Scenario = {
  name: "api",
  title: "POST /v1/jobs requests/s vs a bare Hono route on the same server",
  headline: {
    label: "api",
    keys: ["create_per_s", "ratio_vs_bare", "bare_per_s", "embedded_create_per_s", "ratio_embedded_vs_postgres"],
  },
  async run(ctx: BenchContext) {
    const n = ctx.quick ? 1_000 : 10_000;
    // The machine's Postgres and the embedded one, in turn (each run starts one further along).
    const first = ctx.run % 2 === 0;
    const onPostgres = () => measure(ctx, "postgres", n, benchDb);
    const onEmbedded = () => measure(ctx, "embedded", n, embeddedDb);
    const a = await (first ? onPostgres() : onEmbedded());
    const b = await (first ? onEmbedded() : onPostgres());
    const [pg, embedded] = first ? [a, b] : [b, a];
    return {
      ...pg,
      embedded_create_per_s: embedded.create_per_s,
      ratio_embedded_vs_postgres: embedded.create_per_s / pg.create_per_s,
    };
  },
};

/** POST /v1/jobs and the bare route on one API process over the database `open` gives. */
export async function measure(
  ctx: BenchContext,
  label: string,
  n: number,
  open: (max: number) => Promise<{ url: string; drop(): Promise<void> }>,
) {
  const tdb = await open(1);
  const server = spawnWorker("api-server.ts", { FAIRWAY_BENCH: JSON.stringify({ url: tdb.url, adminToken: ADMIN }) });
  const agent = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
  try {
    const { port } = await nextMessage<{ kind: string; port: number }>(server, (m) => m.kind === "listening");
    const base = `http://127.0.0.1:${port}`;
    await call(agent, `${base}/v1/admin/tenants`, ADMIN, { id: "bench", name: "Bench", maxJobs: 10_000_000 });
    const { key } = (await call(agent, `${base}/v1/admin/tenants/bench/keys`, ADMIN, {})) as { key: string };
    const body = JSON.stringify({
      name: "bench-job",
      type: "webhook",
      schedule: { delayMs: 3_600_000 },
      target: { url: "http://127.0.0.1:9/hook" },
      payload: { hello: "world" },
    });
    const auth = { authorization: `Bearer ${key}` };
    await load(agent, `${base}/bench/bare`, Math.min(n, 500), auth, body); // warm-up (JIT, connections)
    const bare_per_s = await load(agent, `${base}/bench/bare`, n, auth, body);
    ctx.log(`${label}: bare route ${Math.round(bare_per_s)}/s`);
    const create_per_s = await load(agent, `${base}/v1/jobs`, n, auth, body);
    ctx.log(`${label}: POST /v1/jobs ${Math.round(create_per_s)}/s`);
    return { create_per_s, bare_per_s, ratio_vs_bare: create_per_s / bare_per_s };
  } finally {
    await agent.close();
    await stopChild(server);
    await tdb.drop();
  }
}
