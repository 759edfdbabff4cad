// The origin a browser sees. Behind a TLS-terminating proxy the request arrives as http:// on an
// internal host; the proxy's X-Forwarded-Proto and X-Forwarded-Host say what the browser used, and
// links, the cookie's Secure flag and the same-origin check of forms must follow them.

/** A request as the origin needs it (Hono's Context fits). */
interface RequestLike {
  req: { url: string; header(name: string): string | undefined };
}

export function publicOrigin(c: RequestLike): string {
  const url = new URL(c.req.url);
  const proto = c.req.header("x-forwarded-proto")?.split(",")[0].trim();
  const host = c.req.header("x-forwarded-host")?.split(",")[0].trim();
  const scheme = proto === "https" || proto === "http" ? proto : url.protocol.slice(0, -1);
  return `${scheme}://${host && /^[A-Za-z0-9.:[\]-]{1,255}$/.test(host) ? host : url.host}`;
}
