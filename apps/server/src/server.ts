// Builds the Node server from its config: database (PGlite or Postgres), coordinator (memory, Redis
// or Upstash), the API and/or the executor. Used by main.ts and by tests that embed a server.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { serve, type ServerType } from "@hono/node-server";
import { createApp } from "@fairway/api";
import { createCoordinatorFromEnv, type Coordinator } from "@fairway/coord";
import { createLogger, randomToken, type Logger } from "@fairway/core";
import { Executor, type Handler } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { connectPostgres, type Store } from "@fairway/store";
import { connectPglite, migrate } from "@fairway/store/node";
import type { Config } from "./config.ts";

export interface Server {
  url: string | null;
  adminToken: string;
  adminTokenGenerated: boolean;
  store: Store;
  coordinator: Coordinator;
  executor: Executor | null;
  log: Logger;
  stop(): Promise<void>;
}

export async function startServer(cfg: Config, opts: { handlers?: Record<string, Handler>; log?: Logger } = {}): Promise<Server> {
  const log = opts.log ?? createLogger({ level: cfg.FAIRWAY_LOG_LEVEL });
  const store = cfg.DATABASE_URL
    ? connectPostgres(cfg.DATABASE_URL, { max: cfg.FAIRWAY_DB_POOL })
    : await connectPglite(ensureDir(join(cfg.FAIRWAY_DATA_DIR, "pgdata")));
  await migrate(store);
  const coordinator = createCoordinatorFromEnv(cfg as unknown as Record<string, string | undefined>, cfg.FAIRWAY_REDIS_PREFIX);
  const { token: adminToken, generated } = adminTokenFor(cfg);

  const runApi = cfg.FAIRWAY_ROLE !== "executor";
  const runExecutor = cfg.FAIRWAY_ROLE !== "api";
  const transport = createUndiciTransport({ allowPrivate: cfg.FAIRWAY_ALLOW_PRIVATE_TARGETS });
  const executor = runExecutor
    ? new Executor({
        db: store.db,
        transport,
        handlers: opts.handlers,
        wake: coordinator,
        readyIndex: coordinator,
        pollMs: cfg.FAIRWAY_POLL_MS,
        allowPrivateTargets: cfg.FAIRWAY_ALLOW_PRIVATE_TARGETS,
        log,
      }).start()
    : null;

  let http: ServerType | null = null;
  let url: string | null = null;
  if (runApi) {
    const app = createApp({
      db: store.db,
      coordinator,
      adminToken,
      allowPrivateTargets: cfg.FAIRWAY_ALLOW_PRIVATE_TARGETS,
      handlerTypes: new Set(Object.keys(opts.handlers ?? {})),
      apiRatePerSecond: cfg.FAIRWAY_API_RATE_PER_SECOND,
      portalOrigins: cfg.FAIRWAY_PORTAL_ORIGINS,
      log,
      metrics: () => executorMetrics(executor),
    });
    const listening = await new Promise<{ port: number }>((done) => {
      http = serve({ fetch: app.fetch, port: cfg.PORT, hostname: cfg.HOST }, (info) => done(info));
    });
    url = `http://${cfg.HOST}:${listening.port}`;
  }

  return {
    url,
    adminToken,
    adminTokenGenerated: generated,
    store,
    coordinator,
    executor,
    log,
    async stop() {
      // Drain HTTP first (no new work), then the executor within its grace period, then connections.
      if (http) await new Promise<void>((done) => http!.close(() => done()));
      await executor?.stop(cfg.FAIRWAY_GRACE_MS);
      await transport.close();
      await coordinator.close();
      await store.close();
    },
  };
}

function executorMetrics(e: Executor | null): Record<string, number> {
  if (!e) return {};
  return {
    fairway_executor_claimed_total: e.stats.claimed,
    fairway_executor_settled_total: e.stats.settled,
    fairway_executor_reaped_total: e.stats.reaped,
    fairway_executor_loop_errors_total: e.stats.loopErrors,
  };
}

function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return resolve(dir);
}

/** The admin token: from the environment, or generated once and kept in the data dir. */
function adminTokenFor(cfg: Config): { token: string; generated: boolean } {
  if (cfg.FAIRWAY_ADMIN_TOKEN) return { token: cfg.FAIRWAY_ADMIN_TOKEN, generated: false };
  const file = join(ensureDir(cfg.FAIRWAY_DATA_DIR), "admin-token");
  if (existsSync(file)) return { token: readFileSync(file, "utf8").trim(), generated: false };
  const token = `fwadmin_${randomToken(32)}`;
  writeFileSync(file, token + "\n", { mode: 0o600 });
  return { token, generated: true };
}
