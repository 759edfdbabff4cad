// The API under test for the api scenario, in its own process: Fairway's real Hono app on Postgres
// (memory coordination, API rate limit off), served by @hono/node-server, next to a bare Hono route
// on the same server — the HTTP limit POST /v1/jobs is compared with.
import { serve } from "@hono/node-server";
import { Hono } from "hono";
import { createApp } from "@fairway/api";
import { createMemoryCoordinator } from "@fairway/coord";
import { connectPostgres } from "@fairway/store";

const { url, adminToken } = JSON.parse(process.env.FAIRWAY_BENCH ?? "{}") as { url: string; adminToken: string };
const store = connectPostgres(url, { max: 10 });
const app = createApp({
  db: store.db,
  coordinator: createMemoryCoordinator(),
  adminToken,
  allowPrivateTargets: true,
  apiRatePerSecond: 0,
});
const outer = new Hono();
outer.post("/bench/bare", async (c) => c.json({ ok: true, got: Object.keys(await c.req.json()).length }, 201));
outer.all("*", (c) => app.fetch(c.req.raw));

const server = serve({ fetch: outer.fetch, port: 0, hostname: "127.0.0.1" }, (info) => {
  process.send!({ kind: "listening", port: info.port });
});
process.on("message", (m) => {
  if (m !== "stop") return;
  server.close(() => void store.close().finally(() => process.exit(0)));
});
