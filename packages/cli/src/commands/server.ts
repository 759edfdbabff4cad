// `fairway start` and `fairway migrate`: the Node server as `npm start` runs it, configured by the same
// environment variables (flags override them).
import type { Command } from "commander";
import { loadConfig } from "@fairway/server/src/config.ts";
import { installProcessGuards } from "@fairway/server/src/process-guards.ts";
import { startServer } from "@fairway/server";
import { connectPostgres } from "@fairway/store";
import { connectPglite, migrate } from "@fairway/store/node";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";

interface ServerFlags {
  port?: string;
  host?: string;
  dataDir?: string;
  databaseUrl?: string;
  role?: string;
}

function env(flags: ServerFlags): Record<string, string | undefined> {
  return {
    ...process.env,
    ...(flags.port !== undefined ? { PORT: flags.port } : {}),
    ...(flags.host ? { HOST: flags.host } : {}),
    ...(flags.dataDir ? { FAIRWAY_DATA_DIR: flags.dataDir } : {}),
    ...(flags.databaseUrl ? { DATABASE_URL: flags.databaseUrl } : {}),
    ...(flags.role ? { FAIRWAY_ROLE: flags.role } : {}),
  };
}

const withServerFlags = (c: Command) =>
  c
    .option("--database-url <url>", "Postgres URL (env DATABASE_URL); unset = embedded PGlite in the data dir")
    .option("--data-dir <dir>", "embedded database and generated admin token (env FAIRWAY_DATA_DIR, default ./.fairway)");

export function serverCommands(program: Command): void {
  withServerFlags(
    program
      .command("start")
      .description("run the server: API and executor in one process (all FAIRWAY_* variables apply)")
      .option("-p, --port <port>", "HTTP port (env PORT, default 8787)")
      .option("--host <host>", "listen address (env HOST, default 127.0.0.1)")
      .option("--role <role>", "all | api | executor (env FAIRWAY_ROLE, default all)"),
  ).action(async (flags: ServerFlags) => {
    const cfg = loadConfig(env(flags));
    const server = await startServer(cfg);
    installProcessGuards(server.log);
    const db = cfg.DATABASE_URL ? "Postgres (DATABASE_URL)" : `embedded PGlite in ${cfg.FAIRWAY_DATA_DIR}`;
    console.error(`Fairway ${cfg.FAIRWAY_ROLE} — database: ${db}; coordination: ${server.coordinator.kind}`);
    if (server.url) console.error(`Listening on ${server.url} (API reference: ${server.url}/docs)`);
    if (server.adminTokenGenerated) {
      console.error(`Generated admin token (shown once; kept in ${cfg.FAIRWAY_DATA_DIR}/admin-token):\n  ${server.adminToken}`);
    }
    let stopping = false;
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      process.on(signal, () => {
        if (stopping) return;
        stopping = true;
        console.error(`${signal}: draining…`);
        server.stop().then(() => process.exit(0), (err) => {
          console.error(err);
          process.exit(1);
        });
      });
    }
  });

  withServerFlags(program.command("migrate").description("apply the database migrations and exit (start also does this)")).action(
    async (flags: ServerFlags) => {
      const cfg = loadConfig(env(flags));
      const dir = resolve(cfg.FAIRWAY_DATA_DIR, "pgdata");
      if (!cfg.DATABASE_URL) mkdirSync(dir, { recursive: true });
      const store = cfg.DATABASE_URL ? connectPostgres(cfg.DATABASE_URL, { max: 1 }) : await connectPglite(dir);
      await migrate(store);
      await store.close();
      console.error(`migrations applied (${cfg.DATABASE_URL ? "DATABASE_URL" : `embedded PGlite in ${cfg.FAIRWAY_DATA_DIR}`})`);
    },
  );
}
