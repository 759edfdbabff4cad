// `fairway tail`: follows attempts as they finish, by polling (the API has no push). Each poll reads
// the newest triggers of each job; a trigger whose attempt count grew is read in full and its new
// attempts are printed. Every poll's attempts, across all jobs, are printed together oldest first (by
// start, then trigger and number), so --all prints its backlog oldest first and then the new ones as
// they come, in one order. Attempts that finished before tail started are printed only with --all.
import type { Command } from "commander";
import type { Attempt, Job } from "@fairway/sdk";
import { tenantClient, type GlobalOptions } from "../context.ts";
import { int } from "../parse.ts";

interface TailFlags {
  job?: string;
  all?: boolean;
  intervalMs: number;
  exitAfter?: number;
}

export function tailCommand(program: Command, globals: () => GlobalOptions): void {
  program
    .command("tail")
    .description("follow attempts as they finish (tenant API key); Ctrl-C to stop")
    .option("--job <id>", "only this job")
    .option("--all", "first print the attempts of the newest 20 triggers of each job")
    .option("--interval-ms <n>", "poll interval", int, 1000)
    .option("--exit-after <n>", "exit after printing this many attempts", int)
    .action(async (o: TailFlags) => {
      const g = globals();
      const client = tenantClient(g);
      const seen = new Map<string, number>(); // trigger id → attempts already printed
      let first = !o.all;
      let printed = 0;
      for (;;) {
        const jobs: Job[] = [];
        if (o.job) jobs.push(await client.jobs.get(o.job));
        else for await (const j of client.jobs.all({ limit: 200 })) jobs.push(j);
        const found: Found[] = [];
        for (const job of jobs) {
          const { data } = await client.jobs.triggers(job.id, { limit: 20 });
          for (const t of data) {
            const before = seen.get(t.id) ?? 0;
            if (t.attemptCount <= before) continue;
            seen.set(t.id, t.attemptCount);
            if (first) continue;
            const full = await client.triggers.get(t.id);
            for (const a of (full.attempts ?? []).filter((a) => a.attempt > before))
              found.push({ job, triggerId: full.id, status: full.status, a });
          }
        }
        for (const f of found.sort(oldestFirst)) {
          process.stdout.write(line(g, f.job, f.triggerId, f.status, f.a) + "\n");
          if (o.exitAfter && ++printed >= o.exitAfter) return;
        }
        first = false;
        await new Promise((r) => setTimeout(r, o.intervalMs));
      }
    });
}

interface Found {
  job: Job;
  triggerId: string;
  status: string;
  a: Attempt;
}

const oldestFirst = (x: Found, y: Found) =>
  x.a.startedAt.localeCompare(y.a.startedAt) || x.triggerId.localeCompare(y.triggerId) || x.a.attempt - y.a.attempt;

function line(g: GlobalOptions, job: Job, triggerId: string, status: string, a: Attempt): string {
  if (g.json) return JSON.stringify({ jobId: job.id, jobName: job.name, triggerId, triggerStatus: status, ...a });
  const result = a.httpStatus ? `${a.outcome} ${a.httpStatus}` : a.outcome;
  return `${a.startedAt}  ${job.name} (${job.id})  ${triggerId} #${a.attempt}  ${result}  ${Math.round(a.durationMs)}ms${a.error ? `  ${a.error}` : ""}`;
}
