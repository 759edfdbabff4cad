// Tenant portal links: a signed, short-lived URL that opens one tenant's view and nothing else. Opening
// it exchanges the link for a portal session carried in the path (not a cookie), so the view also works
// inside a third-party iframe, where browsers withhold cookies. Both are HMAC-signed with a key derived
// from the admin token (signed-token.ts); a tenant id from anywhere else is never trusted.
import { randomToken } from "./ids.ts";
import { signToken, verifyToken, type Verified } from "./signed-token.ts";

export const PORTAL_LINK_DEFAULT_TTL_S = 15 * 60;
export const PORTAL_LINK_MIN_TTL_S = 30;
export const PORTAL_LINK_MAX_TTL_S = 24 * 3600;
/** How long a portal session lasts once its link was opened. */
const PORTAL_SESSION_MS = 60 * 60_000;

const LINK = "portal-link";
const SESSION = "portal-session";

export interface PortalClaims {
  t: string;
  exp: number;
  n: string;
  /** The tenant's portal epoch when it was made (tenants.portal_epoch); refused once that moved on. */
  e?: number;
}

export async function createPortalLink(opts: {
  secret: string;
  origin: string;
  tenantId: string;
  /** The tenant's portal epoch now. */
  epoch: number;
  ttlSeconds: number;
  nowMs: number;
}) {
  const exp = opts.nowMs + opts.ttlSeconds * 1000;
  const token = await signToken(opts.secret, LINK, { t: opts.tenantId, exp, n: randomToken(9), e: opts.epoch });
  return { url: `${opts.origin}/dashboard/open/${token}`, expiresAt: new Date(exp).toISOString() };
}

export function verifyPortalLink(secret: string, token: string, nowMs: number): Promise<Verified<PortalClaims>> {
  return verifyToken<PortalClaims>(secret, LINK, token, nowMs);
}

export function createPortalSession(
  secret: string,
  tenant: { tenantId: string; epoch: number },
  nowMs: number,
): Promise<string> {
  return signToken(secret, SESSION, {
    t: tenant.tenantId,
    exp: nowMs + PORTAL_SESSION_MS,
    n: randomToken(9),
    e: tenant.epoch,
  });
}

/** Whether a link or session still belongs to the tenant's current portal epoch. */
export function currentEpoch(claims: PortalClaims, tenant: { portalEpoch: number }): boolean {
  return (claims.e ?? 0) === tenant.portalEpoch;
}

export function verifyPortalSession(secret: string, token: string, nowMs: number): Promise<Verified<PortalClaims>> {
  return verifyToken<PortalClaims>(secret, SESSION, token, nowMs);
}
