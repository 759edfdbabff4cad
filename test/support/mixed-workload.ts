// A mixed workload for a deadlock drill: from the API and two executors for `runMs` — creates, cron
// fires every second, retries, 410 Gone (which pauses a cron job from its settle), keyed jobs with
// every onBusy policy, PATCHes, pauses and resumes, runs now, backfills and their cancels, and
// retention deleting history aged past its window. Returns what it did and every line any component
// logged or any call failed with that names a deadlock. Used on one PostgreSQL (test/faults) and on a
// Citus cluster (test/citus).
import { createLogger } from "@fairway/core";
import { createMemoryCoordinator } from "@fairway/coord";
import { Executor } from "@fairway/executor";
import { createUndiciTransport } from "@fairway/executor/node";
import { query, sql, type Db } from "@fairway/store";
import { appFor, call, tenantWithKey, type App } from "../faults/support/api.ts";
import type { Receiver } from "./receiver.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A loop of `step` until `end`, each failure recorded (a deadlock surfaces as one). */
async function keepDoing(end: number, failures: string[], step: () => Promise<unknown>, pauseMs: number) {
  while (Date.now() < end) {
    await step().catch((err: unknown) => void failures.push(String(err)));
    await sleep(pauseMs);
  }
}

export interface MixedWorkload {
  deliveries: number;
  attempts: number;
  /** Log lines and failures that name a deadlock (none expected). */
  deadlocks: string[];
}

export async function mixedWorkload(db: Db, receiver: Receiver, runMs: number): Promise<MixedWorkload> {
  const logged: string[] = [];
  const log = createLogger({ level: "warn", write: (line) => void logged.push(line) });
  const app: App = appFor({ db, coordinator: createMemoryCoordinator() });
  const hook = (path: string) => ({ url: `${receiver.url}${path}` });
  const tenants = ["d1", "d2", "d3"];
  const keys = new Map<string, string>();
  const cronJobs = new Map<string, string[]>();
  for (const t of tenants) {
    keys.set(t, await tenantWithKey(app, t, { maxInFlight: 4, historyRetentionDays: 1, deadRetentionDays: 1 }));
    const jobs: string[] = [];
    const crons: Array<Record<string, unknown>> = [
      { target: hook("/ok") },
      { target: hook("/status/500"), retry: { maxAttempts: 3, initialDelayMs: 100, maxDelayMs: 200 } },
      { target: hook("/status/410") },
      { target: hook("/slow/300"), key: "acct-1", onBusy: "skip" },
      { target: hook("/slow/300"), key: "acct-1", onBusy: "replace_queued" },
      { target: hook("/slow/500"), key: "acct-2", onBusy: "cancel_running" },
      { target: hook("/slow/200"), key: "acct-2" },
      { target: hook("/ok"), overlap: "skip" },
    ];
    for (const [i, extra] of crons.entries()) {
      const r = await call(app, "POST", "/v1/jobs", keys.get(t)!, {
        name: `cron-${i}`,
        schedule: { cron: "* * * * * *" },
        ...extra,
      });
      if (r.status !== 201) throw new Error(`cron job: ${r.status} ${JSON.stringify(r.json)}`);
      jobs.push(r.json.id);
    }
    cronJobs.set(t, jobs);
  }
  const transport = createUndiciTransport({ allowPrivate: true });
  const executors = [0, 1].map(() =>
    new Executor({
      db,
      transport,
      allowPrivateTargets: true,
      log,
      pollMs: 20,
      reapEveryMs: 200,
      poolRefreshMs: 500,
      retention: { everyMs: 500, batch: 50, share: 1 },
    }).start(),
  );
  const failures: string[] = [];
  const end = Date.now() + runMs;
  const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
  const tenant = () => pick(tenants);
  try {
    await Promise.all([
      // One-time creates, keyed and not, due now.
      keepDoing(
        end,
        failures,
        () =>
          call(app, "POST", "/v1/jobs", keys.get(tenant())!, {
            name: "once",
            schedule: { delayMs: 0 },
            target: hook(pick(["/ok", "/status/500", "/slow/100"])),
            ...(Math.random() < 0.5 ? { key: pick(["acct-1", "acct-2", "acct-3"]) } : {}),
          }),
        10,
      ),
      // PATCHes of the schedule, pauses and resumes, runs now.
      keepDoing(
        end,
        failures,
        async () => {
          const t = tenant();
          const id = pick(cronJobs.get(t)!);
          const what = pick(["patch", "pause", "resume", "run"]);
          if (what === "patch")
            return call(app, "PATCH", `/v1/jobs/${id}`, keys.get(t)!, {
              schedule: { cron: pick(["* * * * * *", "*/2 * * * * *"]) },
            });
          return call(app, "POST", `/v1/jobs/${id}/${what}`, keys.get(t)!, {});
        },
        50,
      ),
      // Backfills of the last half minute, some cancelled at once.
      keepDoing(
        end,
        failures,
        async () => {
          const t = tenant();
          const id = pick(cronJobs.get(t)!);
          const now = Date.now();
          const r = await call(app, "POST", `/v1/jobs/${id}/backfill`, keys.get(t)!, {
            from: new Date(now - 30_000).toISOString(),
            to: new Date(now - 1_000).toISOString(),
            overlap: "allow",
          });
          if (r.status === 201 && Math.random() < 0.5)
            await call(app, "DELETE", `/v1/backfills/${r.json.id}`, keys.get(t)!);
        },
        300,
      ),
      // History aged past its retention, for the executors' retention to delete while all else runs.
      keepDoing(
        end,
        failures,
        () =>
          db.execute(sql`
            UPDATE triggers SET finished_at = now() - interval '3 days'
             WHERE id IN (SELECT id FROM triggers WHERE finished_at IS NOT NULL AND finished_at > now() - interval '1 day'
                           ORDER BY id LIMIT 100)`),
        500,
      ),
    ]);
  } finally {
    await Promise.all(executors.map((e) => e.stop(1000)));
    await transport.close();
  }
  const [work] = await query<{ attempts: number }>(db, sql`SELECT count(*)::int AS attempts FROM attempts`);
  return {
    deliveries: receiver.deliveries.length,
    attempts: work!.attempts,
    deadlocks: [...logged, ...failures].filter((l) => /deadlock/i.test(l)),
  };
}
