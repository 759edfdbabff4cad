// Backfill commands (a tenant API key): a cron job's fires over a past range, behind live work.
import type { Command } from "commander";
import type { Backfill } from "@fairway/sdk";
import { print, table, tenantClient, type GlobalOptions } from "../context.ts";
import { int } from "../parse.ts";

const columns = ["id", "jobId", "from", "to", "overlap", "fires", "skipped", "counts", "cancelledAt"];
const line = (b: Backfill) => table([b as never], columns);

export function backfillCommands(program: Command, globals: () => GlobalOptions): void {
  const backfills = program
    .command("backfills")
    .description("backfills: a cron job's fires over a past range (tenant API key)");
  backfills
    .command("create")
    .description("write the cron job's fires in [--from, --to) as triggers behind live work (at most 1000)")
    .argument("<jobId>")
    .requiredOption("--from <iso>", "the range's start, inclusive")
    .requiredOption("--to <iso>", "the range's end, exclusive (not in the future)")
    .option("--overlap <skip|allow>", "skip (default): leave out fires the job already ran or will run")
    .action(async (jobId: string, o: { from: string; to: string; overlap?: "skip" | "allow" }) => {
      const g = globals();
      const input = { from: o.from, to: o.to, ...(o.overlap ? { overlap: o.overlap } : {}) };
      print(g, await tenantClient(g).jobs.backfill(jobId, input), line);
    });
  backfills
    .command("list")
    .description("a job's backfills, newest first")
    .argument("<jobId>")
    .option("--limit <n>", "at most this many", int)
    .action(async (jobId: string, o: { limit?: number }) => {
      const g = globals();
      const page = await tenantClient(g).jobs.backfills(jobId, o.limit ? { limit: o.limit } : {});
      print(g, page.data, (rows) => table(rows as never, columns));
    });
  backfills
    .command("get")
    .description("a backfill, its triggers counted by status")
    .argument("<id>")
    .action(async (id: string) => {
      const g = globals();
      print(g, await tenantClient(g).backfills.get(id), line);
    });
  backfills
    .command("cancel")
    .description("cancel a backfill's triggers not yet started (running ones finish)")
    .argument("<id>")
    .action(async (id: string) => {
      const g = globals();
      print(g, await tenantClient(g).backfills.cancel(id), (b) => `${line(b)}\ncancelled now: ${b.cancelled ?? 0}`);
    });
}
