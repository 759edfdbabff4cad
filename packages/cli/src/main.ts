#!/usr/bin/env node
// The `fairway` command. Client commands talk to a server at --url / FAIRWAY_URL with --token /
// FAIRWAY_TOKEN (an API key, or for tenants and keys the admin token); `start` and `migrate` run the
// server itself. Every command has --help; --json prints machine-readable output.
import { Command } from "commander";
import { adminCommands } from "./commands/admin.ts";
import { planCommands } from "./commands/plans.ts";
import { backfillCommands } from "./commands/backfills.ts";
import { jobCommands } from "./commands/jobs.ts";
import { fairnessKeyCommands } from "./commands/keys.ts";
import { serverCommands } from "./commands/server.ts";
import { tailCommand } from "./commands/tail.ts";
import { report, type GlobalOptions } from "./context.ts";

const program = new Command("fairway")
  .description("Fairway: multi-tenant, fairness-first job scheduler")
  .version("0.1.0")
  .option("--url <url>", "server URL (env FAIRWAY_URL)", process.env.FAIRWAY_URL || "http://127.0.0.1:8787")
  .option("--token <token>", "API key or admin token (env FAIRWAY_TOKEN)", process.env.FAIRWAY_TOKEN || undefined)
  .option("--json", "print JSON")
  .showHelpAfterError()
  .enablePositionalOptions(false);

const globals = () => program.opts<GlobalOptions>();
serverCommands(program);
adminCommands(program, globals);
planCommands(program, globals);
fairnessKeyCommands(program, globals);
jobCommands(program, globals);
backfillCommands(program, globals);
tailCommand(program, globals);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  report(err, Boolean(globals().json));
}
