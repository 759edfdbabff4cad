/** @jsxImportSource hono/jsx */
// The dashboard as a Hono sub-app, mounted at /dashboard by the apps (apps/server, apps/edge) (same process, Node or Worker).
// Two ways in: the operator's session (admin token → signed cookie) sees every tenant; a portal session
// (from a signed portal link, carried in the path) sees one tenant's pages and nothing else.
import { Hono, type Context, type MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import {
  constantTimeEqual,
  createPortalSession,
  currentEpoch,
  DEFAULT_PORTAL_TITLE,
  loggablePath,
  portalCss,
  publicOrigin,
  verifyPortalLink,
  verifyPortalSession,
} from "@fairway/core";
import { getTenant } from "@fairway/store";
import { adminPages } from "./admin-pages.tsx";
import { adminSessionNonce, csrfFor, endAdminSession, startAdminSession } from "./admin-session.ts";
import { FAVICON_SVG, JOB_FORM_JS, LIVE_JS, STYLE_CSS } from "./assets.ts";
import type { DashboardDeps, DashEnv } from "./deps.ts";
import { DashboardError, notFound, refusalOf } from "./errors.ts";
import { firstIssue, loginForm } from "./forms.ts";
import { Page } from "./layout.tsx";
import { tenantPages } from "./tenant-pages.tsx";

/** Dashboard forms are small: a secret value (8 KiB) is the largest field. */
const MAX_FORM_BYTES = 64 * 1024;
const MAX_FORM_FIELDS = 200;

export function dashboardApp(deps: DashboardDeps) {
  const app = new Hono<DashEnv>();

  /** Counts a failed credential against the client's address: the seconds to wait when it is over
   *  the limit, else 0. */
  const failed = (c: Context): number => {
    const address = deps.clientAddress(c);
    return address ? deps.failedAuth.fail(address, deps.now()) : 0;
  };
  const tooMany = (c: Context, wait: number) => {
    c.header("retry-after", String(wait));
    return new DashboardError(
      429,
      "too_many_failures",
      `Too many invalid links from this address. Wait ${wait} s, then open a new portal link.`,
    );
  };

  app.use(async (c, next) => {
    c.set("dash", deps);
    await next();
    securityHeaders(c, deps);
  });

  // Cheap checks before any form is parsed (the CSRF check and the sign-in read the body): a
  // dashboard form is a few fields of at most a few KiB, so anything larger or with more fields is
  // refused by its declared or counted size before a parser builds it.
  app.post(
    "*",
    bodyLimit({
      maxSize: MAX_FORM_BYTES,
      onError: () => {
        throw new DashboardError(413, "form_too_large", `A dashboard form is at most ${MAX_FORM_BYTES} bytes.`);
      },
    }),
    async (c, next) => {
      const text = await c.req.text();
      let fields = 1;
      for (let i = text.indexOf("&"); i !== -1 && fields <= MAX_FORM_FIELDS; i = text.indexOf("&", i + 1)) fields++;
      if (fields > MAX_FORM_FIELDS) {
        throw new DashboardError(400, "too_many_fields", `A dashboard form has at most ${MAX_FORM_FIELDS} fields.`);
      }
      return next();
    },
  );

  app.get("/assets/style.css", (c) => asset(c, STYLE_CSS, "text/css; charset=utf-8"));
  app.get("/assets/live.js", (c) => asset(c, LIVE_JS, "text/javascript; charset=utf-8"));
  app.get("/assets/job-form.js", (c) => asset(c, JOB_FORM_JS, "text/javascript; charset=utf-8"));
  app.get("/assets/favicon.svg", (c) => asset(c, FAVICON_SVG, "image/svg+xml"));
  const brandCss = portalCss(deps.portalBrand ?? { title: DEFAULT_PORTAL_TITLE, accent: null });
  app.get("/assets/portal.css", (c) => asset(c, brandCss, "text/css; charset=utf-8"));

  app.get("/", async (c) => c.redirect((await adminCsrf(c)) ? "/dashboard/admin" : "/dashboard/login", 303));

  app.get("/login", (c) => c.html(<LoginPage />));
  app.post("/login", async (c) => {
    sameOrigin(c);
    const parsed = loginForm.safeParse(await c.req.parseBody());
    if (!parsed.success) return c.html(<LoginPage error={firstIssue(parsed.error)} />, 400);
    // Compared first, limited after: the right token always signs in; only wrong ones count against
    // the client's address, and past the limit they get a 429.
    if (!constantTimeEqual(parsed.data.token, deps.adminToken)) {
      const wait = failed(c);
      if (wait) {
        c.header("retry-after", String(wait));
        return c.html(
          <LoginPage error={`Too many failed sign-ins from this address. Wait ${wait} s, then try again.`} />,
          429,
        );
      }
      deps.log.warn("dashboard sign-in refused");
      return c.html(
        <LoginPage error="That is not the admin token. Paste the token the server printed on first start (or FAIRWAY_ADMIN_TOKEN)." />,
        401,
      );
    }
    await startAdminSession(c, deps.adminToken, deps.now());
    return c.redirect("/dashboard/admin", 303);
  });
  app.post("/logout", async (c) => {
    await requireCsrf(c, await adminCsrf(c));
    endAdminSession(c);
    return c.redirect("/dashboard/login", 303);
  });

  // A portal link: verified, then exchanged for a portal session in the path.
  app.get("/open/:token", async (c) => {
    const v = await verifyPortalLink(deps.adminToken, c.req.param("token"), deps.now());
    if (!v.ok) {
      const expired = v.reason === "expired";
      const wait = expired ? 0 : failed(c);
      if (wait) throw tooMany(c, wait);
      deps.log.warn("portal link refused", { reason: v.reason });
      throw new DashboardError(
        expired ? 410 : 403,
        expired ? "portal_link_expired" : "portal_link_invalid",
        expired
          ? "This link has expired. Portal links are short-lived: ask for a new one from the application that gave you this one."
          : "This link is not valid (it was changed or cut short). Ask for a new one from the application that gave you this one.",
      );
    }
    const tenant = await getTenant(deps.db, v.claims.t);
    if (!tenant) throw notFound("tenant");
    if (tenant.status !== "active") throw portalSuspended();
    if (!currentEpoch(v.claims, tenant)) throw portalRevoked();
    const session = await createPortalSession(
      deps.adminToken,
      { tenantId: tenant.id, epoch: tenant.portalEpoch },
      deps.now(),
    );
    return c.redirect(`/dashboard/portal/${session}/jobs`, 303);
  });

  app.use("/admin/*", async (c, next) => {
    const csrf = await adminCsrf(c);
    if (!csrf) {
      if (c.req.method === "GET" && !c.req.header("x-fairway-fragment")) return c.redirect("/dashboard/login", 303);
      throw new DashboardError(401, "not_signed_in", "Your session has ended. Sign in again with the admin token.");
    }
    if (c.req.method === "POST") await requireCsrf(c, csrf);
    c.set("scope", { kind: "admin", csrf });
    c.set("csrf", csrf);
    return next();
  });
  app.use(
    "/admin/t/:tenantId/*",
    tenantScope(
      (c) => c.req.param("tenantId")!,
      (c) => `/dashboard/admin/t/${c.req.param("tenantId")}`,
      false,
    ),
  );

  app.use("/portal/:session/*", async (c, next) => {
    const v = await verifyPortalSession(deps.adminToken, c.req.param("session")!, deps.now());
    if (!v.ok) {
      const wait = v.reason === "expired" ? 0 : failed(c);
      if (wait) throw tooMany(c, wait);
      throw new DashboardError(
        v.reason === "expired" ? 410 : 403,
        v.reason === "expired" ? "portal_session_expired" : "portal_session_invalid",
        v.reason === "expired"
          ? "This portal session has ended. Open a new portal link from the application that gave you this one."
          : "This portal address is not valid. Open a new portal link from the application that gave you this one.",
      );
    }
    const csrf = await csrfFor(deps.adminToken, v.claims.n);
    c.set("portalClaims", v.claims);
    if (c.req.method === "POST") await requireCsrf(c, csrf);
    c.set("csrf", csrf);
    c.set("scope", {
      kind: "tenant",
      tenantId: v.claims.t,
      csrf,
      portal: true,
      base: `/dashboard/portal/${c.req.param("session")}`,
    });
    return next();
  });
  app.use(
    "/portal/:session/*",
    tenantScope(
      (c) => (c.var.scope as { tenantId: string }).tenantId,
      (c) => `/dashboard/portal/${c.req.param("session")}`,
      true,
    ),
  );

  app.route("/admin", adminPages);
  app.route("/admin/t/:tenantId", tenantPages);
  app.route("/portal/:session", tenantPages);

  app.all("*", (c) => {
    if (c.req.path === "/dashboard/") return c.redirect("/dashboard", 301);
    throw notFound("page");
  });
  app.onError((err, c) => {
    const e = refusalOf(err);
    if (!e)
      deps.log.error("dashboard error", {
        err: err instanceof Error ? err.message.slice(0, 300) : String(err),
        path: loggablePath(c.req.path),
      });
    const status = e?.status ?? 500;
    const message =
      e?.message ?? "Something went wrong on the server. Try again; if it keeps happening, check the server log.";
    if (c.req.header("x-fairway-fragment")) return c.text(message, status);
    const res = c.html(
      <Page title="Not available" scope={null} nav={[]}>
        <div class="card" role="alert">
          <h1>
            {status === 410 ? "Expired" : status === 403 ? "Refused" : status === 404 ? "Not found" : "Not available"}
          </h1>
          <p>{message}</p>
          <p class="sub mono">code: {e?.code ?? "internal_error"}</p>
        </div>
      </Page>,
      status,
    );
    return res;
  });
  return app;
}

/** Resolve the tenant a tenant page is about, and refuse an unknown one. */
const portalSuspended = () =>
  new DashboardError(
    403,
    "tenant_suspended",
    "This account is suspended, so its portal is closed. Contact the application that gave you this link.",
  );

const portalRevoked = () =>
  new DashboardError(
    403,
    "portal_session_revoked",
    "This portal access was ended by the application that gave it. Open a new portal link from it.",
  );

function tenantScope(
  tenantOf: (c: Context<DashEnv>) => string,
  baseOf: (c: Context<DashEnv>) => string,
  portal: boolean,
): MiddlewareHandler<DashEnv> {
  return async (c, next) => {
    const tenantId = tenantOf(c);
    const tenant = await getTenant(c.var.dash.db, tenantId);
    if (!tenant) throw notFound("tenant");
    if (portal && tenant.status !== "active") throw portalSuspended();
    if (portal && !currentEpoch(c.var.portalClaims, tenant)) throw portalRevoked();
    const base = baseOf(c);
    c.set("tenantId", tenant.id);
    c.set("base", base);
    c.set("portal", portal);
    if (!portal) c.set("scope", { kind: "admin", csrf: c.var.csrf });
    return next();
  };
}

async function adminCsrf(c: Context<DashEnv>): Promise<string | null> {
  const d = c.var.dash;
  const nonce = await adminSessionNonce(c, d.adminToken, d.now());
  return nonce ? csrfFor(d.adminToken, nonce) : null;
}

/** A state-changing request must come from this origin and carry the session's CSRF token. */
async function requireCsrf(c: Context<DashEnv>, expected: string | null): Promise<void> {
  sameOrigin(c);
  const body = await c.req.parseBody();
  const got = typeof body.csrf === "string" ? body.csrf : "";
  if (!expected || !constantTimeEqual(got, expected)) {
    throw new DashboardError(
      403,
      "csrf_failed",
      "This form has expired or did not come from this dashboard. Reload the page and submit it again.",
    );
  }
}

function sameOrigin(c: Context<DashEnv>): void {
  const origin = c.req.header("origin");
  if (origin && new URL(publicOrigin(c)).host !== hostOf(origin)) {
    throw new DashboardError(403, "cross_origin", "Forms can only be sent from the dashboard's own pages.");
  }
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

function asset(c: Context, body: string, type: string) {
  c.header("content-type", type);
  c.header("cache-control", "public, max-age=300");
  return c.body(body);
}

/** Pages never cached, never sniffed, never framed, except portal pages by FAIRWAY_PORTAL_ORIGINS. */
function securityHeaders(c: Context<DashEnv>, deps: DashboardDeps): void {
  const portal = c.req.path.startsWith("/dashboard/portal/") || c.req.path.startsWith("/dashboard/open/");
  const ancestors = portal && deps.portalOrigins.length > 0 ? deps.portalOrigins.join(" ") : "'none'";
  c.res.headers.set(
    "content-security-policy",
    `default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors ${ancestors}`,
  );
  if (ancestors === "'none'") c.res.headers.set("x-frame-options", "DENY");
  c.res.headers.set("x-content-type-options", "nosniff");
  c.res.headers.set("referrer-policy", "same-origin");
  if (!c.req.path.startsWith("/dashboard/assets/")) c.res.headers.set("cache-control", "no-store");
}

function LoginPage(props: { error?: string }) {
  return (
    <Page title="Sign in" scope={null} nav={[]} flash={props.error ? { kind: "err", text: props.error } : null}>
      <div class="card login">
        <h1>Sign in</h1>
        <p class="sub">The operator's dashboard. Tenants get their own view through a portal link.</p>
        <form method="post" action="/dashboard/login">
          <div class="field">
            <label for="token">Admin token</label>
            <input id="token" name="token" type="password" autocomplete="current-password" required />
            <p class="hint">Printed on first start and kept in .fairway/admin-token, or FAIRWAY_ADMIN_TOKEN.</p>
          </div>
          <button type="submit">Sign in</button>
        </form>
      </div>
    </Page>
  );
}
