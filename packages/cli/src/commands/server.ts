// `fairway start` and `fairway migrate`: the Node server as `npm start` runs it, configured by the same
// environment variables (flags override them).
import type { Command } from "commander";
import { mkdirSync } from "node:fs";
import { loadConfig } from "@fairway/server/src/config.ts";
import { lockDataDir } from "@fairway/server/src/data-dir-lock.ts";
import { startEmbeddedPostgres } from "@fairway/server/src/embedded-postgres.ts";
import { startupMessage } from "@fairway/server/src/startup-error.ts";
import { createLogger } from "@fairway/core";
import { connectPostgres } from "@fairway/store";
import { migrate } from "@fairway/store/node";

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
    .option("--database-url <url>", "Postgres URL (env DATABASE_URL); unset = embedded PostgreSQL in the data dir")
    .option(
      "--data-dir <dir>",
      "embedded database and generated admin token (env FAIRWAY_DATA_DIR, default ./.fairway)",
    );

export function serverCommands(program: Command): void {
  withServerFlags(
    program
      .command("start")
      .description("run the server: API and executor in one process (all FAIRWAY_* variables apply)")
      .option("-p, --port <port>", "HTTP port (env PORT, default 8787)")
      .option("--host <host>", "listen address (env HOST, default 127.0.0.1)")
      .option("--role <role>", "all | api | executor (env FAIRWAY_ROLE, default all)"),
  ).action(async (flags: ServerFlags) => {
    // Exactly what `npm start` runs (one-line startup errors, signals, the embedded default), with the
    // flags as its environment.
    Object.assign(process.env, env(flags));
    await import("@fairway/server/src/main.ts");
  });

  withServerFlags(
    program.command("migrate").description("apply the database migrations and exit (start also does this)"),
  ).action(async (flags: ServerFlags) => {
    try {
      const cfg = loadConfig(env(flags));
      if (cfg.DATABASE_URL) {
        // Postgres itself: through a transaction pooler the migrator's session would be scattered.
        const store = connectPostgres(cfg.DATABASE_DIRECT_URL ?? cfg.DATABASE_URL, { max: 1, deadlineMs: 0 });
        await migrate(store).finally(() => store.close());
        console.error(`migrations applied (${cfg.DATABASE_DIRECT_URL ? "DATABASE_DIRECT_URL" : "DATABASE_URL"})`);
        return;
      }
      mkdirSync(cfg.FAIRWAY_DATA_DIR, { recursive: true });
      const lock = lockDataDir(cfg.FAIRWAY_DATA_DIR);
      try {
        const pg = await startEmbeddedPostgres({
          dataDir: cfg.FAIRWAY_DATA_DIR,
          port: cfg.FAIRWAY_EMBEDDED_PG_PORT,
          log: createLogger({ level: "warn" }),
        });
        const store = connectPostgres(pg.url, { max: 1, deadlineMs: 0 });
        try {
          await migrate(store);
        } finally {
          await store.close();
          await pg.stop();
        }
      } finally {
        lock.release();
      }
      console.error(`migrations applied (embedded PostgreSQL in ${cfg.FAIRWAY_DATA_DIR})`);
    } catch (err) {
      console.error(`fairway: ${startupMessage(err)}`);
      process.exitCode = 1;
    }
  });
}
