// Quota plans (the admin token): create, list, show, change and delete a plan, and put a tenant on one.
// A plan's change applies to every tenant on it from its next claim; values set on a tenant stay its own.
import type { Command } from "commander";
import { TENANT_BOUNDS } from "@fairway/core";
import { adminClient, print, table, type GlobalOptions } from "../context.ts";
import { between, int, intBetween } from "../parse.ts";

type PlanFlags = {
  name?: string;
  maxInFlight?: number;
  weight?: number;
  rate?: number;
  burst?: number;
  maxJobs?: number;
  historyDays?: number;
  keyMaxInFlight?: number;
  keyWeight?: number;
};

function planOptions(c: Command): Command {
  const B = TENANT_BOUNDS;
  return c
    .option("--name <name>", "display name")
    .option(
      "--max-in-flight <n>",
      `in-flight cap (${B.maxInFlight.min}-${B.maxInFlight.max})`,
      intBetween(B.maxInFlight.min, B.maxInFlight.max),
    )
    .option("--weight <n>", `fair-share weight (${B.weight.min}-${B.weight.max})`, between(B.weight.min, B.weight.max))
    .option(
      "--rate <n>",
      `starts per second (${B.ratePerSecond.min}-${B.ratePerSecond.max})`,
      between(B.ratePerSecond.min, B.ratePerSecond.max),
    )
    .option("--burst <n>", `token bucket size (${B.burst.min}-${B.burst.max})`, intBetween(B.burst.min, B.burst.max))
    .option("--max-jobs <n>", "live job limit", int)
    .option("--history-days <n>", "days finished history is kept (1-3650)", intBetween(1, 3650))
    .option("--key-max-in-flight <n>", "per-key in-flight cap (1-100000)", intBetween(1, 100_000))
    .option("--key-weight <n>", "per-key weight (0.01-1000)", between(0.01, 1000));
}

/** The flags given, in the plan API's shape (a flag left out is not sent). */
function planBody(o: PlanFlags) {
  const keyDefaults = {
    ...(o.keyMaxInFlight !== undefined ? { maxInFlight: o.keyMaxInFlight } : {}),
    ...(o.keyWeight !== undefined ? { weight: o.keyWeight } : {}),
  };
  return {
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...(o.maxInFlight !== undefined ? { maxInFlight: o.maxInFlight } : {}),
    ...(o.weight !== undefined ? { weight: o.weight } : {}),
    ...(o.rate !== undefined ? { ratePerSecond: o.rate } : {}),
    ...(o.burst !== undefined ? { burst: o.burst } : {}),
    ...(o.maxJobs !== undefined ? { maxJobs: o.maxJobs } : {}),
    ...(o.historyDays !== undefined ? { historyDays: o.historyDays } : {}),
    ...(Object.keys(keyDefaults).length > 0 ? { keyDefaults } : {}),
  };
}

const COLUMNS = ["id", "name", "maxInFlight", "weight", "ratePerSecond", "maxJobs", "tenants"];

export function planCommands(program: Command, globals: () => GlobalOptions): void {
  const plans = program.command("plans").description("quota plans: tiers of tenant quotas (admin token)");
  planOptions(
    plans.command("create").description("create a plan").argument("<id>", "plan id (a-z, 0-9, _ or -)"),
  ).action(async (id: string, o: PlanFlags) => {
    const g = globals();
    const p = await adminClient(g).plans.create({ id, ...planBody(o) });
    print(g, p, (p) => `plan ${p.id} created`);
  });
  plans
    .command("list")
    .description("list plans, with how many tenants each has")
    .action(async () => {
      const g = globals();
      const rows = [];
      for await (const p of adminClient(g).plans.all()) rows.push(p);
      print(g, rows, (r) => table(r as never, COLUMNS));
    });
  plans
    .command("get")
    .description("show a plan")
    .argument("<id>", "plan id")
    .action(async (id: string) => {
      const g = globals();
      const p = await adminClient(g).plans.get(id);
      print(g, p, (p) => table([p] as never, COLUMNS));
    });
  planOptions(
    plans
      .command("update")
      .description("change a plan's values; every tenant on it takes them from its next claim")
      .argument("<id>", "plan id"),
  ).action(async (id: string, o: PlanFlags) => {
    const g = globals();
    const p = await adminClient(g).plans.update(id, planBody(o));
    print(g, p, (p) => `plan ${p.id} updated (${p.tenants} tenant${p.tenants === 1 ? "" : "s"})`);
  });
  plans
    .command("delete")
    .description("delete a plan no tenant is on")
    .argument("<id>", "plan id")
    .action(async (id: string) => {
      const g = globals();
      const r = await adminClient(g).plans.delete(id);
      print(g, r, (r) => `plan ${r.id} deleted`);
    });
  plans
    .command("assign")
    .description('put a tenant on a plan ("none": off plans); its own values stay its own')
    .argument("<tenant>", "tenant id")
    .argument("<plan>", 'plan id, or "none"')
    .action(async (tenant: string, plan: string) => {
      const g = globals();
      const t = await adminClient(g).tenants.update(tenant, { plan: plan === "none" ? null : plan });
      print(
        g,
        t,
        (t) => `tenant ${t.id} on plan ${t.plan ?? "none"}: in-flight cap ${t.maxInFlight}, weight ${t.weight}`,
      );
    });
}
