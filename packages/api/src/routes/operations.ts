// Operations routes (admin token): pausing and resuming a pool, and the executors' heartbeats.
import { listExecutors, setPoolPaused } from "@fairway/store";
import { route } from "../route.ts";
import { fromZod } from "../errors.ts";
import { poolType } from "../schemas.ts";
import { poolJson } from "../serialize.ts";

const POOL_TYPE = { type: "The pool type, e.g. webhook or email.send" };

function poolTypeParam(raw: string): string {
  const type = poolType.safeParse(raw);
  if (!type.success) throw fromZod(type.error);
  return type.data;
}

export const operationsRoutes = [
  /** Claims of this type stop (running work finishes; pending work waits). Idempotent. */
  route({
    method: "post",
    path: "/v1/admin/pools/:type/pause",
    summary: "Stop claiming this type (running work finishes, nothing is lost)",
    params: POOL_TYPE,
    ok: { status: 200, description: "The pool", json: "Pool" },
    errors: [400],
    handler: async (c) => {
      const type = poolTypeParam(c.req.param("type"));
      const cfg = await setPoolPaused(c.var.deps.db, type, true);
      c.var.log.info("pool paused", { type });
      return c.json(poolJson(cfg));
    },
  }),
  /** Claims of this type start again; executors are woken to reload the pool at once. Idempotent. */
  route({
    method: "post",
    path: "/v1/admin/pools/:type/resume",
    summary: "Claim this type again",
    params: POOL_TYPE,
    ok: { status: 200, description: "The pool", json: "Pool" },
    errors: [400],
    handler: async (c) => {
      const type = poolTypeParam(c.req.param("type"));
      const cfg = await setPoolPaused(c.var.deps.db, type, false);
      c.var.log.info("pool resumed", { type });
      await c.var.deps.coordinator
        .wake()
        .catch((err) => c.var.log.warn("wake failed; executors reload pools within seconds", { err }));
      return c.json(poolJson(cfg));
    },
  }),
  /** Live executors and those lost or stopped in the last hour: identity, last heartbeat, per pool
   *  concurrency and triggers in flight. */
  route({
    method: "get",
    path: "/v1/admin/executors",
    summary: "Live executors, and those lost or stopped in the last hour",
    ok: { status: 200, description: "The executors", json: "ExecutorList" },
    handler: async (c) => {
      const rows = await listExecutors(c.var.deps.db);
      return c.json({
        data: rows.map((r) => ({
          id: r.id,
          status: r.status,
          host: r.host,
          pid: r.pid,
          version: r.version,
          startedAt: r.startedAt,
          lastHeartbeatAt: r.heartbeatAt,
          heartbeatTimeoutMs: r.heartbeatTimeoutMs,
          stoppedAt: r.stoppedAt,
          lostAt: r.lostAt,
          pools: Object.entries(r.pools).map(([type, p]) => ({
            type,
            concurrency: p.concurrency,
            inFlight: p.inFlight,
          })),
        })),
      });
    },
  }),
];
