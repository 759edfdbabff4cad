// Admin commands (the admin token): tenants and their API keys.
import type { Command } from "commander";
import { adminClient, print, table, type GlobalOptions } from "../context.ts";
import { TENANT_BOUNDS } from "@fairway/core";
import { between, int, intBetween } from "../parse.ts";

export function adminCommands(program: Command, globals: () => GlobalOptions): void {
  const tenants = program.command("tenants").description("tenants (admin token)");
  tenants
    .command("create")
    .description("create a tenant; prints its signing secret (readable again through the admin API)")
    .argument("<name>", "display name")
    .option("--id <id>", "tenant id (a-z, 0-9, _ or -); default generated")
    .option(
      "--max-in-flight <n>",
      `in-flight cap (${TENANT_BOUNDS.maxInFlight.min}-${TENANT_BOUNDS.maxInFlight.max})`,
      intBetween(TENANT_BOUNDS.maxInFlight.min, TENANT_BOUNDS.maxInFlight.max),
    )
    .option(
      "--weight <n>",
      `fair-share weight (${TENANT_BOUNDS.weight.min}-${TENANT_BOUNDS.weight.max})`,
      between(TENANT_BOUNDS.weight.min, TENANT_BOUNDS.weight.max),
    )
    .option("--max-jobs <n>", "live job limit", int)
    .option("--plan <id>", "quota plan: the tenant takes its values where it sets none of its own")
    .action(
      async (
        name: string,
        o: { id?: string; maxInFlight?: number; weight?: number; maxJobs?: number; plan?: string },
      ) => {
        const g = globals();
        const t = await adminClient(g).tenants.create({ name, ...o });
        print(
          g,
          t,
          (t) =>
            `tenant ${t.id} created\nsigning secret: ${t.signingSecret}\n(read it again with GET /v1/admin/tenants/${t.id}/signing-secret)`,
        );
      },
    );
  tenants
    .command("list")
    .description("list tenants")
    .option("--limit <n>", "at most this many", int)
    .action(async (o: { limit?: number }) => {
      const g = globals();
      const rows = [];
      for await (const t of adminClient(g).tenants.all()) {
        rows.push(t);
        if (o.limit && rows.length >= o.limit) break;
      }
      print(g, rows, (r) => table(r as never, ["id", "name", "status", "plan", "maxInFlight", "weight", "maxJobs"]));
    });

  tenants
    .command("revoke-portal")
    .description("end every portal link and session of a tenant now")
    .argument("<tenant>", "tenant id")
    .action(async (tenant: string) => {
      const g = globals();
      const r = await adminClient(g).tenants.revokePortalSessions(tenant);
      print(g, r, (r) => `portal sessions of ${r.tenantId} ended at ${r.revokedAt}`);
    });

  const keys = program.command("keys").description("tenant API keys (admin token)");
  keys
    .command("create")
    .description("issue an API key for a tenant; prints it once")
    .argument("<tenant>", "tenant id")
    .action(async (tenant: string) => {
      const g = globals();
      const k = await adminClient(g).tenants.createKey(tenant);
      print(g, k, (k) => `key ${k.id} for ${tenant} (shown once):\n${k.key}`);
    });
}
