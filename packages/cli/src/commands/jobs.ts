// Tenant commands (an API key): jobs, triggers.
import type { Command } from "commander";
import type { CreateJobInput, Job, ScheduleInput, Trigger } from "@fairway/sdk";
import { fail, print, table, tenantClient, type GlobalOptions } from "../context.ts";
import { int, json } from "../parse.ts";

const jobColumns = ["id", "name", "type", "status", "schedule", "nextFireAt"];
const jobLine = (j: Job) => table([j as never], jobColumns);
const triggerLine = (t: Trigger) =>
  table([t as never], ["id", "jobId", "status", "attemptCount", "scheduledFor", "finishedAt"]);

interface CreateFlags {
  name: string;
  type?: string;
  cron?: string;
  timezone?: string;
  spread?: string;
  at?: string;
  delayMs?: number;
  target?: string;
  method?: "POST" | "PUT" | "PATCH" | "GET" | "DELETE";
  payload?: unknown;
  maxAttempts?: number;
  timeoutMs?: number;
  idempotencyKey?: string;
  key?: string;
  onBusy?: "queue" | "skip" | "replace_queued" | "cancel_running";
}

function schedule(o: CreateFlags): ScheduleInput {
  const given = [o.cron, o.at, o.delayMs].filter((v) => v !== undefined).length;
  if (given !== 1)
    fail("give exactly one schedule: --cron '<expr>' [--timezone Europe/Berlin], --at <ISO-8601>, or --delay-ms <n>");
  if (o.cron) {
    return { cron: o.cron, ...(o.timezone ? { timezone: o.timezone } : {}), ...(o.spread ? { spread: o.spread } : {}) };
  }
  if (o.at) return { at: o.at };
  return { delayMs: o.delayMs! };
}

export function jobCommands(program: Command, globals: () => GlobalOptions): void {
  const jobs = program.command("jobs").description("jobs (tenant API key)");
  jobs
    .command("list")
    .description("list jobs")
    .option("--limit <n>", "at most this many", int)
    .option("--key <key>", "only jobs with this fairness key")
    .action(async (o: { limit?: number; key?: string }) => {
      const g = globals();
      const rows: Job[] = [];
      for await (const j of tenantClient(g).jobs.all(o.key === undefined ? {} : { key: o.key })) {
        rows.push(j);
        if (o.limit && rows.length >= o.limit) break;
      }
      print(g, rows, (r) => table(r as never, jobColumns));
    });
  jobs
    .command("get")
    .description("a job with its next fires")
    .argument("<id>")
    .action(async (id: string) => {
      const g = globals();
      print(
        g,
        await tenantClient(g).jobs.get(id),
        (j) => `${jobLine(j)}${j.nextFires ? `\nnext fires: ${j.nextFires.join(", ")}` : ""}`,
      );
    });
  jobs
    .command("create")
    .description(
      "create a job: a webhook (--target <url>) or, for a type a worker serves, a handler job (--type, no --target)",
    )
    .requiredOption("--name <name>", "job name")
    .option("--type <type>", "pool type (default webhook)")
    .option("--cron <expr>", "cron schedule")
    .option("--timezone <zone>", "IANA zone for --cron (default UTC)")
    .option("--spread <duration>", "spread --cron's fires over this window, e.g. PT10M (a fixed offset per job)")
    .option("--at <iso>", "one run at this instant")
    .option("--delay-ms <n>", "one run after this delay", int)
    .option("--target <url>", "webhook URL")
    .option("--method <method>", "HTTP method (default POST)")
    .option("--payload <json>", "JSON payload", json)
    .option("--max-attempts <n>", "attempts before a dead letter", int)
    .option("--timeout-ms <n>", "per-attempt timeout", int)
    .option("--idempotency-key <key>", "send as Idempotency-Key")
    .option("--key <key>", "fairness key: shares and caps inside the tenant are per key (see `fairway keys`)")
    .option(
      "--on-busy <policy>",
      "with --key: what a trigger does while the key is at its cap: queue, skip, replace_queued or cancel_running",
    )
    .action(async (o: CreateFlags) => {
      const g = globals();
      const input: CreateJobInput = {
        name: o.name,
        schedule: schedule(o),
        ...(o.key !== undefined ? { key: o.key } : {}),
        ...(o.onBusy !== undefined ? { onBusy: o.onBusy } : {}),
        ...(o.type ? { type: o.type } : {}),
        ...(o.target ? { target: { url: o.target, ...(o.method ? { method: o.method } : {}) } } : {}),
        ...(o.payload !== undefined ? { payload: o.payload } : {}),
        ...(o.maxAttempts ? { retry: { maxAttempts: o.maxAttempts } } : {}),
        ...(o.timeoutMs ? { timeoutMs: o.timeoutMs } : {}),
      };
      print(g, await tenantClient(g).jobs.create(input, { idempotencyKey: o.idempotencyKey }), jobLine);
    });
  for (const [verb, what] of [
    ["pause", "pause a job"],
    ["resume", "resume a paused job"],
    ["delete", "cancel a job and its pending triggers"],
  ] as const) {
    jobs
      .command(verb)
      .description(what)
      .argument("<id>")
      .action(async (id: string) => {
        const g = globals();
        print(g, await tenantClient(g).jobs[verb](id), jobLine);
      });
  }
  jobs
    .command("run")
    .description("fire a job now; prints the new trigger")
    .argument("<id>")
    .action(async (id: string) => {
      const g = globals();
      print(g, await tenantClient(g).jobs.run(id), triggerLine);
    });

  const triggers = program
    .command("triggers")
    .description("triggers: one run of a job, with its attempts (tenant API key)");
  triggers
    .command("get")
    .description("a trigger with its attempts")
    .argument("<id>")
    .action(async (id: string) => {
      const g = globals();
      print(
        g,
        await tenantClient(g).triggers.get(id),
        (t) =>
          `${triggerLine(t)}\n\n${table((t.attempts ?? []) as never, ["attempt", "startedAt", "durationMs", "outcome", "httpStatus", "error"])}`,
      );
    });
  triggers
    .command("replay")
    .description("replay a dead letter")
    .argument("<id>")
    .action(async (id: string) => {
      const g = globals();
      print(g, await tenantClient(g).triggers.replay(id), triggerLine);
    });
}
