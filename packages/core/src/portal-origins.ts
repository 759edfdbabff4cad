// FAIRWAY_PORTAL_ORIGINS: the origins that may embed a tenant portal view in an iframe, separated by
// spaces or commas (e.g. "https://app.example.com https://admin.example.com"). Each must be a bare
// origin, since it goes into CSP frame-ancestors as is; anything else is a configuration error.

export function parsePortalOrigins(
  raw: string | undefined,
): { ok: true; origins: string[] } | { ok: false; message: string } {
  const parts = (raw ?? "").split(/[\s,]+/).filter(Boolean);
  for (const p of parts) {
    let origin: string | null = null;
    try {
      origin = new URL(p).origin;
    } catch {
      origin = null;
    }
    // The URL parser lets characters such as ";" into a host; in a CSP header they would end the directive.
    if (!origin || origin !== p || !/^https?:\/\/([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/.test(p)) {
      return {
        ok: false,
        message: `FAIRWAY_PORTAL_ORIGINS: "${p.slice(0, 100)}" is not an origin; write scheme://host[:port] with no path, e.g. https://app.example.com`,
      };
    }
  }
  return { ok: true, origins: parts };
}
