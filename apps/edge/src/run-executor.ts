// One scheduled invocation = one bounded executor run (docs/architecture.md): materialize, reap, claim
// and dispatch in the ordinary loop for runMs, then a graceful stop — running webhooks get graceMs to
// finish and settle, the rest are aborted and their leases released, so nothing this run claimed is
// left leased behind it. Defaults (50 s + 5 s) end the run before the next minute's cron fires.
//
// Overlapping runs (a slow run meeting the next cron, or two isolates) are safe by construction:
// claims lock with SKIP LOCKED, every later write is fenced by the lease token, and a crashed run's
// leases expire and are reaped by whichever run comes next.
import { Executor, createFetchTransport, createHttpMailer } from "@fairway/executor";
import type { EdgeConfig } from "./env.ts";
import { EXECUTOR_DB_POOL, openStore, upstashFor } from "./connections.ts";

export interface RunSummary {
  owner: string;
  claimed: number;
  settled: number;
  released: number;
  reaped: number;
  loopErrors: number;
}

export async function runExecutor(cfg: EdgeConfig, scheduledTime: number): Promise<RunSummary> {
  const store = openStore(cfg, EXECUTOR_DB_POOL);
  const log = cfg.log.child({ scheduledTime: new Date(scheduledTime).toISOString() });
  const executor = new Executor({
    db: store.db,
    // The platform fetch: connect-time address checks are the platform's job here
    // (global_fetch_strictly_public), see docs/deploy-cloudflare.md.
    transport: createFetchTransport(),
    // The ready-tenant index lets an idle pool cost no Postgres query. Upstash REST has no push, so
    // there are no wake hints: the loop polls every pollMs.
    readyIndex: upstashFor(cfg) ?? undefined,
    pollMs: cfg.pollMs,
    allowPrivateTargets: cfg.allowPrivateTargets,
    secretsKey: cfg.secretsKey,
    mailer: cfg.mailApi ? createHttpMailer(cfg.mailApi) : undefined,
    log,
  });
  try {
    executor.start();
    await new Promise((resolve) => setTimeout(resolve, cfg.runMs));
    await executor.stop(cfg.graceMs);
  } finally {
    await store.close().catch((err) => log.error("closing the database failed", { err }));
  }
  const summary = { owner: executor.owner, ...executor.stats };
  log.info("scheduled run finished", { ...summary });
  return summary;
}
