/** @jsxImportSource hono/jsx */
// What every tenant page shares: the page shell with the tenant navigation (and, for the operator, the
// way back to the operator view), flash messages after an action, and telling executors about new work.
import type { Context } from "hono";
import type { DashEnv } from "./deps.ts";
import { Page, tenantNav } from "./layout.tsx";

export type Flash = { kind: "ok" | "err"; text: string } | null;

const DONE: Record<string, string> = {
  paused: "Job paused. Pending fires were cancelled; running ones finish.",
  resumed: "Job resumed. Missed fires follow the job's misfire policy.",
  schedule: "Schedule saved. It applies from the next fire.",
  created: "Job created.",
  edited: "Job saved. Changes apply from the next fire.",
  cancelled: "Job cancelled, with its pending fires.",
  run: "Run queued. This page refreshes until the attempt finishes.",
  replayed: "Dead letter replayed: the same trigger (same webhook-id) is pending again.",
  backfill_started: "Backfill started: its fires run behind this tenant's live work; see Backfills below.",
  trigger_cancelled: "Trigger cancelled: it never runs again; a running request is cut.",
  rerun: "Re-run queued: this new trigger sends what the form gave, for this run alone.",
  backfill_cancelled: "Backfill cancelled: its fires not yet started will not run; running ones finish.",
};

function flashOf(c: Context): Flash {
  const done = c.req.query("done");
  return done && DONE[done] ? { kind: "ok", text: DONE[done] } : null;
}

export function page(
  c: Context<DashEnv>,
  title: string,
  current: string,
  body: unknown,
  flash: Flash = flashOf(c),
  status: 200 | 400 = 200,
) {
  const base = c.var.base;
  return c.html(
    <Page
      title={title}
      scope={c.var.scope}
      nav={tenantNav(base)}
      current={`${base}${current}`}
      flash={flash}
      portal={
        c.var.portal
          ? { title: c.var.dash.portalBrand?.title ?? "Fairway", endsAt: new Date(c.var.portalClaims.exp) }
          : null
      }
    >
      {c.var.portal ? null : (
        <p class="sub">
          <a href={`/dashboard/admin/tenants/${encodeURIComponent(c.var.tenantId)}`}>
            ← Operator view of {c.var.tenantId}
          </a>
        </p>
      )}
      {body as never}
    </Page>,
    status,
  );
}

/** Where a job's fires go: its HTTP target, or, with none, the handler for its type that a worker runs. */
export function targetText(target: unknown, type: string | undefined): string {
  const t = target as { url?: string; method?: string } | null;
  return t?.url ? `${t.method ?? "POST"} ${t.url}` : `handler \`${type ?? "?"}\`, run by a worker`;
}

/** Why an attempt shows no request: said the same way on every page. A handler job sends none. */
export function noRequestText(handlerType: string | null, sent: boolean): string {
  if (handlerType !== null) return `No HTTP request: handler \`${handlerType}\` ran in a worker.`;
  return sent
    ? "No request recorded for this attempt."
    : "No request recorded: the delivery failed before it was sent.";
}

export function headerNames(target: unknown): string {
  const h = (target as { headers?: Record<string, string> } | null)?.headers;
  return h && Object.keys(h).length > 0 ? Object.keys(h).join(", ") : "—";
}

/** What started a trigger: its schedule, a run-now, a backfill, a re-run of a finished trigger, or a
 *  replay of the dead trigger (as the API says). */
export function triggeredBy(t: {
  kind: string;
  replayedAt: Date | null;
}): "schedule" | "manual" | "replay" | "backfill" | "rerun" {
  if (t.replayedAt) return "replay";
  return t.kind === "manual" || t.kind === "backfill" || t.kind === "rerun" ? t.kind : "schedule";
}

/** Header names that carry credentials by convention. */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|cookie|set-cookie)$|token|secret|passw|api-?key|auth/i;

/** A header value as the dashboard shows it. A recorded request keeps a secret as its `${secrets.NAME}`
 *  placeholder, so that is shown; but a credential typed into a job's headers literally, or one a
 *  target sets in its response, would be shown to everyone with the tenant's view (a portal link is
 *  handed to a SaaS's own customer): such a value is hidden unless it is only placeholders and
 *  scheme words (docs/decisions/0080-dashboard-header-values.md). */
export function shownHeaderValue(name: string, value: string): string {
  if (!CREDENTIAL_HEADER.test(name)) return value;
  const rest = value.replace(/\$\{secrets\.[A-Za-z0-9_]+\}/g, "").trim();
  return rest === "" || /^(Bearer|Basic|Token)$/i.test(rest) ? value : `(hidden, ${value.length} characters)`;
}
