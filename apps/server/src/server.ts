// Builds the Node server from its config: database (embedded PostgreSQL or DATABASE_URL), coordinator
// (memory, Redis or Upstash), the API and/or the executor. Used by main.ts and by tests that embed a
// server. A start that fails stops what it had started (the embedded Postgres included) before throwing.
import { createServer } from "node:net";
import { hostname } from "node:os";
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { createAdaptorServer, type ServerType } from "@hono/node-server";
import { createCoordinatorFromEnv, type Coordinator } from "@fairway/coord";
import { createLogger, generateSecretsKey, loadSecretsKeyring, randomToken, type Logger } from "@fairway/core";
import { Executor, type Handler } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { connectPostgres, sql, type Store } from "@fairway/store";
import { migrate, probeDatabase, type DatabaseProbe } from "@fairway/store/node";
import { portalBrandOf, type Config } from "./config.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import { redactUrl, startEmbeddedPostgres, type EmbeddedPostgres } from "./embedded-postgres.ts";
import { StartupError } from "./startup-error.ts";
import { serverApp } from "./app.ts";
import { withDbDeadline } from "./db-deadline.ts";
import { Admission } from "@fairway/api";
import { mailerFor } from "./mailer.ts";
import { createServerMetrics } from "./metrics.ts";
import { executorReadiness } from "./readiness.ts";
import { startTracing } from "./tracing.ts";

/** The listening socket's accept queue (see the listen below). */
const LISTEN_BACKLOG = 4096;
export interface Server {
  url: string | null;
  adminToken: string;
  adminTokenGenerated: boolean;
  store: Store;
  /** The embedded PostgreSQL, when DATABASE_URL is unset. */
  embedded: EmbeddedPostgres | null;
  coordinator: Coordinator;
  executor: Executor | null;
  log: Logger;
  stop(): Promise<void>;
}

export async function startServer(
  cfg: Config,
  opts: { handlers?: Record<string, Handler>; log?: Logger } = {},
): Promise<Server> {
  const log = opts.log ?? createLogger({ level: cfg.FAIRWAY_LOG_LEVEL });
  const undo: Array<() => unknown> = [];
  try {
    return await build(cfg, opts, log, undo);
  } catch (err) {
    for (const step of undo.reverse())
      await Promise.resolve()
        .then(step)
        .catch(() => {});
    throw err;
  }
}

async function build(
  cfg: Config,
  opts: { handlers?: Record<string, Handler> },
  log: Logger,
  undo: Array<() => unknown>,
): Promise<Server> {
  let embedded: EmbeddedPostgres | null = null;
  let lock: { release(): void } | null = null;
  // A port in use is refused before anything is created: a first start would otherwise initdb a whole
  // cluster (seconds) only to fail at listen. The real listen below still reports a port lost since.
  if (cfg.FAIRWAY_ROLE !== "executor" && cfg.PORT !== 0) await portIsFree(cfg);
  if (!cfg.DATABASE_URL) {
    lock = lockDataDir(ensureDir(cfg.FAIRWAY_DATA_DIR));
    undo.push(() => lock!.release());
    embedded = await startEmbeddedPostgres({ dataDir: cfg.FAIRWAY_DATA_DIR, port: cfg.FAIRWAY_EMBEDDED_PG_PORT, log });
    undo.push(() => embedded!.stop());
  }
  const dbUrl = cfg.DATABASE_URL ?? embedded!.url;
  const pooled = cfg.DATABASE_URL ? await checkDatabase(cfg, cfg.DATABASE_URL, log) : false;
  // Migrations hold a session (an advisory lock, lock_timeout) and so run on Postgres itself; their
  // connection closes before the pool opens, whose connections then start with the planner defaults.
  const directUrl = cfg.DATABASE_DIRECT_URL ?? dbUrl;
  // No deadline: a migration's DDL may wait for its lock or build an index for longer.
  const direct = connectPostgres(directUrl, { max: 1, deadlineMs: 0 });
  try {
    await reachable(direct, directUrl);
    await migrate(direct, { log: (line) => log.warn(line), distribute: cfg.FAIRWAY_DISTRIBUTE });
  } finally {
    await direct.close();
  }
  const store = connectPostgres(dbUrl, {
    max: cfg.FAIRWAY_DB_POOL,
    prepare: cfg.FAIRWAY_DB_PREPARE ?? !pooled,
    deadlineMs: cfg.FAIRWAY_DB_DEADLINE_MS,
    onDeadline: (err) => log.error("a statement went unanswered; the connection pool was replaced", { err }),
  });
  undo.push(() => store.close());
  await reachable(store, dbUrl);
  // /healthz and /readyz ask on a connection of their own: a probe never waits behind tenants' requests
  // for one of the pool's.
  const probeStore =
    cfg.FAIRWAY_ROLE !== "executor"
      ? connectPostgres(dbUrl, {
          max: 1,
          prepare: cfg.FAIRWAY_DB_PREPARE ?? !pooled,
          deadlineMs: cfg.FAIRWAY_DB_DEADLINE_MS,
        })
      : null;
  if (probeStore) undo.push(() => probeStore.close());
  const coordinator = createCoordinatorFromEnv(
    cfg as unknown as Record<string, string | undefined>,
    cfg.FAIRWAY_REDIS_PREFIX,
  );
  undo.push(() => coordinator.close());
  const { token: adminToken, generated } = adminTokenFor(cfg);
  const secretsKey = await loadSecretsKeyring(secretsKeyFor(cfg), cfg.FAIRWAY_SECRETS_KEY_PREVIOUS);

  const runApi = cfg.FAIRWAY_ROLE !== "executor";
  const runExecutor = cfg.FAIRWAY_ROLE !== "api";
  const serverMetrics = createServerMetrics();
  const transport = createUndiciTransport({ allowPrivate: cfg.FAIRWAY_ALLOW_PRIVATE_TARGETS });
  const mailer = mailerFor(cfg);
  // Before anything that makes spans; null (and nothing loaded) unless an OTLP endpoint is set.
  const tracing = await startTracing(cfg);
  if (tracing) undo.push(() => tracing.shutdown());
  const executor = runExecutor
    ? new Executor({
        db: store.db,
        transport,
        handlers: opts.handlers,
        wake: coordinator,
        readyIndex: coordinator,
        pollMs: cfg.FAIRWAY_POLL_MS,
        allowPrivateTargets: cfg.FAIRWAY_ALLOW_PRIVATE_TARGETS,
        secretsKey,
        observer: serverMetrics.observer,
        mailer,
        stallMs: cfg.FAIRWAY_LOOP_STALL_MS,
        tracer: tracing?.executor,
        heartbeat: {
          everyMs: cfg.FAIRWAY_HEARTBEAT_MS,
          timeoutMs: cfg.FAIRWAY_HEARTBEAT_TIMEOUT_MS,
          host: hostname(),
          pid: process.pid,
        },
        log,
      })
    : null;
  if (executor) serverMetrics.bindExecutor(executor);

  let http: ServerType | null = null;
  let closeDeadline: (() => Promise<void>) | null = null;
  let url: string | null = null;
  if (runApi) {
    const app = serverApp(
      {
        db: store.db,
        probeDb: probeStore?.db,
        coordinator,
        adminToken,
        allowPrivateTargets: cfg.FAIRWAY_ALLOW_PRIVATE_TARGETS,
        handlerTypes: new Set(Object.keys(opts.handlers ?? {})),
        apiRatePerSecond: cfg.FAIRWAY_API_RATE_PER_SECOND,
        // Tenant requests at once stay under the database pool (two connections left for /healthz and
        // the executor's loops): past it they would queue for a connection, everyone's behind the
        // flooder's, where admission cannot order them.
        admission: cfg.FAIRWAY_API_ADMISSION ? new Admission(poolSized(cfg.FAIRWAY_DB_POOL)) : null,
        secretsKey,
        portalOrigins: cfg.FAIRWAY_PORTAL_ORIGINS,
        portalBrand: portalBrandOf(cfg),
        log,
        tracing: tracing?.api,
        metricsText: () => serverMetrics.registry.metrics(),
        metricsToken: cfg.FAIRWAY_METRICS_TOKEN,
        metricsTopTenants: cfg.FAIRWAY_METRICS_TOP_TENANTS,
        executorReadiness: executor ? executorReadiness(executor, cfg.FAIRWAY_READY_STALL_MS) : undefined,
        emailUnavailable: mailer
          ? undefined
          : "this server has neither FAIRWAY_SMTP_URL nor FAIRWAY_MAIL_API_URL; set one and restart",
      },
      { traceUrlTemplate: cfg.FAIRWAY_TRACE_URL_TEMPLATE },
    );
    const deadline = withDbDeadline(app.fetch as never, dbUrl, {
      waitMs: cfg.FAIRWAY_DB_WAIT_MS,
      probeMs: Math.min(2000, cfg.FAIRWAY_DB_WAIT_MS),
      prepare: cfg.FAIRWAY_DB_PREPARE ?? !pooled,
    });
    closeDeadline = deadline.close;
    undo.push(() => deadline.close());
    const listening = await new Promise<{ port: number }>((done, fail) => {
      const server = createAdaptorServer({ fetch: deadline.fetch, hostname: cfg.HOST });
      http = server;
      server.once("error", (err: NodeJS.ErrnoException) => fail(listenError(err, cfg)));
      // A burst of new connections (a client opening one per request) waits in the kernel's accept
      // queue until the event loop takes it: past the queue a SYN is dropped and that client, or any
      // other connecting at that moment, retries after 1 s, 3 s, 7 s. Node's default queue is 511; the
      // kernel caps this at net.core.somaxconn.
      server.listen({ port: cfg.PORT, host: cfg.HOST, backlog: LISTEN_BACKLOG }, () =>
        done(server.address() as { port: number }),
      );
    });
    url = `http://${cfg.HOST}:${listening.port}`;
  }
  // The executor starts once the port is ours: a start that fails to listen has run nothing.
  if (executor) {
    executor.start();
    undo.push(() => executor.stop(0));
  }

  return {
    url,
    adminToken,
    adminTokenGenerated: generated,
    store,
    embedded,
    coordinator,
    executor,
    log,
    async stop() {
      // Drain HTTP first (no new work), then the executor within its grace period, then connections,
      // and the embedded Postgres last: the executor's last settles still need it.
      if (http) await closeHttp(http);
      await executor?.stop(cfg.FAIRWAY_GRACE_MS);
      await tracing?.shutdown();
      await transport.close();
      await coordinator.close();
      await closeDeadline?.();
      await probeStore?.close();
      await store.close();
      await embedded?.stop();
      lock?.release();
    },
  };
}

/** Stops taking connections and waits for the open ones to finish. A browser keeps its connections
 *  alive and reuses them (an open dashboard page refreshes itself), so one that was busy when the
 *  close began would stay open until its keep-alive timeout: each is closed as soon as it is idle. */
async function closeHttp(http: ServerType): Promise<void> {
  const server = http as unknown as { closeIdleConnections?: () => void };
  const sweep = setInterval(() => server.closeIdleConnections?.(), 100);
  sweep.unref();
  try {
    await new Promise<void>((done) => http.close(() => done()));
  } finally {
    clearInterval(sweep);
  }
}

/** Whether DATABASE_URL is a transaction pooler; refuses a pooler without a direct URL (or a pooler as
 *  the direct URL) with one line, and waits, saying so once, while the database is a read-only standby
 *  (a failover in progress, or a URL that reaches a replica). */
async function checkDatabase(cfg: Config, url: string, log: Logger): Promise<boolean> {
  const probe = await probeOrFail(url, "DATABASE_URL");
  if (probe.transactionPooler && !cfg.DATABASE_DIRECT_URL)
    throw new StartupError(
      `DATABASE_URL (${redactUrl(url)}) is a transaction pooler: set DATABASE_DIRECT_URL to Postgres itself, not the pooler, for the migrations and their session lock (the API and executors keep DATABASE_URL); see docs/production.md`,
    );
  const directUrl = cfg.DATABASE_DIRECT_URL ?? url;
  let direct = directUrl === url ? probe : await probeOrFail(directUrl, "DATABASE_DIRECT_URL");
  if (direct.transactionPooler)
    throw new StartupError(
      `DATABASE_DIRECT_URL (${redactUrl(directUrl)}) is a transaction pooler too: point it at Postgres itself (its own host and port); see docs/production.md`,
    );
  for (let said = false; direct.readOnly; ) {
    if (!said)
      log.warn(
        `Postgres at ${redactUrl(directUrl)} is a read-only standby: waiting for it to be promoted (point the URL at the primary, or list every host with ?target_session_attrs=read-write)`,
      );
    said = true;
    await new Promise((r) => setTimeout(r, 1000));
    direct = await probeDatabase(directUrl).catch(() => direct);
  }
  return probe.transactionPooler;
}

async function probeOrFail(url: string, name: string): Promise<DatabaseProbe> {
  try {
    return await probeDatabase(url);
  } catch (err) {
    throw new StartupError(
      `cannot connect to Postgres at ${redactUrl(url)}: ${errorLine(err)}; check that it is running and that ${name} is right`,
    );
  }
}

function errorLine(err: unknown): string {
  let e = err as { code?: string; message?: string; cause?: unknown };
  while (e.cause && typeof e.cause === "object") e = e.cause as typeof e; // drizzle wraps the driver's error
  const what = e.message?.split("\n")[0] ?? String(err);
  return `${what}${e.code && !what.includes(e.code) ? ` (${e.code})` : ""}`;
}

/** Fail the start with one line if the database cannot be reached (wrong URL, server down, bad password). */
async function reachable(store: Store, url: string): Promise<void> {
  try {
    await store.db.execute(sql`select 1`);
  } catch (err) {
    throw new StartupError(
      `cannot connect to Postgres at ${redactUrl(url)}: ${errorLine(err)}; check that it is running and that DATABASE_URL is right`,
    );
  }
}

/** Listens on HOST:PORT and lets go at once; a StartupError if that fails. */
async function portIsFree(cfg: Config): Promise<void> {
  const probe = createServer();
  await new Promise<void>((done, fail) => {
    probe.once("error", (err: NodeJS.ErrnoException) => fail(listenError(err, cfg)));
    probe.listen({ port: cfg.PORT, host: cfg.HOST, exclusive: true }, () => probe.close(() => done()));
  });
}

function listenError(err: NodeJS.ErrnoException, cfg: Config): Error {
  if (err.code === "EADDRINUSE")
    return new StartupError(
      `port ${cfg.PORT} on ${cfg.HOST} is in use by another process; stop it, or set PORT to a free port`,
    );
  if (err.code === "EACCES")
    return new StartupError(`not allowed to listen on ${cfg.HOST}:${cfg.PORT}; use a port above 1023 (PORT)`);
  if (err.code === "EADDRNOTAVAIL")
    return new StartupError(`HOST=${cfg.HOST} is not an address of this machine; use 127.0.0.1 or 0.0.0.0`);
  return err;
}

function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return resolve(dir);
}

/** The secrets key: from the environment, or generated once and kept in the data dir (like the token). */
function secretsKeyFor(cfg: Config): string {
  if (cfg.FAIRWAY_SECRETS_KEY) return cfg.FAIRWAY_SECRETS_KEY;
  const file = join(ensureDir(cfg.FAIRWAY_DATA_DIR), "secrets-key");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const key = generateSecretsKey();
  writeFileSync(file, key + "\n", { mode: 0o600 });
  return key;
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

/** Admission's bound within the database pool, less two connections. */
function poolSized(pool: number) {
  const max = Math.max(4, pool - 2);
  return { maxLimit: max, initialLimit: max, minLimit: Math.min(4, max - 2) };
}
