// The front door's middleware (admission.ts): every tenant request with a tenant key's shape takes a
// slot before its key is checked, its body read or its handler run, so a tenant past its share is
// answered 429 having cost a hash and a map lookup. Requests are grouped by the tenant their key was
// last found to belong to (a key the process has not yet seen shares one group with every other such
// key until its first answer); the key is still checked by requireTenant, after admission.
import type { MiddlewareHandler } from "hono";
import { BoundedMap, sha256Hex, TENANT_BOUNDS } from "@fairway/core";
import { tenantKeyOf } from "./auth.ts";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./errors.ts";

/** The group of keys the process has not yet seen answered (metrics' tenant label). */
const UNSEEN_KEYS = "(unseen key)";

/** Key hash → the tenant and weight its last accepted request had. */
const keyTenants = new BoundedMap<string, { tenant: string; weight: number }>(10_000);

export const admitTenant: MiddlewareHandler<AppEnv> = async (c, next) => {
  const admission = c.var.deps.admission;
  const token = admission ? tenantKeyOf(c) : null;
  if (!admission || !token) return next();
  const hash = await sha256Hex(token);
  const known = keyTenants.get(hash);
  const got = await admission.acquire(known?.tenant ?? UNSEEN_KEYS, known?.weight ?? 1);
  if (!("release" in got)) {
    const s = String(got.retryAfterSec);
    throw new ApiError(
      429,
      "rate_limited",
      `this tenant has its share of the server's requests running and waiting; retry after ${s} s`,
      undefined,
      { "retry-after": s },
    );
  }
  try {
    await next();
  } finally {
    got.release();
  }
  const tenant = c.get("tenant");
  if (tenant) {
    const w = TENANT_BOUNDS.weight;
    keyTenants.set(hash, { tenant: tenant.id, weight: Math.min(w.max, Math.max(w.min, tenant.weight || 1)) });
  }
};
