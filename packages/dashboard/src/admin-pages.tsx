/** @jsxImportSource hono/jsx */
// The operator's pages: tenants with their live figures and share of worker time, a tenant's quotas and
// status, dead letters across tenants, and fire lag and throughput from attempt history. Pools and
// executors are in ops-pages.tsx.
import { Hono, type Context } from "hono";
import { createPortalLink, PORTAL_LINK_DEFAULT_TTL_S, publicOrigin, TENANT_BOUNDS } from "@fairway/core";
import {
  activityWindow,
  COUNT_CAP,
  deadLettersByType,
  getTenant,
  deadLetterGroups,
  listPlans,
  type PlanRow,
  listDeadLetterSummaries,
  tenantOverview,
  type TenantOverview,
} from "@fairway/store";
import { activityPage } from "./activity-page.tsx";
import { BarChart } from "./charts.tsx";
import { ClusterSection, clusterOf } from "./cluster-section.tsx";
import { DeadLetterGroups } from "./dead-letter-groups.tsx";
import type { DashEnv } from "./deps.ts";
import { DashboardError, notFound, refusalOf } from "./errors.ts";
import { fmtCount, fmtMs, pct } from "./format.ts";
import { When } from "./time.tsx";
import { PAGE_SIZE, quotaPatch, statusForm } from "./forms.ts";
import { adminNav, Page, Pager, PostForm, StatusChip } from "./layout.tsx";
import { opsPages } from "./ops-pages.tsx";
import { plansPage } from "./plans-page.tsx";

export const adminPages = new Hono<DashEnv>();
adminPages.route("/", opsPages);
adminPages.route("/", activityPage);
adminPages.route("/", plansPage);

/** The window of the worker-time share. */
const SHARE_WINDOW_MIN = 10;

const DONE: Record<string, string> = {
  quota: "Quotas saved. They apply from the next claim.",
  suspended: "Tenant suspended: its jobs wait and its API calls are refused.",
  active: "Tenant resumed.",
};

function flashOf(c: Context): { kind: "ok"; text: string } | null {
  const done = c.req.query("done");
  return done && DONE[done] ? { kind: "ok", text: DONE[done] } : null;
}

adminPages.get("/", async (c) => {
  const after = c.req.query("after")?.slice(0, 100) ?? null;
  const d = c.var.dash;
  const nodes = await clusterOf(d.db);
  let figures: [TenantOverview[], Awaited<ReturnType<typeof activityWindow>>];
  try {
    figures = await Promise.all([
      tenantOverview(d.db, { after, limit: PAGE_SIZE + 1 }),
      activityWindow(d.db, { windowMs: SHARE_WINDOW_MIN * 60_000, nowMs: d.now() }),
    ]);
  } catch (err) {
    // On a Citus cluster these read every node: with one down, the page shows which instead.
    if (!nodes?.some((n) => !n.up)) throw err;
    return c.html(
      <Page title="Tenants" scope={c.var.scope} nav={adminNav()} current="/dashboard/admin">
        <h1>Tenants</h1>
        <p class="card empty" role="alert">
          A worker node is down: the tenants' figures read every node and show again once it answers. Its tenants' jobs
          wait meanwhile; the other nodes' tenants go on.
        </p>
        <ClusterSection nodes={nodes} />
      </Page>,
    );
  }
  const [rows, activity] = figures;
  const total = activity.workerMs.reduce((s, x) => s + x.ms, 0);
  const bars = activity.workerMs
    .slice(0, 15)
    .map((x) => ({ label: x.tenantId, value: x.ms, text: `${pct(x.ms / total)} · ${fmtMs(x.ms)}` }));
  const live = `/dashboard/admin/live/tenants${after ? `?after=${encodeURIComponent(after)}` : ""}`;
  return c.html(
    <Page title="Tenants" scope={c.var.scope} nav={adminNav()} current="/dashboard/admin" flash={flashOf(c)}>
      <h1>Tenants</h1>
      <p class="sub">
        Live figures, refreshed every few seconds. Running counts triggers whose lease has not been reaped yet.
      </p>
      <div data-live={live} data-every="3000">
        <TenantTable rows={rows} after={after} />
      </div>
      <ClusterSection nodes={nodes} />
      <h2>Share of worker time, last {SHARE_WINDOW_MIN} minutes</h2>
      <BarChart
        title={`Share of worker time by tenant, last ${SHARE_WINDOW_MIN} minutes`}
        bars={bars}
        empty="no attempts in this window"
        caption={`Sum of attempt durations per tenant${activity.truncated ? " (the newest triggers of the window only)" : ""}. Fair share divides a pool's worker time by weight.`}
      />
      {activity.workerMs.length > 0 && (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">Attempts by tenant, last {SHARE_WINDOW_MIN} minutes</caption>
            <thead>
              <tr>
                <th scope="col">Tenant</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col" class="num">
                  Failed
                </th>
                <th scope="col" class="num">
                  Retries
                </th>
                <th scope="col" class="num">
                  Worker time
                </th>
              </tr>
            </thead>
            <tbody>
              {activity.workerMs.slice(0, PAGE_SIZE).map((w) => (
                <tr>
                  <td data-label="Tenant">
                    <a href={`/dashboard/admin/tenants/${encodeURIComponent(w.tenantId)}`}>{w.tenantId}</a>
                  </td>
                  <td data-label="Attempts" class="num">
                    {w.attempts}
                  </td>
                  <td data-label="Failed" class="num">
                    {w.failures}
                  </td>
                  <td data-label="Retries" class="num">
                    {w.retries}
                  </td>
                  <td data-label="Worker time" class="num">
                    {fmtMs(w.ms)}
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

adminPages.get("/live/tenants", async (c) => {
  const after = c.req.query("after")?.slice(0, 100) ?? null;
  const rows = await tenantOverview(c.var.dash.db, { after, limit: PAGE_SIZE + 1 });
  return c.html(<TenantTable rows={rows} after={after} />);
});

function TenantTable(props: { rows: TenantOverview[]; after: string | null }) {
  const rows = props.rows.slice(0, PAGE_SIZE);
  const next =
    props.rows.length > PAGE_SIZE ? `/dashboard/admin?after=${encodeURIComponent(rows[rows.length - 1].id)}` : null;
  if (rows.length === 0)
    return <p class="card empty">No tenants yet. Create one with POST /v1/admin/tenants or the SDK.</p>;
  return (
    <>
      <div class="table-wrap">
        <table class="stack">
          <caption class="sr">Tenants</caption>
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <th scope="col">Status</th>
              <th scope="col">Plan</th>
              <th scope="col" class="num">
                Running / cap
              </th>
              <th scope="col" class="num">
                Due
              </th>
              <th scope="col" class="num">
                Oldest lag
              </th>
              <th scope="col" class="num">
                Weight
              </th>
              <th scope="col" class="num">
                Dead
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr>
                <td data-label="Tenant">
                  <a href={`/dashboard/admin/tenants/${encodeURIComponent(t.id)}`}>{t.name}</a>{" "}
                  <span class="mono">{t.id}</span>
                </td>
                <td data-label="Status">
                  <StatusChip status={t.status} />
                </td>
                <td data-label="Plan" class="mono">
                  {t.planId ?? "none"}
                </td>
                <td data-label="Running / cap" class="num">
                  {t.running} / {t.maxInFlight}
                </td>
                <td data-label="Due" class="num">
                  {fmtCount(t.due, COUNT_CAP)}
                </td>
                <td data-label="Oldest lag" class="num">
                  {fmtMs(t.oldestDueLagMs)}
                </td>
                <td data-label="Weight" class="num">
                  {t.weight}
                </td>
                <td data-label="Dead" class="num">
                  {fmtCount(t.dead, COUNT_CAP)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager next={next} first={props.after ? "/dashboard/admin" : null} label="Tenant pages" />
    </>
  );
}

adminPages.get("/tenants/:id", async (c) => {
  const d = c.var.dash;
  const [t] = await tenantOverview(d.db, { after: null, limit: 1, ids: [c.req.param("id")] });
  if (!t) throw notFound("tenant");
  return c.html(<TenantDetail c={c} t={t} plans={await planChoices(c)} flash={flashOf(c)} />);
});

/** The plans a tenant can be put on (plans are tiers: a handful; the first 200 by id). */
const planChoices = (c: Context<DashEnv>) => listPlans(c.var.dash.db, null, 200);

function TenantDetail(props: {
  c: Context<DashEnv>;
  t: TenantOverview;
  plans: PlanRow[];
  flash?: { kind: "ok" | "err"; text: string } | null;
  link?: { url: string; expiresAt: string };
}) {
  const { c, t } = props;
  const csrf = c.var.csrf;
  const base = `/dashboard/admin/tenants/${encodeURIComponent(t.id)}`;
  const own = t.own as Partial<Record<string, number>>;
  return (
    <Page title={t.name} scope={c.var.scope} nav={adminNav()} current="/dashboard/admin" flash={props.flash}>
      <h1>
        {t.name} <StatusChip status={t.status} />
      </h1>
      <p class="sub mono">{t.id}</p>
      <div class="actions">
        <a class="button" href={`/dashboard/admin/t/${encodeURIComponent(t.id)}/jobs`}>
          Open tenant view
        </a>
        <PostForm action={`${base}/portal-link`} csrf={csrf} class="inline" label="Create portal link">
          <button type="submit" class="secondary">
            Create portal link
          </button>
        </PostForm>
        <PostForm
          action={`${base}/portal-sessions/revoke`}
          csrf={csrf}
          class="inline"
          label="End every portal session and link of this tenant"
        >
          <button type="submit" class="secondary">
            End portal sessions
          </button>
        </PostForm>
        <PostForm
          action={`${base}/status`}
          csrf={csrf}
          class="inline"
          label={t.status === "active" ? "Suspend tenant" : "Resume tenant"}
        >
          <input type="hidden" name="status" value={t.status === "active" ? "suspended" : "active"} />
          <button type="submit" class={t.status === "active" ? "danger" : ""}>
            {t.status === "active" ? "Suspend" : "Resume"}
          </button>
        </PostForm>
      </div>
      {props.link && (
        <div class="card" role="status">
          <p>
            <strong>Portal link</strong> (opens this tenant's view only; expires <When d={props.link.expiresAt} />
            ):
          </p>
          <p class="mono">
            <a href={props.link.url}>{props.link.url}</a>
          </p>
        </div>
      )}
      <div class="grid">
        <section class="card" aria-labelledby="usage-h">
          <h2 id="usage-h">Now</h2>
          <dl class="kv">
            <dt>Plan</dt>
            <dd>
              {t.planId === null ? (
                "none"
              ) : (
                <a href={`/dashboard/admin/plans/${encodeURIComponent(t.planId)}`}>{t.planId}</a>
              )}
            </dd>
            <dt>Running / cap</dt>
            <dd>
              {t.running} / {t.maxInFlight}
            </dd>
            <dt>Due</dt>
            <dd>{fmtCount(t.due, COUNT_CAP)}</dd>
            <dt>Oldest lag</dt>
            <dd>{fmtMs(t.oldestDueLagMs)}</dd>
            <dt>Dead letters</dt>
            <dd>{fmtCount(t.dead, COUNT_CAP)}</dd>
          </dl>
        </section>
        <section class="card" aria-labelledby="quota-h">
          <h2 id="quota-h">Quotas</h2>
          <p class="hint">
            A value here is the tenant's own and wins over its plan's. Empty: the plan's value (or the default); the
            placeholder is the value in force now.
          </p>
          <PostForm action={`${base}/quota`} csrf={csrf} label="Quotas">
            <div class="field">
              <label for="f-plan">Plan</label>
              <select id="f-plan" name="plan">
                <option value="" selected={t.planId === null}>
                  No plan
                </option>
                {props.plans.map((p) => (
                  <option value={p.id} selected={p.id === t.planId}>
                    {p.name ? `${p.name} (${p.id})` : p.id}
                  </option>
                ))}
              </select>
            </div>
            <NumberField
              name="maxInFlight"
              label="In-flight cap"
              value={own.maxInFlight}
              now={t.maxInFlight}
              hint="Most triggers running at once, across all executors."
            />
            <NumberField
              name="weight"
              label="Weight"
              value={own.weight}
              now={t.weight}
              step="any"
              hint={`Share of each pool's worker time relative to other tenants (${TENANT_BOUNDS.weight.min}-${TENANT_BOUNDS.weight.max}).`}
            />
            <NumberField
              name="ratePerSecond"
              label="Rate per second"
              value={own.ratePerSecond}
              now={t.ratePerSecond}
              step="any"
              hint={`${TENANT_BOUNDS.ratePerSecond.min}-${TENANT_BOUNDS.ratePerSecond.max} a second. Empty without a plan: unlimited.`}
            />
            <NumberField
              name="burst"
              label="Burst"
              value={own.burst}
              now={t.burst}
              hint="Token bucket size. Empty without a plan: the rate, at least 1."
            />
            <NumberField name="maxJobs" label="Max live jobs" value={own.maxJobs} now={t.maxJobs} />
            <NumberField
              name="maxPayloadBytes"
              label="Max payload bytes"
              value={own.maxPayloadBytes}
              now={t.maxPayloadBytes}
            />
            <button type="submit">Save quotas</button>
          </PostForm>
        </section>
      </div>
    </Page>
  );
}

function NumberField(props: {
  name: string;
  label: string;
  value: number | null | undefined;
  /** The value in force now, shown as the placeholder of an empty field. */
  now?: number | null;
  hint?: string;
  step?: string;
}) {
  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type="number"
        inputmode="decimal"
        step={props.step ?? "1"}
        value={props.value == null ? "" : String(props.value)}
        placeholder={props.now === undefined ? undefined : props.now === null ? "none" : String(props.now)}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
      />
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
    </div>
  );
}

adminPages.post("/tenants/:id/quota", async (c) => {
  const d = c.var.dash;
  const id = c.req.param("id");
  // The form's text as the admin API's patch; the command checks it, with the API's messages.
  const patch = quotaPatch(await c.req.parseBody());
  try {
    await d.commands.updateTenant(id, patch);
  } catch (err) {
    const r = refusalOf(err);
    if (r?.status !== 400) throw err;
    const [t] = await tenantOverview(d.db, { after: null, limit: 1, ids: [id] });
    if (!t) throw notFound("tenant");
    return c.html(
      <TenantDetail
        c={c}
        t={t}
        plans={await planChoices(c)}
        flash={{ kind: "err", text: `Not saved. ${r.message}` }}
      />,
      400,
    );
  }
  return c.redirect(`/dashboard/admin/tenants/${encodeURIComponent(id)}?done=quota`, 303);
});

adminPages.post("/tenants/:id/status", async (c) => {
  const id = c.req.param("id");
  const parsed = statusForm.safeParse(await c.req.parseBody());
  if (!parsed.success) throw new DashboardError(400, "validation_error", `status: send "active" or "suspended"`);
  await c.var.dash.commands.updateTenant(id, { status: parsed.data.status });
  return c.redirect(`/dashboard/admin/tenants/${encodeURIComponent(id)}?done=${parsed.data.status}`, 303);
});

adminPages.post("/tenants/:id/portal-link", async (c) => {
  const d = c.var.dash;
  const [t] = await tenantOverview(d.db, { after: null, limit: 1, ids: [c.req.param("id")] });
  const row = t && (await getTenant(d.db, t.id));
  if (!t || !row) throw notFound("tenant");
  const link = await createPortalLink({
    secret: d.adminToken,
    origin: publicOrigin(c),
    tenantId: t.id,
    epoch: row.portalEpoch,
    ttlSeconds: PORTAL_LINK_DEFAULT_TTL_S,
    nowMs: d.now(),
  });
  return c.html(<TenantDetail c={c} t={t} plans={await planChoices(c)} link={link} />);
});

adminPages.post("/tenants/:id/portal-sessions/revoke", async (c) => {
  const { tenantId } = await c.var.dash.commands.revokePortalSessions(c.req.param("id"));
  return c.redirect(`/dashboard/admin/tenants/${encodeURIComponent(tenantId)}`, 303);
});

adminPages.get("/dead-letters", async (c) => {
  const d = c.var.dash;
  const cursor = parseCursor(c.req.query("after"));
  const [byType, grouped, rows] = await Promise.all([
    deadLettersByType(d.db),
    deadLetterGroups(d.db, { limit: PAGE_SIZE }),
    listDeadLetterSummaries(d.db, { after: cursor, limit: PAGE_SIZE + 1 }),
  ]);
  const page = rows.slice(0, PAGE_SIZE);
  const last = page[page.length - 1];
  const next =
    rows.length > PAGE_SIZE
      ? `/dashboard/admin/dead-letters?after=${encodeURIComponent(`${last.tenantId}/${last.id}`)}`
      : null;
  return c.html(
    <Page title="Dead letters" scope={c.var.scope} nav={adminNav()} current="/dashboard/admin/dead-letters">
      <h1>Dead letters</h1>
      <p class="sub">
        Triggers that used up their attempts or were refused for good. Replay all of a job's here, or one at a time from
        the tenant's view.
      </p>
      <h2>By job, newest first</h2>
      <DeadLetterGroups
        groups={grouped.groups}
        capped={grouped.capped}
        csrf={c.var.csrf}
        tenantBase={(id) => `/dashboard/admin/t/${encodeURIComponent(id)}`}
        showTenant
      />
      <h2>By type and tenant{byType.capped ? ` (first ${COUNT_CAP.toLocaleString("en")})` : ""}</h2>
      {byType.rows.length === 0 ? (
        <p class="card empty">No dead letters.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">Dead letters by type and tenant</caption>
            <thead>
              <tr>
                <th scope="col">Type</th>
                <th scope="col">Tenant</th>
                <th scope="col" class="num">
                  Dead letters
                </th>
              </tr>
            </thead>
            <tbody>
              {byType.rows.map((r) => (
                <tr>
                  <td data-label="Type" class="mono">
                    {r.type}
                  </td>
                  <td data-label="Tenant">
                    <a href={`/dashboard/admin/t/${encodeURIComponent(r.tenantId)}/dead-letters`}>{r.tenantId}</a>
                  </td>
                  <td data-label="Dead letters" class="num">
                    {r.count}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <h2>All dead letters, by tenant</h2>
      {page.length > 0 && (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">Dead letters across tenants</caption>
            <thead>
              <tr>
                <th scope="col">Tenant</th>
                <th scope="col">Job</th>
                <th scope="col">Trigger</th>
                <th scope="col">Reason</th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Finished</th>
              </tr>
            </thead>
            <tbody>
              {page.map((r) => (
                <tr>
                  <td data-label="Tenant">{r.tenantId}</td>
                  <td data-label="Job">{r.jobName}</td>
                  <td data-label="Trigger">
                    <a
                      class="mono"
                      href={`/dashboard/admin/t/${encodeURIComponent(r.tenantId)}/triggers/${encodeURIComponent(r.id)}`}
                    >
                      {r.id}
                    </a>
                  </td>
                  <td data-label="Reason" class="mono">
                    {r.reason ?? "—"}
                  </td>
                  <td data-label="Attempts" class="num">
                    {r.attemptCount}
                  </td>
                  <td data-label="Finished">
                    <When d={r.finishedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager next={next} first={cursor ? "/dashboard/admin/dead-letters" : null} label="Dead letter pages" />
    </Page>,
  );
});

function parseCursor(raw: string | undefined): { tenantId: string; triggerId: string } | null {
  const m = /^([^/]{1,100})\/([^/]{1,100})$/.exec(raw ?? "");
  return m ? { tenantId: m[1], triggerId: m[2] } : null;
}
