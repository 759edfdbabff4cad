// Fairness keys (tenant API key; with --tenant, the admin's routes for that tenant): the keys with work
// and their policy, one key's override, and the tenant's key defaults. `keys create` (admin.ts) is the
// other meaning of "key" here: it issues an API key. Bounds are the API's; its refusals are printed.
import { InvalidArgumentError, type Command } from "commander";
import type { KeyDefaultsPatch, KeyInfo, KeyOverride, KeyPolicy } from "@fairway/sdk";
import { adminClient, fail, print, table, tenantClient, type GlobalOptions } from "../context.ts";
import { int } from "../parse.ts";

interface PolicyFlags {
  maxInFlight?: number | "none";
  rate?: number | "none";
  weight?: number;
  tenant?: string;
}

/** A number, or `none` for no cap / no rate (kept as the word: commander takes a parser's null for
 *  no value). */
function numberOrNone(value: string): number | "none" {
  if (value === "none") return "none";
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError("must be a number, or none");
  return n;
}

function number(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n)) throw new InvalidArgumentError("must be a number");
  return n;
}

const policyText = (p: KeyPolicy) =>
  `maxInFlight ${p.maxInFlight ?? "none"}, ratePerSecond ${p.ratePerSecond ?? "none"}, weight ${p.weight}`;

const keyRow = (k: KeyInfo) => ({
  key: k.key,
  running: k.running,
  due: k.due,
  lagMs: k.oldestDueLagMs,
  share: `${Math.round(k.workerTimeShare * 100)}%`,
  maxInFlight: k.policy.maxInFlight ?? "none",
  rate: k.policy.ratePerSecond ?? "none",
  weight: k.policy.weight,
  override: k.override ? "yes" : "-",
});
const KEY_COLUMNS = ["key", "running", "due", "lagMs", "share", "maxInFlight", "rate", "weight", "override"];
const keyText = (k: KeyInfo) =>
  `${table([keyRow(k)], KEY_COLUMNS)}\noverride: ${k.override ? JSON.stringify(k.override) : "none (the defaults apply)"}`;

/** The tenant's own routes, or with --tenant the admin's for that tenant. */
function fairness(g: GlobalOptions, tenant: string | undefined) {
  return tenant === undefined ? tenantClient(g) : adminClient(g).tenants.fairness(tenant);
}

function policyOptions(cmd: Command): Command {
  return cmd
    .option("--max-in-flight <n|none>", "runs of a key at once, 1-100000, or none for no cap", numberOrNone)
    .option("--rate <n|none>", "starts per second, 0.01-100000, or none for no rate limit", numberOrNone)
    .option("--weight <w>", "share against the tenant's other busy keys, 0.01-1000", number);
}

function patchOf(o: PolicyFlags): KeyOverride & KeyDefaultsPatch {
  const out: KeyOverride & KeyDefaultsPatch = {};
  if (o.maxInFlight !== undefined) out.maxInFlight = o.maxInFlight === "none" ? null : o.maxInFlight;
  if (o.rate !== undefined) out.ratePerSecond = o.rate === "none" ? null : o.rate;
  if (o.weight !== undefined) out.weight = o.weight;
  return out;
}

export function fairnessKeyCommands(program: Command, globals: () => GlobalOptions): void {
  const keys =
    program.commands.find((c) => c.name() === "keys") ?? program.command("keys").description("fairness keys");
  keys.description("fairness keys of a tenant (API key, or the admin token with --tenant); `keys create`: API keys");
  const tenantOption = (cmd: Command) => cmd.option("--tenant <id>", "as the admin, for this tenant");

  tenantOption(
    keys
      .command("list")
      .description("keys with due or running work, and keys with an override: running, due, lag, share, policy")
      .option("--limit <n>", "at most this many", int),
  ).action(async (o: { limit?: number; tenant?: string }) => {
    const g = globals();
    const rows: KeyInfo[] = [];
    for await (const k of fairness(g, o.tenant).keys.all()) {
      rows.push(k);
      if (o.limit && rows.length >= o.limit) break;
    }
    print(g, rows, (r) => table(r.map(keyRow), KEY_COLUMNS));
  });

  tenantOption(
    keys.command("get").description("one key: its work now, override and policy in force").argument("<key>"),
  ).action(async (key: string, o: { tenant?: string }) => {
    const g = globals();
    print(g, await fairness(g, o.tenant).keys.get(key), keyText);
  });

  tenantOption(
    policyOptions(
      keys
        .command("set")
        .description("change a key's override: the fields given change, the others keep their value")
        .argument("<key>"),
    ),
  ).action(async (key: string, o: PolicyFlags) => {
    const g = globals();
    const change = patchOf(o);
    if (Object.keys(change).length === 0) fail("give at least one of --max-in-flight, --rate, --weight");
    const api = fairness(g, o.tenant);
    const current = (await api.keys.get(key)).override ?? {};
    print(g, await api.keys.put(key, { ...current, ...change }), keyText);
  });

  tenantOption(keys.command("reset").description("return a key to the tenant's defaults").argument("<key>")).action(
    async (key: string, o: { tenant?: string }) => {
      const g = globals();
      print(g, await fairness(g, o.tenant).keys.delete(key), keyText);
    },
  );

  tenantOption(
    policyOptions(
      keys
        .command("defaults")
        .description("the policy of every key without an override; with options, change it (none: no cap or rate)"),
    ),
  ).action(async (o: PolicyFlags) => {
    const g = globals();
    const change = patchOf(o);
    const api = fairness(g, o.tenant).keyDefaults;
    print(g, Object.keys(change).length === 0 ? await api.get() : await api.update(change), policyText);
  });
}
