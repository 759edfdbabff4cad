// front-door — one tenant floods the real server process (apps/server, as `npm start` runs it, on the
// machine's Postgres) with creates open loop at three times what the server serves it alone, from a
// process of its own (workers/flood-client.ts); another tenant creates at a steady 20/s (a quarter of
// that when the server serves less than 80/s), jobs due at
// once that the server's executor delivers to a target in this process, and /healthz is probed 10/s.
// The calm tenant's create and create-to-delivery p99, and /healthz p99, alone and during the flood,
// the flood's 429s, and this process's event-loop delay (a measuring process that lags would
// misreport the server). /healthz is probed over a connection of its own. Admission is on and the fixed per-tenant rate off: what refuses the flooder
// is admission alone. The bound: the calm figures within 2x of alone, /healthz under 100 ms.
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { startServerProcess, type ServerProcess } from "../../../test/support/server-process.ts";
import { benchDb } from "../lib/db.ts";
import type { BenchContext, Scenario } from "../lib/scenario.ts";
import { percentile } from "../lib/stats.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The calm tenant's deliveries: each job's target path carries its number; the arrival time is kept. */
async function receiver(): Promise<{ server: Server; url: string; arrived: Map<number, number> }> {
  const arrived = new Map<number, number>();
  const server = createServer((req, res) => {
    const n = Number(/\/calm\/(\d+)/.exec(req.url ?? "")?.[1]);
    if (Number.isFinite(n) && !arrived.has(n)) arrived.set(n, performance.now());
    req.resume();
    req.on("end", () => res.writeHead(200).end("ok"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as { port: number }).port;
  return { server, url: `http://127.0.0.1:${port}`, arrived };
}

interface Phase {
  createMs: number[];
  deliveryMs: number[];
  healthMs: number[];
  refused: number;
  undelivered: number;
}

export const frontDoor: Scenario = {
  name: "front-door",
  title: "a calm tenant's creates and deliveries, and /healthz, alone and while another floods the API",
  headline: {
    label: "front-door",
    keys: [
      "create_p99_vs_alone",
      "delivery_p99_vs_alone",
      "health_p99_during_ms",
      "flood_429",
      "create_p99_alone_ms",
      "create_p99_during_ms",
      "delivery_p99_alone_ms",
      "delivery_p99_during_ms",
      "health_p99_alone_ms",
      "capacity_per_s",
      "probe_lag_p99_ms",
      "server_lag_max_during_ms",
    ],
  },
  async run(ctx: BenchContext) {
    const calmCount = ctx.quick ? 40 : 100;
    const floodSeconds = ctx.quick ? 3 : 8;
    const tdb = await benchDb(2);
    const target = await receiver();
    const agent = new Agent({ connections: 16, keepAliveTimeout: 30_000 });
    // The probe's own connection, as a load balancer's or an orchestrator's: a probe queued behind the
    // calm tenant's creates in this process would measure this client, not the server.
    const probeAgent = new Agent({ connections: 1, keepAliveTimeout: 30_000 });
    let server: ServerProcess | null = null;
    const lag = monitorEventLoopDelay({ resolution: 10 });
    try {
      server = await startServerProcess({
        DATABASE_URL: tdb.url,
        FAIRWAY_API_RATE_PER_SECOND: "0",
        // FRONT_DOOR_ADMISSION=false: the same flood with admission off, to compare the two.
        FAIRWAY_API_ADMISSION: process.env.FRONT_DOOR_ADMISSION ?? "true",
      });
      const base = server.url;
      const admin = { authorization: `Bearer ${server.adminToken}`, "content-type": "application/json" };
      const keys: Record<string, string> = {};
      for (const id of ["flood", "calm"]) {
        const t = await request(`${base}/v1/admin/tenants`, {
          method: "POST",
          headers: admin,
          body: JSON.stringify({ id, name: id, maxJobs: 10_000_000 }),
          dispatcher: agent,
        });
        await t.body.text();
        if (t.statusCode !== 201) throw new Error(`tenant ${id}: ${t.statusCode}`);
        const k = await request(`${base}/v1/admin/tenants/${id}/keys`, {
          method: "POST",
          headers: admin,
          dispatcher: agent,
        });
        keys[id] = ((await k.body.json()) as { key: string }).key;
      }
      const post = async (tenant: string, body: string) => {
        const t0 = performance.now();
        const r = await request(`${base}/v1/jobs`, {
          method: "POST",
          headers: { authorization: `Bearer ${keys[tenant]}`, "content-type": "application/json" },
          body,
          dispatcher: agent,
          headersTimeout: 60_000,
        });
        await r.body.text();
        return { status: r.statusCode, ms: performance.now() - t0, at: t0 };
      };
      const later = JSON.stringify({
        name: "fd",
        schedule: { delayMs: 3_600_000 },
        target: { url: "http://127.0.0.1:9/x" },
      });

      // What the server serves the flooder alone: closed loop, 16 at once.
      await post("flood", later);
      let served = 0;
      const measureMs = ctx.quick ? 1000 : 3000;
      const until = performance.now() + measureMs;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (performance.now() < until) if ((await post("flood", later)).status === 201) served++;
        }),
      );
      const capacity = served / (measureMs / 1000);
      // The calm tenant's pace: 20/s, or a quarter of what the server serves when the machine is busier
      // than that allows (a calm tenant is a small part of the server's work, well within its share).
      const calmEveryMs = Math.max(50, 4000 / capacity);

      let next = 0;
      const phase = async (): Promise<Phase> => {
        const healthMs: number[] = [];
        let done = false;
        const probing = (async () => {
          while (!done) {
            const t0 = performance.now();
            const r = await request(`${base}/healthz`, { dispatcher: probeAgent, headersTimeout: 60_000 });
            await r.body.text();
            healthMs.push(performance.now() - t0);
            await sleep(100);
          }
        })();
        const sent: Array<Promise<{ n: number; status: number; ms: number; at: number }>> = [];
        const t0 = performance.now();
        for (let i = 0; i < calmCount; i++) {
          const wait = t0 + i * calmEveryMs - performance.now();
          if (wait > 1) await sleep(wait);
          const n = next++;
          const body = JSON.stringify({
            name: `calm-${n}`,
            schedule: { delayMs: 0 },
            target: { url: `${target.url}/calm/${n}` },
          });
          sent.push(post("calm", body).then((r) => ({ n, ...r })));
        }
        const answers = await Promise.all(sent);
        done = true;
        await probing;
        const ok = answers.filter((a) => a.status === 201);
        // Every acknowledged create is delivered; what has not arrived after a minute is counted.
        const deadline = performance.now() + 60_000;
        while (ok.some((a) => !target.arrived.has(a.n)) && performance.now() < deadline) await sleep(50);
        return {
          createMs: ok.map((a) => a.ms),
          deliveryMs: ok.filter((a) => target.arrived.has(a.n)).map((a) => target.arrived.get(a.n)! - a.at),
          healthMs,
          refused: answers.length - ok.length,
          undelivered: ok.filter((a) => !target.arrived.has(a.n)).length,
        };
      };

      // The server's own event-loop delay (prom-client's, reset at each scrape) over each phase.
      const serverLag = async () => {
        const r = await request(`${base}/metrics`, { headers: admin, dispatcher: agent, headersTimeout: 60_000 });
        const text = await r.body.text();
        const read = (name: string) =>
          Number(new RegExp(`^fairway_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, "m").exec(text)?.[1]) * 1000;
        const num = (re: RegExp) => Number(re.exec(text)?.[1] ?? Number.NaN);
        return {
          p99: read("p99"),
          max: read("max"),
          limit: num(/^fairway_api_concurrency_limit (\S+)$/m),
          calmQueued: num(/^fairway_api_queued_total\{tenant="calm"\} (\S+)$/m),
        };
      };
      lag.enable();
      await serverLag();
      const alone = await phase();
      const lagAlone = await serverLag();
      const rate = Math.max(50, Math.round(3 * capacity));
      const flooding = flood(base, keys.flood, rate, rate * floodSeconds);
      // The calm phase starts once the flood fills its share (about a second in).
      await sleep(1000);
      const during = await phase();
      const lagDuring = await serverLag();
      const flooded = await flooding;
      lag.disable();

      const p99 = (xs: number[]) => (xs.length ? percentile(xs, 99) : Number.NaN);
      const figures = {
        capacity_per_s: capacity,
        calm_per_s: 1000 / calmEveryMs,
        flood_rate_per_s: rate,
        flood_201: flooded.statuses["201"] ?? 0,
        flood_429: flooded.statuses["429"] ?? 0,
        flood_other: Object.entries(flooded.statuses)
          .filter(([s]) => s !== "201" && s !== "429")
          .reduce((n, [, c]) => n + c, 0),
        create_p99_alone_ms: p99(alone.createMs),
        create_p99_during_ms: p99(during.createMs),
        create_p99_vs_alone: p99(during.createMs) / p99(alone.createMs),
        delivery_p99_alone_ms: p99(alone.deliveryMs),
        delivery_p99_during_ms: p99(during.deliveryMs),
        delivery_p99_vs_alone: p99(during.deliveryMs) / p99(alone.deliveryMs),
        health_p99_alone_ms: p99(alone.healthMs),
        health_p99_during_ms: p99(during.healthMs),
        calm_refused: alone.refused + during.refused,
        calm_undelivered: alone.undelivered + during.undelivered,
        probe_lag_p99_ms: lag.percentile(99) / 1e6,
        server_lag_max_alone_ms: lagAlone.max,
        server_lag_max_during_ms: lagDuring.max,
        server_lag_p99_during_ms: lagDuring.p99,
        // The adaptive limit as the flood ends, and the calm tenant's requests that waited for a slot.
        limit_during: lagDuring.limit,
        calm_queued: lagDuring.calmQueued - (Number.isNaN(lagAlone.calmQueued) ? 0 : lagAlone.calmQueued),
      };
      ctx.log(
        `capacity ${Math.round(capacity)}/s, flood ${rate}/s: ${JSON.stringify(flooded.statuses)}; calm create p99 ` +
          `${Math.round(figures.create_p99_alone_ms)} → ${Math.round(figures.create_p99_during_ms)} ms, delivery p99 ` +
          `${Math.round(figures.delivery_p99_alone_ms)} → ${Math.round(figures.delivery_p99_during_ms)} ms, /healthz p99 ` +
          `${Math.round(figures.health_p99_alone_ms)} → ${Math.round(figures.health_p99_during_ms)} ms; server ` +
          `event-loop delay max ${Math.round(lagAlone.max)} → ${Math.round(lagDuring.max)} ms; limit ${lagDuring.limit}, ` +
          `calm waited for a slot ${figures.calm_queued} times`,
      );
      return figures;
    } finally {
      lag.disable();
      await agent.close();
      await probeAgent.close();
      await server?.stop();
      await new Promise((r) => target.server.close(r));
      await tdb.drop();
    }
  },
};

/** The flood client's process; resolves with its answer counts. */
function flood(url: string, key: string, rate: number, count: number) {
  const script = fileURLToPath(new URL("../workers/flood-client.ts", import.meta.url));
  const tsx = fileURLToPath(new URL("../../../node_modules/.bin/tsx", import.meta.url));
  const child = spawn(tsx, [script, url, key, String(rate), String(count)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  return new Promise<{ statuses: Record<string, number> }>((resolve, reject) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(JSON.parse(out));
      else reject(new Error(`flood client exited ${code}: ${out}`));
    });
  });
}
