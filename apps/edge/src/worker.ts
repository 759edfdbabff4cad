// The Cloudflare Worker entry: `fetch` serves the same Hono app as the Node server,
// `scheduled` (cron, every minute) runs the executor for most of that minute. Both build their
// dependencies per invocation from the bindings; the logic lives in the packages.
import { clientAddress, createApp, dashboardCommands, resolveDeps, type ApiCoordinator } from "@fairway/api";
import { dashboardApp } from "@fairway/dashboard";
import { ConfigError, readConfig, type Env } from "./env.ts";
import { API_DB_POOL, noCoordination, openStore, upstashFor } from "./connections.ts";
import { runExecutor } from "./run-executor.ts";

/** The parts of the Workers runtime types this file uses (no @cloudflare/workers-types dependency). */
interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}
interface ScheduledController {
  readonly scheduledTime: number;
  readonly cron: string;
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    let cfg;
    try {
      cfg = await readConfig(env);
    } catch (err) {
      if (err instanceof ConfigError) return misconfigured(err);
      throw err;
    }
    const store = openStore(cfg, API_DB_POOL);
    try {
      const deps = resolveDeps({
        db: store.db,
        coordinator: keptAlive(upstashFor(cfg) ?? noCoordination, ctx),
        adminToken: cfg.adminToken,
        allowPrivateTargets: cfg.allowPrivateTargets,
        apiRatePerSecond: cfg.apiRatePerSecond,
        secretsKey: cfg.secretsKey,
        metricsToken: cfg.metricsToken,
        metricsTopTenants: cfg.metricsTopTenants,
        portalOrigins: cfg.portalOrigins,
        portalBrand: cfg.portalBrand,
        log: cfg.log,
        emailUnavailable: cfg.mailApi
          ? undefined
          : "the Worker sends email only through an HTTP mail API (set FAIRWAY_MAIL_API_URL and FAIRWAY_MAIL_API_KEY); use a webhook or slack channel",
      });
      // The API with the dashboard next to it, as on the Node server (apps/server/src/app.ts).
      const app = createApp(deps);
      app.route("/dashboard", dashboardApp({ ...deps, commands: dashboardCommands(deps), clientAddress }));
      return await app.fetch(request);
    } finally {
      // Responses are fully built (no streaming bodies), so the connection can go once we return.
      ctx.waitUntil(store.close());
    }
  },

  async scheduled(controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    const cfg = await readConfig(env); // a ConfigError fails the invocation: visible in the cron logs
    ctx.waitUntil(runExecutor(cfg, controller.scheduledTime));
  },
};

/** The API fires its hints for executors (markReady, wake) without awaiting them; a Worker cancels
 *  such I/O once the response is sent, so each one is handed to waitUntil to finish. */
function keptAlive(coord: ApiCoordinator, ctx: ExecutionContext): ApiCoordinator {
  const keep = <T>(p: Promise<T>): Promise<T> => {
    ctx.waitUntil(p.catch(() => {})); // failures are the caller's to log; here it only must not be cut off
    return p;
  };
  return {
    limit: (key, limit, windowMs) => coord.limit(key, limit, windowMs),
    wake: () => keep(coord.wake()),
    markReady: (type, tenantId, dueAtMs) => keep(coord.markReady(type, tenantId, dueAtMs)),
  };
}

function misconfigured(err: ConfigError): Response {
  const body = { error: { code: "misconfigured", message: `the Worker is misconfigured: ${err.message}` } };
  return Response.json(body, { status: 500 });
}
