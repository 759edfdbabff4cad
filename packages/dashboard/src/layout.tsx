/** @jsxImportSource hono/jsx */
// The page shell: header navigation, skip link, flash message. Every page is complete HTML that works
// without JavaScript; live.js only refreshes [data-live] regions.
import { raw } from "hono/html";
import type { Child } from "hono/jsx";
import type { Scope } from "./deps.ts";
import { When } from "./time.tsx";

export interface NavItem {
  href: string;
  label: string;
}

export function adminNav(): NavItem[] {
  return [
    { href: "/dashboard/admin", label: "Tenants" },
    { href: "/dashboard/admin/plans", label: "Plans" },
    { href: "/dashboard/admin/pools", label: "Pools" },
    { href: "/dashboard/admin/executors", label: "Executors" },
    { href: "/dashboard/admin/dead-letters", label: "Dead letters" },
    { href: "/dashboard/admin/activity", label: "Activity" },
  ];
}

/** The tenant view's sections, in navigation order. A new section is one entry here and its page
 *  module routed in tenant-pages.tsx. */
const TENANT_SECTIONS: ReadonlyArray<{ path: string; label: string }> = [
  { path: "/jobs", label: "Jobs" },
  { path: "/dead-letters", label: "Dead letters" },
  { path: "/keys", label: "Keys" },
  { path: "/secrets", label: "Secrets" },
  { path: "/notifications", label: "Notifications" },
  { path: "/usage", label: "Quota & usage" },
];

export function tenantNav(base: string): NavItem[] {
  return TENANT_SECTIONS.map((s) => ({ href: `${base}${s.path}`, label: s.label }));
}

export function Page(props: {
  title: string;
  scope: Scope | null;
  nav: NavItem[];
  current?: string;
  flash?: { kind: "ok" | "err"; text: string } | null;
  /** A portal page: the operator's name for it (FAIRWAY_PORTAL_TITLE) and when its session ends. */
  portal?: { title: string; endsAt: Date } | null;
  children?: Child;
}) {
  const brand = props.portal?.title ?? "Fairway";
  const who =
    props.scope?.kind === "admin"
      ? "Operator"
      : props.scope?.kind === "tenant"
        ? `Tenant ${props.scope.tenantId}`
        : null;
  return (
    <>
      {raw("<!DOCTYPE html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="referrer" content="same-origin" />
          <title>{`${props.title} · ${brand}`}</title>
          <link rel="icon" type="image/svg+xml" href="/dashboard/assets/favicon.svg" />
          <link rel="stylesheet" href="/dashboard/assets/style.css" />
          {props.portal && <link rel="stylesheet" href="/dashboard/assets/portal.css" />}
          <script src="/dashboard/assets/live.js" defer></script>
        </head>
        <body>
          <a class="skip" href="#main">
            Skip to content
          </a>
          <header class="top">
            <span class="brand">{brand}</span>
            {props.nav.length > 0 && (
              <nav aria-label="Main">
                {props.nav.map((n) => (
                  <a href={n.href} aria-current={props.current === n.href ? "page" : undefined}>
                    {n.label}
                  </a>
                ))}
              </nav>
            )}
            {who && (
              <div class="who">
                <span>{who}</span>
                {props.portal && (
                  <span class="expires">
                    Session ends <When d={props.portal.endsAt} />
                  </span>
                )}
                {props.scope?.kind === "admin" && (
                  <form method="post" action="/dashboard/logout" class="inline">
                    <input type="hidden" name="csrf" value={props.scope.csrf} />
                    <button type="submit">Sign out</button>
                  </form>
                )}
              </div>
            )}
          </header>
          <main id="main" tabindex={-1}>
            {props.flash && (
              <p class={`flash ${props.flash.kind}`} role={props.flash.kind === "err" ? "alert" : "status"}>
                {props.flash.text}
              </p>
            )}
            {props.children}
          </main>
        </body>
      </html>
    </>
  );
}

/** A POST form with the session's CSRF token. */
export function PostForm(props: { action: string; csrf: string; class?: string; children?: Child; label?: string }) {
  return (
    <form method="post" action={props.action} class={props.class} aria-label={props.label}>
      <input type="hidden" name="csrf" value={props.csrf} />
      {props.children}
    </form>
  );
}

export function StatusChip(props: { status: string }) {
  return <span class={`chip s-${props.status.replace(/ /g, "_")}`}>{props.status}</span>;
}

export function Pager(props: { next: string | null; first?: string | null; label: string }) {
  if (!props.next && !props.first) return null;
  return (
    <nav class="pager" aria-label={props.label}>
      {props.first && (
        <a class="button secondary" href={props.first}>
          First page
        </a>
      )}
      {props.next && (
        <a class="button secondary" href={props.next} rel="next">
          Next page
        </a>
      )}
    </nav>
  );
}
