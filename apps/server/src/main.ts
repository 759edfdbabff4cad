// `npm start`: the Node server — API + executor in one process, embedded PostgreSQL unless DATABASE_URL.
// A start that fails prints one line (what is wrong, what to do) and exits 1.
import { join, resolve } from "node:path";
import { loadConfig, type Config } from "./config.ts";
import { redactUrl } from "./embedded-postgres.ts";
import { installProcessGuards } from "./process-guards.ts";
import { startServer, type Server } from "./server.ts";
import { startupMessage } from "./startup-error.ts";

let cfg: Config;
let server: Server | undefined;
let stopping = false;
// Handlers first: a signal that arrives while the server starts stops it once it is up, instead of
// killing the process with the embedded Postgres half started.
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`${signal}: draining…`);
    if (server) drain(server);
  });
}

function drain(s: Server): void {
  s.stop().then(
    () => {
      // The last line a supervisor's log shows: the drain finished and nothing is left running.
      console.error("Fairway stopped.");
      process.exit(0);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

try {
  cfg = loadConfig(process.env);
  server = await startServer(cfg);
} catch (err) {
  console.error(`fairway: ${startupMessage(err)}`);
  process.exit(1);
}
installProcessGuards(server.log);
if (stopping) drain(server);

const pg = server.embedded;
const db = pg ? `embedded PostgreSQL in ${join(cfg.FAIRWAY_DATA_DIR, "postgres")}` : "Postgres (DATABASE_URL)";
console.error(`Fairway ${cfg.FAIRWAY_ROLE} — database: ${db}; coordination: ${server.coordinator.kind}`);
if (pg) {
  const took = pg.created
    ? `created in ${(pg.initMs / 1000).toFixed(1)} s, started in ${(pg.startMs / 1000).toFixed(1)} s`
    : `started in ${(pg.startMs / 1000).toFixed(1)} s`;
  console.error(
    `Database URL: ${redactUrl(pg.url)} (${took}; full URL with password in ${join(cfg.FAIRWAY_DATA_DIR, "database-url")})`,
  );
}
if (server.url) {
  console.error(`Listening on ${server.url}`);
  console.error(`Dashboard: ${server.url}/dashboard`);
  console.error(`API docs:  ${server.url}/docs`);
}
const tokenFile = resolve(cfg.FAIRWAY_DATA_DIR, "admin-token");
if (server.adminTokenGenerated) {
  console.error(`Generated admin token (shown once; kept in ${tokenFile}):\n  ${server.adminToken}`);
} else if (!cfg.FAIRWAY_ADMIN_TOKEN) {
  console.error(`Admin token: in ${tokenFile}`);
} else {
  console.error("Admin token: FAIRWAY_ADMIN_TOKEN");
}
