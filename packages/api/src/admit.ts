// The front door's middleware (admission.ts): every tenant request with a tenant key's shape takes a
// slot before its key is checked, its body read or its handler run, so a tenant past its share is
// answered 429 having cost a hash and a map lookup. Requests are grouped by the tenant their key was
// last found to belong to (a key the process has not yet seen shares one group with every other such
// key until its first answer); the key is still checked by requireTenant, after admission.
import type { MiddlewareHandler } from "hono";
import { BoundedMap, sha256Hex, TENANT_BOUNDS } from "@fairway/core";
import { tenantKeyOf } from "./auth.ts";
import type { AppEnv } from "./env.ts";
import { scopeOf } from "./route.ts";

/** The group of keys the process has not yet seen answered (metrics' tenant label). */
const UNSEEN_KEYS = "(unseen key)";

/** Key hash → the tenant and weight its last accepted request had. */
const keyTenants = new BoundedMap<string, { tenant: string; weight: number }>(10_000);

/** The 429's body for each Retry-After (one or two values in practice), made once. */
const refusalBodies = new Map<number, string>();
function refusalBody(retryAfterSec: number): string {
  let text = refusalBodies.get(retryAfterSec);
  if (text === undefined) {
    const error = {
      code: "rate_limited",
      message: `this tenant has its share of the server's requests running and waiting; retry after ${retryAfterSec} s`,
    };
    text = `${JSON.stringify({ error })}\n`;
    refusalBodies.set(retryAfterSec, text);
  }
  return text;
}

export const admitTenant: MiddlewareHandler<AppEnv> = async (c, next) => {
  const admission = c.var.deps.admission;
  // Registered on /v1/* ahead of the scopes' routes: the open and admin ones never take a slot.
  const token = admission && scopeOf(c.req.path) === "tenant" ? tenantKeyOf(c) : null;
  if (!admission || !token) return next();
  const hash = await sha256Hex(token);
  const known = keyTenants.get(hash);
  const got = await admission.acquire(known?.tenant ?? UNSEEN_KEYS, known?.weight ?? 1);
  if (!("release" in got)) {
    // Answered here, not thrown: a refusal is the flood's common case, and it costs neither a stack
    // trace nor the error handler (the same envelope errorResponse writes).
    // The body is let go as it arrives (Node: the request stream resumed, nothing kept), so the
    // connection is ready for its next request when the 429 is written; a body left unread past the
    // server's drain timeout would have the socket closed under a busy loop (the client sees a reset).
    (c.env as { incoming?: { resume?: () => void } } | undefined)?.incoming?.resume?.();
    c.header("retry-after", String(got.retryAfterSec));
    return c.body(refusalBody(got.retryAfterSec), 429, { "content-type": "application/json" });
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
