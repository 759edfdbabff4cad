// Tenant commands (an API key): jobs, triggers.
import { readFileSync } from "node:fs";
import { InvalidArgumentError, type Command } from "commander";
import { scheduleInWords } from "@fairway/core";
import type { CreateJobInput, Job, JsonValue, ScheduleInput, Trigger } from "@fairway/sdk";
import { fail, print, table, tenantClient, type GlobalOptions } from "../context.ts";
import { int, json } from "../parse.ts";

const jobColumns = ["id", "name", "type", "status", "schedule", "lastRun", "failing", "nextFireAt", "tags"];
/** A job as the tables show it: the schedule in words (as the dashboard says it), the last outcome
 *  with its time, and the failure streak. --json prints the API's objects as they are. */
const jobRow = (j: Job) => ({
  ...j,
  schedule:
    "cron" in j.schedule
      ? `${scheduleInWords(j.schedule.cron, j.schedule.timezone, null)}${j.schedule.spread ? `, spread over ${j.schedule.spread}` : ""}`
      : `once at ${j.schedule.at}`,
  lastRun: j.lastRun ? `${j.lastRun.outcome} ${j.lastRun.at}` : undefined,
  failing: j.failureStreak > 0 ? `${j.failureStreak} dead in a row` : undefined,
  tags: Object.entries(j.tags ?? {})
    .map(([k, v]) => `${k}:${v}`)
    .join(" "),
});
const jobTable = (rows: Job[]) => table(rows.map(jobRow) as never, jobColumns);
const jobLine = (j: Job) => jobTable([j]);
const triggerLine = (t: Trigger) =>
  table([t as never], ["id", "jobId", "status", "attemptCount", "scheduledFor", "finishedAt"]);

interface CreateFlags {
  name?: string;
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
  debounceKey?: string;
  debounceMs?: number;
  maxWaitMs?: number;
  debounceMode?: "trailing" | "leading";
  tag: Record<string, string>;
  file?: string;
  onBusy?: "queue" | "skip" | "replace_queued" | "cancel_running";
}

/** jobs create --file: the batch's results, one line each (index, status, the job id or the error). */
async function createFromFile(g: GlobalOptions, path: string): Promise<void> {
  let items: unknown;
  try {
    items = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    fail(`--file ${path}: ${(e as Error).message}`);
  }
  if (!Array.isArray(items)) fail(`--file ${path}: must hold a JSON array of create bodies`);
  const { results } = await tenantClient(g).jobs.createMany(items as Array<CreateJobInput>);
  print(g, results, (rows) =>
    table(
      rows.map((r) => ({
        index: r.index,
        status: r.status,
        id: "job" in r ? r.job.id : undefined,
        error: "error" in r ? `${r.error.code}: ${r.error.message}` : undefined,
      })) as never,
      ["index", "status", "id", "error"],
    ),
  );
}

/** --tag name:value, repeated: the first colon ends the name. */
function tagOption(value: string, tags: Record<string, string>): Record<string, string> {
  const at = value.indexOf(":");
  if (at < 1) throw new InvalidArgumentError("must be name:value, e.g. env:prod");
  return { ...tags, [value.slice(0, at)]: value.slice(at + 1) };
}

function debounceMode(value: string): "trailing" | "leading" {
  if (value !== "trailing" && value !== "leading") throw new InvalidArgumentError("must be trailing or leading");
  return value;
}

/** --debounce-key with --debounce-ms (and --max-wait-ms): the body's debounce, or nothing. */
function debounce(o: CreateFlags): Pick<CreateJobInput, "debounce"> {
  if (
    o.debounceKey === undefined &&
    o.debounceMs === undefined &&
    o.maxWaitMs === undefined &&
    o.debounceMode === undefined
  )
    return {};
  if (o.debounceKey === undefined || o.debounceMs === undefined)
    fail(
      "debounce takes both --debounce-key <key> and --debounce-ms <n> (and optionally --max-wait-ms <n>, --debounce-mode leading)",
    );
  return {
    debounce: {
      key: o.debounceKey,
      periodMs: o.debounceMs,
      ...(o.maxWaitMs !== undefined ? { maxWaitMs: o.maxWaitMs } : {}),
      ...(o.debounceMode !== undefined ? { mode: o.debounceMode } : {}),
    },
  };
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
    .option("--failing", "only jobs whose latest fires ended in dead letters")
    .option("--tag <name:value>", "only jobs with this tag (repeat: every one of them)", tagOption, {})
    .action(async (o: { limit?: number; key?: string; failing?: boolean; tag: Record<string, string> }) => {
      const g = globals();
      const rows: Job[] = [];
      const filter = {
        ...(o.key === undefined ? {} : { key: o.key }),
        ...(o.failing ? { failing: true } : {}),
        ...(Object.keys(o.tag).length > 0 ? { tags: o.tag } : {}),
      };
      for await (const j of tenantClient(g).jobs.all(filter)) {
        rows.push(j);
        if (o.limit && rows.length >= o.limit) break;
      }
      print(g, rows, jobTable);
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
    .option("--name <name>", "job name (required without --file)")
    .option(
      "--file <path>",
      "create many from a JSON file: an array of create bodies, each with an optional idempotencyKey (POST /v1/jobs/batch, at most 1000)",
    )
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
    .option("--tag <name:value>", "a tag (repeat for more, at most 10)", tagOption, {})
    .option("--debounce-key <key>", "one-time jobs: creates with this key fold into one pending job")
    .option("--debounce-ms <n>", "with --debounce-key: fire this long after the latest create", int)
    .option("--max-wait-ms <n>", "with --debounce-key: never later than this after the first create", int)
    .option(
      "--debounce-mode <mode>",
      "with --debounce-key: trailing (default: fire after the burst) or leading (fire at the first create)",
      debounceMode,
    )
    .option(
      "--on-busy <policy>",
      "with --key: what a trigger does while the key is at its cap: queue, skip, replace_queued or cancel_running",
    )
    .action(async (o: CreateFlags) => {
      const g = globals();
      if (o.file !== undefined) return createFromFile(g, o.file);
      if (o.name === undefined) fail("give --name <name> (or --file <path> to create many)");
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
        ...(Object.keys(o.tag).length > 0 ? { tags: o.tag } : {}),
        ...debounce(o),
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
  triggers
    .command("cancel")
    .description("cancel a pending or running trigger (a running one's request is cut, never retried)")
    .argument("<id>")
    .action(async (id: string) => {
      const g = globals();
      print(g, await tenantClient(g).triggers.cancel(id), triggerLine);
    });
  triggers
    .command("rerun")
    .description("run a finished trigger again as a new trigger, optionally with another payload or body")
    .argument("<id>")
    .option("--payload <json>", "JSON payload for this run only (the job keeps its own)", json)
    .option("--body <json>", "JSON body for this run only, for a job whose target sends a body", json)
    .action(async (id: string, o: { payload?: JsonValue; body?: JsonValue }) => {
      const g = globals();
      const input = {
        ...(o.payload !== undefined ? { payload: o.payload } : {}),
        ...(o.body !== undefined ? { body: o.body } : {}),
      };
      print(g, await tenantClient(g).triggers.rerun(id, input), triggerLine);
    });

  const dead = program.command("dead-letters").description("dead letters: triggers that used up their attempts");
  dead
    .command("list")
    .description("dead letters, newest first")
    .option("--job <id>", "only this job's")
    .option("--limit <n>", "at most this many", int)
    .action(async (o: { job?: string; limit?: number }) => {
      const g = globals();
      const page = await tenantClient(g).deadLetters({ limit: o.limit ?? 50, ...(o.job ? { jobId: o.job } : {}) });
      print(g, page.data, (rows) =>
        table(rows.map((r) => ({ ...r, error: r.lastAttempt?.error ?? r.reason })) as never, [
          "id",
          "jobId",
          "jobName",
          "attemptCount",
          "finishedAt",
          "error",
        ]),
      );
    });
  dead
    .command("replay")
    .description("replay a job's dead letters, oldest first (100 per call; --all repeats until none remain)")
    .requiredOption("--job <id>", "the job whose dead letters to replay")
    .option("--all", "call again until the job has none left")
    .action(async (o: { job: string; all?: boolean }) => {
      const g = globals();
      const client = tenantClient(g);
      const r = o.all ? await client.replayAllDeadLetters(o.job) : await client.replayDeadLetters(o.job);
      print(g, r, (x) => `replayed ${x.replayed}; ${x.remaining} remain${x.remaining > 0 ? " (run again)" : ""}`);
    });
}
