/** @jsxImportSource hono/jsx */
// The operator's Activity page: deliveries, failures, fire-lag percentiles, worker time and dead
// letters over the last hour, day or week, for the fleet, one tenant or one fairness key, and the same
// figures per tenant (or per key of one tenant). One bounded read (activitySeries).
import { Hono } from "hono";
import { z } from "zod";
import { activitySeries } from "@fairway/store";
import { TimeSeriesChart } from "./activity-charts.tsx";
import type { DashEnv } from "./deps.ts";
import { DashboardError } from "./errors.ts";
import { fmtMs } from "./format.ts";
import { firstIssue } from "./forms.ts";
import { adminNav, Page } from "./layout.tsx";

export const activityPage = new Hono<DashEnv>();

const MIN = 60_000;
/** Each range's buckets; about 60-100 columns, whatever the range. */
const RANGES = {
  "1h": { label: "1 hour", bucketMs: MIN, count: 60, bucketWords: "minute" },
  "24h": { label: "24 hours", bucketMs: 15 * MIN, count: 96, bucketWords: "15 min" },
  "7d": { label: "7 days", bucketMs: 120 * MIN, count: 84, bucketWords: "2 h" },
} as const;
type Range = keyof typeof RANGES;

/** Triggers one page reads at most, shared among its buckets. */
const SCAN_BUDGET = 12_000;

const activityQuery = z.object({
  range: z.enum(["1h", "24h", "7d"], { error: "must be 1h, 24h or 7d" }).default("1h"),
  tenant: z
    .string()
    .trim()
    .max(100)
    .optional()
    .transform((v) => v || undefined),
  key: z.string().max(128).optional(),
});

const utcHm = (ms: number) => new Date(ms).toISOString().slice(11, 16);
const utcDayHm = (ms: number) => {
  const d = new Date(ms);
  return `${d.toUTCString().slice(0, 3)} ${utcHm(ms)}`;
};
const count = (v: number) => Math.round(v).toLocaleString("en");

activityPage.get("/activity", async (c) => {
  const parsed = activityQuery.safeParse(c.req.query());
  if (!parsed.success) throw new DashboardError(400, "validation_error", firstIssue(parsed.error));
  const q = parsed.data;
  const key = q.key === undefined || q.key === "" ? undefined : q.key;
  const r = RANGES[q.range];
  const d = c.var.dash;
  const a = await activitySeries(d.db, {
    nowMs: d.now(),
    bucketMs: r.bucketMs,
    count: r.count,
    perBucket: Math.floor(SCAN_BUDGET / r.count),
    tenantId: q.tenant,
    key,
  });
  const times = a.buckets.map((b) => b.start);
  const timeLabel = q.range === "7d" ? utcDayHm : utcHm;
  const estimated = a.buckets.some((b) => b.estimated);
  const scope = q.tenant ? `tenant ${q.tenant}${key !== undefined ? `, key ${key}` : ""}` : "every tenant";
  const link = (range: Range) =>
    `/dashboard/admin/activity?${new URLSearchParams({ range, ...(q.tenant ? { tenant: q.tenant } : {}), ...(key !== undefined ? { key } : {}) })}`;
  const common = { times, timeLabel, xTitle: "Time (UTC)" };
  return c.html(
    <Page title="Activity" scope={c.var.scope} nav={adminNav()} current="/dashboard/admin/activity">
      <h1>Activity, last {r.label}</h1>
      <p class="sub">
        For {scope}, per {r.bucketWords}, from the attempt history.
        {estimated && " Busy periods are estimated: their first triggers, scaled to the number the period holds."}
      </p>
      <nav class="range" aria-label="Time range">
        {(Object.keys(RANGES) as Range[]).map((k) => (
          <a href={link(k)} aria-current={k === q.range ? "page" : undefined}>
            {RANGES[k].label}
          </a>
        ))}
      </nav>
      <form class="filters" method="get" action="/dashboard/admin/activity" aria-label="Activity filters">
        <input type="hidden" name="range" value={q.range} />
        <div>
          <label for="tenant">Tenant</label>
          <input id="tenant" name="tenant" value={q.tenant ?? ""} placeholder="Every tenant" />
        </div>
        <div>
          <label for="key">Fairness key</label>
          <input id="key" name="key" value={key ?? ""} placeholder="Every key" />
        </div>
        <div>
          <button type="submit">Show</button>
        </div>
      </form>
      <div class="grid charts">
        <TimeSeriesChart
          {...common}
          id="deliveries"
          title="Deliveries"
          yTitle={`Attempts per ${r.bucketWords}`}
          kind="stacked"
          series={[
            { label: "Succeeded", values: a.buckets.map((b) => b.deliveries - b.failures) },
            { label: "Failed", values: a.buckets.map((b) => b.failures) },
          ]}
          integer
          format={count}
          caption={`The attempts of the triggers created in each ${r.bucketWords}, their retries and replays included (counted with their trigger, whenever they ran); failed ones stacked on the successes.`}
        />
        <TimeSeriesChart
          {...common}
          id="lag"
          title="Fire lag"
          yTitle="Scheduled time to first attempt"
          kind="lines"
          series={[
            { label: "Median", values: a.buckets.map((b) => b.lagP50Ms) },
            { label: "95th percentile", values: a.buckets.map((b) => b.lagP95Ms) },
            { label: "99th percentile", values: a.buckets.map((b) => b.lagP99Ms) },
          ]}
          format={fmtMs}
          caption="How late scheduled fires started, per bucket; run-now and replays are not counted."
        />
        <TimeSeriesChart
          {...common}
          id="worker"
          title="Worker time"
          yTitle={`Attempt time per ${r.bucketWords}`}
          kind="stacked"
          series={[{ label: "Worker time", values: a.buckets.map((b) => b.workerMs) }]}
          format={fmtMs}
          caption="Sum of attempt durations: what the fair share divides."
        />
        <TimeSeriesChart
          {...common}
          id="dead"
          title="Dead letters"
          yTitle={`Triggers per ${r.bucketWords}`}
          kind="stacked"
          series={[{ label: "Dead letters", values: a.buckets.map((b) => b.dead) }]}
          integer
          format={count}
          caption={`Triggers created in each ${r.bucketWords} that ran out of attempts and wait in the dead letters now.`}
        />
      </div>
      <h2>{q.tenant ? "By fairness key" : "By tenant"}</h2>
      {a.groups.length === 0 ? (
        <p class="card empty">Nothing in this range.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">
              {q.tenant ? "By fairness key" : "By tenant"}, last {r.label}
            </caption>
            <thead>
              <tr>
                <th scope="col">{q.tenant ? "Key" : "Tenant"}</th>
                <th scope="col" class="num">
                  Deliveries
                </th>
                <th scope="col" class="num">
                  Failed
                </th>
                <th scope="col" class="num">
                  Lag p95
                </th>
                <th scope="col" class="num">
                  Worker time
                </th>
                <th scope="col" class="num">
                  Dead
                </th>
              </tr>
            </thead>
            <tbody>
              {a.groups.map((g) => (
                <tr>
                  <td data-label={q.tenant ? "Key" : "Tenant"}>
                    <a
                      href={`/dashboard/admin/activity?${new URLSearchParams({ range: q.range, tenant: q.tenant ?? g.name, ...(q.tenant ? { key: g.name } : {}) })}`}
                    >
                      {g.name === "" ? "(no key)" : g.name}
                    </a>
                  </td>
                  <td data-label="Deliveries" class="num">
                    {count(g.deliveries)}
                  </td>
                  <td data-label="Failed" class="num">
                    {count(g.failures)}
                  </td>
                  <td data-label="Lag p95" class="num">
                    {fmtMs(g.lagP95Ms)}
                  </td>
                  <td data-label="Worker time" class="num">
                    {fmtMs(g.workerMs)}
                  </td>
                  <td data-label="Dead" class="num">
                    {count(g.dead)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>,
  );
});
