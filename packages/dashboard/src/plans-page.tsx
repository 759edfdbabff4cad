/** @jsxImportSource hono/jsx */
// The operator's quota plans: every plan with its values and how many tenants are on it, a form to
// create one, and a plan's page to change it (every tenant on it moves in the same transaction, from
// its next claim) or delete it (refused while a tenant is on it). The forms go through the API's own
// commands (DashboardDeps.commands.createPlan, updatePlan, deletePlan), so checks and messages are the
// admin API's.
import { Hono, type Context } from "hono";
import { getPlan, listPlans, planTenantCounts, type PlanRow } from "@fairway/store";
import type { DashEnv } from "./deps.ts";
import { notFound, refusalOf } from "./errors.ts";
import { planBody } from "./forms.ts";
import { adminNav, Page, PostForm } from "./layout.tsx";

export const plansPage = new Hono<DashEnv>();

/** The most plans the page lists (plans are tiers: a handful). */
const PLANS_SHOWN = 200;

const DONE: Record<string, string> = {
  created: "Plan created. Give it to a tenant on the tenant's page.",
  saved: "Plan saved. Its tenants take the new values from their next claim.",
  deleted: "Plan deleted.",
};

type Flash = { kind: "ok" | "err"; text: string } | null;
const flashOf = (c: Context): Flash => {
  const done = c.req.query("done");
  return done && DONE[done] ? { kind: "ok", text: DONE[done] } : null;
};
const show = (v: number | null) => (v === null ? "default" : String(v));

plansPage.get("/plans", async (c) => c.html(await PlansList(c, flashOf(c)), 200));

async function PlansList(c: Context<DashEnv>, flash: Flash, form: Record<string, unknown> = {}) {
  const rows = await listPlans(c.var.dash.db, null, PLANS_SHOWN);
  const counts = await planTenantCounts(
    c.var.dash.db,
    rows.map((r) => r.id),
  );
  return (
    <Page title="Plans" scope={c.var.scope} nav={adminNav()} current="/dashboard/admin/plans" flash={flash}>
      <h1>Plans</h1>
      <p class="sub">
        A plan is a tier of quotas. Its tenants take its values where they set none of their own; "default" is the value
        a tenant gets when neither sets one. A change applies to every tenant on the plan from its next claim.
      </p>
      {rows.length === 0 ? (
        <p class="card empty">No plans yet: create one below, then pick it on a tenant's page.</p>
      ) : (
        <div class="table-wrap">
          <table class="stack">
            <caption class="sr">Plans</caption>
            <thead>
              <tr>
                <th scope="col">Plan</th>
                <th scope="col" class="num">
                  In-flight cap
                </th>
                <th scope="col" class="num">
                  Weight
                </th>
                <th scope="col" class="num">
                  Rate / s
                </th>
                <th scope="col" class="num">
                  Max jobs
                </th>
                <th scope="col" class="num">
                  Tenants
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((p) => (
                <tr>
                  <th scope="row" data-label="Plan">
                    <a href={`/dashboard/admin/plans/${encodeURIComponent(p.id)}`}>{p.name ?? p.id}</a>{" "}
                    <span class="mono">{p.id}</span>
                  </th>
                  <td class="num" data-label="In-flight cap">
                    {show(p.maxInFlight)}
                  </td>
                  <td class="num" data-label="Weight">
                    {show(p.weight)}
                  </td>
                  <td class="num" data-label="Rate / s">
                    {p.ratePerSecond === null ? "unlimited" : String(p.ratePerSecond)}
                  </td>
                  <td class="num" data-label="Max jobs">
                    {show(p.maxJobs)}
                  </td>
                  <td class="num" data-label="Tenants">
                    {counts.get(p.id) ?? 0}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <section class="card" aria-labelledby="new-plan-h">
        <h2 id="new-plan-h">New plan</h2>
        <PostForm action="/dashboard/admin/plans" csrf={c.var.csrf} label="New plan">
          <TextField name="id" label="Id" value={String(form.id ?? "")} hint="a-z, 0-9, _ or -, e.g. pro." />
          <PlanFields values={form} />
          <button type="submit">Create plan</button>
        </PostForm>
      </section>
    </Page>
  );
}

plansPage.post("/plans", async (c) => {
  const form = await c.req.parseBody();
  try {
    await c.var.dash.commands.createPlan(planBody(form, "create"));
  } catch (err) {
    const r = refusalOf(err);
    if (r?.status !== 400 && r?.status !== 409) throw err;
    return c.html(await PlansList(c, { kind: "err", text: `Not created. ${r.message}` }, form), r.status);
  }
  return c.redirect("/dashboard/admin/plans?done=created", 303);
});

plansPage.get("/plans/:id", async (c) => {
  const p = await getPlan(c.var.dash.db, c.req.param("id"));
  if (!p) throw notFound("plan");
  return c.html(await PlanDetail(c, p, flashOf(c)));
});

async function PlanDetail(c: Context<DashEnv>, p: PlanRow, flash: Flash) {
  const tenants = (await planTenantCounts(c.var.dash.db, [p.id])).get(p.id) ?? 0;
  const base = `/dashboard/admin/plans/${encodeURIComponent(p.id)}`;
  return (
    <Page title={p.name ?? p.id} scope={c.var.scope} nav={adminNav()} current="/dashboard/admin/plans" flash={flash}>
      <h1>{p.name ?? p.id}</h1>
      <p class="sub mono">{p.id}</p>
      <p>
        {tenants} tenant{tenants === 1 ? "" : "s"} on this plan. Saving moves every one of them in one transaction; a
        value a tenant set itself stays its own.
      </p>
      <section class="card" aria-labelledby="plan-h">
        <h2 id="plan-h">Values</h2>
        <PostForm action={base} csrf={c.var.csrf} label="Plan values">
          <PlanFields
            values={{
              name: p.name,
              maxInFlight: p.maxInFlight,
              weight: p.weight,
              ratePerSecond: p.ratePerSecond,
              burst: p.burst,
              maxJobs: p.maxJobs,
              maxPayloadBytes: p.maxPayloadBytes,
              historyDays: p.historyDays,
              keyMaxInFlight: p.keyMaxInFlight,
              keyRatePerSecond: p.keyRatePerSecond,
              keyWeight: p.keyWeight,
            }}
          />
          <button type="submit">Save plan</button>
        </PostForm>
      </section>
      <PostForm action={`${base}/delete`} csrf={c.var.csrf} class="inline" label="Delete plan">
        <button type="submit" class="danger">
          Delete plan
        </button>
      </PostForm>
    </Page>
  );
}

plansPage.post("/plans/:id", async (c) => {
  const id = c.req.param("id");
  try {
    await c.var.dash.commands.updatePlan(id, planBody(await c.req.parseBody(), "patch"));
  } catch (err) {
    const r = refusalOf(err);
    if (r?.status !== 400) throw err;
    const p = await getPlan(c.var.dash.db, id);
    if (!p) throw notFound("plan");
    return c.html(await PlanDetail(c, p, { kind: "err", text: `Not saved. ${r.message}` }), 400);
  }
  return c.redirect(`/dashboard/admin/plans/${encodeURIComponent(id)}?done=saved`, 303);
});

plansPage.post("/plans/:id/delete", async (c) => {
  const id = c.req.param("id");
  try {
    await c.var.dash.commands.deletePlan(id);
  } catch (err) {
    const r = refusalOf(err);
    if (r?.status !== 409) throw err;
    const p = await getPlan(c.var.dash.db, id);
    if (!p) throw notFound("plan");
    return c.html(await PlanDetail(c, p, { kind: "err", text: `Not deleted. ${r.message}` }), 409);
  }
  return c.redirect("/dashboard/admin/plans?done=deleted", 303);
});

function PlanFields(props: { values: Record<string, unknown> }) {
  const v = (k: string) => (props.values[k] == null ? "" : String(props.values[k]));
  return (
    <>
      <TextField name="name" label="Name" value={v("name")} />
      <TextField name="maxInFlight" label="In-flight cap" value={v("maxInFlight")} number hint="Empty: 10." />
      <TextField name="weight" label="Weight" value={v("weight")} number hint="Empty: 1." />
      <TextField
        name="ratePerSecond"
        label="Rate per second"
        value={v("ratePerSecond")}
        number
        hint="Empty: unlimited."
      />
      <TextField name="burst" label="Burst" value={v("burst")} number hint="Empty: the rate, at least 1." />
      <TextField name="maxJobs" label="Max live jobs" value={v("maxJobs")} number hint="Empty: 10000." />
      <TextField
        name="maxPayloadBytes"
        label="Max payload bytes"
        value={v("maxPayloadBytes")}
        number
        hint="Empty: 262144."
      />
      <TextField name="historyDays" label="History days" value={v("historyDays")} number hint="Empty: 30." />
      <TextField name="keyMaxInFlight" label="Per-key cap" value={v("keyMaxInFlight")} number hint="Empty: no cap." />
      <TextField
        name="keyRatePerSecond"
        label="Per-key rate"
        value={v("keyRatePerSecond")}
        number
        hint="Empty: no rate."
      />
      <TextField name="keyWeight" label="Per-key weight" value={v("keyWeight")} number hint="Empty: 1." />
    </>
  );
}

function TextField(props: { name: string; label: string; value: string; hint?: string; number?: boolean }) {
  const id = `p-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.number ? "number" : "text"}
        inputmode={props.number ? "decimal" : undefined}
        step={props.number ? "any" : undefined}
        value={props.value}
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
