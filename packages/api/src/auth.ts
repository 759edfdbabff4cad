// Authentication: admin and tenant scopes never mix. A tenant key on an admin route is
// a 403; the admin token on a tenant route is a 403; anything else unrecognised is a 401. Tenant keys
// are looked up by their sha256 hash — the key itself is never stored.
import type { MiddlewareHandler } from "hono";
import { sha256Hex } from "@fairway/core";
import { authenticateKey, type TenantRow } from "@fairway/store";
import { ApiError } from "./errors.ts";
import type { AppEnv } from "./env.ts";

export const KEY_PREFIX = "fw_";

function bearer(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
  return m ? m[1] : null;
}

/** Constant-time string comparison (no early exit on the first differing character). */
export function safeEqual(a: string, b: string): boolean {
  const len = Math.max(a.length, b.length);
  let diff = a.length ^ b.length;
  for (let i = 0; i < len; i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

const unauthorized = () =>
  new ApiError(401, "unauthorized", "missing or invalid API key", undefined, { "www-authenticate": "Bearer" });

export const requireAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearer(c.req.header("authorization"));
  if (!token) throw unauthorized();
  if (safeEqual(token, c.var.deps.adminToken)) return next();
  if (token.startsWith(KEY_PREFIX) && (await authenticateKey(c.var.deps.db, await sha256Hex(token)))) {
    throw new ApiError(403, "forbidden", "a tenant API key cannot use admin routes");
  }
  throw unauthorized();
};

export const requireTenant: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearer(c.req.header("authorization"));
  if (!token) throw unauthorized();
  if (safeEqual(token, c.var.deps.adminToken)) {
    throw new ApiError(403, "forbidden", "the admin token is not a tenant key; use a tenant API key");
  }
  if (!token.startsWith(KEY_PREFIX)) throw unauthorized();
  const found = await authenticateKey(c.var.deps.db, await sha256Hex(token));
  if (!found) throw unauthorized();
  if (found.tenant.status !== "active") {
    throw new ApiError(
      403,
      "tenant_suspended",
      "this tenant is suspended; its jobs wait and its API calls are refused",
    );
  }
  c.set("tenant", found.tenant);
  c.set("log", c.var.log.child({ tenantId: found.tenant.id }));
  await enforceRequestRate(c.var.deps, found.tenant, (k, v) => c.header(k, v));
  return next();
};

/** Per-tenant API request rate limit via the coordinator. Fails open: Redis is never needed for
 *  correctness, so a coordinator error lets the request through (and is logged). */
async function enforceRequestRate(
  deps: AppEnv["Variables"]["deps"],
  tenant: TenantRow,
  header: (k: string, v: string) => void,
) {
  const perSecond = deps.apiRatePerSecond;
  if (!perSecond) return;
  let r;
  try {
    r = await deps.coordinator.limit(`api:${tenant.id}`, perSecond, 1000);
  } catch (err) {
    deps.log.warn("rate limiter unavailable; allowing request", { err, tenantId: tenant.id });
    return;
  }
  header("ratelimit-remaining", String(r.remaining));
  if (!r.allowed) {
    const retryAfter = String(Math.max(1, Math.ceil(r.retryAfterMs / 1000)));
    throw new ApiError(429, "rate_limited", `too many requests; retry after ${retryAfter} s`, undefined, {
      "retry-after": retryAfter,
    });
  }
}
