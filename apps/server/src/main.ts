// `npm start`: the Node server — API + executor in one process, embedded Postgres unless DATABASE_URL.
import { loadConfig } from "./config.ts";
import { installProcessGuards } from "./process-guards.ts";
import { startServer } from "./server.ts";

const cfg = loadConfig(process.env);
const server = await startServer(cfg);
installProcessGuards(server.log);
const db = cfg.DATABASE_URL ? "Postgres (DATABASE_URL)" : `embedded PGlite in ${cfg.FAIRWAY_DATA_DIR}`;
console.error(`Fairway ${cfg.FAIRWAY_ROLE} — database: ${db}; coordination: ${server.coordinator.kind}`);
if (server.url) console.error(`Listening on ${server.url}`);
if (server.adminTokenGenerated) {
  console.error(`Generated admin token (shown once; kept in ${cfg.FAIRWAY_DATA_DIR}/admin-token):\n  ${server.adminToken}`);
} else if (!cfg.FAIRWAY_ADMIN_TOKEN) {
  console.error(`Admin token: in ${cfg.FAIRWAY_DATA_DIR}/admin-token`);
}

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    console.error(`${signal}: draining…`);
    server.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
}
