// Prometheus text format (version 0.0.4) for the database-derived gauges, on any runtime. Label values
// are escaped; labels are pool types and tenant ids only, never a job or trigger id, and per-tenant
// series are kept to the busiest N tenants (bounded cardinality).
import type { MetricsSnapshot } from "@fairway/store";

const escapeLabel = (v: string) => v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");

type Labels = Record<string, string>;

class TextMetrics {
  private lines: string[] = [];

  gauge(name: string, help: string, samples: Array<[Labels, number]>): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
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
