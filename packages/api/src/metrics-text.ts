// Prometheus text format (version 0.0.4) for the database-derived gauges, on any runtime. Label values
// are escaped; labels are pool types, tenant ids and fairness keys only, never a job or trigger id;
// per-tenant series are kept to the busiest N tenants, and per-key series to each one's top
// KEY_SERIES_PER_TENANT keys by worker time (bounded cardinality however many keys there are).
import type { ClusterNode, KeyInfo, MetricsSnapshot } from "@fairway/store";
import type { AdmissionSnapshot } from "./admission.ts";

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

type Labels = Record<string, string>;

class TextMetrics {
  private lines: string[] = [];

  gauge(name: string, help: string, samples: Array<[Labels, number]>, type: "gauge" | "counter" = "gauge"): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of samples) {
      const l = Object.entries(labels)
        .map(([k, v]) => `${k}="${escapeLabel(v)}"`)
        .join(",");
      this.lines.push(`${name}${l ? `{${l}}` : ""} ${Number.isFinite(value) ? value : 0}`);
    }
    return this;
  }

  toString(): string {
    return this.lines.length ? this.lines.join("\n") + "\n" : "";
  }
}

/** The fleet's gauges: per pool, executors, and per tenant for the busiest tenants. */
export function renderSnapshot(s: MetricsSnapshot, scope: "fleet" | "tenant"): string {
  const m = new TextMetrics();
  const pool = (pick: (p: MetricsSnapshot["pools"][number]) => number): Array<[Labels, number]> =>
    s.pools.map((p) => [{ pool: p.type }, pick(p)]);
  m.gauge(
    "fairway_triggers_due",
    "Pending triggers that are due now, by pool.",
    pool((p) => p.due),
  );
  m.gauge(
    "fairway_triggers_running",
    "Triggers running (claimed, not yet settled or reaped), by pool.",
    pool((p) => p.running),
  );
  if (scope === "tenant") {
    const t = s.tenants[0];
    if (t) {
      m.gauge("fairway_tenant_dead", "Dead-lettered triggers.", [[{}, t.dead]]);
      m.gauge("fairway_tenant_max_in_flight", "The in-flight cap.", [[{}, t.maxInFlight]]);
    }
    return m.toString();
  }
  m.gauge(
    "fairway_pool_paused",
    "1 while the pool is paused (no claims of its type).",
    pool((p) => (p.paused ? 1 : 0)),
  );
  m.gauge(
    "fairway_pool_capacity",
    "Slots of the pool over the live executors.",
    pool((p) => p.capacity),
  );
  m.gauge(
    "fairway_pool_saturation",
    "Running triggers over the live executors' slots, by pool (0 with none).",
    pool((p) => (p.capacity > 0 ? p.running / p.capacity : 0)),
  );
  m.gauge("fairway_executors", "Live executors (heartbeat within their timeout).", [[{}, s.executors]]);
  m.gauge(
    "fairway_dead_letters",
    "Dead letters kept now, over every executor and worker (replays remove them, retention deletes them).",
    [[{}, s.deadLetters]],
  );
  const tenant = (pick: (t: MetricsSnapshot["tenants"][number]) => number): Array<[Labels, number]> =>
    s.tenants.map((t) => [{ tenant: t.tenantId }, pick(t)]);
  m.gauge(
    "fairway_tenant_running",
    "Running triggers of the busiest tenants.",
    tenant((t) => t.running),
  );
  m.gauge(
    "fairway_tenant_due",
    "Due triggers of the busiest tenants.",
    tenant((t) => t.due),
  );
  m.gauge(
    "fairway_tenant_dead",
    "Dead-lettered triggers of the busiest tenants.",
    tenant((t) => t.dead),
  );
  m.gauge(
    "fairway_tenant_max_in_flight",
    "The in-flight cap of the busiest tenants.",
    tenant((t) => t.maxInFlight),
  );
  return m.toString();
}

/** Per-key series per tenant: its busiest keys by recent worker time, at most this many. */
export const KEY_SERIES_PER_TENANT = 10;

/** Per-key gauges for each tenant's top keys (`keys` already cut to KEY_SERIES_PER_TENANT). On a
 *  tenant's own /v1/metrics the tenant label is left out, as its other series leave it out. */
export function renderKeys(tenants: Array<{ tenantId: string; keys: KeyInfo[] }>, scope: "fleet" | "tenant"): string {
  const m = new TextMetrics();
  const each = (pick: (k: KeyInfo) => number): Array<[Labels, number]> =>
    tenants.flatMap((t) =>
      t.keys
        .slice(0, KEY_SERIES_PER_TENANT)
        .map((k): [Labels, number] => [
          scope === "fleet" ? { tenant: t.tenantId, key: k.key } : { key: k.key },
          pick(k),
        ]),
    );
  const which = `the top ${KEY_SERIES_PER_TENANT} fairness keys by worker time${scope === "fleet" ? " of the busiest tenants" : ""}`;
  m.gauge(
    "fairway_key_running",
    `Running triggers of ${which}.`,
    each((k) => k.running),
  );
  m.gauge(
    "fairway_key_due",
    `Due triggers of ${which}.`,
    each((k) => k.due),
  );
  m.gauge(
    "fairway_key_oldest_due_lag_seconds",
    `How long the oldest due trigger has waited, of ${which} (0 with none).`,
    each((k) => (k.oldestDueLagMs ?? 0) / 1000),
  );
  m.gauge(
    "fairway_key_worker_time_share",
    `Share of the tenant's recent worker time, of ${which}.`,
    each((k) => k.workerTimeShare),
  );
  m.gauge(
    "fairway_key_max_in_flight",
    `The in-flight cap in force (-1: none), of ${which}.`,
    each((k) => k.policy.maxInFlight ?? -1),
  );
  return m.toString();
}

/** Per worker node of a Citus cluster (docs/scaling.md, "Operations"), labelled by host:port. A node
 *  that does not answer shows up 0 with its shard groups, and no tenant or work series. */
export function renderCluster(nodes: ClusterNode[]): string {
  const m = new TextMetrics();
  const each = (pick: (n: ClusterNode) => number | null): Array<[Labels, number]> =>
    nodes.flatMap((n): Array<[Labels, number]> => {
      const v = pick(n);
      return v === null ? [] : [[{ node: n.node }, v]];
    });
  m.gauge(
    "fairway_cluster_node_up",
    "1 while the coordinator reaches the worker node.",
    each((n) => (n.up ? 1 : 0)),
  );
  m.gauge(
    "fairway_cluster_node_shards",
    "Shard groups placed on the worker node (each holds its tenants' rows of every table).",
    each((n) => n.shards),
  );
  m.gauge(
    "fairway_cluster_node_tenants",
    "Tenants whose shard group is on the worker node.",
    each((n) => n.tenants),
  );
  m.gauge(
    "fairway_cluster_node_triggers_queued",
    "Pending triggers of the worker node's tenants.",
    each((n) => n.queued),
  );
  m.gauge(
    "fairway_cluster_node_triggers_running",
    "Running triggers of the worker node's tenants.",
    each((n) => n.running),
  );
  return m.toString();
}

/** This process's front door (admission.ts): the limit and its use, and per tenant (the `top` with
 *  the most requests) what was admitted, queued and refused since the process started. */
export function renderAdmission(a: AdmissionSnapshot, top: number): string {
  const m = new TextMetrics();
  m.gauge(
    "fairway_api_concurrency_limit",
    "Tenant requests this process runs at once, and up to two more for tenants under their share (adaptive).",
    [[{}, a.limit]],
  );
  m.gauge("fairway_api_in_flight", "Tenant requests running now.", [[{}, a.inFlight]]);
  m.gauge("fairway_api_waiting", "Tenant requests waiting for a slot now.", [[{}, a.waiting]]);
  const tenants = [...a.tenants]
    .sort((x, y) => y.admitted + y.refused - (x.admitted + x.refused) || x.tenant.localeCompare(y.tenant))
    .slice(0, top);
  const per = (pick: (t: AdmissionSnapshot["tenants"][number]) => number): Array<[Labels, number]> =>
    tenants.map((t) => [{ tenant: t.tenant }, pick(t)]);
  m.gauge(
    "fairway_api_admitted_total",
    "Tenant requests let in, by tenant.",
    per((t) => t.admitted),
    "counter",
  );
  m.gauge(
    "fairway_api_queued_total",
    "Tenant requests that waited for a slot, by tenant.",
    per((t) => t.queued),
    "counter",
  );
  m.gauge(
    "fairway_api_refused_total",
    "Tenant requests answered 429 by admission, by tenant.",
    per((t) => t.refused),
    "counter",
  );
  return m.toString();
}
