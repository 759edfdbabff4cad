// Authentication: admin and tenant scopes never mix. A tenant key on an admin route is
// a 403; the admin token on a tenant route is a 403; anything else unrecognised is a 401. Tenant keys
// are looked up by their sha256 hash — the key itself is never stored.
import type { Context, MiddlewareHandler } from "hono";
import { BoundedMap, sha256Hex } from "@fairway/core";
import { authenticateKey, type TenantRow } from "@fairway/store";
import { ApiError } from "./errors.ts";
import type { AppEnv } from "./env.ts";

export const KEY_PREFIX = "fw_";
/** What POST /v1/admin/tenants/:id/keys issues: the prefix and 32 random bytes in base64url. Anything
 *  else is refused without a database read. */
const KEY_SHAPE = /^fw_[A-Za-z0-9_-]{43}$/;

/** Hashes of well-shaped keys the database did not know, for a while: a repeated bad key costs no
 *  read. Safe to remember: a key is random, so a hash that matched nothing never starts matching (a
 *  revoked key only ever becomes bad). Bounded: the oldest are forgotten first. */
const unknownKeys = new BoundedMap<string, number>(10_000);
const UNKNOWN_KEY_TTL_MS = 5 * 60_000;

type FoundKey = NonNullable<Awaited<ReturnType<typeof authenticateKey>>>;

/** Keys found, with their tenant row, for KNOWN_KEY_TTL_MS: a tenant's burst of requests costs one
 *  read, not one each. An admin write in this process forgets them all (forgetKnownKeys), so a key
 *  revoked or a tenant suspended or re-planned here is seen by the next request; another process of
 *  the same deployment sees it within the TTL. */
const knownKeys = new BoundedMap<string, { found: FoundKey; until: number }>(10_000);
const KNOWN_KEY_TTL_MS = 1000;

function forgetKnownKeys(): void {
  knownKeys.clear();
}

async function findKey(c: Context<AppEnv>, token: string) {
  if (!KEY_SHAPE.test(token)) return null;
  const hash = await sha256Hex(token);
  const now = c.var.deps.now();
  const known = knownKeys.get(hash);
  if (known && known.until > now) return known.found;
  const until = unknownKeys.get(hash);
  if (until !== undefined && until > now) return null;
  const found = await authenticateKey(c.var.deps.db, hash);
  if (found) {
    unknownKeys.delete(hash);
    knownKeys.set(hash, { found, until: now + KNOWN_KEY_TTL_MS });
  } else {
    knownKeys.delete(hash);
    unknownKeys.set(hash, now + UNKNOWN_KEY_TTL_MS);
  }
  return found;
}

/** The client's address: the socket's peer on Node, CF-Connecting-IP on Workers. Behind a reverse
 *  proxy every client shares the proxy's address; only failures are limited, so right credentials
 *  still pass. Null when it cannot be told (an in-process request): then nothing is limited. */
export function clientAddress(c: Context): string | null {
  const incoming = (c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming;
  return incoming?.socket?.remoteAddress ?? c.req.header("cf-connecting-ip") ?? null;
}

/** A failed credential: counted against the client's address; past the limit a 429 with Retry-After
 *  instead of `refusal`. Called only after the credential was checked and found wrong. */
export function failedCredential(c: Context<AppEnv>, refusal: ApiError): ApiError {
  const address = clientAddress(c);
  const wait = address ? c.var.deps.failedAuth.fail(address, c.var.deps.now()) : 0;
  if (!wait) return refusal;
  return new ApiError(
    429,
    "too_many_failures",
    `too many failed credentials from this address; retry after ${wait} s with a valid token`,
    undefined,
    { "retry-after": String(wait) },
  );
}

/** The request's bearer token when it has a tenant key's shape, else null. */
export function tenantKeyOf(c: Context): string | null {
  const token = bearer(c.req.header("authorization"));
  return token && KEY_SHAPE.test(token) ? token : null;
}

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
  if (safeEqual(token, c.var.deps.adminToken)) {
    await next();
    // A write may have revoked a key, or changed a tenant or the plan its row's values come from.
    if (c.req.method !== "GET") forgetKnownKeys();
    return;
  }
  if (token.startsWith(KEY_PREFIX) && (await findKey(c, token))) {
    throw new ApiError(403, "forbidden", "a tenant API key cannot use admin routes");
  }
  throw failedCredential(c, unauthorized());
};

export const requireTenant: MiddlewareHandler<AppEnv> = async (c, next) => {
  const token = bearer(c.req.header("authorization"));
  if (!token) throw unauthorized();
  if (safeEqual(token, c.var.deps.adminToken)) {
    throw new ApiError(403, "forbidden", "the admin token is not a tenant key; use a tenant API key");
  }
  const found = token.startsWith(KEY_PREFIX) ? await findKey(c, token) : null;
  if (!found) throw failedCredential(c, unauthorized());
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
