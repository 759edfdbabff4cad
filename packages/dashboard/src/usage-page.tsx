/** @jsxImportSource hono/jsx */
// A tenant's quota (caps, weight, rate, retention) and its live usage.
import { Hono } from "hono";
import { getTenant, tenantUsage } from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { notFound } from "./errors.ts";
import { fmtMs } from "./format.ts";
import { StatusChip } from "./layout.tsx";
import { page } from "./tenant-shell.tsx";

export const usagePage = new Hono<DashEnv>();

usagePage.get("/usage", async (c) => {
  const d = c.var.dash;
  const [tenant, usage] = await Promise.all([getTenant(d.db, c.var.tenantId), tenantUsage(d.db, c.var.tenantId)]);
  if (!tenant) throw notFound("tenant");
  return page(
    c,
    "Quota & usage",
    "/usage",
    <>
      <h1>Quota &amp; usage</h1>
      <p class="sub">
        Status <StatusChip status={tenant.status} />. Usage is live, refreshed every few seconds.
      </p>
      <div class="grid">
        <section class="card" aria-labelledby="use-h">
          <h2 id="use-h">Usage now</h2>
          <div data-live={`${c.var.base}/live/usage`} data-every="3000">
            <UsageList usage={usage} maxInFlight={tenant.maxInFlight} maxJobs={tenant.maxJobs} />
          </div>
        </section>
        <section class="card" aria-labelledby="quota-h">
          <h2 id="quota-h">Quota</h2>
          <dl class="kv">
            <dt>In-flight cap</dt>
            <dd>{tenant.maxInFlight}</dd>
            <dt>Weight</dt>
            <dd>{tenant.weight}</dd>
            <dt>Rate</dt>
            <dd>
              {tenant.ratePerSecond == null
                ? "unlimited"
                : `${tenant.ratePerSecond}/s, burst ${tenant.burst ?? Math.max(1, tenant.ratePerSecond)}`}
            </dd>
            <dt>Max live jobs</dt>
            <dd>{tenant.maxJobs.toLocaleString("en")}</dd>
            <dt>Max payload</dt>
            <dd>{tenant.maxPayloadBytes.toLocaleString("en")} bytes</dd>
            <dt>History kept</dt>
            <dd>{days(tenant.historyRetentionDays)} after a trigger finishes</dd>
            <dt>Dead letters kept</dt>
            <dd>{days(tenant.deadRetentionDays)}</dd>
          </dl>
          <p class="muted">
            Weight is this tenant's share of each pool's worker time relative to other tenants. Quotas are set by the
            operator.
          </p>
        </section>
      </div>
    </>,
  );
});

usagePage.get("/live/usage", async (c) => {
  const d = c.var.dash;
  const [tenant, usage] = await Promise.all([getTenant(d.db, c.var.tenantId), tenantUsage(d.db, c.var.tenantId)]);
  if (!tenant) throw notFound("tenant");
  return c.html(<UsageList usage={usage} maxInFlight={tenant.maxInFlight} maxJobs={tenant.maxJobs} />);
});

function UsageList(props: { usage: Awaited<ReturnType<typeof tenantUsage>>; maxInFlight: number; maxJobs: number }) {
  const u = props.usage;
  return (
    <dl class="kv">
      <dt>Running</dt>
      <dd>
        {u.running} of {props.maxInFlight}
      </dd>
      <dt>Due now</dt>
      <dd>{u.due}</dd>
      <dt>Pending</dt>
      <dd>{u.pending}</dd>
      <dt>Oldest lag</dt>
      <dd>{fmtMs(u.oldestDueLagMs)}</dd>
      <dt>Live jobs</dt>
      <dd>
        {u.jobs} of {props.maxJobs.toLocaleString("en")}
      </dd>
      <dt>Dead letters</dt>
      <dd>{u.dead}</dd>
    </dl>
  );
}

function days(n: number): string {
  return n === 1 ? "1 day" : `${n} days`;
}
