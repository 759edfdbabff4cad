// One executor in its own process, so a drill can kill -9, SIGSTOP/SIGCONT or SIGTERM it like a real
// deploy would. Configured by environment (see children.ts); talks on stdout in JSON lines:
//   {"event":"ready","owner":…}           once the loop runs
//   {"event":"stopped","stats":{…}}       after SIGTERM: stop(grace) finished; then exit 0
// Warnings from the executor's logger ("lease lost", "settle failed") go to stdout as JSON too.
import { createLogger } from "@fairway/core";
import { createRedisCoordinator } from "@fairway/coord";
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { connectPostgres } from "@fairway/store";
import { installProcessGuards } from "../../../apps/server/src/process-guards.ts";

const env = process.env;
const num = (name: string, dflt: number) => (env[name] ? Number(env[name]) : dflt);

const store = connectPostgres(env.DATABASE_URL!, { max: num("DB_POOL", 4) });
const coordinator = env.REDIS_URL ? createRedisCoordinator({ url: env.REDIS_URL, prefix: env.REDIS_PREFIX }) : null;
const transport = createUndiciTransport({ allowPrivate: true });
const log = createLogger({ level: "warn", write: (line) => process.stdout.write(line + "\n") });
// The same process guard as the Node server entry (apps/server/src/main.ts).
installProcessGuards(log);
const executor = new Executor({
  db: store.db,
  transport,
  wake: coordinator ?? undefined,
  owner: env.OWNER,
  pollMs: num("POLL_MS", 50),
  reapEveryMs: num("REAP_MS", 250),
  poolRefreshMs: 500,
  allowPrivateTargets: true,
  settleLingerMs: env.SETTLE_LINGER_MS ? Number(env.SETTLE_LINGER_MS) : undefined,
  heartbeat: { everyMs: num("HEARTBEAT_MS", 5000), timeoutMs: num("HEARTBEAT_TIMEOUT_MS", 30_000), pid: process.pid },
  log,
}).start();
process.stdout.write(JSON.stringify({ event: "ready", owner: executor.owner }) + "\n");

process.once("SIGTERM", async () => {
  await executor.stop(num("GRACE_MS", 5000));
  process.stdout.write(JSON.stringify({ event: "stopped", stats: executor.stats }) + "\n");
  await transport.close();
  await coordinator?.close();
  await store.close();
  process.exit(0);
});
