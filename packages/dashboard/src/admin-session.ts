// The operator's session: the admin token, typed once into the login form, becomes a signed cookie
// (HttpOnly, SameSite=Strict, Secure over https, path /dashboard) that expires on its own. Forms carry
// a CSRF token that is an HMAC of the session's nonce: a page of another site can neither read it nor
// make it, and SameSite=Strict keeps the cookie off its requests besides.
import type { Context } from "hono";
import { getCookie, setCookie, deleteCookie } from "hono/cookie";
import { mac, publicOrigin, randomToken, signToken, verifyToken } from "@fairway/core";

const ADMIN_COOKIE = "fairway_dashboard";
const ADMIN_SESSION_MS = 12 * 3600_000;
const SESSION = "admin-session";

export async function startAdminSession(c: Context, secret: string, nowMs: number): Promise<void> {
  const token = await signToken(secret, SESSION, { exp: nowMs + ADMIN_SESSION_MS, n: randomToken(12) });
  setCookie(c, ADMIN_COOKIE, token, {
    path: "/dashboard",
    httpOnly: true,
    sameSite: "Strict",
    secure: publicOrigin(c).startsWith("https:"),
    maxAge: ADMIN_SESSION_MS / 1000,
  });
}

export function endAdminSession(c: Context): void {
  deleteCookie(c, ADMIN_COOKIE, { path: "/dashboard" });
}

/** The session's nonce when the request carries a valid admin cookie, else null. */
export async function adminSessionNonce(c: Context, secret: string, nowMs: number): Promise<string | null> {
  const raw = getCookie(c, ADMIN_COOKIE);
  if (!raw) return null;
  const v = await verifyToken<{ exp: number; n: string }>(secret, SESSION, raw, nowMs);
  return v.ok ? v.claims.n : null;
}

/** The CSRF token of a session (admin cookie or portal session), from its nonce. */
export function csrfFor(secret: string, nonce: string): Promise<string> {
  return mac(secret, "csrf", nonce);
}
